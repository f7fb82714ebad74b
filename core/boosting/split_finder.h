#ifndef PLRANK_CORE_BOOSTING_SPLIT_FINDER_H_
#define PLRANK_CORE_BOOSTING_SPLIT_FINDER_H_

#include <cstdint>
#include <limits>

#include "absl/types/span.h"
#include "core/boosting/binned_dataset.h"
#include "core/boosting/histogram.h"

namespace plrank {

// Sums over the documents of a node. `hessian` equals `count` under the
// least-squares gain (every document weighs 1).
struct NodeSums {
  double gradient = 0.0;
  double hessian = 0.0;
  double count = 0.0;
};

// a - b, field by field (a node's sums minus one child's: the other's).
inline NodeSums Minus(const NodeSums& a, const NodeSums& b) {
  return {a.gradient - b.gradient, a.hessian - b.hessian, a.count - b.count};
}

struct SplitRules {
  bool newton = false;             // false: least squares on the gradients
  double lambda_l2 = 0.0;          // added to hessian sums (kNewton only)
  int32_t min_data_in_leaf = 1;
  double min_sum_hessian_in_leaf = 0.0;  // kNewton only
};

// The best way to split one node. Documents go left iff their bin is
// <= bin, missing ones go left iff default_left. gain <= 0 means "no split".
struct SplitCandidate {
  double gain = -std::numeric_limits<double>::infinity();
  int32_t feature = -1;   // BinnedDataset feature index
  int32_t bin = 0;
  bool default_left = true;
  NodeSums left, right;

  bool valid() const { return feature >= 0 && gain > 0.0; }
};

// Replaces *best by feature `feature`'s best split when that one is better
// (see BetterSplit). The building block of FindBestSplit.
void ScanFeatureForSplit(const HistogramLayout& layout,
                         const BinnedDataset& data, const double* histogram,
                         const NodeSums& node, int32_t feature,
                         const SplitRules& rules, SplitCandidate* best);

// The total order on candidates: larger gain, then lower feature. Merging
// per-feature results with it gives the same answer in any order.
bool BetterSplit(const SplitCandidate& a, const SplitCandidate& b);

// Scans every feature of `features` for the split of largest gain
//   least squares: GL^2/nL + GR^2/nR - G^2/n
//   Newton:        GL^2/(HL+l2) + GR^2/(HR+l2) - G^2/(H+l2)
// trying missing values on both sides when the node has any (left otherwise).
// Ties go to the lower feature, then the lower bin, then missing-right: the
// answer does not depend on the thread count.
SplitCandidate FindBestSplit(const HistogramLayout& layout,
                             const BinnedDataset& data, const double* histogram,
                             const NodeSums& node,
                             absl::Span<const int32_t> features,
                             const SplitRules& rules, int32_t num_threads);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_SPLIT_FINDER_H_
