#ifndef PLRANK_SERVER_SERVABLE_VERSION_H_
#define PLRANK_SERVER_SERVABLE_VERSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/model/forest_scorer.h"
#include "plrank/v1/ranker.pb.h"

namespace plrank::server {

// One loaded, validated and warmed-up model version. Immutable and shared:
// requests hold a std::shared_ptr for their whole duration, so a version
// retired by the version manager is freed when its last request ends (the
// destructor logs event=version_released).
class ServableVersion {
 public:
  ServableVersion(std::string model, int64_t version, std::string model_file,
                  ForestScorer scorer, v1::ModelMetadata metadata,
                  int64_t loaded_unix_seconds);
  ~ServableVersion();
  ServableVersion(const ServableVersion&) = delete;
  ServableVersion& operator=(const ServableVersion&) = delete;

  const std::string& model() const { return model_; }
  int64_t version() const { return version_; }
  const std::string& version_string() const { return version_string_; }
  const std::string& model_file() const { return model_file_; }
  const ForestScorer& scorer() const { return scorer_; }
  const v1::ModelMetadata& metadata() const { return metadata_; }
  int64_t loaded_unix_seconds() const { return loaded_unix_seconds_; }

 private:
  std::string model_;
  int64_t version_;
  std::string version_string_;  // for metric labels, built once
  std::string model_file_;
  ForestScorer scorer_;
  v1::ModelMetadata metadata_;
  int64_t loaded_unix_seconds_;
};

// Reads `model_file`, parses and validates it (format version, checksum,
// structure), flattens it for scoring and warms it up by scoring a dummy
// batch (all-zero and all-missing rows) whose scores must be finite. Any
// failure returns an error naming the file; nothing is half-loaded.
absl::StatusOr<std::shared_ptr<const ServableVersion>> LoadServableVersion(
    const std::string& model, int64_t version, const std::string& model_file);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_SERVABLE_VERSION_H_
