#ifndef PLRANK_SERVER_LIFECYCLE_SERVING_SNAPSHOT_H_
#define PLRANK_SERVER_LIFECYCLE_SERVING_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "server/lifecycle/model_status.h"
#include "server/lifecycle/servable_version.h"

namespace plrank::server {

// What one model serves at one instant.
struct ModelSnapshot {
  std::string name;
  std::map<int64_t, std::shared_ptr<const ServableVersion>> available;
  std::map<std::string, int64_t> labels;
  // The version the manager promoted to default (see promotion.h); 0 or a
  // version not available means the highest available.
  int64_t promoted = 0;
  // Every known version with its state (AVAILABLE, LOADING, FAILED, END),
  // labels and metadata, and default_version().
  ModelStatus status;
  // Available versions loaded only because they are the shadow: never the
  // default.
  std::set<int64_t> shadow_only;

  // Shadow scoring (ModelConfig.shadow_*): set when a shadow version or
  // label is configured. `shadow` is the version it resolves to in this
  // snapshot, or null with `shadow_error` saying why.
  bool has_shadow = false;
  int64_t shadow_version = 0;
  std::string shadow_label;
  double shadow_fraction = 0.0;
  std::shared_ptr<const ServableVersion> shadow;
  std::string shadow_error;

  // What unpinned requests get (0 = none available).
  int64_t default_version() const {
    if (promoted != 0 && available.count(promoted) > 0) return promoted;
    for (auto it = available.rbegin(); it != available.rend(); ++it) {
      if (shadow_only.count(it->first) == 0) return it->first;
    }
    return 0;
  }
};

// An immutable picture of every model, published atomically by the version
// manager. A request resolves its version once against one snapshot and keeps
// the resulting shared_ptr, so a concurrent swap never changes the version
// under it.
struct ServingSnapshot {
  std::map<std::string, ModelSnapshot> models;

  // The version a selector names. Errors: NOT_FOUND (unknown model, label,
  // or version not loaded), UNAVAILABLE (no version ready, or a label's
  // version still loading/not loaded), FAILED_PRECONDITION (the pinned or
  // labelled version failed to load), INVALID_ARGUMENT (empty name, negative
  // version). Messages name no file and no model but the requested one:
  // they go to clients.
  absl::StatusOr<std::shared_ptr<const ServableVersion>> Resolve(
      const VersionSelector& selector) const;

  // Whether some model has a default version (what health reports): a
  // version loaded only as a shadow does not count.
  bool AnyModelAvailable() const;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_SERVING_SNAPSHOT_H_
