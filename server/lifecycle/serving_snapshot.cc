#include "server/lifecycle/serving_snapshot.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/lifecycle/echoed_text.h"

namespace plrank::server {
namespace {

std::string AvailableList(const ModelSnapshot& model) {
  if (model.available.empty()) return "none";
  std::string out;
  for (const auto& [version, servable] : model.available) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", version);
  }
  return out;
}

const VersionStatus* FindStatus(const ModelSnapshot& model, int64_t version) {
  for (const VersionStatus& status : model.status.versions) {
    if (status.version == version) return &status;
  }
  return nullptr;
}

// Why `version` (not available) cannot serve; `via` describes how the
// request named it.
absl::Status NotServing(const ModelSnapshot& model, int64_t version,
                        const std::string& via, bool named_by_label) {
  const VersionStatus* status = FindStatus(model, version);
  const std::string what =
      absl::StrCat("version ", version, " of model '", model.name, "'", via);
  if (status != nullptr && status->state == VersionState::kFailed) {
    // The load error names files on the server: it goes to the log and to
    // the admin-only GetModelStatus, never to a ranking client.
    return absl::FailedPreconditionError(absl::StrCat(
        what, " failed to load (the server log and GetModelStatus say why)"));
  }
  if (status != nullptr && status->state == VersionState::kLoading) {
    return absl::UnavailableError(absl::StrCat(what, " is still loading"));
  }
  const std::string detail = absl::StrCat(
      what, " is not loaded (available: ", AvailableList(model), ")");
  // A label that exists but points nowhere is a server-side state, not a
  // caller's typo.
  return named_by_label ? absl::UnavailableError(detail)
                        : absl::NotFoundError(detail);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ServableVersion>> ServingSnapshot::Resolve(
    const VersionSelector& selector) const {
  if (selector.name.empty()) {
    return absl::InvalidArgumentError("model name is empty");
  }
  auto model_it = models.find(selector.name);
  if (model_it == models.end()) {
    // Other models' names are not the caller's business (ListModels is the
    // admin's way to see them).
    return absl::NotFoundError(
        absl::StrCat("unknown model '", EchoedText(selector.name), "'"));
  }
  const ModelSnapshot& model = model_it->second;
  if (selector.version < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("version ", selector.version, " is negative"));
  }
  if (selector.version > 0) {
    auto it = model.available.find(selector.version);
    if (it != model.available.end()) return it->second;
    return NotServing(model, selector.version, "", false);
  }
  if (!selector.label.empty()) {
    auto label = model.labels.find(selector.label);
    if (label == model.labels.end()) {
      std::string known;
      for (const auto& [name, version] : model.labels) {
        absl::StrAppend(&known, known.empty() ? "" : ", ", name);
      }
      return absl::NotFoundError(absl::StrCat(
          "model '", model.name, "' has no label '", EchoedText(selector.label),
          "' (labels: ", known.empty() ? "none" : known, ")"));
    }
    auto it = model.available.find(label->second);
    if (it != model.available.end()) return it->second;
    return NotServing(model, label->second,
                      absl::StrCat(" (label '", label->first, "')"), true);
  }
  const int64_t default_version = model.default_version();
  if (default_version == 0) {
    return absl::UnavailableError(
        absl::StrCat("model '", model.name, "' has no version ready to serve"));
  }
  return model.available.at(default_version);
}

bool ServingSnapshot::AnyModelAvailable() const {
  for (const auto& [name, model] : models) {
    if (model.default_version() != 0) return true;
  }
  return false;
}

}  // namespace plrank::server
