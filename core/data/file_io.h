#ifndef PLRANK_CORE_DATA_FILE_IO_H_
#define PLRANK_CORE_DATA_FILE_IO_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace plrank {

// Reads a whole file in one go. Errors name the path and the OS reason.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// A read-only view of a whole file, read into memory (never memory-mapped,
// so a concurrent truncation cannot raise SIGBUS).
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

  std::string_view text_;
  std::string buffer_;
};

// Writes `contents` to `path` atomically: a temporary file beside it is
// written, flushed and renamed over `path`, so readers never see a partial
// file. The temporary is removed on failure.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_FILE_IO_H_
