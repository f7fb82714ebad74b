#include "core/boosting/split_finder.h"

#include <algorithm>
#include <vector>

#include <omp.h>

namespace plrank {
namespace {

struct Scorer {
  const SplitRules& rules;
  double Score(const NodeSums& s) const {
    const double denominator = s.hessian + (rules.newton ? rules.lambda_l2 : 0.0);
    return denominator > 0.0 ? s.gradient * s.gradient / denominator : 0.0;
  }
  bool Admissible(const NodeSums& s) const {
    if (s.count < rules.min_data_in_leaf) return false;
    return !rules.newton || s.hessian >= rules.min_sum_hessian_in_leaf;
  }
};

// Entry layouts: see HistogramLayout.
template <int kStride>
NodeSums EntrySums(const double* entry) {
  if constexpr (kStride == 2) return {entry[0], entry[1], entry[1]};
  return {entry[0], entry[1], entry[2]};
}

// Best split of one feature; `best` is only replaced by strictly better ones.
template <int kStride>
void ScanFeature(const double* bins, int32_t num_bins, int32_t feature,
                 const NodeSums& node, double parent_score, const Scorer& scorer,
                 SplitCandidate* best) {
  const NodeSums missing = EntrySums<kStride>(bins + num_bins * kStride);
  const bool has_missing = missing.count > 0.0;
  // Pass 0: missing right (or absent); pass 1: missing left.
  for (int pass = 0; pass < (has_missing ? 2 : 1); ++pass) {
    const bool missing_left = pass == 1 || !has_missing;
    NodeSums left = pass == 1 ? missing : NodeSums{};
    // With missing values on the right, "all present values left" is a split.
    const int32_t last_bin = pass == 0 && has_missing ? num_bins - 1 : num_bins - 2;
    for (int32_t b = 0; b <= last_bin; ++b) {
      const NodeSums entry = EntrySums<kStride>(bins + b * kStride);
      if (entry.count == 0.0) continue;  // same partition as the previous b
      left.gradient += entry.gradient;
      left.hessian += entry.hessian;
      left.count += entry.count;
      if (!scorer.Admissible(left)) continue;
      const NodeSums right = Minus(node, left);
      if (right.count < scorer.rules.min_data_in_leaf) break;  // only shrinks
      if (!scorer.Admissible(right)) continue;
      const double gain = scorer.Score(left) + scorer.Score(right) - parent_score;
      if (gain > best->gain) {
        best->gain = gain;
        best->feature = feature;
        best->bin = b;
        best->default_left = missing_left;
        best->left = left;
        best->right = right;
      }
    }
  }
}

}  // namespace

bool BetterSplit(const SplitCandidate& a, const SplitCandidate& b) {
  if (a.gain != b.gain) return a.gain > b.gain;
  return a.feature >= 0 && (b.feature < 0 || a.feature < b.feature);
}

void ScanFeatureForSplit(const HistogramLayout& layout,
                         const BinnedDataset& data, const double* histogram,
                         const NodeSums& node, int32_t feature,
                         const SplitRules& rules, SplitCandidate* best) {
  const Scorer scorer{rules};
  SplitCandidate candidate;
  const double* bins = histogram + layout.offset(feature);
  const int32_t num_bins = data.mapper(feature).num_bins();
  if (layout.stride() == 2) {
    ScanFeature<2>(bins, num_bins, feature, node, scorer.Score(node), scorer,
                   &candidate);
  } else {
    ScanFeature<4>(bins, num_bins, feature, node, scorer.Score(node), scorer,
                   &candidate);
  }
  if (BetterSplit(candidate, *best)) *best = candidate;
}

SplitCandidate FindBestSplit(const HistogramLayout& layout,
                             const BinnedDataset& data, const double* histogram,
                             const NodeSums& node,
                             absl::Span<const int32_t> features,
                             const SplitRules& rules, int32_t num_threads) {
  const Scorer scorer{rules};
  const double parent_score = scorer.Score(node);
  const int64_t num_features = static_cast<int64_t>(features.size());
  const int threads = static_cast<int>(
      std::clamp<int64_t>(std::min<int64_t>(num_threads, num_features / 8), 1, 64));
  SplitCandidate per_thread[64];
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int team = omp_get_num_threads();
    // Contiguous feature blocks, scanned in ascending order, so "first
    // strictly better" inside a block and Better() across blocks give the
    // serial answer.
    const int64_t begin = num_features * t / team;
    const int64_t end = num_features * (t + 1) / team;
    SplitCandidate best;
    for (int64_t k = begin; k < end; ++k) {
      const int32_t f = features[k];
      const double* bins = histogram + layout.offset(f);
      const int32_t num_bins = data.mapper(f).num_bins();
      if (layout.stride() == 2) {
        ScanFeature<2>(bins, num_bins, f, node, parent_score, scorer, &best);
      } else {
        ScanFeature<4>(bins, num_bins, f, node, parent_score, scorer, &best);
      }
    }
    per_thread[t] = best;
  }
  SplitCandidate best;
  for (int t = 0; t < threads; ++t) {
    if (BetterSplit(per_thread[t], best)) best = per_thread[t];
  }
  return best;
}

}  // namespace plrank
