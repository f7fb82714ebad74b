#ifndef PLRANK_CORE_PIPELINE_SHARD_LOADING_H_
#define PLRANK_CORE_PIPELINE_SHARD_LOADING_H_

// How the ranks of a distributed run read their share of --train and
// --valid (core/data/shard_files.h) and agree on what a shard alone cannot
// know: the feature count, the label range, where its queries sit in the
// whole set, and that no query id is in two shards.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/boosting/reducer.h"
#include "core/data/dataset.h"
#include "core/data/letor_reader.h"

namespace plrank {

// What one rank reads of a --train / --valid value.
struct ShardSource {
  std::string path;     // the file to open
  ReadOptions options;  // with its byte range and group-size file
  std::string name;     // for messages: the file, or "file (bytes B-E)"
};

// A path with {rank} (and {ranks}) names this rank's file, and the group
// file option is expanded the same way; otherwise, with more than one rank,
// this rank reads its byte range of the one file (ShardByteRange). One rank
// and no placeholder: the file as it is.
absl::StatusOr<ShardSource> ResolveShardSource(const std::string& path,
                                               const ReadOptions& options,
                                               int32_t rank,
                                               int32_t num_ranks);

// Collective, once per data set and in the same order on every rank, after
// each rank has read `shard`: widens it to the widest rank's feature count
// (absent features are 0, as in the sparse text) unless `fixed_width`, sets
// query_index_base (the queries of lower ranks) and set_max_label, and
// numbers the queries of group-size files (`numbered_ids`: their ids are
// their positions) by their place in the whole set. Fails, with the same
// message on every rank, when a query id is in two shards (naming both).
absl::Status AgreeOverShards(const std::string& name, bool fixed_width,
                             bool numbered_ids, Reducer& reducer,
                             Dataset* shard);

// Collective: one digest of every rank's DatasetDigest, in rank order
// ("fnv1a64-shards<N>:..."); a single rank's is its own.
std::string ShardedDatasetDigest(const std::string& own_digest,
                                 Reducer& reducer);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_SHARD_LOADING_H_
