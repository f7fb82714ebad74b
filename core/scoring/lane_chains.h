#ifndef PLRANK_CORE_SCORING_LANE_CHAINS_H_
#define PLRANK_CORE_SCORING_LANE_CHAINS_H_

// The lane_chains kernel (internal to core/scoring), for single-output
// forests with at least one split: one document walks all trees in
// kChainLanes lanes, lane l through trees l, l + 8, l + 16, ... one after
// another, without waiting for the others (a lockstep walk of 8 trees waits
// at each for the deepest of 8 paths; on 255-leaf trees that is far deeper
// than the mean).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/scoring/cache_aligned.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/forest_kernel.h"

namespace plrank::internal {

class LaneChainsKernel final : public ForestKernel {
 public:
  // Which documents it takes when all trees are scored: only the single
  // document left after whole groups (the chooser's plan: two or more cost
  // less walking in lockstep; on 300 255-leaf trees a batch of 10, 8 + 2,
  // measured 3.6 us per document with the 2 walked, 4.4 with them in lanes),
  // or every document (the kernel forced by name).
  enum class Takes { kSingleRemainder, kEveryDocument };

  // nullptr when the forest has no split (no slot to read) or too many
  // nodes for 32-bit indices. One output (the chooser checked it).
  static std::unique_ptr<LaneChainsKernel> Build(const FlatForest& forest,
                                                 Takes takes);

  ScoringKernelId id() const override { return ScoringKernelId::kLaneChains; }
  // Only when batch.num_trees is every tree (a lane's chain runs through all
  // of them); then the last document of `todo` when todo.size() % kLanes is
  // 1, or every document (Takes).
  DocRange Accumulate(const KernelBatch& batch, DocRange todo) const override;

 private:
  // A node of the lane chains: the flat forest's with global child indices,
  // where a leaf of tree t records itself as tree t's exit and moves to the
  // root of tree t + 8 (the parking node, last, when there is none), or
  // makes that root's move when it splits.
  struct LaneNode {
    uint32_t threshold;
    uint32_t child;         // global index of the left child
    uint32_t value_offset;  // byte offset of the slot in a doubled row
    uint32_t record;        // tree of a leaf; num_trees otherwise
  };

  LaneChainsKernel() = default;
  // Adds all trees to *sum for the document whose doubled row starts at
  // doc_row (slot s at doc_row[s * kLanes]); `record` holds num_trees_ + 1
  // entries.
  void ScoreDocument(const uint32_t* doc_row, double* sum,
                     uint32_t* record) const;

  Takes takes_ = Takes::kSingleRemainder;
  int32_t num_trees_ = 0;
  CacheAlignedVector<LaneNode> nodes_;
  CacheAlignedVector<double> values_;  // leaf value per node
  std::vector<uint32_t> first_roots_;  // per lane
  uint32_t parking_ = 0;
  int32_t min_rounds_ = 0;
};

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_LANE_CHAINS_H_
