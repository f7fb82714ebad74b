#ifndef PLRANK_CORE_PIPELINE_CHECKPOINT_H_
#define PLRANK_CORE_PIPELINE_CHECKPOINT_H_

// Checkpoints of a boosting run (--checkpoint_dir, --checkpoint_every,
// --resume): what a killed run needs to go on so that its trees and scores
// are bit-identical to an uninterrupted run's. The booster's state (every
// tree grown so far, the iteration reports, the best iteration and metric,
// gam's learned position bias when there is one;
// scores are replayed from the trees) and the train job's per-iteration
// metrics, plus a digest of the job and its data, so a checkpoint is only
// resumed by the run it came from.
//
// File: <dir>/checkpoint.plrank, binary, little-endian, written atomically
// (WriteFileAtomically), ending with a ContentHasher checksum of the rest.
// Read as untrusted: every count is bounded by the bytes left, every tree's
// children are checked, and the checksum must match.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/boosting/booster.h"

namespace plrank {

struct Checkpoint {
  uint64_t job_digest = 0;
  BoosterResult state;
  // Per 1-based iteration: the metrics the train job computed (NaN where a
  // cut-off was not), and the validation loss.
  std::map<int32_t, std::vector<double>> train_metrics;
  std::map<int32_t, std::vector<double>> valid_metrics;
  std::map<int32_t, double> valid_losses;
};

std::string CheckpointPath(const std::string& dir);

std::string SerializeCheckpoint(const Checkpoint& checkpoint);
// `name` is for messages.
absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view bytes,
                                           const std::string& name);

// Creates `dir` when needed; atomic.
absl::Status WriteCheckpoint(const std::string& dir,
                             const Checkpoint& checkpoint);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_CHECKPOINT_H_
