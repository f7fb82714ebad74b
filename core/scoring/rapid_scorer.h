#ifndef PLRANK_CORE_SCORING_RAPID_SCORER_H_
#define PLRANK_CORE_SCORING_RAPID_SCORER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/ensemble.h"
#include "core/scoring/forest_kernel.h"

namespace plrank {

// QuickScorer for trees of up to 64 leaves, after RapidScorer (Ye et al.,
// KDD 2018): 64 documents per AVX-512 instruction, one byte lane per
// document.
//
// A tree's leaf bitvector (leaves numbered left to right) is split into
// bytes, and byte b of the 64 documents' bitvectors is one 64-byte vector:
// masks[(tree * bytes_per_tree + b) * 64 + document]. A split node clears its
// left-subtree leaves for the documents going right; its leaves are a
// contiguous range, so it touches only the bytes that range covers (the
// "epitome"; one byte for most nodes, as most nodes are deep), each with one
// ternary-logic instruction over 64 documents. Nodes of a block of trees are
// grouped by the doubled-row slot they test (see ForestScorer), and within a
// slot by threshold; nodes sharing a slot and a threshold (common in
// histogram-trained forests, whose thresholds are bin bounds) share one
// comparison ("merged nodes"). A slot's scan stops at the first threshold
// no document exceeds. The exit leaf of a document is the lowest set bit of
// its bitvector; leaf values are added per document in tree order, so sums
// are bit-identical to walking the trees.
//
// Single-output models only (multi-output ones keep QuickScorerForest and
// the tree walks). The layout works for any number of leaf bytes, but on
// 255-leaf trees (about 1.7 byte entries per node, bitvectors of 600 KB for
// 300 trees) it measured 3.5 us per document against 2.4 for the chained
// walks, against 1.6 vs 2.6 on 63-leaf trees: hence the limit.
//
// As a ForestKernel it is rapid_avx512.
class RapidScorerForest final : public internal::ForestKernel {
 public:
  static constexpr int32_t kMaxLeaves = 64;
  static constexpr size_t kDocs = 64;
  // ForestScorer's interleaved groups of doubled rows hold this many
  // documents each.
  static constexpr size_t kLanes = 8;
  static_assert(kLanes == internal::kLanes);

  // A remainder of at least this many documents (after whole groups of 64)
  // is padded to 64 lanes. Measured per document on rapid_scorer_avx512.cc's
  // target (Zen 5): a 64-lane scan costs about what 36 documents cost in
  // chained walks (63-leaf trees) or in three padded 16-document
  // QuickScorer groups (31-leaf trees); fewer go through those.
  static constexpr size_t kPadDocs = 36;
  // The same when DenseScorerForest takes the rest instead: on 1000 31-leaf
  // trees a document costs about 2.0 us there and a 64-lane scan about 93
  // us, so padding pays from about 46 documents; measured on 100 documents
  // (64 + 36), 1.64 us per document against 1.75 with the 36 padded.
  static constexpr size_t kPadDocsBeforeDense = 48;

  // Built only for single-output models whose trees have at most kMaxLeaves
  // leaves; otherwise nullopt. The caller checked that the CPU runs
  // AVX-512 F, BW and BITALG (scoring_kernel.cc). split_slots[t][n] is the
  // doubled-row slot internal node n of tree t tests. A remainder of
  // pad_min_docs or more documents is padded to a group (kPadDocs, or
  // kPadDocsBeforeDense when DenseScorerForest takes what is left).
  static std::optional<RapidScorerForest> Build(
      const Ensemble& model,
      const std::vector<std::vector<uint32_t>>& split_slots,
      size_t pad_min_docs = kPadDocs);

  ScoringKernelId id() const override { return ScoringKernelId::kRapidAvx512; }
  // Takes whole groups of 64 from the front of `todo` and a remainder of
  // pad_min_docs or more, padded to 64 when the rows have room (they do
  // from document 0: it comes first in every plan).
  internal::DocRange Accumulate(const internal::KernelBatch& batch,
                                internal::DocRange todo) const override;

  // Adds trees [0, num_trees) to sum[d], d < 64, in tree order, for the 64
  // documents of the 8 interleaved groups at group_rows + g * group_stride
  // (g < 8; slot s of a group's document i at group[s * 8 + i]). Uses a
  // per-thread scratch of one block's bitvectors (up to 256 KB), allocated
  // on a thread's first call.
  void AccumulateGroup64(const uint32_t* group_rows, size_t group_stride,
                         int32_t num_trees, double* sum) const;

 private:
  // A node's effect on one byte of its tree's bitvector: the 64-document
  // vector at block masks + offset * 64 loses `bits` (replicated into four
  // bytes) for the documents going right at the node's threshold, the
  // slot's threshold number `threshold` (counted from the slot's first).
  struct Entry {
    uint32_t offset;
    uint32_t bits;
    uint32_t threshold;
  };
  // Trees [tree_begin, tree_end), their nodes' entries grouped by slot and
  // by threshold within a slot.
  struct Block {
    int32_t tree_begin = 0;
    int32_t tree_end = 0;
    std::vector<uint32_t> slots;            // slots with nodes, increasing
    std::vector<uint32_t> slot_begin;       // into thresholds, plus end
    std::vector<uint32_t> thresholds;       // OrderKeys, increasing per slot
    std::vector<uint32_t> threshold_begin;  // into entries, plus end
    std::vector<Entry> entries;
  };
  // One entry before grouping.
  struct SplitEntry {
    uint32_t slot;
    uint32_t threshold;
    Entry entry;
  };

  RapidScorerForest() = default;
  // Appends `tree`'s entries and stores its leaf values in left-to-right
  // order at leaf_values_[tree_index * leaf_stride_].
  void AppendTree(const Tree& tree, size_t tree_index, uint32_t tree_in_block,
                  const std::vector<uint32_t>& slots,
                  std::vector<SplitEntry>* entries);
  void AddBlock(int32_t tree_begin, int32_t tree_end,
                std::vector<SplitEntry>* entries);

  std::vector<Block> blocks_;
  int32_t tree_bytes_ = 0;      // bytes per leaf bitvector
  int32_t trees_per_block_ = 0;
  size_t leaf_stride_ = 0;      // 8 * tree_bytes_ rounded up to 16
  std::vector<double> leaf_values_;
  // Most thresholds of one slot in one block.
  size_t max_slot_thresholds_ = 0;
  size_t pad_min_docs_ = kPadDocs;
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_RAPID_SCORER_H_
