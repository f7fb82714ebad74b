#include "core/boosting/tree_learner.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <omp.h>

namespace plrank {

TreeLearner::TreeLearner(const BinnedDataset& data,
                         const TreeLearnerConfig& config)
    : data_(data),
      config_(config),
      layout_(data, config.rules.newton),
      builder_(layout_, data) {
  config_.num_leaves = std::max(config_.num_leaves, 1);
  config_.num_threads = std::clamp(config_.num_threads, 1, kMaxThreads);
  config_.rules.min_data_in_leaf = std::max(config_.rules.min_data_in_leaf, 1);
  distributed_ = config_.reducer != nullptr && config_.reducer->num_ranks() > 1;
  voting_ = distributed_ && config_.parallel_splits == ParallelSplits::kVoting;
  if (voting_) {
    config_.top_k = std::max(config_.top_k, 1);
    const int32_t ranks = config_.reducer->num_ranks();
    local_rules_ = config_.rules;
    local_rules_.min_data_in_leaf =
        std::max(config_.rules.min_data_in_leaf / ranks, 1);
    local_rules_.min_sum_hessian_in_leaf =
        config_.rules.min_sum_hessian_in_leaf / ranks;
    local_gain_.resize(2 * static_cast<size_t>(data.num_features()));
    ballot_.resize(local_gain_.size());
    global_built_.resize(layout_.size());
    global_derived_.resize(layout_.size());
  }
  if (config_.num_leaves > 1) {
    histograms_.resize(layout_.size() * config_.num_leaves);
  }
  const size_t n = data.num_documents();
  indices_.resize(n);
  scratch_.resize(n);
  ordered_pairs_.resize(2 * n);
  leaves_.resize(config_.num_leaves);
}

void TreeLearner::BuildAndScan(Leaf* built, Leaf* derived,
                               absl::Span<const float> gradients,
                               absl::Span<const float> hessians,
                               absl::Span<const int32_t> features) {
  const uint32_t min_to_split = 2u * config_.rules.min_data_in_leaf;
  // Siblings (and the root) share a depth; leaves at the limit never split.
  const bool below_max_depth =
      config_.max_depth <= 0 || built->depth < config_.max_depth;
  // Global counts: every rank must take the same branches (and make the same
  // collective calls).
  const bool scan_built = below_max_depth && built->total >= min_to_split;
  const bool scan_derived =
      below_max_depth && derived != nullptr && derived->total >= min_to_split;
  built->best = SplitCandidate{};
  if (derived != nullptr) derived->best = SplitCandidate{};
  // Neither child can split: their histograms would never be read.
  if (!scan_built && !scan_derived) return;

  const uint32_t* documents = indices_.data() + built->begin;
  const int64_t count = built->count;
  float* pairs = ordered_pairs_.data();
  const bool newton = config_.rules.newton;
  double* built_histogram = histogram(built->histogram);
  double* derived_histogram = scan_derived ? histogram(derived->histogram) : nullptr;
  const int64_t num_features = static_cast<int64_t>(features.size());
  // Small leaves are not worth waking threads for.
  const int threads =
      count * num_features >= 65536 ? config_.num_threads : 1;
  const int32_t num_groups = builder_.GroupCount(features.size(), threads);
  // Serial on purpose: it is cheap next to the histograms, and every barrier
  // costs dearly when the machine is oversubscribed.
  for (int64_t j = 0; j < count; ++j) {
    pairs[2 * j] = gradients[documents[j]];
    pairs[2 * j + 1] = newton ? hessians[documents[j]] : 1.0f;
  }
  if (voting_) {
    VoteReduceAndScan(built, derived, scan_built, scan_derived, threads,
                      features);
    return;
  }
  if (distributed_) {
    BuildReduceAndScan(built, derived, scan_built, scan_derived, threads,
                       features);
    return;
  }
  SplitCandidate best_built[kMaxThreads], best_derived[kMaxThreads];
#pragma omp parallel num_threads(threads)
  {
    // Candidates are merged with BetterSplit, a total order, so the dynamic
    // schedule cannot change the answer.
    SplitCandidate mine_built, mine_derived;
#pragma omp for schedule(dynamic, 1) nowait
    for (int32_t g = 0; g < num_groups; ++g) {
      const absl::Span<const int32_t> group = FeatureGroup(features, num_groups, g);
      builder_.BuildGroup(group, absl::MakeConstSpan(documents, count), pairs,
                          built_histogram);
      for (int32_t f : group) {
        ScanFeature(f, *built, derived, scan_built, scan_derived,
                    built_histogram, derived_histogram, &mine_built,
                    &mine_derived);
      }
    }
    best_built[omp_get_thread_num()] = mine_built;
    best_derived[omp_get_thread_num()] = mine_derived;
  }
  KeepBest(best_built, best_derived, threads, built, derived);
}

void TreeLearner::BuildReduceAndScan(Leaf* built, Leaf* derived,
                                     bool scan_built, bool scan_derived,
                                     int threads,
                                     absl::Span<const int32_t> features) {
  const uint32_t* documents = indices_.data() + built->begin;
  const float* pairs = ordered_pairs_.data();
  double* built_histogram = histogram(built->histogram);
  double* derived_histogram = scan_derived ? histogram(derived->histogram) : nullptr;
  const int32_t num_groups = builder_.GroupCount(features.size(), threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int32_t g = 0; g < num_groups; ++g) {
    builder_.BuildGroup(FeatureGroup(features, num_groups, g),
                        absl::MakeConstSpan(documents, built->count), pairs,
                        built_histogram);
  }
  // The whole layout: slots of features outside `features` hold stale sums
  // that are never read.
  config_.reducer->Sum(absl::MakeSpan(built_histogram, layout_.size()));
  SplitCandidate best_built[kMaxThreads], best_derived[kMaxThreads];
#pragma omp parallel num_threads(threads)
  {
    SplitCandidate mine_built, mine_derived;
#pragma omp for schedule(dynamic, 1) nowait
    for (int32_t g = 0; g < num_groups; ++g) {
      for (int32_t f : FeatureGroup(features, num_groups, g)) {
        ScanFeature(f, *built, derived, scan_built, scan_derived,
                    built_histogram, derived_histogram, &mine_built,
                    &mine_derived);
      }
    }
    best_built[omp_get_thread_num()] = mine_built;
    best_derived[omp_get_thread_num()] = mine_derived;
  }
  KeepBest(best_built, best_derived, threads, built, derived);
}

void TreeLearner::ScanFeature(int32_t f, const Leaf& built, const Leaf* derived,
                              bool scan_built, bool scan_derived,
                              const double* built_histogram,
                              double* derived_histogram,
                              SplitCandidate* best_built,
                              SplitCandidate* best_derived) const {
  if (scan_built) {
    ScanFeatureForSplit(layout_, data_, built_histogram, built.sums, f,
                        config_.rules, best_built);
  }
  if (scan_derived) {
    SubtractFeature(layout_, f, built_histogram, derived_histogram);
    ScanFeatureForSplit(layout_, data_, derived_histogram, derived->sums, f,
                        config_.rules, best_derived);
  }
}

void TreeLearner::KeepBest(const SplitCandidate* best_built,
                           const SplitCandidate* best_derived, int threads,
                           Leaf* built, Leaf* derived) {
  for (int t = 0; t < threads; ++t) {
    if (BetterSplit(best_built[t], built->best)) built->best = best_built[t];
    if (derived != nullptr && BetterSplit(best_derived[t], derived->best)) {
      derived->best = best_derived[t];
    }
  }
}

uint32_t TreeLearner::Partition(const Leaf& leaf, const SplitCandidate& split) {
  const uint8_t* column = data_.column(split.feature);
  const uint8_t threshold = static_cast<uint8_t>(split.bin);
  const uint8_t missing = data_.mapper(split.feature).missing_bin();
  const bool default_left = split.default_left;
  uint32_t* documents = indices_.data() + leaf.begin;
  uint32_t* right = scratch_.data();
  uint32_t num_left = 0, num_right = 0;
  // Branch-free: splits are close to coin flips for the branch predictor.
  for (uint32_t j = 0; j < leaf.count; ++j) {
    const uint32_t document = documents[j];
    const uint8_t bin = column[document];
    const bool goes_left = (bin <= threshold) | (default_left & (bin == missing));
    documents[num_left] = document;
    right[num_right] = document;
    num_left += goes_left;
    num_right += !goes_left;
  }
  std::memcpy(documents + num_left, right, sizeof(uint32_t) * num_right);
  return num_left;
}

void TreeLearner::Grow(absl::Span<const uint32_t> bag,
                       absl::Span<const float> gradients,
                       absl::Span<const float> hessians,
                       absl::Span<const int32_t> features, GrownTree* out) {
  *out = GrownTree{};
  Tree& tree = out->tree;
  std::copy(bag.begin(), bag.end(), indices_.begin());

  Leaf& root = leaves_[0];
  root = Leaf{};
  root.count = static_cast<uint32_t>(bag.size());
  root.histogram = 0;
  for (uint32_t document : bag) root.sums.gradient += gradients[document];
  if (config_.rules.newton) {
    for (uint32_t document : bag) root.sums.hessian += hessians[document];
  } else {
    root.sums.hessian = root.count;
  }
  root.sums.count = root.count;
  root.local_sums = root.sums;
  if (distributed_) {
    double sums[3] = {root.sums.gradient, root.sums.hessian, root.sums.count};
    config_.reducer->Sum(absl::MakeSpan(sums));
    root.sums.gradient = sums[0];
    root.sums.hessian = sums[1];
    root.sums.count = sums[2];
  }
  root.total = static_cast<uint32_t>(root.sums.count);
  const bool can_split = config_.num_leaves > 1 && !features.empty();
  if (can_split) BuildAndScan(&root, nullptr, gradients, hessians, features);

  int32_t num_leaves = 1;
  while (can_split && num_leaves < config_.num_leaves) {
    int32_t split_leaf = -1;
    for (int32_t l = 0; l < num_leaves; ++l) {
      const SplitCandidate& best = leaves_[l].best;
      if (!best.valid() || !(best.gain > config_.min_gain_to_split)) continue;
      if (split_leaf < 0 || best.gain > leaves_[split_leaf].best.gain) {
        split_leaf = l;
      }
    }
    if (split_leaf < 0) break;
    const Leaf parent = leaves_[split_leaf];
    const SplitCandidate& split = parent.best;
    const int32_t new_leaf = num_leaves++;

    const int32_t node = tree.num_internal_nodes();
    const BinMapper& mapper = data_.mapper(split.feature);
    tree.split_feature.push_back(data_.original(split.feature));
    // The last bin's bound is +inf ("every present value left, missing
    // right"); artifacts hold finite thresholds, and FLT_MAX makes the same
    // partition of the finite values the reader admits, while the scorer's
    // NaN -> +inf (default right) still goes right.
    tree.threshold.push_back(std::min(mapper.upper_bound(split.bin),
                                      std::numeric_limits<float>::max()));
    tree.default_left.push_back(split.default_left ? 1 : 0);
    tree.left_child.push_back(~split_leaf);
    tree.right_child.push_back(~new_leaf);
    tree.split_gain.push_back(split.gain);
    out->split_binned_feature.push_back(split.feature);
    out->split_bin.push_back(static_cast<uint8_t>(split.bin));
    out->missing_bin.push_back(mapper.missing_bin());
    if (parent.parent_node >= 0) {
      (parent.is_left_child ? tree.left_child
                            : tree.right_child)[parent.parent_node] = node;
    }

    const uint32_t num_left = Partition(parent, split);
    Leaf& left = leaves_[split_leaf];
    Leaf& right = leaves_[new_leaf];
    left = Leaf{.begin = parent.begin,
                .count = num_left,
                .total = num_left,
                .sums = split.left,
                .local_sums = {},
                .histogram = parent.histogram,
                .parent_node = node,
                .is_left_child = true,
                .depth = parent.depth + 1,
                .best = {}};
    right = Leaf{.begin = parent.begin + num_left,
                 .count = parent.count - num_left,
                 .total = parent.count - num_left,
                 .sums = split.right,
                 .local_sums = {},
                 .histogram = -1,
                 .parent_node = node,
                 .is_left_child = false,
                 .depth = parent.depth + 1,
                 .best = {}};
    // Exact counts from the partition (the split's are the same, as doubles);
    // distributed, the split's are the global ones (integers, exact).
    if (distributed_) {
      left.total = static_cast<uint32_t>(split.left.count);
      right.total = parent.total - left.total;
    }
    left.sums.count = left.total;
    right.sums.count = right.total;
    if (!config_.rules.newton) {
      left.sums.hessian = left.total;
      right.sums.hessian = right.total;
    }
    if (num_leaves == config_.num_leaves) break;  // children stay leaves

    Leaf* smaller = left.total <= right.total ? &left : &right;
    Leaf* larger = smaller == &left ? &right : &left;
    larger->histogram = parent.histogram;
    smaller->histogram = new_leaf;  // the one free slot: leaves own 0..new_leaf-1
    if (voting_) {
      smaller->local_sums = LocalSums(*smaller, gradients, hessians);
      larger->local_sums = Minus(parent.local_sums, smaller->local_sums);
    }
    BuildAndScan(smaller, larger, gradients, hessians, features);
  }

  tree.leaf_value.assign(num_leaves, 0.0);
  tree.leaf_count.resize(num_leaves);
  for (int32_t l = 0; l < num_leaves; ++l) tree.leaf_count[l] = leaves_[l].total;
  num_leaves_of_last_tree_ = num_leaves;
}

void TreeLearner::AssignBagLeaves(absl::Span<int32_t> leaf_of_document) const {
  for (int32_t l = 0; l < num_leaves_of_last_tree_; ++l) {
    const Leaf& leaf = leaves_[l];
    for (uint32_t j = leaf.begin; j < leaf.begin + leaf.count; ++j) {
      leaf_of_document[indices_[j]] = l;
    }
  }
}

}  // namespace plrank
