#include "server/lifecycle/server_config.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/data/file_io.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace plrank::server {
namespace {

// A model config is a few kilobytes; anything near this is not one.
constexpr size_t kMaxConfigFileBytes = size_t{64} << 20;

// Collects text-format parse errors so they can be returned, not printed.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!first_error_.empty()) return;
    first_error_ =
        absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  const std::string& first_error() const { return first_error_; }

 private:
  std::string first_error_;
};

}  // namespace

absl::Status ValidateShadowConfig(const v1::ModelConfig& model) {
  const auto error = [&model](auto&&... parts) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", model.name(), "': ", parts...));
  };
  const double fraction = model.shadow_fraction();
  // Written so that NaN fails too.
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    return error("shadow_fraction ", fraction, " is not in [0, 1]");
  }
  if (model.shadow_version() < 0) {
    return error("shadow_version ", model.shadow_version(),
                 " is not a positive integer");
  }
  const bool by_version = model.shadow_version() > 0;
  const bool by_label = !model.shadow_label().empty();
  if (by_version && by_label) {
    return error("set shadow_version or shadow_label, not both");
  }
  if (fraction > 0.0 && !by_version && !by_label) {
    return error("shadow_fraction ", fraction,
                 " without shadow_version or shadow_label");
  }
  // Labels live in this file, so a misspelt one is caught here; a version
  // may legitimately appear on disk later, so it is checked while serving.
  if (by_label && model.version_labels().count(model.shadow_label()) == 0) {
    return error("shadow_label '", model.shadow_label(),
                 "' is not one of its version_labels");
  }
  return absl::OkStatus();
}

v1::VersionPolicy DefaultVersionPolicy() {
  v1::VersionPolicy policy;
  policy.mutable_latest()->set_num_versions(kDefaultLatestVersions);
  return policy;
}

bool IsValidModelName(absl::string_view name) {
  if (name.empty() || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

absl::Status ValidateServerConfig(const v1::ServerConfig& config) {
  std::set<std::string> names;
  for (const v1::ModelConfig& model : config.models()) {
    if (!IsValidModelName(model.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid model name '", model.name(),
          "' (letters, digits, '_', '-', '.'; not starting with '.')"));
    }
    if (!names.insert(model.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", model.name(), "' is listed twice"));
    }
    if (model.version_policy().has_specific()) {
      if (model.version_policy().specific().versions().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model.name(), "': specific policy lists no version"));
      }
      for (int64_t version : model.version_policy().specific().versions()) {
        if (version <= 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("model '", model.name(), "': specific version ",
                           version, " is not a positive integer"));
        }
      }
    }
    if (absl::Status shadow = ValidateShadowConfig(model); !shadow.ok()) {
      return shadow;
    }
    for (const auto& [label, version] : model.version_labels()) {
      if (label.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("model '", model.name(), "': empty label name"));
      }
      if (version <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model.name(), "': label '", label,
            "' points to version ", version, ", not a positive integer"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ServerConfig> LoadServerConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, kMaxConfigFileBytes);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat("model config file: ", text.status().message()));
  }
  // A file rewritten in place is empty for a moment: read then, it would
  // remove every model. A config that means "no models" says so in a
  // comment; publish configs by renaming a complete file over the old one.
  if (absl::StripAsciiWhitespace(*text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model config file ", path,
        " is empty (being rewritten? publish it with a rename; a config "
        "with no models needs at least a comment)"));
  }
  v1::ServerConfig config;
  ErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(*text, &config)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model config file ", path, ": ", errors.first_error()));
  }
  absl::Status valid = ValidateServerConfig(config);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model config file ", path, ": ", valid.message()));
  }
  return config;
}

}  // namespace plrank::server
