#include "core/metrics/score_file.h"

#include <charconv>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/data/file_io.h"
#include "core/data/stream_output.h"

namespace plrank {

absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path) {
  absl::StatusOr<std::string> contents = ReadWholeFile(path);
  if (!contents.ok()) {
    return absl::Status(
        contents.status().code(),
        absl::StrCat("score file: ", contents.status().message()));
  }
  std::vector<absl::string_view> lines = absl::StrSplit(*contents, '\n');
  // A final newline ends the last line; it does not start an empty one.
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::vector<double> scores;
  scores.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t line_number = i + 1;
    const absl::string_view text = absl::StripAsciiWhitespace(lines[i]);
    double score = 0.0;
    if (text.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": empty line, expected a score"));
    }
    if (!absl::SimpleAtod(text, &score)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": cannot parse score '", text, "'"));
    }
    scores.push_back(score);
  }
  return scores;
}

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
  const std::string_view piece = text;
  return WriteStreamOutput(path, absl::MakeConstSpan(&piece, 1));
}

}  // namespace plrank
