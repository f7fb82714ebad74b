#include "server/lifecycle/version_manager.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/model/checksum.h"
#include "server/lifecycle/servable_version.h"
#include "server/lifecycle/server_config.h"
#include "server/lifecycle/structured_log.h"
#include "server/lifecycle/version_policy.h"

namespace plrank::server {
VersionManager::VersionManager(VersionManagerOptions options)
    : options_(std::move(options)),
      snapshot_(std::make_shared<const ServingSnapshot>()) {}

VersionManager::~VersionManager() = default;

std::shared_ptr<const ServingSnapshot> VersionManager::snapshot() const {
  std::lock_guard<std::mutex> lock(snapshot_mutex_);
  return snapshot_;
}

void VersionManager::SetListener(
    std::function<void(const ServingSnapshot&)> listener) {
  std::lock_guard<std::mutex> lock(scan_mutex_);
  listener_ = std::move(listener);
}

const v1::ServerConfig* VersionManager::RefreshConfig() {
  if (options_.config_file.empty()) return nullptr;
  absl::StatusOr<v1::ServerConfig> config =
      LoadServerConfig(options_.config_file);
  if (config.ok() && config_.has_value()) {
    std::set<std::string> kept;
    for (const v1::ModelConfig& model : config->models()) {
      kept.insert(model.name());
    }
    std::string dropped;
    for (const v1::ModelConfig& model : config_->models()) {
      if (kept.count(model.name()) == 0) {
        absl::StrAppend(&dropped, dropped.empty() ? "" : ",", model.name());
      }
    }
    const std::string content = config->SerializeAsString();
    if (!dropped.empty() &&
        (!pending_config_.has_value() || content != *pending_config_)) {
      pending_config_ = content;
      LogEvent("warning", "config_change_deferred",
               {{"file", options_.config_file},
                {"dropped_models", dropped},
                {"action",
                 "applied when the next scan reads the same content"}});
      return &*config_;
    }
  }
  if (config.ok()) {
    last_config_error_.clear();
    pending_config_.reset();
    config_ = *std::move(config);
  } else if (std::string(config.status().message()) != last_config_error_) {
    last_config_error_ = std::string(config.status().message());
    LogEvent("error", "config_reload_failed",
             {{"file", options_.config_file},
              {"error", last_config_error_},
              {"action", config_ ? "keeping previous config" : "no models"}});
  }
  return config_ ? &*config_ : nullptr;
}

ScanSummary VersionManager::Scan() {
  std::lock_guard<std::mutex> lock(scan_mutex_);
  ++scan_number_;
  ScanSummary summary;
  const v1::ServerConfig* config = RefreshConfig();
  if (!options_.config_file.empty() && config == nullptr) {
    summary.status = absl::FailedPreconditionError(last_config_error_);
    return summary;
  }
  std::vector<SkippedDirectory> skipped;
  absl::StatusOr<std::vector<ModelOnDisk>> models =
      ScanRepository(options_.base_path, config, &skipped);
  if (!models.ok()) {
    summary.status = models.status();
    LogEvent("error", "scan_failed",
             {{"base_path", options_.base_path},
              {"error", std::string(models.status().message())}});
    return summary;
  }
  std::set<std::string> skipped_now;
  for (const SkippedDirectory& directory : skipped) {
    skipped_now.insert(directory.path);
    if (skipped_logged_.count(directory.path) == 0) {
      LogEvent("warning", "directory_skipped",
               {{"path", directory.path}, {"reason", directory.reason}});
    }
  }
  skipped_logged_ = std::move(skipped_now);

  std::set<std::string> present;
  for (const ModelOnDisk& model : *models) present.insert(model.name);
  const absl::Time now = absl::Now();
  for (auto it = records_.begin(); it != records_.end();) {
    if (present.count(it->first) > 0) {
      ++it;
      continue;
    }
    // A model configured away goes at once; one that vanished from disk
    // gets the grace period (a directory replaced non-atomically).
    const bool configured_away =
        config != nullptr &&
        std::none_of(config->models().begin(), config->models().end(),
                     [&](const v1::ModelConfig& m) {
                       return m.name() == it->first;
                     });
    if (!configured_away && options_.vanished_grace > absl::ZeroDuration()) {
      if (it->second.missing_since == absl::InfiniteFuture()) {
        it->second.missing_since = now;
        LogEvent("warning", "model_missing",
                 {{"model", it->first},
                  {"action", absl::StrCat("still serving for up to ",
                                          absl::FormatDuration(
                                              options_.vanished_grace))}});
      }
      if (now - it->second.missing_since < options_.vanished_grace) {
        ++it;
        continue;
      }
    }
    std::vector<int64_t> versions;
    for (const auto& [version, record] : it->second.versions) {
      versions.push_back(version);
    }
    for (int64_t version : versions) {
      Unload(it->second, version, "model_removed", &summary);
    }
    LogEvent("info", "model_removed", {{"model", it->first}});
    if (options_.observer != nullptr) {
      options_.observer->OnVersionsLoaded(it->first, 0);
    }
    it = records_.erase(it);
  }

  for (ModelOnDisk& disk : *models) {
    auto [it, added] = records_.try_emplace(disk.name);
    if (added) {
      LogEvent("info", "model_added",
               {{"model", disk.name},
                {"directory", disk.directory},
                {"policy", PolicyName(disk.policy)}});
    }
    if (!disk.error.empty() && disk.error != it->second.disk.error) {
      LogEvent("warning", "model_directory_unreadable",
               {{"model", disk.name}, {"error", disk.error}});
    }
    if (it->second.missing_since != absl::InfiniteFuture()) {
      LogEvent("info", "model_reappeared", {{"model", disk.name}});
      it->second.missing_since = absl::InfiniteFuture();
    }
    it->second.disk = std::move(disk);
    SyncModel(it->second, &summary);
  }
  Publish(/*end_of_scan=*/true);
  return summary;
}

void VersionManager::SyncModel(ModelRecord& model, ScanSummary* summary) {
  const ModelOnDisk& disk = model.disk;
  // Versions whose model.pb disappeared.
  std::vector<int64_t> gone;
  for (const auto& [version, record] : model.versions) {
    const bool on_disk =
        std::any_of(disk.versions.begin(), disk.versions.end(),
                    // (an init-capture: clang 14 cannot capture a
                    // structured binding)
                    [version = version](const VersionOnDisk& v) {
                      return v.version == version;
                    });
    if (!on_disk) gone.push_back(version);
  }
  for (auto& [version, record] : model.versions) {
    if (std::find(gone.begin(), gone.end(), version) == gone.end()) {
      record.missing_since = absl::InfiniteFuture();  // on disk (again)
    }
  }
  // Versions that were not serving are forgotten now; serving ones are
  // handled once the versions on disk have loaded (load before unload).
  std::vector<int64_t> gone_serving;
  for (int64_t version : gone) {
    VersionRecord& record = model.versions[version];
    if (record.state == VersionState::kAvailable) {
      if (record.missing_since == absl::InfiniteFuture()) {
        record.missing_since = absl::Now();
      }
      gone_serving.push_back(version);
    } else {
      model.versions.erase(version);
    }
  }
  // A failure of an incomplete file counts once the file has stayed as it
  // was for a whole scan: a copy still in progress would have changed it.
  for (auto& [version, record] : model.versions) {
    if (record.state != VersionState::kFailed || record.failure_counted) {
      continue;
    }
    for (const VersionOnDisk& v : disk.versions) {
      if (v.version == version && v.signature == record.signature) {
        record.failure_counted = true;
        if (options_.observer != nullptr) {
          options_.observer->OnModelLoad(disk.name, false, 0.0);
        }
      }
    }
  }

  // Versions that should serve: the policy's, then every labelled one.
  std::map<int64_t, const VersionOnDisk*> by_version;
  std::vector<int64_t> on_disk;
  for (const VersionOnDisk& v : disk.versions) {
    by_version[v.version] = &v;
    on_disk.push_back(v.version);
  }
  std::set<int64_t> wanted;
  const VersionPlan plan = PlanVersions(disk.policy, on_disk);
  for (int64_t version : plan.candidates) {
    if (wanted.size() >= plan.max_versions) break;
    if (EnsureLoaded(model, *by_version.at(version), summary)) {
      wanted.insert(version);
    }
  }
  const std::map<std::string, int64_t> labels =
      PromotingLabels(disk.labels, disk.shadow_label);
  for (const auto& [label, version] : labels) {
    for (const VersionOnDisk& v : disk.versions) {
      if (v.version == version && EnsureLoaded(model, v, summary)) {
        wanted.insert(v.version);
      }
    }
  }
  // A label moved to a version that is not available keeps its previous
  // version, which therefore stays loaded.
  for (const auto& [label, version] : disk.labels) {
    auto target = model.versions.find(version);
    if (target != model.versions.end() && target->second.servable != nullptr) {
      continue;
    }
    auto previous = model.published_labels.find(label);
    if (previous == model.published_labels.end()) continue;
    auto held = model.versions.find(previous->second);
    if (held != model.versions.end() && held->second.servable != nullptr) {
      wanted.insert(previous->second);
    }
  }
  // Vanished versions: unloaded once another version serves in their
  // place, or when their grace period is over; kept until then.
  bool other_available = false;
  for (const auto& [version, record] : model.versions) {
    if (record.servable != nullptr &&
        std::find(gone_serving.begin(), gone_serving.end(), version) ==
            gone_serving.end()) {
      other_available = true;
    }
  }
  for (int64_t version : gone_serving) {
    const VersionRecord& record = model.versions[version];
    if (other_available ||
        absl::Now() - record.missing_since >= options_.vanished_grace) {
      Unload(model, version, "removed_from_disk", summary);
      model.versions.erase(version);
    } else {
      wanted.insert(version);
    }
  }
  // The version serving now stays loaded while the newer ones the policy
  // wants are refused promotion: unpinned requests keep working.
  std::set<int64_t> candidates = wanted;
  candidates.insert(model.published_default);
  const PromotionDecision decision = DecideDefault(model, labels, &candidates);
  if (decision.default_version != 0) wanted.insert(decision.default_version);
  // The shadow's version, if on disk: loaded and kept, but (when the policy
  // and the other labels do not want it anyway) never a default candidate,
  // so that shadowing a newer version does not promote it. Marked before
  // loading: the load publishes snapshots.
  model.shadow_only.clear();
  const int64_t shadow =
      ShadowTarget(disk.shadow_version, disk.shadow_label, disk.labels);
  if (shadow > 0 && wanted.count(shadow) == 0) {
    for (const VersionOnDisk& v : disk.versions) {
      if (v.version != shadow) continue;
      model.shadow_only.insert(v.version);
      if (EnsureLoaded(model, v, summary)) wanted.insert(v.version);
    }
  }
  for (auto& [version, record] : model.versions) {
    if (record.state == VersionState::kAvailable &&
        wanted.count(version) == 0) {
      Unload(model, version, "policy", summary);
    }
  }
  SettleRecords(model);
}

void VersionManager::SettleRecords(ModelRecord& model) {
  std::map<int64_t, const VersionOnDisk*> on_disk;
  for (const VersionOnDisk& v : model.disk.versions) on_disk[v.version] = &v;
  std::vector<std::pair<uint64_t, int64_t>> retired;  // (retired_at, version)
  for (auto it = model.versions.begin(); it != model.versions.end();) {
    VersionRecord& record = it->second;
    auto disk = on_disk.find(it->first);
    // A FAILED version the policy did not reach this scan (newer versions
    // fill its window) whose file changed, e.g. a slow copy that has since
    // completed: its error is stale and it is not needed, so forget it.
    // Should the policy reach it later, it is loaded afresh.
    if (record.state == VersionState::kFailed &&
        record.seen_in_scan != scan_number_ && disk != on_disk.end() &&
        !(disk->second->signature == record.signature)) {
      it = model.versions.erase(it);
      continue;
    }
    if (record.state == VersionState::kEnd) {
      retired.emplace_back(record.retired_at, it->first);
    }
    ++it;
  }
  if (retired.size() <= kRetiredVersionsInStatus) return;
  std::sort(retired.begin(), retired.end());
  for (size_t i = 0; i + kRetiredVersionsInStatus < retired.size(); ++i) {
    model.versions.erase(retired[i].second);
  }
}

PromotionDecision VersionManager::DecideDefault(
    const ModelRecord& model, const std::map<std::string, int64_t>& labels,
    const std::set<int64_t>* among) const {
  std::map<int64_t, const ModelMetadata*> available;
  for (const auto& [version, record] : model.versions) {
    if (record.servable == nullptr) continue;
    if (among != nullptr && among->count(version) == 0) continue;
    available[version] = &record.servable->metadata();
  }
  std::set<int64_t> labelled;
  for (const auto& [label, version] : labels) labelled.insert(version);
  return ChooseDefaultVersion(available, labelled, model.published_default,
                              model.disk.allow_incompatible_promotion);
}

ServableVersion::ReleaseHook VersionManager::MakeReleaseHook() const {
  LifecycleObserver* observer = options_.observer;
  if (observer == nullptr) return {};
  return [observer](const ServableVersion& version) {
    observer->OnVersionReleased(version.model(), version.version());
  };
}

uint64_t VersionManager::LoadedBytes() const {
  uint64_t total = 0;
  for (const auto& [name, model] : records_) {
    for (const auto& [version, record] : model.versions) {
      if (record.servable != nullptr) {
        total += record.servable->metadata().memory_bytes;
      }
    }
  }
  return total;
}

bool VersionManager::EnsureLoaded(ModelRecord& model,
                                  const VersionOnDisk& version,
                                  ScanSummary* summary) {
  VersionRecord& record = model.versions[version.version];
  record.seen_in_scan = scan_number_;
  const std::string version_label = absl::StrCat(version.version);
  if (record.state == VersionState::kAvailable) {
    if (!(record.signature == version.signature) && !record.change_logged) {
      record.change_logged = true;
      LogEvent("warning", "version_file_changed_ignored",
               {{"model", model.disk.name},
                {"version", version_label},
                {"file", version.model_file},
                {"reason", "versions are immutable; add a new version"}});
    }
    return true;
  }
  if (record.state == VersionState::kFailed &&
      record.signature == version.signature) {
    return false;  // same broken file as before: do not retry
  }
  if (options_.max_loading_bytes > 0 && version.signature.size >= 0) {
    const uint64_t estimate = static_cast<uint64_t>(version.signature.size) *
                              kEstimatedMemoryPerFileByte;
    const uint64_t loaded = LoadedBytes();
    if (loaded + estimate > options_.max_loading_bytes) {
      const std::string error = absl::StrCat(
          "not loaded: it needs about ", estimate, " bytes (",
          kEstimatedMemoryPerFileByte, " x its ", version.signature.size,
          "-byte file) and the loaded versions hold ", loaded,
          "; together above --max_loading_bytes=", options_.max_loading_bytes);
      // Retried at every scan: memory may be freed meanwhile.
      record.signature = FileSignature{};
      if (record.state != VersionState::kFailed || record.error != error) {
        record.state = VersionState::kFailed;
        record.error = error;
        record.failure_counted = true;
        ++summary->failed;
        if (options_.observer != nullptr) {
          options_.observer->OnModelLoad(model.disk.name, false, 0.0);
        }
        LogEvent("error", "version_load_failed",
                 {{"model", model.disk.name},
                  {"version", version_label},
                  {"file", version.model_file},
                  {"error", error}});
      }
      return false;
    }
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> bytes = ReadModelFileBytes(version.model_file, options_.max_model_file_bytes);
  const uint64_t fingerprint = bytes.ok() ? Fnv1a64(*bytes) : 0;
  if (record.state == VersionState::kFailed && bytes.ok() &&
      fingerprint == record.fingerprint) {
    // Touched or copied again with the same content: still the same
    // failure, which has now outlived a change of its file's metadata.
    record.signature = version.signature;
    if (!record.failure_counted && options_.observer != nullptr) {
      options_.observer->OnModelLoad(model.disk.name, false, 0.0);
    }
    record.failure_counted = true;
    return false;
  }
  record.state = VersionState::kLoading;
  record.error.clear();
  record.signature = version.signature;
  record.fingerprint = fingerprint;
  record.change_logged = false;
  Publish(/*end_of_scan=*/false);  // status shows LOADING during a load

  absl::StatusOr<std::shared_ptr<const ServableVersion>> loaded =
      bytes.ok() ? LoadServableVersionFromBytes(
                       model.disk.name, version.version, version.model_file,
                       *bytes, MakeReleaseHook(), options_.scoring_kernel)
                 : bytes.status();
  bytes = std::string();  // the servable keeps no copy of the file
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!loaded.ok()) {
    record.state = VersionState::kFailed;
    record.error = std::string(loaded.status().message());
    // An incomplete file (DATA_LOSS) may be a copy in progress: it counts
    // only if the next scan finds it unchanged (see SyncModel).
    record.failure_counted =
        loaded.status().code() != absl::StatusCode::kDataLoss;
    if (record.failure_counted && options_.observer != nullptr) {
      options_.observer->OnModelLoad(model.disk.name, false, seconds);
    }
    ++summary->failed;
    LogEvent("error", "version_load_failed",
             {{"model", model.disk.name},
              {"version", version_label},
              {"file", version.model_file},
              {"error", record.error}});
    return false;
  }
  if (options_.observer != nullptr) {
    options_.observer->OnModelLoad(model.disk.name, true, seconds);
  }
  record.state = VersionState::kAvailable;
  record.servable = *std::move(loaded);
  record.refusal_logged = false;
  ++summary->loaded;
  const ModelMetadata& metadata = record.servable->metadata();
  LogEvent("info", "version_loaded",
           {{"model", model.disk.name},
            {"version", version_label},
            {"file", version.model_file},
            {"trees", absl::StrCat(metadata.num_trees)},
            {"features", absl::StrCat(metadata.num_features)},
            {"objective", metadata.objective},
            {"checksum", metadata.checksum},
            {"scoring_kernel", metadata.scoring_kernel},
            {"scoring_kernels", metadata.scoring_kernel_plan},
            {"memory_bytes", absl::StrCat(metadata.memory_bytes)},
            {"load_seconds", absl::StrCat(seconds)}});
  if (options_.observer != nullptr) {
    options_.observer->OnVersionAvailable(*record.servable);
  }
  return true;
}

void VersionManager::Unload(ModelRecord& model, int64_t version,
                            const char* reason, ScanSummary* summary) {
  auto it = model.versions.find(version);
  if (it == model.versions.end() ||
      it->second.state != VersionState::kAvailable) {
    return;
  }
  it->second.state = VersionState::kEnd;
  it->second.retired_at = ++retirements_;
  // Requests in flight still hold their own reference; the servable is freed
  // (event=version_released) when the last of them ends.
  it->second.servable.reset();
  ++summary->unloaded;
  LogEvent("info", "version_unloaded",
           {{"model", model.disk.name},
            {"version", absl::StrCat(version)},
            {"reason", reason}});
  if (options_.observer != nullptr) {
    options_.observer->OnVersionUnloaded(model.disk.name, version);
  }
}

void VersionManager::ResolveShadows(ServingSnapshot& snapshot,
                                    bool log_changes) {
  for (auto& [name, model] : snapshot.models) {
    ModelRecord& record = records_[name];
    const ModelOnDisk& disk = record.disk;
    model.has_shadow = disk.shadow_version > 0 || !disk.shadow_label.empty();
    if (!model.has_shadow) {
      record.logged_shadow_error.clear();
      continue;
    }
    model.shadow_version = disk.shadow_version;
    model.shadow_label = disk.shadow_label;
    model.shadow_fraction = disk.shadow_fraction;
    // The same resolution (and messages) as a request naming the shadow.
    auto shadow = snapshot.Resolve({.name = name,
                                    .version = disk.shadow_version,
                                    .label = disk.shadow_label});
    if (shadow.ok()) {
      model.shadow = *std::move(shadow);
      if (log_changes && !record.logged_shadow_error.empty()) {
        LogEvent("info", "shadow_available",
                 {{"model", name},
                  {"shadow_version", model.shadow->version_string()}});
      }
      if (log_changes) record.logged_shadow_error.clear();
      continue;
    }
    model.shadow_error = std::string(shadow.status().message());
    // Only at the end of a scan: a shadow still loading mid-scan is not a
    // problem worth a warning.
    if (log_changes && model.shadow_error != record.logged_shadow_error) {
      record.logged_shadow_error = model.shadow_error;
      LogEvent("warning", "shadow_unavailable",
               {{"model", name},
                {"error", model.shadow_error},
                {"action", "serving unaffected; copies count as failed"}});
    }
  }
}

void VersionManager::Publish(bool end_of_scan) {
  auto snapshot = std::make_shared<ServingSnapshot>();
  for (auto& [name, record] : records_) {
    if (end_of_scan) {
      // A label moves only once its new version is available; until then
      // it stays where it was, if that version still serves.
      std::map<std::string, int64_t> labels;
      for (const auto& [label, target] : record.disk.labels) {
        labels[label] = target;
        auto wanted = record.versions.find(target);
        if (wanted != record.versions.end() &&
            wanted->second.servable != nullptr) {
          continue;
        }
        auto previous = record.published_labels.find(label);
        if (previous == record.published_labels.end()) continue;
        auto held = record.versions.find(previous->second);
        if (held != record.versions.end() && held->second.servable != nullptr) {
          labels[label] = previous->second;
        }
      }
      record.published_labels = std::move(labels);
    }
    ModelSnapshot& model = snapshot->models[name];
    model.name = name;
    model.labels = record.published_labels;
    model.status.name = name;
    // The newest kFailedVersionsInStatus failures are listed.
    int64_t oldest_listed_failure = 0;
    {
      size_t failures = 0;
      for (auto it = record.versions.rbegin(); it != record.versions.rend();
           ++it) {
        if (it->second.state != VersionState::kFailed) continue;
        if (++failures > kFailedVersionsInStatus) break;
        oldest_listed_failure = it->first;
      }
    }
    for (const auto& [version, state] : record.versions) {
      if (state.state == VersionState::kFailed &&
          version < oldest_listed_failure) {
        continue;
      }
      VersionStatus& status = model.status.versions.emplace_back();
      status.version = version;
      status.state = state.state;
      status.error = state.error;
      for (const auto& [label, target] : model.labels) {
        if (target == version) status.labels.push_back(label);
      }
      if (state.servable != nullptr) {
        model.available[version] = state.servable;
        status.has_metadata = true;
        status.metadata = state.servable->metadata();
        status.loaded_unix_seconds = state.servable->loaded_unix_seconds();
      }
    }
    model.shadow_only = record.shadow_only;
    std::set<int64_t> candidates;
    for (const auto& [version, servable] : model.available) {
      if (record.shadow_only.count(version) == 0) candidates.insert(version);
    }
    const PromotionDecision decision = DecideDefault(
        record, PromotingLabels(model.labels, record.disk.shadow_label),
        &candidates);
    model.promoted = decision.default_version;
    for (VersionStatus& status : model.status.versions) {
      VersionRecord& state = record.versions[status.version];
      auto refused = decision.refused.find(status.version);
      if (refused == decision.refused.end()) {
        state.refusal_logged = false;
        continue;
      }
      status.promotion_refused = refused->second.message;
      if (state.refusal_logged) continue;
      state.refusal_logged = true;
      LogEvent("warning", "promotion_refused",
               {{"model", name},
                {"version", absl::StrCat(status.version)},
                {"default", absl::StrCat(decision.default_version)},
                {"reason", refused->second.reason},
                {"error", refused->second.message}});
      if (options_.observer != nullptr) {
        options_.observer->OnPromotionRefused(name, refused->second.reason);
      }
    }
    const int64_t default_version = model.default_version();
    model.status.default_version = default_version;
    if (default_version != record.published_default) {
      LogEvent("info", "default_version_changed",
               {{"model", name},
                {"from", absl::StrCat(record.published_default)},
                {"to", absl::StrCat(default_version)}});
      record.published_default = default_version;
    }
    if (options_.observer != nullptr) {
      options_.observer->OnVersionsLoaded(
          name, static_cast<int64_t>(model.available.size()));
    }
  }
  ResolveShadows(*snapshot, end_of_scan);
  std::shared_ptr<const ServingSnapshot> published = std::move(snapshot);
  {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    snapshot_.swap(published);
  }
  // `published` now holds the previous snapshot; releasing it outside the
  // lock keeps destructor work (and logging) off the request path.
  published.reset();
  if (listener_) listener_(*this->snapshot());
}

}  // namespace plrank::server
