// Fuzzes the LETOR / SVMlight reader (core/data/letor_reader.h: ParseLetor),
// both forms: qid lines, and LightGBM lines plus a .query file.
//
// Input: one option byte, then the data text; if the text holds a NUL byte,
// what follows the first NUL is the .query file (group sizes). Option bits:
//   0: --num_features given (1 + byte >> 4 .. 16 columns) instead of inferred
//   1: --duplicate_features=last
//   2: --allow_noncontiguous_queries
//   3: the default --max_feature_index (100000) instead of 4096 (keeps most
//      runs fast; the default's big matrices are still reached)
// Invariants of an accepted dataset: shapes agree, query offsets start at 0,
// strictly increase and end at the document count, labels in 0..31, no
// infinite value, width within the cap.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/data/letor_reader.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static plrank::fuzz::MemFile* query_file =
      new plrank::fuzz::MemFile("letor.query");
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  plrank::ReadOptions options;
  if (flags & 1) options.num_features = 1 + (flags >> 4);
  if (flags & 2) options.duplicates = plrank::DuplicateFeaturePolicy::kLastWins;
  if (flags & 4) options.allow_noncontiguous_queries = true;
  if (!(flags & 8)) options.max_feature_index = 4096;
  const size_t nul = text.find('\0');
  if (nul != std::string_view::npos) {
    query_file->Set(text.substr(nul + 1));
    options.query_file = query_file->path();
    text = text.substr(0, nul);
  }

  absl::StatusOr<plrank::Dataset> read =
      plrank::ParseLetor(text, "fuzz.txt", options);
  if (!read.ok()) {
    PLRANK_FUZZ_CHECK(!read.status().message().empty(),
                      "an error without a message");
    return 0;
  }
  const plrank::Dataset& d = *read;
  const size_t n = d.num_documents();
  PLRANK_FUZZ_CHECK(n > 0, "an accepted dataset without documents");
  PLRANK_FUZZ_CHECK(d.num_features >= 0, "negative width");
  if (options.num_features > 0) {
    PLRANK_FUZZ_CHECK(d.num_features == options.num_features,
                      "width differs from --num_features");
  } else {
    PLRANK_FUZZ_CHECK(d.num_features <= options.max_feature_index,
                      "width above --max_feature_index");
  }
  PLRANK_FUZZ_CHECK(
      d.features.size() == static_cast<size_t>(d.num_features) * n,
      "features.size() != num_features * documents");
  PLRANK_FUZZ_CHECK(d.query_offsets.size() >= 2, "no query");
  PLRANK_FUZZ_CHECK(d.query_offsets.front() == 0, "first offset is not 0");
  PLRANK_FUZZ_CHECK(d.query_offsets.back() == n, "last offset != documents");
  for (size_t q = 0; q + 1 < d.query_offsets.size(); ++q) {
    PLRANK_FUZZ_CHECK(d.query_offsets[q] < d.query_offsets[q + 1],
                      "empty or decreasing query");
  }
  PLRANK_FUZZ_CHECK(d.query_ids.size() == d.num_queries(),
                    "query ids != queries");
  for (int32_t label : d.labels) {
    PLRANK_FUZZ_CHECK(label >= 0 && label <= 31, "label outside 0..31");
  }
  for (float value : d.features) {
    PLRANK_FUZZ_CHECK(!std::isinf(value), "infinite feature value");
  }
  return 0;
}
