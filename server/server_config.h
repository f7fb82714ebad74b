#ifndef PLRANK_SERVER_SERVER_CONFIG_H_
#define PLRANK_SERVER_SERVER_CONFIG_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
// names non-empty. Errors name the file.
absl::StatusOr<v1::ServerConfig> LoadServerConfig(const std::string& path);

absl::Status ValidateServerConfig(const v1::ServerConfig& config);

}  // namespace plrank::server

#endif  // PLRANK_SERVER_SERVER_CONFIG_H_
