#ifndef PLRANK_CORE_DATA_LINE_CHUNK_READER_H_
#define PLRANK_CORE_DATA_LINE_CHUNK_READER_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace plrank {

// Reads a text file front to back in chunks that end at a line break (or at
// the end of the file), so a parser sees whole lines while memory holds one
// chunk, not the whole file: a 2 GB training file costs a few megabytes of
// buffer. A line longer than the chunk size grows the buffer to hold it;
// that costs what the line really holds, no more. Works for pipes too.
// Read, not mmap: a file truncated while we read gives a short read, never
// SIGBUS.
class LineChunkReader {
 public:
  static constexpr size_t kDefaultChunkBytes = size_t{8} << 20;

  static absl::StatusOr<LineChunkReader> Open(
      const std::string& path, size_t chunk_bytes = kDefaultChunkBytes);

  // Only bytes [begin, end) of a regular file (end < 0: to its end), e.g.
  // one rank's share of a big training file; begin should be a line start
  // (0 or just after a line break), end the same or the file's end.
  static absl::StatusOr<LineChunkReader> OpenRange(const std::string& path,
                                                   size_t chunk_bytes,
                                                   int64_t begin, int64_t end);

  LineChunkReader(LineChunkReader&& other) noexcept;
  LineChunkReader& operator=(LineChunkReader&& other) noexcept;
  LineChunkReader(const LineChunkReader&) = delete;
  LineChunkReader& operator=(const LineChunkReader&) = delete;
  ~LineChunkReader();

  // The next chunk of whole lines; empty at the end of the file. The view
  // stays valid until the next call. Errors name the path and OS reason.
  absl::StatusOr<std::string_view> Next();

  // Bytes handed out so far.
  int64_t bytes_read() const { return bytes_read_; }
  // The file's size when it is a regular file, else -1 (pipes).
  int64_t file_size() const { return file_size_; }

 private:
  LineChunkReader() = default;

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  size_t chunk_bytes_ = kDefaultChunkBytes;
  size_t carried_ = 0;  // bytes of an unfinished line kept at the front
  size_t handed_ = 0;   // bytes of buffer_ handed out by the last Next()
  bool at_eof_ = false;
  int64_t bytes_read_ = 0;
  int64_t file_size_ = -1;
  int64_t remaining_ = -1;  // bytes of the range still to read; -1 = all
};

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_LINE_CHUNK_READER_H_
