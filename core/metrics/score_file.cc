#include "core/metrics/score_file.h"

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace plrank {

absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open score file ", path));
  }
  std::vector<double> scores;
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    double score = 0.0;
    if (text.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_number, ": empty line, expected a score"));
    }
    if (!absl::SimpleAtod(text, &score)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": cannot parse score '", text, "'"));
    }
    scores.push_back(score);
  }
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat("read error in score file ", path, " after line ",
                     line_number));
  }
  return scores;
}

}  // namespace plrank
