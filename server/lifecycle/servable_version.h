#ifndef PLRANK_SERVER_LIFECYCLE_SERVABLE_VERSION_H_
#define PLRANK_SERVER_LIFECYCLE_SERVABLE_VERSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/explain/ensemble_explainer.h"
#include "core/scoring/forest_scorer.h"
#include "server/lifecycle/model_status.h"

namespace plrank::server {

// One loaded, validated and warmed-up model version. Immutable and shared:
// requests hold a std::shared_ptr for their whole duration, so a version
// retired by the version manager is freed when its last request ends (the
// destructor logs event=version_released).
class ServableVersion {
 public:
  // Called from the destructor, i.e. when the last holder lets go.
  using ReleaseHook = std::function<void(const ServableVersion&)>;

  // `explainer`: the model prepared for Explain, or why it cannot be
  // explained (FAILED_PRECONDITION, returned to Explain callers).
  ServableVersion(std::string model, int64_t version, std::string model_file,
                  ForestScorer scorer, ModelMetadata metadata,
                  int64_t loaded_unix_seconds, ReleaseHook on_release = {},
                  absl::StatusOr<EnsembleExplainer> explainer =
                      absl::FailedPreconditionError(
                          "this version was loaded without an explainer"));
  ~ServableVersion();
  ServableVersion(const ServableVersion&) = delete;
  ServableVersion& operator=(const ServableVersion&) = delete;

  const std::string& model() const { return model_; }
  int64_t version() const { return version_; }
  const std::string& version_string() const { return version_string_; }
  const std::string& model_file() const { return model_file_; }
  const ForestScorer& scorer() const { return scorer_; }
  const absl::StatusOr<EnsembleExplainer>& explainer() const {
    return explainer_;
  }
  const ModelMetadata& metadata() const { return metadata_; }
  int64_t loaded_unix_seconds() const { return loaded_unix_seconds_; }
  // Set once by the loader, before the version is shared.
  void set_memory_bytes(uint64_t bytes) { metadata_.memory_bytes = bytes; }

 private:
  std::string model_;
  int64_t version_;
  std::string version_string_;  // for metric labels, built once
  std::string model_file_;
  ForestScorer scorer_;
  absl::StatusOr<EnsembleExplainer> explainer_;
  ModelMetadata metadata_;
  int64_t loaded_unix_seconds_;
  ReleaseHook on_release_;
};

// Whether `candidate` can replace `serving` as the default without breaking
// its clients: same feature count, number of outputs and score transform.
// OK, or FAILED_PRECONDITION whose message says what differs in words an
// RPC client understands; `reason` (optional) gets a short label for
// metrics: "num_features", "num_outputs" or "score_transform".
absl::Status CheckCompatible(const ModelMetadata& serving,
                             const ModelMetadata& candidate,
                             std::string* reason = nullptr);

// Reads `model_file`, parses and validates it (format version, checksum,
// structure, declared sizes), flattens it for scoring and warms it up by
// scoring a dummy batch (all-zero and all-missing rows, only as wide as the
// features the model reads) whose scores must be finite. The file is
// untrusted input: any failure, running out of memory included, returns an
// error naming the file (RESOURCE_EXHAUSTED for memory); nothing is
// half-loaded and nothing aborts.
absl::StatusOr<std::shared_ptr<const ServableVersion>> LoadServableVersion(
    const std::string& model, int64_t version, const std::string& model_file,
    ServableVersion::ReleaseHook on_release = {});

// Protobuf parses no message of 2 GiB or more: a larger model.pb can never
// load, so it is refused by its size before a byte is read.
inline constexpr uint64_t kMaxModelFileBytes = (uint64_t{1} << 31) - 1;

// What a version is expected to hold in memory per byte of its model.pb,
// before it is loaded (--max_loading_bytes): the flattened scorer, the
// explainer and the parse beside them. Measured: a 65 MB model (10,000
// trees) held 479 MB served (7.4x); small models less.
inline constexpr uint64_t kEstimatedMemoryPerFileByte = 8;

// The bytes of a model file; errors name the file, and running out of
// memory is RESOURCE_EXHAUSTED. A file above `max_bytes` (its size as
// stat() reports it, and again while reading, for a file that grows) is
// RESOURCE_EXHAUSTED before it is read.
absl::StatusOr<std::string> ReadModelFileBytes(
    const std::string& model_file, uint64_t max_bytes = kMaxModelFileBytes);

// The same from the file's bytes, already read; `model_file` names it in
// errors and status.
absl::StatusOr<std::shared_ptr<const ServableVersion>>
LoadServableVersionFromBytes(const std::string& model, int64_t version,
                             const std::string& model_file,
                             const std::string& bytes,
                             ServableVersion::ReleaseHook on_release = {},
                             const std::string& scoring_kernel = "auto");

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_SERVABLE_VERSION_H_
