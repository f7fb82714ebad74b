#include <algorithm>
#include <cstdint>

#include "core/scoring/forest_scorer.h"

// ForestScorer's QuickScorer dispatch: which documents go through
// QuickScorerForest, 16 or 8 at a time, or RapidScorerForest, 64 at a time.

namespace plrank {
namespace {

// With AVX-512 and one output, a remainder of at least this many documents
// (after whole groups of 16) is padded to 16 lanes: one 16-lane scan costs
// less than walking 1000 small trees for that many documents one by one.
constexpr size_t kQuickPadDocs = 4;
// With RapidScorerForest, a remainder of at least this many documents (after
// whole groups of 64) is padded to 64 lanes. Measured per document on this
// file's target (Zen 5): a 64-lane scan costs about what 36 documents cost
// in chained walks (63-leaf trees) or in three padded 16-document
// QuickScorer groups (31-leaf trees); fewer go through those.
constexpr size_t kRapidPadDocs = 36;
// The same when the rest goes through DenseScorerForest instead: on 1000
// 31-leaf trees a document costs about 2.0 us there and a 64-lane scan
// about 93 us, so padding pays from about 46 documents; measured on 100
// documents (64 + 36), 1.64 us per document against 1.75 with the 36
// padded.
constexpr size_t kRapidPadDenseDocs = 48;

}  // namespace

void ForestScorer::PadWithLastDocument(uint32_t* doubled, size_t num_docs,
                                       size_t padded_docs) const {
  const size_t group_slots = kLanes * num_slots();
  const size_t last = num_docs - 1;
  const uint32_t* from = doubled + last / kLanes * group_slots + last % kLanes;
  for (size_t i = num_docs; i < padded_docs; ++i) {
    uint32_t* to = doubled + i / kLanes * group_slots + i % kLanes;
    for (size_t s = 0; s < num_slots(); ++s) to[s * kLanes] = from[s * kLanes];
  }
}

size_t ForestScorer::QuickScoreGroups(uint32_t* doubled, size_t num_docs,
                                      double* out, size_t out_stride,
                                      int32_t num_trees) const {
  static_assert(QuickScorerForest::kLanes == kLanes);
  static_assert(kBlockDocs % (2 * kLanes) == 0);
  constexpr size_t kWide = 2 * kLanes;
  const size_t group_slots = kLanes * num_slots();
  size_t first = 0;
  if (quick_->has_avx512()) {
    size_t wide_docs = num_docs / kWide * kWide;
    const size_t left = num_docs - wide_docs;
    if (num_outputs_ == 1 && left >= kQuickPadDocs) {
      PadWithLastDocument(doubled, num_docs, wide_docs + kWide);
      wide_docs += kWide;
    }
    for (; first < wide_docs; first += kWide) {
      const size_t docs = std::min(kWide, num_docs - first);
      double sum[kWide] = {};
      double* target = out + first;
      if (num_outputs_ == 1) std::copy_n(target, docs, sum);
      quick_->AccumulateGroup16(doubled + first / kLanes * group_slots,
                                group_slots, num_trees, num_outputs_, sum,
                                target, out_stride);
      if (num_outputs_ == 1) std::copy_n(sum, docs, target);
    }
    if (first >= num_docs) return num_docs;
  }
  const size_t quick_docs = num_docs / kLanes * kLanes;
  for (; first < quick_docs; first += kLanes) {
    double sum[kLanes];
    double* target = out + first;
    if (num_outputs_ == 1) std::copy_n(target, kLanes, sum);
    quick_->AccumulateGroup(doubled + first / kLanes * group_slots, num_trees,
                            num_outputs_, sum, target, out_stride);
    if (num_outputs_ == 1) std::copy_n(sum, kLanes, target);
  }
  return first;
}

void ForestScorer::DenseScoreDocuments(const uint32_t* doubled, size_t first,
                                       size_t num_docs, double* out,
                                       int32_t num_trees) const {
  constexpr size_t kTogether = DenseScorerForest::kMaxDocs;
  const size_t group_slots = kLanes * num_slots();
  for (size_t i = first; i < num_docs; i += kTogether) {
    const size_t docs = std::min(kTogether, num_docs - i);
    const uint32_t* keys[kTogether];
    for (size_t d = 0; d < docs; ++d) {
      keys[d] = doubled + (i + d) / kLanes * group_slots + (i + d) % kLanes;
    }
    dense_->AccumulateDocuments(keys, docs, kLanes, num_trees, out + i);
  }
}

size_t ForestScorer::RapidScoreGroups(uint32_t* doubled, size_t num_docs,
                                      double* out, int32_t num_trees) const {
  constexpr size_t kDocs = RapidScorerForest::kDocs;
  static_assert(RapidScorerForest::kLanes == kLanes);
  static_assert(kBlockDocs % kDocs == 0);
  const size_t group_slots = kLanes * num_slots();
  size_t rapid_docs = num_docs / kDocs * kDocs;
  if (num_docs - rapid_docs >=
      (dense_.has_value() ? kRapidPadDenseDocs : kRapidPadDocs)) {
    // The scratch holds kBlockDocs rows, a multiple of kDocs.
    PadWithLastDocument(doubled, num_docs, rapid_docs + kDocs);
    rapid_docs += kDocs;
  }
  size_t first = 0;
  for (; first < rapid_docs; first += kDocs) {
    const size_t docs = std::min(kDocs, num_docs - first);
    double sum[kDocs] = {};
    std::copy_n(out + first, docs, sum);
    rapid_->AccumulateGroup64(doubled + first / kLanes * group_slots,
                              group_slots, num_trees, sum);
    std::copy_n(sum, docs, out + first);
  }
  return std::min(first, num_docs);
}

}  // namespace plrank
