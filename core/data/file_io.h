#ifndef PLRANK_CORE_DATA_FILE_IO_H_
#define PLRANK_CORE_DATA_FILE_IO_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace plrank {

// Reads a whole file in one go. Errors name the path and the OS reason.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// A read-only view of a whole file: memory-mapped when the file is regular
// (no copy out of the page cache), read into memory otherwise (pipes).
class FileContents {
 public:
  static absl::StatusOr<FileContents> Open(const std::string& path);

  FileContents(FileContents&& other) noexcept;
  FileContents& operator=(FileContents&& other) noexcept;
  FileContents(const FileContents&) = delete;
  FileContents& operator=(const FileContents&) = delete;
  ~FileContents();

  std::string_view text() const { return text_; }

 private:
  FileContents() = default;
  void Release();

  std::string_view text_;
  void* mapping_ = nullptr;  // non-null when mapped
  size_t mapped_size_ = 0;
  std::string buffer_;  // when read
};

// Writes `contents` to `path` atomically: a temporary file beside it is
// written, flushed and renamed over `path`, so readers never see a partial
// file. The temporary is removed on failure.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_FILE_IO_H_
