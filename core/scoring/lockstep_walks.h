#ifndef PLRANK_CORE_SCORING_LOCKSTEP_WALKS_H_
#define PLRANK_CORE_SCORING_LOCKSTEP_WALKS_H_

// The lockstep_walks kernel (internal to core/scoring): kLanes independent
// tree walks in lockstep over the flat forest. It takes every model and
// every document, so it ends any plan that has no kernel taking all.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "core/scoring/flat_forest.h"
#include "core/scoring/forest_kernel.h"

namespace plrank::internal {

// Adds trees [begin, end) (whole iterations) of tree block `block` for
// `docs` documents (1, 2, 4 or kLanes), kLanes / docs trees at a time, to
// sum[d] when the forest has one output, else to out[(t % outputs) *
// out_stride + d]. `group_rows` is the first document's slot 0 in its
// interleaved group, and the documents are lanes of that group. Leaf values
// are added per document in tree order. Also the chained walks' fallback
// for a block they cannot chain.
void WalkLockstep(const FlatForest& forest, size_t docs,
                  const uint32_t* group_rows, size_t block, int32_t begin,
                  int32_t end, double* sum, double* out, size_t out_stride);

class LockstepWalksKernel final : public ForestKernel {
 public:
  explicit LockstepWalksKernel(std::shared_ptr<const FlatForest> forest)
      : forest_(std::move(forest)) {}

  ScoringKernelId id() const override {
    return ScoringKernelId::kLockstepWalks;
  }
  // Takes every document of `todo`: whole groups walk one tree per lane, a
  // remainder (and a small batch) splits into halves, quarters... of the
  // lanes walking 2, 4... trees at once, so no lane idles. Tree block by
  // tree block, so a block's nodes are read from L2 by every group.
  DocRange Accumulate(const KernelBatch& batch, DocRange todo) const override;

 private:
  std::shared_ptr<const FlatForest> forest_;
};

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_LOCKSTEP_WALKS_H_
