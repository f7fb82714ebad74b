#include "trainer/cli/score_writer.h"

#include <charconv>
#include <string>
#include <vector>

#include "core/data/file_io.h"

namespace plrank::cli {

absl::Status WriteScoresInInputOrder(const Dataset& data,
                                     absl::Span<const double> scores,
                                     const std::string& path) {
  std::vector<double> ordered(scores.begin(), scores.end());
  if (!data.input_line_order.empty()) {
    for (size_t i = 0; i < scores.size(); ++i) {
      ordered[data.input_line_order[i]] = scores[i];
    }
  }
  std::string text;
  text.reserve(ordered.size() * 20);
  char buffer[64];
  for (double score : ordered) {
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer) - 1, score);
    *end++ = '\n';
    text.append(buffer, static_cast<size_t>(end - buffer));
  }
  return WriteFileAtomically(path, text);
}

}  // namespace plrank::cli
