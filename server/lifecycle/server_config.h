#ifndef PLRANK_SERVER_LIFECYCLE_SERVER_CONFIG_H_
#define PLRANK_SERVER_LIFECYCLE_SERVER_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "plrank/v1/server_config.pb.h"

namespace plrank::server {

// Versions kept loaded when a model has no explicit policy: the newest plus
// one rollback target, so pinning or relabelling to the previous version
// needs no load.
inline constexpr uint32_t kDefaultLatestVersions = 2;

// The policy a model gets without an explicit one (latest 2).
v1::VersionPolicy DefaultVersionPolicy();

// Model names: letters, digits, '_', '-', '.', not starting with '.'.
bool IsValidModelName(absl::string_view name);

// Reads a ServerConfig in protobuf text format and validates it: valid,
// unique model names; specific versions and label targets positive; label
// names non-empty; shadow settings as ValidateShadowConfig. An empty (or
// whitespace-only) file is INVALID_ARGUMENT: a file being rewritten in
// place; "no models" is a file holding just a comment. Errors name the
// file.
absl::StatusOr<v1::ServerConfig> LoadServerConfig(const std::string& path);

absl::Status ValidateServerConfig(const v1::ServerConfig& config);

// The shadow fields of one model: shadow_fraction in [0, 1] (not NaN);
// shadow_version >= 0 (0 = unset); not both shadow_version and
// shadow_label; a fraction above 0 needs one of them; shadow_label must be
// one of the model's version_labels. Whether shadow_version exists on disk
// is not checked here (see VersionManager).
absl::Status ValidateShadowConfig(const v1::ModelConfig& model);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_SERVER_CONFIG_H_
