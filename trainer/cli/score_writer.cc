#include "trainer/cli/score_writer.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

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
  const std::string temp = absl::StrCat(path, ".tmp");
  FILE* file = std::fopen(temp.c_str(), "w");
  if (file == nullptr) {
    return absl::InternalError(
        absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
  }
  char buffer[64];
  bool ok = true;
  for (double score : ordered) {
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer) - 1, score);
    *end++ = '\n';
    ok = ok && std::fwrite(buffer, 1, end - buffer, file) ==
                   static_cast<size_t>(end - buffer);
  }
  ok = (std::fclose(file) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::InternalError(
        absl::StrCat(path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace plrank::cli
