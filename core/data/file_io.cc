#include "core/data/file_io.h"
#include "core/data/file_io_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plrank {

namespace file_io_internal {

absl::Status OsError(const std::string& path, std::string_view what) {
  const int error_number = errno;
  // ErrnoToStatus appends the OS reason itself.
  return absl::ErrnoToStatus(
      error_number,
      absl::StrCat(path, ": ", absl::string_view(what.data(), what.size())));
}

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string DirectoryOf(const std::string& path) {
  std::string directory = std::filesystem::path(path).parent_path().string();
  return directory.empty() ? "." : directory;
}

absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError(path, "write failed");
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status RefuseExisting(const std::string& path, mode_t mode,
                            std::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": exists and is ", FileKind(mode), ", ",
                   absl::string_view(why.data(), why.size())));
}

}  // namespace file_io_internal

namespace {

using file_io_internal::DirectoryOf;
using file_io_internal::OsError;
using file_io_internal::WriteAll;

// Unique per process and call, so concurrent writers (and a temp left by a
// killed one) never collide; O_EXCL makes sure.
std::string TempPathFor(const std::string& path) {
  std::random_device device;
  const uint64_t random = (uint64_t{device()} << 32) | device();
  return absl::StrFormat("%s.tmp.%d.%016x", path, ::getpid(), random);
}

// Whether `name` is a temporary of the file named `base` in TempPathFor's
// form: "<base>.tmp.<decimal pid>.<16 lowercase hex digits>".
bool IsTemporaryName(std::string_view name, std::string_view base) {
  const std::string prefix = std::string(base) + ".tmp.";
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
    return false;
  }
  const std::string_view rest = name.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 10 ||
      rest.size() - dot - 1 != 16) {
    return false;
  }
  for (size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    const bool digit = c >= '0' && c <= '9';
    if (i < dot && !digit) return false;
    if (i > dot && !digit && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

// Removes the temporaries of `path` that killed writers left beside it (a
// SIGKILL or a power loss skips the unlink of WriteFileAtomically). A writer
// holds an exclusive flock on its temporary from creation to rename, and
// the kernel drops the lock when the writer dies, however it dies; so a
// temporary whose lock can be taken has no writer any more. Only names of
// this writer's own form for this very target are considered; a file system
// without flock support keeps every temporary (the lock cannot be taken).
// A concurrent writer of the same path that has created its temporary but
// not yet locked it (two adjacent system calls) can lose it here: its
// rename then fails with an error, and no artifact is ever half written.
void RemoveStaleTemporaries(const std::string& path) {
  const std::string directory = DirectoryOf(path);
  const std::string base = std::filesystem::path(path).filename().string();
  DIR* listing = ::opendir(directory.c_str());
  if (listing == nullptr) return;  // creating the temporary will say why
  while (const dirent* entry = ::readdir(listing)) {
    if (!IsTemporaryName(entry->d_name, base)) continue;
    const std::string temp =
        (std::filesystem::path(directory) / entry->d_name).string();
    const int fd = ::open(temp.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat info;
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // Unlinked while locked, so no writer can take it over meanwhile.
      ::unlink(temp.c_str());
    }
    ::close(fd);
  }
  ::closedir(listing);
}

// PLRANK_TEST_KILL_DURING_WRITE=N: bytes written before the process kills
// itself; -1 when unset (production).
int64_t KillAfterBytesForTest() {
  const char* value = std::getenv("PLRANK_TEST_KILL_DURING_WRITE");
  int64_t bytes = -1;
  if (value == nullptr || !absl::SimpleAtoi(value, &bytes) || bytes < 0) {
    return -1;
  }
  return bytes;
}

// Writes the concatenated `pieces` to a new file `temp` and makes them
// durable; the caller removes `temp` on failure. `*lock_fd` (or -1) is a
// descriptor holding the temporary's flock, which the caller closes after
// the rename: RemoveStaleTemporaries leaves a locked temporary alone. Where
// locks are not supported the write goes on unlocked (and no cleaner can
// lock it either).
absl::Status WriteDurably(const std::string& temp,
                          absl::Span<const std::string_view> pieces,
                          int* lock_fd) {
  *lock_fd = -1;
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return OsError(temp, "cannot create");
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    // A duplicate shares the lock, which lasts until its last descriptor is
    // closed; `fd` itself is closed (and its close checked) before renaming.
    *lock_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  }
  if (int64_t kill_after = KillAfterBytesForTest(); kill_after >= 0) {
    for (std::string_view piece : pieces) {
      const size_t part =
          std::min(piece.size(), static_cast<size_t>(kill_after));
      (void)WriteAll(fd, piece.substr(0, part), temp);
      kill_after -= static_cast<int64_t>(part);
    }
    ::fsync(fd);
    ::raise(SIGKILL);
  }
  absl::Status status = absl::OkStatus();
  for (std::string_view piece : pieces) {
    if (status.ok()) status = WriteAll(fd, piece, temp);
  }
  if (status.ok() && ::fsync(fd) != 0) status = OsError(temp, "fsync failed");
  // close() can report deferred write errors (e.g. NFS), so it is checked.
  if (::close(fd) != 0 && status.ok()) status = OsError(temp, "close failed");
  return status;
}

absl::Status SyncDirectory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError(directory, "cannot open directory to fsync it");
  absl::Status status = absl::OkStatus();
  if (::fsync(fd) != 0) status = OsError(directory, "directory fsync failed");
  ::close(fd);
  return status;
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          size_t max_bytes) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return OsError(path, "cannot open");
  // fopen() opens a directory, whose "size" is then taken for the length of
  // the contents (std::bad_alloc in plrank-convert --xgboost_json=<dir>).
  struct stat info{};
  if (::fstat(::fileno(file), &info) == 0 && S_ISDIR(info.st_mode)) {
    std::fclose(file);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": is a directory, not a file"));
  }
  std::string contents;
  // Reading in large blocks also works for pipes, whose size is unknown.
  // When the size is known, the first read asks for one byte more, so a
  // small file costs no block-sized buffer (every block is zero-filled).
  constexpr size_t kBlock = size_t{1} << 22;
  const size_t limit = std::min(max_bytes, kUnlimitedFileBytes - 1) + 1;
  size_t block = std::min(kBlock, limit);
  if (std::fseek(file, 0, SEEK_END) == 0) {
    const long size = std::ftell(file);
    if (size >= 0) {
      block = std::min(static_cast<size_t>(size) + 1, limit);
      contents.reserve(block);
    }
    std::rewind(file);
  }
  size_t used = 0;
  while (used < limit) {
    block = std::min(block, limit - used);
    contents.resize(used + block);
    const size_t got = std::fread(contents.data() + used, 1, block, file);
    used += got;
    if (got < block) break;
    block = kBlock;
  }
  contents.resize(used);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return OsError(path, "read failed");
  if (used > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": larger than the limit of ", max_bytes,
                     " bytes for this file"));
  }
  return contents;
}

absl::Status CheckOutputTarget(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    // Absent (or unreachable): creating the file will tell what is wrong.
    return absl::OkStatus();
  }
  if (S_ISREG(info.st_mode)) return absl::OkStatus();
  return file_io_internal::RefuseExisting(
      path, info.st_mode,
      "not a regular file; refusing to replace it (give a file path)");
}

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents) {
  return WriteFileAtomically(path, absl::Span<const std::string_view>(&contents, 1));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const std::string_view> pieces) {
  if (absl::Status target = CheckOutputTarget(path); !target.ok()) {
    return target;
  }
  RemoveStaleTemporaries(path);
  const std::string temp = TempPathFor(path);
  int lock_fd = -1;
  absl::Status status = WriteDurably(temp, pieces, &lock_fd);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    status = absl::ErrnoToStatus(
        error_number, absl::StrCat(path, ": cannot rename ", temp, " over it"));
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());  // may not exist; nothing more to do if it fails
  }
  if (lock_fd >= 0) ::close(lock_fd);
  if (!status.ok()) return status;
  // The rename is only durable once the directory entry is on disk.
  return SyncDirectory(DirectoryOf(path));
}

}  // namespace plrank
