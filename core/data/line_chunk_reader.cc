#include "core/data/line_chunk_reader.h"

#include <sys/stat.h>

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/data/file_io_internal.h"

namespace plrank {

using file_io_internal::OsError;

absl::StatusOr<LineChunkReader> LineChunkReader::Open(const std::string& path,
                                                      size_t chunk_bytes) {
  LineChunkReader reader;
  reader.path_ = path;
  reader.chunk_bytes_ = chunk_bytes < 2 ? 2 : chunk_bytes;
  reader.file_ = std::fopen(path.c_str(), "rb");
  if (reader.file_ == nullptr) return OsError(path, "cannot open");
  struct stat info;
  if (::fstat(::fileno(reader.file_), &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": is a directory, not a data file"));
    }
    if (S_ISREG(info.st_mode)) reader.file_size_ = info.st_size;
  }
  return reader;
}

absl::StatusOr<LineChunkReader> LineChunkReader::OpenRange(
    const std::string& path, size_t chunk_bytes, int64_t begin, int64_t end) {
  absl::StatusOr<LineChunkReader> reader = Open(path, chunk_bytes);
  if (!reader.ok()) return reader.status();
  if (reader->file_size_ < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a byte range needs a regular file, not a pipe"));
  }
  if (end < 0 || end > reader->file_size_) end = reader->file_size_;
  if (begin < 0 || begin > end) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": byte range [", begin, ", ", end, ") is outside the file"));
  }
  if (::fseeko(reader->file_, static_cast<off_t>(begin), SEEK_SET) != 0) {
    return OsError(path, "cannot seek");
  }
  reader->remaining_ = end - begin;
  return reader;
}

LineChunkReader::LineChunkReader(LineChunkReader&& other) noexcept {
  *this = std::move(other);
}

LineChunkReader& LineChunkReader::operator=(LineChunkReader&& other) noexcept {
  if (this == &other) return *this;
  if (file_ != nullptr) std::fclose(file_);
  path_ = std::move(other.path_);
  file_ = std::exchange(other.file_, nullptr);
  buffer_ = std::move(other.buffer_);
  chunk_bytes_ = other.chunk_bytes_;
  carried_ = other.carried_;
  handed_ = other.handed_;
  at_eof_ = other.at_eof_;
  bytes_read_ = other.bytes_read_;
  file_size_ = other.file_size_;
  remaining_ = other.remaining_;
  return *this;
}

LineChunkReader::~LineChunkReader() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::StatusOr<std::string_view> LineChunkReader::Next() {
  // Move the unfinished line of the last chunk to the front.
  if (handed_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + handed_, carried_);
    handed_ = 0;
  }
  while (true) {
    if (at_eof_) {
      // The last line may lack a line break.
      handed_ = carried_;
      carried_ = 0;
      bytes_read_ += static_cast<int64_t>(handed_);
      return std::string_view(buffer_.data(), handed_);
    }
    // Room for a full chunk after what is carried; a line longer than the
    // chunk makes the buffer grow by a chunk per round, so a line costs
    // what it holds.
    if (buffer_.size() < carried_ + chunk_bytes_) {
      buffer_.resize(carried_ + chunk_bytes_);
    }
    size_t want = buffer_.size() - carried_;
    const bool range_ends =
        remaining_ >= 0 && static_cast<uint64_t>(remaining_) <= want;
    if (range_ends) want = static_cast<size_t>(remaining_);
    const size_t got =
        want == 0 ? 0 : std::fread(buffer_.data() + carried_, 1, want, file_);
    if (remaining_ >= 0) remaining_ -= static_cast<int64_t>(got);
    if (got < want || range_ends) {
      if (std::ferror(file_) != 0) return OsError(path_, "read failed");
      at_eof_ = true;
    }
    const size_t filled = carried_ + got;
    // Hand out everything up to the last line break.
    // (The carried bytes hold no line break: they are an unfinished line.)
    const void* last_break =
        ::memrchr(buffer_.data() + carried_, '\n', got);
    if (last_break != nullptr) {
      const size_t end =
          static_cast<const char*>(last_break) - buffer_.data() + 1;
      handed_ = end;
      carried_ = filled - end;
      bytes_read_ += static_cast<int64_t>(handed_);
      return std::string_view(buffer_.data(), handed_);
    }
    carried_ = filled;  // no line break yet: read on
  }
}

}  // namespace plrank
