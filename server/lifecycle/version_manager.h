#ifndef PLRANK_SERVER_LIFECYCLE_VERSION_MANAGER_H_
#define PLRANK_SERVER_LIFECYCLE_VERSION_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "plrank/v1/server_config.pb.h"
#include "server/lifecycle/lifecycle_observer.h"
#include "server/lifecycle/model_repository.h"
#include "server/lifecycle/model_status.h"
#include "server/lifecycle/promotion.h"
#include "server/lifecycle/servable_version.h"
#include "server/lifecycle/serving_snapshot.h"

namespace plrank::server {

struct VersionManagerOptions {
  std::string base_path;
  // Optional ServerConfig (text format), re-read at every scan.
  std::string config_file;
  LifecycleObserver* observer = nullptr;  // optional, not owned
  // How long a model directory, or the only serving version of a model,
  // may be missing from the repository before it is unloaded (a directory
  // replaced non-atomically, a repository swapped under the server). A
  // vanished version is unloaded at once when another version of its model
  // serves. 0 = at the first scan that misses it.
  absl::Duration vanished_grace = absl::ZeroDuration();
  // A model.pb larger than this is FAILED by its size, unread.
  uint64_t max_model_file_bytes = kMaxModelFileBytes;
  // Memory budget of the loaded versions of every model (0 = none): a
  // version whose estimate (kEstimatedMemoryPerFileByte x its file size)
  // added to what the loaded versions hold (their measured memory_bytes)
  // exceeds it is not loaded: FAILED with the figures, retried at every
  // scan (another version may have left), and the serving ones untouched.
  uint64_t max_loading_bytes = 0;
  // ForestScorer::Options::kernel for every version: "auto" or a kernel name.
  std::string scoring_kernel = "auto";
};

// What one scan changed.
struct ScanSummary {
  absl::Status status;  // non-OK: the repository could not be read; nothing
                        // changed
  uint32_t loaded = 0;
  uint32_t failed = 0;
  uint32_t unloaded = 0;
};

// Retired (END) versions listed in a model's status, newest retirements
// first; older ones are dropped so status stays bounded over many reloads.
inline constexpr size_t kRetiredVersionsInStatus = 4;
// FAILED versions listed in a model's status, the newest versions; older
// failures stay recorded (so the same broken file is not retried) but are
// left out, so status stays bounded over many broken versions.
inline constexpr size_t kFailedVersionsInStatus = 8;

// Keeps the serving snapshot in line with the model repository.
//
// Each Scan() lists <base>/<model>/<version>/model.pb and, per model, decides
// which versions should serve (its VersionPolicy plus every labelled
// version), loads the missing ones (read, validate, warm up) and only then
// publishes a new snapshot in which they replace retired versions. So:
//  - a version serves only after it loaded and warmed up;
//  - a version that fails to load is FAILED with its error and never
//    replaces a good one (latest-N skips failed versions); it is retried
//    only when its model.pb changes (size, mtime or inode, and then only if
//    its content fingerprint differs). A FAILED version the policy no longer
//    reaches (newer ones fill its window) whose file changed is dropped
//    from status rather than kept with a stale error;
//  - a failure counts in LifecycleObserver::OnModelLoad (success false) once
//    per file content: at once, except an incomplete file (DATA_LOSS, e.g. a
//    copy in progress), which counts only if the next scan finds the same
//    file, so an ordinary non-atomic copy counts nothing;
//  - a version directory without model.pb is skipped until the file appears;
//  - an AVAILABLE version's model.pb is never reloaded: versions are
//    immutable (a change is logged once and ignored);
//  - the default version (unpinned requests) moves to a newer version only
//    when it is compatible with the one serving (ChooseDefaultVersion);
//    the serving one then stays loaded whatever the policy says;
//  - requests in flight keep the version they resolved; a retired version is
//    freed when its last request ends;
//  - status keeps at most kRetiredVersionsInStatus END versions per model;
//  - load before unload: a version whose model.pb vanished keeps serving
//    until another version of its model is available (then it is unloaded
//    at once) or options.vanished_grace has passed; a vanished model keeps
//    serving for vanished_grace;
//  - a label moved to a version that is not available (not on disk yet,
//    loading, failed) stays on its previous version while that one is
//    available, which stays loaded meanwhile;
//  - the config file is re-read at every scan; one that cannot be read or
//    parsed, or is empty, is a failed reload that keeps the last good
//    config; one that drops models takes effect at the second scan in a
//    row that reads it unchanged;
//  - a model's shadow (ModelConfig shadow_version, or the version of its
//    shadow_label) is loaded and kept loaded like a labelled version, but is
//    never chosen as the default for being the shadow (the shadow label does
//    not promote); each snapshot resolves the model's shadow (version or label)
//    or says why it cannot (ModelSnapshot::shadow_error, logged once per
//    change as event=shadow_unavailable).
// Scan() calls are serialized; snapshot() is cheap and never blocks on a
// scan in progress.
class VersionManager {
 public:
  explicit VersionManager(VersionManagerOptions options);
  ~VersionManager();

  ScanSummary Scan();

  std::shared_ptr<const ServingSnapshot> snapshot() const;

  // Called (from the scanning thread) after every published snapshot,
  // e.g. to update health status.
  void SetListener(std::function<void(const ServingSnapshot&)> listener);

 private:
  struct VersionRecord {
    VersionState state = VersionState::kUnknown;
    std::string error;
    FileSignature signature;      // of model.pb at the last load attempt
    uint64_t fingerprint = 0;     // of its content (FAILED versions)
    bool failure_counted = true;  // false: counts if the file stays as is
    bool change_logged = false;
    uint64_t seen_in_scan = 0;    // last scan whose policy reached it
    uint64_t retired_at = 0;      // retirement order (END versions)
    // When a scan first missed its model.pb (InfiniteFuture: on disk).
    absl::Time missing_since = absl::InfiniteFuture();
    bool refusal_logged = false;  // promotion refused: logged and counted
    std::shared_ptr<const ServableVersion> servable;  // when AVAILABLE
  };
  struct ModelRecord {
    ModelOnDisk disk;
    std::map<int64_t, VersionRecord> versions;
    // The default as last published: the reference for promotion.
    int64_t published_default = 0;
    // Labels as last published at the end of a scan. Snapshots published
    // while a scan is loading keep these, so a label moved to a version that
    // is still loading never points at it before it is available.
    std::map<std::string, int64_t> published_labels;
    // Versions loaded only because they are the configured shadow version:
    // excluded from the default decision.
    std::set<int64_t> shadow_only;
    // The shadow problem last logged, to log each change once.
    std::string logged_shadow_error;
    // When a scan first missed the model (InfiniteFuture: present).
    absl::Time missing_since = absl::InfiniteFuture();
  };

  // Makes `version` AVAILABLE if it is not and has not failed with the same
  // file; returns whether it is available.
  bool EnsureLoaded(ModelRecord& model, const VersionOnDisk& version,
                    ScanSummary* summary);
  void Unload(ModelRecord& model, int64_t version, const char* reason,
              ScanSummary* summary);
  void SyncModel(ModelRecord& model, ScanSummary* summary);
  // Counts confirmed failures; forgets FAILED versions the policy did not
  // reach whose file changed; bounds the END history.
  void SettleRecords(ModelRecord& model);
  // The default among available versions (restricted to `among` if given).
  PromotionDecision DecideDefault(const ModelRecord& model,
                                  const std::map<std::string, int64_t>& labels,
                                  const std::set<int64_t>* among) const;
  ServableVersion::ReleaseHook MakeReleaseHook() const;
  // Memory the loaded versions of every model hold.
  uint64_t LoadedBytes() const;
  // Snapshot of records_ -> snapshot_, then the listener. `end_of_scan`
  // also makes the labels read from disk/config take effect.
  void Publish(bool end_of_scan);
  // Fills the shadow fields of each model of `snapshot` from its config;
  // `log_changes` logs a shadow becoming unavailable or available again.
  void ResolveShadows(ServingSnapshot& snapshot, bool log_changes);
  // Current config or nullopt; keeps the previous one when the file breaks.
  const v1::ServerConfig* RefreshConfig();

  const VersionManagerOptions options_;

  std::mutex scan_mutex_;  // serializes Scan(); guards everything below
  std::map<std::string, ModelRecord> records_;
  std::optional<v1::ServerConfig> config_;
  std::string last_config_error_;
  // A config that drops models, read once: it takes effect when the next
  // scan reads the same content (a file cut between two model blocks by an
  // in-place rewrite is still being written then). Serialized.
  std::optional<std::string> pending_config_;
  std::function<void(const ServingSnapshot&)> listener_;
  // Directories the last scan skipped by their names: each is logged
  // (event=directory_skipped) at the first scan that finds it, not at every
  // scan; one that goes and comes back is logged again.
  std::set<std::string> skipped_logged_;
  uint64_t scan_number_ = 0;
  uint64_t retirements_ = 0;

  mutable std::mutex snapshot_mutex_;  // guards snapshot_ only
  std::shared_ptr<const ServingSnapshot> snapshot_;
};

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_VERSION_MANAGER_H_
