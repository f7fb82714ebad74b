#include "bench/scratch_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank::bench {

absl::StatusOr<std::unique_ptr<ScratchDirectory>> ScratchDirectory::Create(
    std::string parent, const std::string& prefix, bool keep) {
  if (parent.empty()) {
    parent = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  }
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create the work directory ", parent, ": ", error.message()));
  }
  std::string path = parent + "/" + prefix + "-XXXXXX";
  if (mkdtemp(path.data()) == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create a directory in ", parent, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<ScratchDirectory>(
      new ScratchDirectory(std::move(path), keep));
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;
  if (!keep_) std::filesystem::remove_all(path_, ignored);
}

}  // namespace plrank::bench
