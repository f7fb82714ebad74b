#ifndef PLRANK_TRAINER_CLI_SCORE_WRITER_H_
#define PLRANK_TRAINER_CLI_SCORE_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank::cli {

// Writes one score per line in the order of the input file's data lines
// (undoing any regrouping of non-contiguous queries), with
// WriteFileAtomically: readers never see a partial file, and a target that is
// not a regular file (e.g. /dev/full) is refused.
absl::Status WriteScoresInInputOrder(const Dataset& data,
                                     absl::Span<const double> scores,
                                     const std::string& path);

}  // namespace plrank::cli

#endif  // PLRANK_TRAINER_CLI_SCORE_WRITER_H_
