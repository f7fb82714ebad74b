#ifndef PLRANK_CORE_SCORING_DENSE_SCORER_H_
#define PLRANK_CORE_SCORING_DENSE_SCORER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/model/ensemble.h"
#include "core/scoring/forest_kernel.h"
#include "core/scoring/slot_bins.h"

namespace plrank {

// Single documents (and tiny batches) for forests of small trees: 64 trees
// per AVX-512 instruction, one byte lane per tree, every split node
// evaluated (no walk, no data-dependent branch).
//
// A walk of one document through 1000 small trees is a chain of dependent
// loads per tree (node, then the document's value, then the next node), and
// its lockstep walks wait for the deepest of several paths. Here the
// document's values are first quantised, once, into bins (SlotBins): a node
// sends the document right exactly when its bin in the node's slot exceeds
// the node's threshold rank.
// The bins of a document fit four 64-byte registers (at most 256 slots with
// at most 255 thresholds each, else Build declines). Trees are laid out in
// groups of 64, their internal nodes by rank (node j of every tree of the
// group in one vector): per rank, a byte permute looks up each tree's bin,
// one unsigned byte compare gives the trees going right, and those trees'
// left-subtree leaves are marked cleared in four 16-tree vectors of 32-bit
// leaf masks (QuickScorer's rule: the exit leaf is the first leaf, left to
// right, not cleared). Leaf values are then added in tree order, so sums
// are bit-identical to walking the trees.
//
// As a ForestKernel it is dense_avx512_vbmi, and takes every document.
class DenseScorerForest final : public internal::ForestKernel {
 public:
  static constexpr int32_t kMaxLeaves = 32;
  static constexpr size_t kGroupTrees = 64;
  static constexpr size_t kMaxSlots = SlotBins::kMaxSlots;

  // Built for single-output models whose trees have at most kMaxLeaves
  // leaves, whose nodes test at most kMaxSlots distinct slots with at most
  // 255 distinct thresholds each; otherwise nullopt. The caller checked
  // that the CPU runs AVX-512 F, BW and VBMI (scoring_kernel.cc). split_slots[t][n] is the doubled-row slot internal
  // node n of tree t tests.
  static std::optional<DenseScorerForest> Build(
      const Ensemble& model,
      const std::vector<std::vector<uint32_t>>& split_slots);

  // Most documents one call scores together: they share the loads of the
  // node vectors, and their chains of dependent additions overlap. On
  // 1000 31-leaf trees, batches of 10 scored at 2.0 us per document with 2
  // (3.3 with 1); 3 and 4 measured the same as 2.
  static constexpr size_t kMaxDocs = 2;

  ScoringKernelId id() const override {
    return ScoringKernelId::kDenseAvx512Vbmi;
  }
  // Takes every document of `todo`, kMaxDocs at a time.
  internal::DocRange Accumulate(const internal::KernelBatch& batch,
                                internal::DocRange todo) const override;

  // Adds trees [0, num_trees) in tree order to sum[d] for num_docs <=
  // kMaxDocs documents: document d's doubled-row slot s holds the key
  // doc_keys[d][s * key_stride].
  void AccumulateDocuments(const uint32_t* const* doc_keys, size_t num_docs,
                           size_t key_stride, int32_t num_trees,
                           double* sum) const;

 private:
  // Rank j of one group of 64 trees: per tree, the compact slot its j-th
  // node tests, the node's threshold rank on that slot (255 for a tree
  // with fewer nodes: no bin exceeds it) and its left-subtree leaves.
  struct alignas(64) RankVectors {
    uint8_t slot[kGroupTrees];
    uint8_t threshold[kGroupTrees];
    uint32_t left_leaves[kGroupTrees];
  };

  explicit DenseScorerForest(SlotBins bins) : bins_(std::move(bins)) {}
  template <size_t kDocs, bool kWide>
  void Accumulate(const uint32_t* const* doc_keys, size_t key_stride,
                  int32_t num_trees, double* sum) const;

  SlotBins bins_;
  int32_t num_trees_ = 0;
  int32_t ranks_ = 0;                      // most internal nodes of any tree
  std::vector<RankVectors> rank_vectors_;  // [group * ranks_ + rank]
  // Leaf values of tree t left to right: leaf_values_[t * kMaxLeaves + i].
  std::vector<double> leaf_values_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_DENSE_SCORER_H_
