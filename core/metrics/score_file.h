#ifndef PLRANK_CORE_METRICS_SCORE_FILE_H_
#define PLRANK_CORE_METRICS_SCORE_FILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// Reads a score file: one decimal score per line, in document order (the
// format LightGBM/XGBoost predictions are written in). Surrounding whitespace
// and a final newline are accepted; "nan" is accepted and ranks last. An
// empty or unparsable line is an InvalidArgument error naming the file and
// the 1-based line; an unreadable file is NotFound.
absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path);

// Writes one score per line (shortest round-trip decimal form) in the order
// of the input file's data lines, undoing any regrouping of non-contiguous
// queries (data.input_line_order), with WriteStreamOutput: "-" and
// /dev/stdout are standard output, a FIFO or device is written in order,
// and a file is written atomically (readers never see a partial file); a
// directory is refused. ReadScoreFile reads it back exactly.
absl::Status WriteScoresInInputOrder(const Dataset& data,
                                     absl::Span<const double> scores,
                                     const std::string& path);

}  // namespace plrank

#endif  // PLRANK_CORE_METRICS_SCORE_FILE_H_
