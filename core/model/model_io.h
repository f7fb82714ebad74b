#ifndef PLRANK_CORE_MODEL_MODEL_IO_H_
#define PLRANK_CORE_MODEL_MODEL_IO_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model/ensemble.h"

namespace plrank {

// The artifact format versions this build reads: every version from
// kOldestModelFormatVersion to kModelFormatVersion. Version 2 adds
// Tree::zero_as_missing. A writer stamps RequiredFormatVersion(model), the
// lowest version that expresses the model, so models that do not use a newer
// feature stay readable by builds that only know version 1.
inline constexpr int32_t kOldestModelFormatVersion = 1;
inline constexpr int32_t kModelFormatVersion = 2;

// 2 when some split treats zero as missing, else 1.
int32_t RequiredFormatVersion(const Ensemble& model);

// The most features a model may declare: 2^24. A dense document that wide is
// 64 MiB of floats (plrank-server's default message limit), and ranking
// data has at most thousands. Model files are untrusted input: the declared
// count is only a number in the payload, so readers refuse a larger one
// instead of sizing anything by it. Memory that depends on the width is
// sized by the features the model actually reads (ForestScorer::row_width).
inline constexpr int32_t kMaxModelFeatures = int32_t{1} << 24;

// Largest leaf cover (Tree::leaf_cover): covers of up to 2^30 leaves add up
// far below the largest double, and XGBoost's float hessian sums stay below
// it.
inline constexpr double kMaxLeafCover = 1e30;

// Checks structure: num_features in [0, kMaxModelFeatures], child indices in
// range and acyclic (every node reached once from the root), feature indices
// < num_features, finite thresholds, leaf and linear values, leaf sums that
// cannot overflow, leaf counts >= 0 and covers in [0, kMaxLeafCover] (each
// empty or one per leaf), per-node flags 0 or 1 (zero_as_missing empty or one
// per internal node), num_outputs/transform consistency.
absl::Status ValidateEnsemble(const Ensemble& model);

// Serializes to plrank.v1.Model bytes (with payload checksum) and back.
absl::StatusOr<std::string> SerializeModel(const Ensemble& model);
absl::StatusOr<Ensemble> ParseModel(std::string_view bytes,
                                    const std::string& name_for_errors);

// ParseModel plus what the envelope says about the file, so a caller that
// reports the checksum (the server's model status) parses the bytes once.
struct ParsedModelFile {
  Ensemble model;
  uint64_t checksum = 0;  // the verified payload checksum (FNV-1a 64)
  uint32_t format_version = 0;
};
absl::StatusOr<ParsedModelFile> ParseModelFile(
    std::string_view bytes, const std::string& name_for_errors);

// Writes atomically through WriteFileAtomically (core/data/file_io.h): temp
// file in the same directory, fsync, rename, fsync of the directory. A crash
// never leaves a partial file at `path`; a target that exists and is not a
// regular file (e.g. /dev/full) is refused.
absl::Status WriteModelFile(const Ensemble& model, const std::string& path);
absl::StatusOr<Ensemble> ReadModelFile(const std::string& path);

// Human-readable text dump (header, parameters, history summary, trees).
std::string DumpModel(const Ensemble& model);

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_MODEL_IO_H_
