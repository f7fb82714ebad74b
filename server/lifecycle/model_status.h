#ifndef PLRANK_SERVER_LIFECYCLE_MODEL_STATUS_H_
#define PLRANK_SERVER_LIFECYCLE_MODEL_STATUS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace plrank::server {

// The serving lifecycle's own status types. They mirror the messages of
// ranker.proto field for field, but the lifecycle library never sees the
// wire types: the RPC layer converts (server/wire_status.h), so the
// lifecycle can change its bookkeeping without touching the API and the API
// can grow without touching the lifecycle.

// Where a version is in its life, as TF Serving's manager states.
enum class VersionState {
  kUnknown,
  kLoading,
  kAvailable,
  kFailed,
  kUnloading,
  kEnd,
};

// What a loaded model file declares and how it was loaded.
struct ModelMetadata {
  std::string objective;
  uint32_t num_trees = 0;
  uint32_t num_features = 0;
  uint32_t num_outputs = 0;
  bool has_linear_weights = false;
  int64_t created_unix_seconds = 0;
  // Checksum of the artifact's payload as stored in the file (16 hex digits).
  std::string checksum;
  // Last recorded training/validation metrics (e.g. "valid ndcg@10").
  std::map<std::string, double> training_metrics;
  uint64_t file_bytes = 0;
  // "identity" (one output) or "expected_relevance" (softmax over graded
  // outputs).
  std::string score_transform;
  // The scoring kernel chosen (or forced) for this version, and every
  // kernel of its plan ("quick_avx2+lane_chains+lockstep_walks";
  // core/scoring/scoring_kernel.h).
  std::string scoring_kernel;
  std::string scoring_kernel_plan;
  // Empty or one name per feature, as the model file stores them.
  std::vector<std::string> feature_names;
  // Heap bytes the loaded version holds (measured around its load).
  uint64_t memory_bytes = 0;
};

struct VersionStatus {
  int64_t version = 0;
  VersionState state = VersionState::kUnknown;
  std::string error;  // why it failed to load (kFailed)
  std::vector<std::string> labels;
  bool has_metadata = false;  // true while the version is loaded
  ModelMetadata metadata;
  int64_t loaded_unix_seconds = 0;
  // Why this available version above the default was not promoted.
  std::string promotion_refused;
};

struct ModelStatus {
  std::string name;
  std::vector<VersionStatus> versions;  // ascending by version
  int64_t default_version = 0;          // 0 = none available
};

// Which version a request wants: `version` > 0 pins one, else a non-empty
// `label` names one, else the model's default.
struct VersionSelector {
  std::string name;
  int64_t version = 0;
  std::string label;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_MODEL_STATUS_H_
