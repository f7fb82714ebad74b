#ifndef PLRANK_CORE_METRICS_SCORE_FILE_H_
#define PLRANK_CORE_METRICS_SCORE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank {

// Reads a score file: one decimal score per line, in document order (the
// format LightGBM/XGBoost predictions are written in). Surrounding whitespace
// and a final newline are accepted; "nan" is accepted and ranks last. An
// empty or unparsable line is an InvalidArgument error naming the file and
// the 1-based line; an unreadable file is NotFound.
absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path);

}  // namespace plrank

#endif  // PLRANK_CORE_METRICS_SCORE_FILE_H_
