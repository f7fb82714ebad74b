#include "server/lifecycle/model_repository.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/lifecycle/server_config.h"

namespace plrank::server {
namespace {

namespace fs = std::filesystem;

// Versions of the model in `directory`; an unreadable directory leaves
// `model->error` set.
void ScanVersions(ModelOnDisk* model, std::vector<SkippedDirectory>* skipped) {
  std::error_code error;
  fs::directory_iterator it(model->directory, error);
  if (error) {
    model->error =
        absl::StrCat("cannot list ", model->directory, ": ", error.message());
    return;
  }
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    const std::string name = it->path().filename().string();
    const int64_t version = ParseVersionDirectoryName(name);
    if (version == 0) {
      std::error_code kind_error;
      if (skipped != nullptr && name[0] != '.' &&
          it->is_directory(kind_error)) {
        skipped->push_back(
            {it->path().string(),
             "not a version number (a positive decimal without leading "
             "zeros)"});
      }
      continue;
    }
    const std::string model_file = (it->path() / kModelFileName).string();
    struct stat info;
    // stat() follows symlinks, so a version may be a link to elsewhere.
    if (::stat(model_file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      continue;  // not written yet (or not a file): skipped until it appears
    }
    VersionOnDisk entry;
    entry.version = version;
    entry.model_file = model_file;
    entry.signature.size = info.st_size;
    entry.signature.mtime_ns =
        int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
    entry.signature.inode = static_cast<int64_t>(info.st_ino);
    model->versions.push_back(std::move(entry));
  }
  std::sort(model->versions.begin(), model->versions.end(),
            [](const VersionOnDisk& a, const VersionOnDisk& b) {
              return a.version < b.version;
            });
}

}  // namespace

int64_t ParseVersionDirectoryName(const std::string& name) {
  if (name.empty() || name.size() > 18 || name[0] == '0') return 0;
  int64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + (c - '0');
  }
  return value;
}

absl::StatusOr<std::vector<ModelOnDisk>> ScanRepository(
    const std::string& base_path, const v1::ServerConfig* config,
    std::vector<SkippedDirectory>* skipped) {
  std::error_code error;
  if (!fs::is_directory(base_path, error)) {
    return absl::NotFoundError(absl::StrCat(
        "model base path ", base_path, " is not a readable directory",
        error ? absl::StrCat(" (", error.message(), ")") : ""));
  }
  std::vector<ModelOnDisk> models;
  if (config != nullptr) {
    for (const v1::ModelConfig& model_config : config->models()) {
      ModelOnDisk model;
      model.name = model_config.name();
      fs::path directory = model_config.base_path().empty()
                               ? fs::path(model_config.name())
                               : fs::path(model_config.base_path());
      model.directory = directory.is_absolute()
                            ? directory.string()
                            : (fs::path(base_path) / directory).string();
      model.policy = model_config.has_version_policy()
                         ? model_config.version_policy()
                         : DefaultVersionPolicy();
      model.labels.insert(model_config.version_labels().begin(),
                          model_config.version_labels().end());
      model.allow_incompatible_promotion =
          model_config.allow_incompatible_promotion();
      model.shadow_version = model_config.shadow_version();
      model.shadow_label = model_config.shadow_label();
      model.shadow_fraction = model_config.shadow_fraction();
      models.push_back(std::move(model));
    }
  } else {
    fs::directory_iterator it(base_path, error);
    if (error) {
      return absl::UnavailableError(absl::StrCat(
          "cannot list model base path ", base_path, ": ", error.message()));
    }
    for (; it != fs::directory_iterator(); it.increment(error)) {
      if (error) break;
      const std::string name = it->path().filename().string();
      if (!it->is_directory(error)) continue;
      if (!IsValidModelName(name)) {
        if (skipped != nullptr && name[0] != '.') {
          skipped->push_back(
              {it->path().string(),
               "not a valid model name (letters, digits, '_', '-', '.')"});
        }
        continue;
      }
      ModelOnDisk model;
      model.name = name;
      model.directory = it->path().string();
      model.policy = DefaultVersionPolicy();
      models.push_back(std::move(model));
    }
    std::sort(models.begin(), models.end(),
              [](const ModelOnDisk& a, const ModelOnDisk& b) {
                return a.name < b.name;
              });
  }
  for (ModelOnDisk& model : models) ScanVersions(&model, skipped);
  return models;
}

}  // namespace plrank::server
