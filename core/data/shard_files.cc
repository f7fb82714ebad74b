#include "core/data/shard_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/data/file_io_internal.h"
#include "core/data/letor_tokens.h"

namespace plrank {

using file_io_internal::OsError;
using letor_internal::IsSpace;

namespace {

constexpr int64_t kBlock = 64 << 10;

// A read-only file read at offsets (pread), in blocks.
class RandomAccessFile {
 public:
  static absl::StatusOr<RandomAccessFile> Open(const std::string& path) {
    RandomAccessFile file;
    file.path_ = path;
    file.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd_ < 0) return OsError(path, "cannot open");
    struct stat info;
    if (::fstat(file.fd_, &info) != 0) return OsError(path, "cannot stat");
    if (!S_ISREG(info.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": not a regular file (one big training file is split by "
          "byte ranges)"));
    }
    file.size_ = info.st_size;
    return file;
  }
  RandomAccessFile(RandomAccessFile&& other) noexcept
      : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_) {
    other.fd_ = -1;
  }
  RandomAccessFile& operator=(RandomAccessFile&&) = delete;
  ~RandomAccessFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Bytes [offset, offset + length) clipped to the file.
  absl::StatusOr<std::string> Read(int64_t offset, int64_t length) const {
    if (offset < 0) offset = 0;
    if (offset + length > size_) length = size_ - offset;
    std::string bytes(static_cast<size_t>(length > 0 ? length : 0), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t got = ::pread(fd_, bytes.data() + done, bytes.size() - done,
                                  static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        return OsError(path_, "read failed");
      }
      if (got == 0) break;  // truncated meanwhile
      done += static_cast<size_t>(got);
    }
    bytes.resize(done);
    return bytes;
  }

  // The offset just after the first '\n' at or after `from` (size() when
  // there is none).
  absl::StatusOr<int64_t> NextLineStart(int64_t from) const {
    for (int64_t at = from; at < size_; at += kBlock) {
      absl::StatusOr<std::string> block = Read(at, kBlock);
      if (!block.ok()) return block.status();
      if (block->empty()) break;
      const size_t found = block->find('\n');
      if (found != std::string::npos) {
        return at + static_cast<int64_t>(found) + 1;
      }
    }
    return size_;
  }

  // The start of the line that ends just before `line_start` (> 0).
  absl::StatusOr<int64_t> PreviousLineStart(int64_t line_start) const {
    // line_start - 1 is that line's '\n'; find the one before it.
    int64_t end = line_start - 1;
    while (end > 0) {
      const int64_t begin = end > kBlock ? end - kBlock : 0;
      absl::StatusOr<std::string> block = Read(begin, end - begin);
      if (!block.ok()) return block.status();
      const size_t found = block->rfind('\n');
      if (found != std::string::npos) {
        return begin + static_cast<int64_t>(found) + 1;
      }
      end = begin;
    }
    return 0;
  }

  // The line starting at `start`, without its line break.
  absl::StatusOr<std::string> LineAt(int64_t start) const {
    absl::StatusOr<int64_t> next = NextLineStart(start);
    if (!next.ok()) return next.status();
    absl::StatusOr<std::string> line = Read(start, *next - start);
    if (line.ok() && !line->empty() && line->back() == '\n') line->pop_back();
    return line;
  }

 private:
  RandomAccessFile() = default;
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// The qid of a data line; nullopt for a blank or comment line.
absl::StatusOr<std::optional<std::string>> LineQid(std::string_view line,
                                                   const std::string& path,
                                                   int64_t offset) {
  size_t i = 0;
  while (i < line.size() && IsSpace(line[i])) ++i;
  if (i == line.size() || line[i] == '#') return std::nullopt;
  while (i < line.size() && !IsSpace(line[i])) ++i;  // the label
  while (i < line.size() && IsSpace(line[i])) ++i;
  if (line.substr(i, 4) != "qid:") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the line at byte ", offset,
        " has no qid: after its label; one big file is split among ranks at "
        "query starts, which needs qid: on every line (for a group-size "
        "file, split the data into one file per rank: {rank} in the path)"));
  }
  i += 4;
  size_t end = i;
  while (end < line.size() && !IsSpace(line[end]) && line[end] != '#') ++end;
  return std::optional<std::string>(std::string(line.substr(i, end - i)));
}

// The first query start at or after `nominal`.
absl::StatusOr<int64_t> QueryCut(const RandomAccessFile& file,
                                 int64_t nominal) {
  if (nominal <= 0) return 0;
  if (nominal >= file.size()) return file.size();
  // The first line that starts at or after `nominal`.
  absl::StatusOr<int64_t> start = file.NextLineStart(nominal - 1);
  if (!start.ok()) return start.status();
  // The query of the last data line before it.
  std::optional<std::string> previous;
  for (int64_t at = *start; at > 0 && !previous.has_value();) {
    absl::StatusOr<int64_t> line_start = file.PreviousLineStart(at);
    if (!line_start.ok()) return line_start.status();
    absl::StatusOr<std::string> line = file.LineAt(*line_start);
    if (!line.ok()) return line.status();
    absl::StatusOr<std::optional<std::string>> qid =
        LineQid(*line, file.path(), *line_start);
    if (!qid.ok()) return qid.status();
    previous = *std::move(qid);
    at = *line_start;
  }
  // Forward to the first data line of another query, a window at a time
  // (a query that straddles the cut is read to its end).
  constexpr int64_t kWindow = 1 << 20;
  auto starts_query = [&](std::string_view line,
                          int64_t at) -> absl::StatusOr<bool> {
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    absl::StatusOr<std::optional<std::string>> qid =
        LineQid(line, file.path(), at);
    if (!qid.ok()) return qid.status();
    return qid->has_value() && (!previous.has_value() || **qid != *previous);
  };
  for (int64_t at = *start; at < file.size();) {
    absl::StatusOr<std::string> window = file.Read(at, kWindow);
    if (!window.ok()) return window.status();
    if (window->empty()) break;
    const bool window_ends_file =
        at + static_cast<int64_t>(window->size()) >= file.size();
    size_t position = 0;
    while (position < window->size()) {
      size_t end = window->find('\n', position);
      if (end == std::string::npos) {
        if (!window_ends_file) break;  // an unfinished line: read it next
        end = window->size() - 1;
      }
      const std::string_view line =
          std::string_view(*window).substr(position, end + 1 - position);
      absl::StatusOr<bool> starts = starts_query(line, at + position);
      if (!starts.ok()) return starts.status();
      if (*starts) return at + static_cast<int64_t>(position);
      position = end + 1;
    }
    if (position == 0) {
      // One line longer than the window.
      absl::StatusOr<std::string> line = file.LineAt(at);
      if (!line.ok()) return line.status();
      absl::StatusOr<bool> starts = starts_query(*line, at);
      if (!starts.ok()) return starts.status();
      if (*starts) return at;
      absl::StatusOr<int64_t> next = file.NextLineStart(at);
      if (!next.ok()) return next.status();
      at = *next;
    } else {
      at += static_cast<int64_t>(position);
    }
  }
  return file.size();
}

}  // namespace

bool HasRankPlaceholder(const std::string& path) {
  return path.find("{rank}") != std::string::npos;
}

std::string ShardFilePath(const std::string& pattern, int32_t rank,
                          int32_t num_ranks) {
  return absl::StrReplaceAll(pattern, {{"{ranks}", absl::StrCat(num_ranks)},
                                       {"{rank}", absl::StrCat(rank)}});
}

absl::StatusOr<ByteRange> ShardByteRange(const std::string& path,
                                         int32_t rank, int32_t num_ranks) {
  if (num_ranks < 1 || rank < 0 || rank >= num_ranks) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " of ", num_ranks, " is not a rank"));
  }
  absl::StatusOr<RandomAccessFile> file = RandomAccessFile::Open(path);
  if (!file.ok()) return file.status();
  const int64_t size = file->size();
  auto nominal = [size, num_ranks](int32_t r) {
    return static_cast<int64_t>(static_cast<__int128>(size) * r / num_ranks);
  };
  ByteRange range;
  absl::StatusOr<int64_t> begin = QueryCut(*file, nominal(rank));
  if (!begin.ok()) return begin.status();
  absl::StatusOr<int64_t> end = QueryCut(*file, nominal(rank + 1));
  if (!end.ok()) return end.status();
  range.begin = *begin;
  range.end = *end < *begin ? *begin : *end;
  return range;
}

}  // namespace plrank
