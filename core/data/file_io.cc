#include "core/data/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace plrank {
namespace {

absl::Status OsError(const std::string& path, std::string_view what) {
  const int error_number = errno;
  // ErrnoToStatus appends the OS reason itself.
  return absl::ErrnoToStatus(error_number, absl::StrCat(path, ": ", absl::string_view(what.data(), what.size())));
}

}  // namespace

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return OsError(path, "cannot open");
  std::string contents;
  // Reading in large blocks also works for pipes, whose size is unknown.
  // When the size is known, the first read asks for one byte more, so a
  // small file costs no block-sized buffer (every block is zero-filled).
  constexpr size_t kBlock = size_t{1} << 22;
  size_t block = kBlock;
  if (std::fseek(file, 0, SEEK_END) == 0) {
    const long size = std::ftell(file);
    if (size >= 0) {
      contents.reserve(static_cast<size_t>(size) + 1);
      block = static_cast<size_t>(size) + 1;
    }
    std::rewind(file);
  }
  size_t used = 0;
  while (true) {
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
  return contents;
}

absl::StatusOr<FileContents> FileContents::Open(const std::string& path) {
  // Read, not mmap: a file truncated by another process while we parse it
  // must give an error or a short read, never a SIGBUS.
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  FileContents contents;
  contents.buffer_ = *std::move(text);
  contents.text_ = contents.buffer_;
  return contents;
}

FileContents::FileContents(FileContents&& other) noexcept {
  *this = std::move(other);
}

FileContents& FileContents::operator=(FileContents&& other) noexcept {
  if (this == &other) return *this;
  buffer_ = std::move(other.buffer_);
  text_ = buffer_;
  other.text_ = std::string_view();
  return *this;
}

FileContents::~FileContents() = default;

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents) {
  const std::string temp =
      absl::StrCat(path, ".tmp-", static_cast<long>(getpid()));
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) return OsError(temp, "cannot create");
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) ==
            contents.size();
  ok = (std::fflush(file) == 0) && ok;
  ok = (fsync(fileno(file)) == 0) && ok;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok) {
    absl::Status status = OsError(temp, "write failed");
    std::remove(temp.c_str());
    return status;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status status = OsError(path, "cannot rename temporary file over");
    std::remove(temp.c_str());
    return status;
  }
  return absl::OkStatus();
}

}  // namespace plrank
