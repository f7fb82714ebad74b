#ifndef PLRANK_SERVER_LIFECYCLE_MODEL_REPOSITORY_H_
#define PLRANK_SERVER_LIFECYCLE_MODEL_REPOSITORY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plrank/v1/server_config.pb.h"

namespace plrank::server {

// The file a version directory must hold to be loadable.
inline constexpr char kModelFileName[] = "model.pb";

// Identity of a model file's current content, to tell whether a file that
// failed to load has been replaced since.
struct FileSignature {
  int64_t size = -1;
  int64_t mtime_ns = 0;
  int64_t inode = 0;
  bool operator==(const FileSignature&) const = default;
};

// A version directory that holds model.pb. Directories without it (a version
// being written) are not listed: they are skipped until the file appears.
struct VersionOnDisk {
  int64_t version = 0;
  std::string model_file;  // <dir>/model.pb
  FileSignature signature;
};

// One model of the repository as found on disk, with its serving policy.
struct ModelOnDisk {
  std::string name;
  std::string directory;
  v1::VersionPolicy policy;
  std::map<std::string, int64_t> labels;
  // ModelConfig.allow_incompatible_promotion (false without a config).
  bool allow_incompatible_promotion = false;
  // ModelConfig.shadow_* (none without a config).
  int64_t shadow_version = 0;
  std::string shadow_label;
  double shadow_fraction = 0.0;
  std::vector<VersionOnDisk> versions;  // ascending by version
  // Set when the model's directory could not be listed (it stays a model,
  // with no versions).
  std::string error;
};

// A directory of the repository that ScanRepository does not serve because
// of its name: a model directory whose name is not a valid model name, or a
// directory in a model's directory whose name is not a version number.
// Hidden names (".staging-7", ".publish-...": the documented way to write a
// version before renaming it into place) and plain files are not listed.
struct SkippedDirectory {
  std::string path;
  std::string reason;
};

// "17" -> 17; anything but a positive decimal integer (leading zeros, signs,
// suffixes such as "3.tmp", overflow) -> 0.
int64_t ParseVersionDirectoryName(const std::string& name);

// Lists the repository. With `config`, exactly its models (directories from
// base_path / name); without, every subdirectory of `base_path` whose name is
// a valid model name, each with DefaultVersionPolicy() and no labels. Fails
// only when `base_path` itself cannot be listed. With `skipped`, the
// directories passed over by their names are appended to it.
absl::StatusOr<std::vector<ModelOnDisk>> ScanRepository(
    const std::string& base_path, const v1::ServerConfig* config,
    std::vector<SkippedDirectory>* skipped = nullptr);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_MODEL_REPOSITORY_H_
