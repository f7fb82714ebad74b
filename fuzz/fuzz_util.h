#ifndef PLRANK_FUZZ_FUZZ_UTIL_H_
#define PLRANK_FUZZ_FUZZ_UTIL_H_

// Shared pieces of the libFuzzer targets: an invariant check that aborts
// (libFuzzer then saves the input as a crash), and an in-memory file for
// code that only reads paths.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "google/protobuf/stubs/logging.h"

#define PLRANK_FUZZ_CHECK(condition, what)                                  \
  do {                                                                      \
    if (!(condition)) {                                                     \
      std::fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__,  \
                   __LINE__, #condition, std::string(what).c_str());        \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

namespace plrank::fuzz {

// Protobuf logs every string field with invalid UTF-8 it parses; fuzzed
// inputs are full of them. Call once (e.g. from a static initializer).
inline bool QuietProtobufLogs() {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}

// A memfd reached through /proc/self/fd/N: Set() replaces its contents
// without touching the disk, so path-based readers can be fuzzed fast.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  void Set(std::string_view bytes) {
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, bytes.data(), bytes.size(), 0) !=
            static_cast<ssize_t>(bytes.size())) {
      std::perror("memfd write");
      std::abort();
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace plrank::fuzz

#endif  // PLRANK_FUZZ_FUZZ_UTIL_H_
