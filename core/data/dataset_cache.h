#ifndef PLRANK_CORE_DATA_DATASET_CACHE_H_
#define PLRANK_CORE_DATA_DATASET_CACHE_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"
#include "core/data/letor_reader.h"

namespace plrank {

// A binary copy of a parsed LETOR file (as LightGBM's `.bin`), so repeated
// trainings on the same file skip parsing: `<source>.plrank.bin` beside the
// source, or `<dir>/<source file name>.<hash of its absolute path>.plrank.bin`
// when a cache directory is given (the source's directory may be read-only).
//
// A cache is used only when it was built from the same bytes: its header
// holds the source's size and ContentHasher checksum, the group-size file's
// checksum and a digest of the ReadOptions that shape the dataset; all are
// compared with the source as it is now (hashing a file is far cheaper than
// parsing it). The cache file itself is untrusted: every count is bounded by
// the file's real size before anything is allocated, a checksum covers the
// payload, and the dataset's invariants (offsets, labels, line order) are
// checked. A cache that fails any check is rebuilt, never an error.
struct CachedDataset {
  Dataset data;
  ReadStats stats;          // as parsing the source would report them
  bool from_cache = false;  // false: parsed (and the cache (re)written)
  // What happened to the cache, for the CLI's log: "read <cache>",
  // "wrote <cache> (<why>)" or "cannot write <cache>: ...; trained without".
  std::string note;
};

std::string DatasetCachePath(const std::string& source,
                             const std::string& cache_dir);

// ReadLetorFile(source, options) through the cache at
// DatasetCachePath(source, cache_dir). Errors are the parser's (naming file
// and line); a cache that cannot be written costs only a note.
absl::StatusOr<CachedDataset> ReadLetorFileCached(const std::string& source,
                                                  const ReadOptions& options,
                                                  const std::string& cache_dir);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DATASET_CACHE_H_
