#ifndef PLRANK_CORE_DATA_LETOR_READER_H_
#define PLRANK_CORE_DATA_LETOR_READER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"

namespace plrank {

enum class DuplicateFeaturePolicy {
  kError,     // a feature index repeated within a line is an error (default)
  kLastWins,  // keep the last value written on the line
};

struct ReadOptions {
  // 0 = infer the width from the largest index seen. Otherwise the dataset
  // has exactly this many features and an index above it is an error.
  int32_t num_features = 0;
  // What set num_features, for error messages, e.g. "the feature count of
  // model m.pb"; empty = the --num_features flag.
  std::string num_features_origin;
  // With num_features = 0: the largest feature index accepted. Real ranking
  // collections use up to a few thousand; a larger index is almost always a
  // corrupt or hostile file, and a dense matrix that wide would not fit.
  int32_t max_feature_index = 100000;
  DuplicateFeaturePolicy duplicates = DuplicateFeaturePolicy::kError;
  // A query whose lines are not contiguous is an error unless this is set,
  // in which case its documents are gathered in first-seen query order.
  bool allow_noncontiguous_queries = false;
  // LightGBM form: lines without qid, group sizes in this file. Empty = use
  // "<path>.query" (LightGBM's name) or else "<path>.group" (XGBoost's) when
  // it exists and the lines carry no qid.
  std::string query_file;
  // Files are read in line-aligned chunks of about this many bytes (a longer
  // line is read whole); only memory use depends on it, never the result.
  size_t read_chunk_bytes = size_t{8} << 20;
  // ReadLetorFile only: read bytes [byte_begin, byte_end) of the file
  // (byte_end < 0: to its end), one rank's share of a big file cut at query
  // starts (ShardByteRange, core/data/shard_files.h). Lines must then carry
  // qid: (a group-size file counts from the file's start). Messages name
  // "<path> (bytes B-E)" and count lines from B.
  int64_t byte_begin = 0;
  int64_t byte_end = -1;
  // ReadLetorFile only: hash the bytes as they are parsed into
  // ReadStats::source_checksum (dataset caches use it, so the checksum is of
  // exactly the text the dataset came from). Never changes the result.
  bool checksum_source = false;
};

// Statistics the CLIs print after loading.
struct ReadStats {
  int64_t lines = 0;
  int64_t bytes = 0;
  int64_t missing_values = 0;      // NULL / nan entries
  int64_t duplicate_features = 0;  // under kLastWins
  // ReadLetorFile with ReadOptions::checksum_source: HashContent of the file.
  uint64_t source_checksum = 0;
  // ReadLetorFile: ResolveQueryFile's answer ("" = none).
  std::string query_file;
};

// Reads LETOR / SVMlight ranking text:
//   <label> qid:<id> <index>:<value> ... [# comment]
// or the LightGBM form (no qid, plus a .query or .group file). Every error status
// names the file and the 1-based line. The file is streamed, never held
// whole: loading peaks near twice the dense matrix (4 bytes per feature and
// document) for text whose lines list consecutive indices, as LETOR files
// do; lines with gaps cost 8 bytes per written entry instead.
absl::StatusOr<Dataset> ReadLetorFile(const std::string& path,
                                      const ReadOptions& options,
                                      ReadStats* stats = nullptr);

// The group-size file ReadLetorFile consults for `path`: options.query_file
// when given, else "<path>.query" or "<path>.group" when one exists, else "".
std::string ResolveQueryFile(const std::string& path,
                             const ReadOptions& options);

// With --duplicate_features=last: "<path>: N repeated feature indices ..."
// when the file had any (the CLIs print it), else "".
std::string DuplicateFeaturesNote(const std::string& path,
                                  const ReadStats& stats);

// Same, from an in-memory buffer; `name` is used in error messages.
absl::StatusOr<Dataset> ParseLetor(std::string_view text,
                                   const std::string& name,
                                   const ReadOptions& options,
                                   ReadStats* stats = nullptr);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_LETOR_READER_H_
