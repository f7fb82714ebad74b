// WriteModelFile / ReadModelFile: the artifact on disk, written atomically.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

std::string DirectoryOf(const std::string& path) {
  std::string directory = std::filesystem::path(path).parent_path().string();
  return directory.empty() ? "." : directory;
}

std::string TempPathFor(const std::string& path) {
  std::random_device device;
  const uint64_t random = (uint64_t{device()} << 32) | device();
  return absl::StrFormat("%s.tmp.%d.%016x", path, ::getpid(), random);
}

absl::Status WriteAll(int fd, const std::string& bytes,
                      const std::string& path) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("writing ", path));
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoError(errno, absl::StrCat("opening directory ", directory));
  }
  absl::Status status = absl::OkStatus();
  if (::fsync(fd) != 0) {
    status = ErrnoError(errno, absl::StrCat("fsync of directory ", directory));
  }
  ::close(fd);
  return status;
}

// Writes `bytes` to `temp` and makes them durable; the caller removes `temp`
// on failure.
absl::Status WriteDurably(const std::string& temp, const std::string& bytes) {
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("creating ", temp));
  absl::Status status = WriteAll(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0) {
    status = ErrnoError(errno, absl::StrCat("fsync of ", temp));
  }
  // close() can report deferred write errors (e.g. NFS), so it is checked.
  if (::close(fd) != 0 && status.ok()) {
    status = ErrnoError(errno, absl::StrCat("closing ", temp));
  }
  return status;
}

}  // namespace

absl::Status WriteModelFile(const Ensemble& model, const std::string& path) {
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("model file ", path, ": ",
                                     bytes.status().message()));
  }
  // The temp file is renamed over `path`, which would silently replace a
  // device, FIFO or socket there (as root, --model_out=/dev/full replaced
  // the device node and reported success). Only a regular file, or nothing,
  // is replaced; stat() follows symlinks, so a link to a regular file still
  // works as before.
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model file ", path, " not written: it exists and is not a regular "
        "file (",
        S_ISDIR(existing.st_mode) ? "a directory" : "a device, FIFO or socket",
        "); give a file path"));
  }
  const std::string temp = TempPathFor(path);
  absl::Status status = WriteDurably(temp, *bytes);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoError(errno, absl::StrCat("renaming ", temp, " to ", path));
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());  // may not exist; nothing more to do if it fails
    return absl::Status(status.code(), absl::StrCat("model file ", path,
                                                    " not written: ",
                                                    status.message()));
  }
  // The rename is only durable once the directory entry is on disk.
  return SyncDirectory(DirectoryOf(path));
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
