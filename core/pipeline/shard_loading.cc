#include "core/pipeline/shard_loading.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/data/shard_files.h"
#include "core/model/checksum.h"

namespace plrank {
namespace {

// Rank 0's answer to every rank's "features max_label queries\nname\nids":
// "" (agreed) plus the numbers, or the error.
struct Agreement {
  std::string error;
  int64_t num_features = 0;
  int64_t max_label = 0;
  std::vector<int64_t> query_counts;  // per rank
};

Agreement Agree(const std::vector<std::string>& reports, bool numbered_ids) {
  Agreement agreement;
  absl::flat_hash_map<absl::string_view, size_t> owner;  // query id -> rank
  std::vector<absl::string_view> names(reports.size());
  for (size_t r = 0; r < reports.size(); ++r) {
    std::vector<absl::string_view> lines = absl::StrSplit(reports[r], '\n');
    std::vector<absl::string_view> numbers = absl::StrSplit(lines[0], ' ');
    int64_t features = 0, max_label = 0, queries = 0;
    if (numbers.size() != 3 || !absl::SimpleAtoi(numbers[0], &features) ||
        !absl::SimpleAtoi(numbers[1], &max_label) ||
        !absl::SimpleAtoi(numbers[2], &queries) || lines.size() < 2) {
      agreement.error = absl::StrCat("rank ", r, " sent a malformed report");
      return agreement;
    }
    agreement.num_features = std::max(agreement.num_features, features);
    agreement.max_label = std::max(agreement.max_label, max_label);
    agreement.query_counts.push_back(queries);
    names[r] = lines[1];
    if (numbered_ids) continue;
    for (size_t i = 2; i < lines.size(); ++i) {
      auto [it, inserted] = owner.emplace(lines[i], r);
      if (!inserted && agreement.error.empty()) {
        agreement.error = absl::StrFormat(
            "query id %s is in two shards, %s (rank %d) and %s (rank %d): a "
            "query must be whole in one shard (each rank trains on whole "
            "queries)",
            lines[i], names[it->second], it->second, names[r], r);
      }
    }
  }
  return agreement;
}

}  // namespace

absl::StatusOr<ShardSource> ResolveShardSource(const std::string& path,
                                               const ReadOptions& options,
                                               int32_t rank,
                                               int32_t num_ranks) {
  ShardSource source;
  source.options = options;
  if (HasRankPlaceholder(path)) {
    source.path = ShardFilePath(path, rank, num_ranks);
    source.options.query_file =
        ShardFilePath(options.query_file, rank, num_ranks);
    source.name = source.path;
    return source;
  }
  source.path = path;
  source.name = path;
  if (num_ranks <= 1) return source;
  absl::StatusOr<ByteRange> range = ShardByteRange(path, rank, num_ranks);
  if (!range.ok()) return range.status();
  source.options.byte_begin = range->begin;
  source.options.byte_end = range->end;
  source.name =
      absl::StrCat(path, " (bytes ", range->begin, "-", range->end, ")");
  return source;
}

absl::Status AgreeOverShards(const std::string& name, bool fixed_width,
                             bool numbered_ids, Reducer& reducer,
                             Dataset* shard) {
  std::string report = absl::StrCat(shard->num_features, " ",
                                    shard->max_label(), " ",
                                    shard->num_queries(), "\n", name);
  if (!numbered_ids) {
    for (const std::string& id : shard->query_ids) {
      absl::StrAppend(&report, "\n", id);
    }
  }
  const std::vector<std::string> reports = reducer.Gather(report);
  report.clear();
  std::string reply;
  if (reducer.rank() == 0) {
    const Agreement agreement = Agree(reports, numbered_ids);
    reply = agreement.error.empty()
                ? absl::StrCat("ok ", agreement.num_features, " ",
                               agreement.max_label, " ",
                               absl::StrJoin(agreement.query_counts, " "))
                : absl::StrCat("error ", agreement.error);
  }
  reducer.Broadcast(&reply);
  if (absl::StartsWith(reply, "error ")) {
    return absl::InvalidArgumentError(reply.substr(6));
  }
  std::vector<absl::string_view> numbers = absl::StrSplit(reply, ' ');
  int64_t features = 0, max_label = 0;
  if (numbers.size() != static_cast<size_t>(reducer.num_ranks()) + 3 ||
      !absl::SimpleAtoi(numbers[1], &features) ||
      !absl::SimpleAtoi(numbers[2], &max_label)) {
    return absl::InternalError("malformed agreement from rank 0");
  }
  uint64_t base = 0;
  for (int32_t r = 0; r < reducer.rank(); ++r) {
    int64_t count = 0;
    if (!absl::SimpleAtoi(numbers[3 + r], &count)) {
      return absl::InternalError("malformed agreement from rank 0");
    }
    base += static_cast<uint64_t>(count);
  }
  if (!fixed_width && features > shard->num_features) {
    // Column-major: the new columns are appended, all 0.
    shard->features.resize(static_cast<size_t>(features) *
                               shard->num_documents(),
                           0.0f);
    shard->num_features = static_cast<int32_t>(features);
  }
  shard->query_index_base = base;
  shard->set_max_label = static_cast<int32_t>(max_label);
  if (numbered_ids) {
    for (size_t q = 0; q < shard->query_ids.size(); ++q) {
      shard->query_ids[q] = absl::StrCat(base + q);
    }
  }
  return absl::OkStatus();
}

std::string ShardedDatasetDigest(const std::string& own_digest,
                                 Reducer& reducer) {
  if (reducer.num_ranks() <= 1) return own_digest;
  const std::vector<std::string> digests = reducer.Gather(own_digest);
  std::string combined;
  if (reducer.rank() == 0) {
    uint64_t hash = kFnv1a64Basis;
    for (const std::string& digest : digests) {
      hash = Fnv1a64(digest, hash);
      hash = Fnv1a64("\n", hash);
    }
    combined = absl::StrFormat("fnv1a64-shards%d:%016x", reducer.num_ranks(),
                               hash);
  }
  reducer.Broadcast(&combined);
  return combined;
}

}  // namespace plrank
