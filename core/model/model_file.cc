// WriteModelFile / ReadModelFile: the artifact on disk, written atomically.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/data/file_io.h"
#include "core/model/ensemble.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

absl::Status ErrnoError(int error, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM || error == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  return absl::InternalError(message);
}

}  // namespace

absl::Status WriteModelFile(const Ensemble& model, const std::string& path) {
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("model file ", path, ": ",
                                     bytes.status().message()));
  }
  absl::Status status = WriteFileAtomically(path, *bytes);
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("model file ", path,
                                                    " not written: ",
                                                    status.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Ensemble> ReadModelFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoError(errno, absl::StrCat("model file ", path));
  }
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("model file ", path, ": is a directory"));
  }
  std::string bytes;
  if (info.st_size > 0) bytes.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return ErrnoError(error, absl::StrCat("reading model file ", path));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return ParseModel(bytes, absl::StrCat("model file ", path));
}

}  // namespace plrank
