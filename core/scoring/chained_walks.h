#ifndef PLRANK_CORE_SCORING_CHAINED_WALKS_H_
#define PLRANK_CORE_SCORING_CHAINED_WALKS_H_

// The chained_walks kernel (internal to core/scoring), for single-output
// forests: each of kLanes documents walks all trees of a tree block one
// after another without waiting for the others. Lockstep walks wait at every
// tree for the deepest of 8 paths; here only the block's last tree waits.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/scoring/cache_aligned.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/forest_kernel.h"

namespace plrank::internal {

class ChainedWalksKernel final : public ForestKernel {
 public:
  // Builds the chained copy of `forest`'s nodes (one output: the chooser
  // checked it, scoring_kernel.cc).
  explicit ChainedWalksKernel(std::shared_ptr<const FlatForest> forest);

  ScoringKernelId id() const override { return ScoringKernelId::kChainedWalks; }
  // From kChainMinDocs documents on (fewer are left to the next kernel):
  // takes whole groups of kLanes and a remainder of kChainPadMinDocs or
  // more, padded to a group (rows have room for it: row_capacity is a
  // multiple of kLanes), leaving a remainder of 1 or 2. Its documents
  // walk every tree: a block cut by a tree prefix (num_trees) in lockstep.
  DocRange Accumulate(const KernelBatch& batch, DocRange todo) const override;

 private:
  // Adds all trees of tree block `block` to sum[d] for the kLanes documents
  // of the interleaved group at `group_rows`.
  void ChainGroup(const uint32_t* group_rows, size_t block, double* sum) const;

  std::shared_ptr<const FlatForest> forest_;
  // Copy of forest_->nodes where a leaf's child is the next tree's root (the
  // block's last tree: a parking node closing each block), and leaf values
  // at leaves, -0.0 elsewhere. Block b starts at block_begin_[b]; its walks
  // need at least min_rounds_[b] steps.
  CacheAlignedVector<FlatNode> nodes_;
  CacheAlignedVector<double> values_;
  std::vector<size_t> block_begin_;
  std::vector<int32_t> min_rounds_;
};

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_CHAINED_WALKS_H_
