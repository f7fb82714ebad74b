#ifndef PLRANK_CORE_MODEL_MODEL_IO_H_
#define PLRANK_CORE_MODEL_MODEL_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank {

// The artifact format version this build writes and reads.
inline constexpr int32_t kModelFormatVersion = 1;

// The most features a model may declare: 2^24. A dense document that wide is
// 64 MiB of floats (plrank-server's default message limit), and ranking
// data has at most thousands. Model files are untrusted input: the declared
// count is only a number in the payload, so readers refuse a larger one
// instead of sizing anything by it. Memory that depends on the width is
// sized by the features the model actually reads (ForestScorer::row_width).
inline constexpr int32_t kMaxModelFeatures = int32_t{1} << 24;

// Checks structure: num_features in [0, kMaxModelFeatures], child indices in
// range and acyclic (every node reached once from the root), feature indices
// < num_features, finite thresholds, leaf and linear values, leaf sums that
// cannot overflow, num_outputs/transform consistency.
absl::Status ValidateEnsemble(const Ensemble& model);

// Serializes to plrank.v1.Model bytes (with payload checksum) and back.
absl::StatusOr<std::string> SerializeModel(const Ensemble& model);
absl::StatusOr<Ensemble> ParseModel(std::string_view bytes,
                                    const std::string& name_for_errors);

// Writes atomically: temp file in the same directory, fsync, rename, fsync of
// the directory. A crash never leaves a partial file at `path`.
absl::Status WriteModelFile(const Ensemble& model, const std::string& path);
absl::StatusOr<Ensemble> ReadModelFile(const std::string& path);

// Human-readable text dump (header, parameters, history summary, trees).
std::string DumpModel(const Ensemble& model);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_MODEL_IO_H_
