#ifndef PLRANK_CORE_SCORING_QUICK_SCORER_H_
#define PLRANK_CORE_SCORING_QUICK_SCORER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_kernel.h"

namespace plrank {

// QuickScorer (Lucchese et al., SIGIR 2015) in its vectorised form for
// forests whose trees have at most 32 leaves, scoring 8 documents per AVX2
// instruction (16 per AVX-512 instruction, AccumulateGroup16). Instead of walking each tree, it visits the split nodes
// feature by feature in increasing threshold order; every node a document's
// value exceeds clears the node's left-subtree leaves from that tree's
// 32-bit leaf mask, and the exit leaf is the lowest bit left. A feature's
// scan stops at the first threshold no document exceeds, so the work is the
// number of "go right" nodes, without one data-dependent branch per node.
//
// Documents come as ForestScorer's doubled rows: 8 documents interleaved
// slot by slot, slot s holding unsigned order keys (see ForestScorer), and a
// node tests the slot Build is given for it (one per feature and missing
// rule: NaN, or NaN and zero, sent left or right). Leaf values are added per
// document in tree order, so sums are bit-identical to walking the trees.
//
// As a ForestKernel it is quick_avx512 when built for AVX-512, else
// quick_avx2.
class QuickScorerForest final : public internal::ForestKernel {
 public:
  static constexpr int32_t kMaxLeaves = 32;
  static constexpr size_t kLanes = 8;
  static_assert(kLanes == internal::kLanes);

  // Outputs (trees per iteration) at most.
  static constexpr int32_t kMaxOutputs = 512;

  // Built only when every tree has at most kMaxLeaves leaves and the model
  // at most kMaxOutputs outputs; otherwise nullopt. split_slots[t][n] is the
  // doubled-row slot internal node n of tree t tests. The caller checked
  // that the CPU runs AVX2 (scoring_kernel.cc) and, with `avx512`, AVX-512
  // F and CD (AccumulateGroup16).
  static std::optional<QuickScorerForest> Build(
      const Ensemble& model,
      const std::vector<std::vector<uint32_t>>& split_slots, bool avx512);

  // Adds trees [0, num_trees) (whole blocks or a prefix) for 8 documents in
  // `group_rows` (interleaved doubled rows): to sum[d] when num_outputs ==
  // 1, else to out[(t % num_outputs) * out_stride + d].
  void AccumulateGroup(const uint32_t* group_rows, int32_t num_trees,
                       int32_t num_outputs, double* sum, double* out,
                       size_t out_stride) const;

  ScoringKernelId id() const override {
    return avx512_ ? ScoringKernelId::kQuickAvx512
                   : ScoringKernelId::kQuickAvx2;
  }
  // Takes whole groups from the front of `todo`: with AVX-512, groups of 16
  // (with one output, a remainder of kPadDocs or more padded to 16 when the
  // rows have room), then groups of 8; leaves a remainder of fewer than 8.
  internal::DocRange Accumulate(const internal::KernelBatch& batch,
                                internal::DocRange todo) const override;

  // True when built for AVX-512 (F and CD), so AccumulateGroup16 may be
  // called.
  bool has_avx512() const { return avx512_; }
  // As AccumulateGroup for 16 documents: the interleaved groups at
  // `group_rows` and `group_rows + group_stride`, one AVX-512 lane per
  // document; sum and out cover the 16 documents in that order. Twice the
  // documents per instruction, and a masked and-not replaces AVX2's and +
  // and-not (quick_scorer_avx512.cc).
  void AccumulateGroup16(const uint32_t* group_rows, size_t group_stride,
                         int32_t num_trees, int32_t num_outputs, double* sum,
                         double* out, size_t out_stride) const;

 private:
  // Trees [tree_begin, tree_end): their split nodes grouped by slot, each
  // slot's nodes by increasing threshold. Sized so a block's nodes and leaf
  // masks stay in L2 while a group of documents scans them.
  struct Block {
    int32_t tree_begin = 0;
    int32_t tree_end = 0;
    std::vector<uint32_t> slots;       // slots with nodes, increasing
    std::vector<uint32_t> slot_begin;  // per entry of slots, plus end
    std::vector<int32_t> thresholds;   // signed keys (unsigned key ^ 2^31)
    std::vector<uint32_t> left_leaves; // bits of the node's left-subtree leaves
    // (tree - tree_begin) * kLanes: offset of the node's tree's leaf masks
    std::vector<uint32_t> tree_of_node;
  };

  // One split node before grouping by slot.
  struct SplitNode {
    uint32_t slot;
    int32_t threshold;
    uint32_t left_leaves;
    uint32_t tree;  // tree - block's first tree
  };

  // Trees per block at most, so their leaf masks fit on the stack.
  static constexpr int32_t kMaxBlockTrees = kMaxOutputs;

  QuickScorerForest() = default;
  // Appends `tree`'s split nodes to `nodes` and stores its leaf values in
  // left-to-right order at leaf_values_[tree_index * kMaxLeaves].
  void AppendTree(const Tree& tree, size_t tree_index,
                  uint32_t tree_in_block, const std::vector<uint32_t>& slots,
                  std::vector<SplitNode>* nodes);
  // Groups `nodes` (consumed) into a block of trees [tree_begin, tree_end).
  void AddBlock(int32_t tree_begin, int32_t tree_end,
                std::vector<SplitNode>* nodes);

  // With AVX-512 and one output, a remainder of at least this many
  // documents (after whole groups of 16) is padded to 16 lanes: one 16-lane
  // scan costs less than walking 1000 small trees for that many documents
  // one by one.
  static constexpr size_t kPadDocs = 4;

  std::vector<Block> blocks_;
  // Leaf values of tree t in left-to-right order: leaf_values_[t * 32 + i].
  std::vector<double> leaf_values_;
  int32_t num_outputs_ = 1;
  bool avx512_ = false;
};

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_QUICK_SCORER_H_
