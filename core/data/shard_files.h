#ifndef PLRANK_CORE_DATA_SHARD_FILES_H_
#define PLRANK_CORE_DATA_SHARD_FILES_H_

// How the ranks of a distributed run split their training data so that no
// rank reads or holds the whole set:
//   - pre-sharded files: a path with "{rank}" (and "{ranks}", the rank
//     count) names one file per rank, e.g. train-{rank}-of-{ranks}.txt;
//   - one big file: rank r reads bytes [cut(r), cut(r + 1)), where cut(r) is
//     the first query start at or after r * size / N; a query that straddles
//     the nominal point belongs to the rank where it starts.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace plrank {

// True when `path` holds the "{rank}" placeholder.
bool HasRankPlaceholder(const std::string& path);

// `pattern` with every "{rank}" replaced by `rank` and every "{ranks}" by
// `num_ranks` (a path without them is returned as it is).
std::string ShardFilePath(const std::string& pattern, int32_t rank,
                          int32_t num_ranks);

struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;  // exclusive
};

// Rank `rank`'s share of the LETOR file at `path` (lines with qid:), found
// by reading only a few lines around the two cuts (and, for a query that
// straddles a cut, the rest of that query). Every rank computes every cut
// the same way, so the ranges tile the file. Blank and comment lines go
// with the query before them. A data line without qid: is an error naming
// the file and byte offset (group-size files need pre-sharded files).
absl::StatusOr<ByteRange> ShardByteRange(const std::string& path,
                                         int32_t rank, int32_t num_ranks);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_SHARD_FILES_H_
