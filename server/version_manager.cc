#include "server/version_manager.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/server_config.h"
#include "server/servable_version.h"
#include "server/structured_log.h"

namespace plrank::server {
namespace {

std::string PolicyName(const v1::VersionPolicy& policy) {
  if (policy.has_all()) return "all";
  if (policy.has_specific()) {
    std::string out = "specific:";
    for (int64_t v : policy.specific().versions()) {
      absl::StrAppend(&out, out.back() == ':' ? "" : ",", v);
    }
    return out;
  }
  const uint32_t n = policy.has_latest() && policy.latest().num_versions() > 0
                         ? policy.latest().num_versions()
                         : 1;
  return absl::StrCat("latest:", n);
}

}  // namespace

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
  if (config.ok()) {
    last_config_error_.clear();
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
  ScanSummary summary;
  const v1::ServerConfig* config = RefreshConfig();
  if (!options_.config_file.empty() && config == nullptr) {
    summary.status = absl::FailedPreconditionError(last_config_error_);
    return summary;
  }
  absl::StatusOr<std::vector<ModelOnDisk>> models =
      ScanRepository(options_.base_path, config);
  if (!models.ok()) {
    summary.status = models.status();
    LogEvent("error", "scan_failed",
             {{"base_path", options_.base_path},
              {"error", std::string(models.status().message())}});
    return summary;
  }

  std::set<std::string> present;
  for (const ModelOnDisk& model : *models) present.insert(model.name);
  for (auto it = records_.begin(); it != records_.end();) {
    if (present.count(it->first) > 0) {
      ++it;
      continue;
    }
    std::vector<int64_t> versions;
    for (const auto& [version, record] : it->second.versions) {
      versions.push_back(version);
    }
    for (int64_t version : versions) {
      Unload(it->second, version, "model_removed", &summary);
    }
    LogEvent("info", "model_removed", {{"model", it->first}});
    if (options_.metrics != nullptr) {
      options_.metrics->SetVersionsLoaded(it->first, 0);
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
  for (int64_t version : gone) {
    Unload(model, version, "removed_from_disk", summary);
    model.versions.erase(version);
  }

  // Versions that should serve: the policy's, then every labelled one.
  std::set<int64_t> wanted;
  const v1::VersionPolicy& policy = disk.policy;
  if (policy.has_all()) {
    for (const VersionOnDisk& v : disk.versions) {
      if (EnsureLoaded(model, v, summary)) wanted.insert(v.version);
    }
  } else if (policy.has_specific()) {
    for (const VersionOnDisk& v : disk.versions) {
      const auto& list = policy.specific().versions();
      if (std::find(list.begin(), list.end(), v.version) == list.end()) {
        continue;
      }
      if (EnsureLoaded(model, v, summary)) wanted.insert(v.version);
    }
  } else {
    const uint32_t n = policy.has_latest() && policy.latest().num_versions() > 0
                           ? policy.latest().num_versions()
                           : 1;
    // Newest first; failed versions do not count, so the last good ones
    // keep serving when a new version is broken.
    for (auto v = disk.versions.rbegin();
         v != disk.versions.rend() && wanted.size() < n; ++v) {
      if (EnsureLoaded(model, *v, summary)) wanted.insert(v->version);
    }
  }
  for (const auto& [label, version] : disk.labels) {
    for (const VersionOnDisk& v : disk.versions) {
      if (v.version == version && EnsureLoaded(model, v, summary)) {
        wanted.insert(v.version);
      }
    }
  }
  for (auto& [version, record] : model.versions) {
    if (record.state == v1::VERSION_STATE_AVAILABLE &&
        wanted.count(version) == 0) {
      Unload(model, version, "policy", summary);
    }
  }
}

bool VersionManager::EnsureLoaded(ModelRecord& model,
                                  const VersionOnDisk& version,
                                  ScanSummary* summary) {
  VersionRecord& record = model.versions[version.version];
  const std::string version_label = absl::StrCat(version.version);
  if (record.state == v1::VERSION_STATE_AVAILABLE) {
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
  if (record.state == v1::VERSION_STATE_FAILED &&
      record.signature == version.signature) {
    return false;  // same broken file as before: do not retry
  }
  record.state = v1::VERSION_STATE_LOADING;
  record.error.clear();
  record.signature = version.signature;
  record.change_logged = false;
  Publish(/*end_of_scan=*/false);  // status shows LOADING during a load

  const absl::Time start = absl::Now();
  absl::StatusOr<std::shared_ptr<const ServableVersion>> loaded =
      LoadServableVersion(model.disk.name, version.version, version.model_file);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (options_.metrics != nullptr) {
    options_.metrics->RecordModelLoad(model.disk.name, loaded.ok(), seconds);
  }
  if (!loaded.ok()) {
    record.state = v1::VERSION_STATE_FAILED;
    record.error = std::string(loaded.status().message());
    ++summary->failed;
    LogEvent("error", "version_load_failed",
             {{"model", model.disk.name},
              {"version", version_label},
              {"file", version.model_file},
              {"error", record.error}});
    return false;
  }
  record.state = v1::VERSION_STATE_AVAILABLE;
  record.servable = *std::move(loaded);
  ++summary->loaded;
  const v1::ModelMetadata& metadata = record.servable->metadata();
  LogEvent("info", "version_loaded",
           {{"model", model.disk.name},
            {"version", version_label},
            {"file", version.model_file},
            {"trees", absl::StrCat(metadata.num_trees())},
            {"features", absl::StrCat(metadata.num_features())},
            {"objective", metadata.objective()},
            {"checksum", metadata.checksum()},
            {"load_seconds", absl::StrCat(seconds)}});
  if (options_.metrics != nullptr) {
    options_.metrics->AddVersion(*record.servable);
  }
  return true;
}

void VersionManager::Unload(ModelRecord& model, int64_t version,
                            const char* reason, ScanSummary* summary) {
  auto it = model.versions.find(version);
  if (it == model.versions.end() ||
      it->second.state != v1::VERSION_STATE_AVAILABLE) {
    return;
  }
  it->second.state = v1::VERSION_STATE_END;
  // Requests in flight still hold their own reference; the servable is freed
  // (event=version_released) when the last of them ends.
  it->second.servable.reset();
  ++summary->unloaded;
  LogEvent("info", "version_unloaded",
           {{"model", model.disk.name},
            {"version", absl::StrCat(version)},
            {"reason", reason}});
  if (options_.metrics != nullptr) {
    options_.metrics->RemoveVersion(model.disk.name, version);
  }
}

void VersionManager::Publish(bool end_of_scan) {
  auto snapshot = std::make_shared<ServingSnapshot>();
  for (auto& [name, record] : records_) {
    if (end_of_scan) record.published_labels = record.disk.labels;
    ModelSnapshot& model = snapshot->models[name];
    model.name = name;
    model.labels = record.published_labels;
    model.status.set_name(name);
    for (const auto& [version, state] : record.versions) {
      v1::VersionStatus* status = model.status.add_versions();
      status->set_version(version);
      status->set_state(state.state);
      status->set_error(state.error);
      for (const auto& [label, target] : model.labels) {
        if (target == version) status->add_labels(label);
      }
      if (state.servable != nullptr) {
        model.available[version] = state.servable;
        *status->mutable_metadata() = state.servable->metadata();
        status->set_loaded_unix_seconds(state.servable->loaded_unix_seconds());
      }
    }
    const int64_t default_version = model.default_version();
    model.status.set_default_version(default_version);
    if (default_version != record.published_default) {
      LogEvent("info", "default_version_changed",
               {{"model", name},
                {"from", absl::StrCat(record.published_default)},
                {"to", absl::StrCat(default_version)}});
      record.published_default = default_version;
    }
    if (options_.metrics != nullptr) {
      options_.metrics->SetVersionsLoaded(
          name, static_cast<int64_t>(model.available.size()));
    }
  }
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
