#include "core/data/stream_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "core/data/file_io.h"
#include "core/data/file_io_internal.h"

namespace plrank {
namespace {

using file_io_internal::DirectoryOf;
using file_io_internal::FileKind;
using file_io_internal::OsError;
using file_io_internal::WriteAll;

bool IsStreamNode(mode_t mode) {
  return S_ISFIFO(mode) || S_ISCHR(mode) || S_ISSOCK(mode);
}

}  // namespace

bool IsStandardOutput(const std::string& path) {
  return path == "-" || path == "/dev/stdout";
}

absl::Status CheckStreamOutputTarget(const std::string& path) {
  if (IsStandardOutput(path)) return absl::OkStatus();
  if (path.empty()) {
    return absl::InvalidArgumentError("empty output path");
  }
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISREG(info.st_mode) || IsStreamNode(info.st_mode)) {
      return absl::OkStatus();
    }
    return file_io_internal::RefuseExisting(
        path, info.st_mode,
        "not a file or a pipe; refusing to write there (give a file path, "
        "or - for standard output)");
  }
  const std::string directory = DirectoryOf(path);
  if (::stat(directory.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": cannot be written: its directory ", directory,
        " does not exist"));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": cannot be written: ", directory, " is ",
        FileKind(info.st_mode), ", not a directory"));
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    return OsError(path, absl::StrCat("cannot be written in ", directory));
  }
  return absl::OkStatus();
}

absl::Status WriteStreamOutput(const std::string& path,
                               absl::Span<const std::string_view> pieces) {
  int fd = -1;
  bool owned = false;
  if (IsStandardOutput(path)) {
    std::fflush(stdout);  // what was printed before comes first
    fd = STDOUT_FILENO;
  } else {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0 || !IsStreamNode(info.st_mode)) {
      return WriteFileAtomically(path, pieces);
    }
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return OsError(path, "cannot open for writing");
    owned = true;
  }
  absl::Status status = absl::OkStatus();
  for (std::string_view piece : pieces) {
    if (status.ok()) status = WriteAll(fd, piece, path);
  }
  if (owned && ::close(fd) != 0 && status.ok()) {
    status = OsError(path, "close failed");
  }
  return status;
}

}  // namespace plrank
