#ifndef PLRANK_BENCH_SCRATCH_DIRECTORY_H_
#define PLRANK_BENCH_SCRATCH_DIRECTORY_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace plrank::bench {

// A fresh directory <parent>/<prefix>-XXXXXX (parent: the given one, else
// $TMPDIR, else /tmp), removed with its contents on destruction unless
// `keep`. A parent that does not exist yet is created, as a user naming
// `--work_dir=runs/today` expects; one that cannot be is an error saying
// why. Not copyable: one owner removes it.
class ScratchDirectory {
 public:
  static absl::StatusOr<std::unique_ptr<ScratchDirectory>> Create(
      std::string parent, const std::string& prefix, bool keep);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  ScratchDirectory(std::string path, bool keep)
      : path_(std::move(path)), keep_(keep) {}
  std::string path_;
  bool keep_;
};

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_SCRATCH_DIRECTORY_H_
