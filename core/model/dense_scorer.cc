#include "core/model/dense_scorer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/model/in_order_leaves.h"
#include "core/model/order_key.h"

// DenseScorerForest's layout (the AVX-512 evaluation is in
// dense_scorer_avx512.cc).

namespace plrank {
namespace {

// Threshold rank of padding nodes: no bin (at most 255) exceeds it.
constexpr uint8_t kNeverRight = 255;
// Padding of each slot's thresholds: no value key exceeds it (keys of real
// values are at most OrderKey(+inf)).
constexpr uint32_t kPadKey = std::numeric_limits<uint32_t>::max();

}  // namespace

bool DenseScorerForest::CpuSupported() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}

std::optional<DenseScorerForest> DenseScorerForest::Build(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots) {
  if (model.trees.empty() || model.num_outputs != 1 || !CpuSupported()) {
    return std::nullopt;
  }
  int32_t ranks = 0;
  uint32_t max_slot = 0;
  for (size_t t = 0; t < model.trees.size(); ++t) {
    if (model.trees[t].num_leaves() > kMaxLeaves) return std::nullopt;
    ranks = std::max(ranks, model.trees[t].num_internal_nodes());
    for (uint32_t slot : split_slots[t]) max_slot = std::max(max_slot, slot);
  }
  // Distinct thresholds per doubled-row slot, then compact slot numbers.
  std::vector<std::vector<uint32_t>> slot_keys(size_t{max_slot} + 1);
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      slot_keys[split_slots[t][n]].push_back(OrderKey(tree.threshold[n]));
    }
  }
  DenseScorerForest forest;
  std::vector<int32_t> compact(slot_keys.size(), -1);
  for (size_t s = 0; s < slot_keys.size(); ++s) {
    std::vector<uint32_t>& keys = slot_keys[s];
    if (keys.empty()) continue;
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (keys.size() > 255 || forest.slots_.size() == kMaxSlots) {
      return std::nullopt;
    }
    compact[s] = static_cast<int32_t>(forest.slots_.size());
    forest.slots_.push_back(static_cast<uint32_t>(s));
    forest.threshold_begin_.push_back(
        static_cast<uint32_t>(forest.thresholds_.size()));
    // At least one padding key, so the block after the last one below any
    // value exists (see coarse_).
    const size_t begin = forest.thresholds_.size();
    forest.thresholds_.insert(forest.thresholds_.end(), keys.begin(),
                              keys.end());
    forest.thresholds_.resize(begin + (keys.size() + 16) / 16 * 16, kPadKey);
    for (size_t k = 0; k < 16; ++k) {
      const size_t last = 16 * k + 15;
      forest.coarse_.push_back(last < keys.size() ? keys[last] : kPadKey);
    }
  }
  forest.threshold_begin_.push_back(
      static_cast<uint32_t>(forest.thresholds_.size()));

  const size_t num_trees = model.trees.size();
  const size_t groups = (num_trees + kGroupTrees - 1) / kGroupTrees;
  forest.num_trees_ = static_cast<int32_t>(num_trees);
  forest.ranks_ = ranks;
  RankVectors padding;
  std::fill_n(padding.slot, kGroupTrees, 0);
  std::fill_n(padding.threshold, kGroupTrees, kNeverRight);
  std::fill_n(padding.left_leaves, kGroupTrees, 0);
  forest.rank_vectors_.assign(groups * static_cast<size_t>(ranks), padding);
  forest.leaf_values_.assign(num_trees * kMaxLeaves, 0.0);
  for (size_t t = 0; t < num_trees; ++t) {
    const Tree& tree = model.trees[t];
    double* leaf_values = forest.leaf_values_.data() + t * kMaxLeaves;
    if (tree.num_internal_nodes() == 0) {
      leaf_values[0] = tree.leaf_value[0];
      continue;
    }
    const InOrderLeaves order = NumberLeavesInOrder(tree, leaf_values);
    const size_t lane = t % kGroupTrees;
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      const uint32_t slot = split_slots[t][n];
      const std::vector<uint32_t>& keys = slot_keys[slot];
      const uint32_t key = OrderKey(tree.threshold[n]);
      RankVectors& rank = forest.rank_vectors_[t / kGroupTrees * ranks + n];
      rank.slot[lane] = static_cast<uint8_t>(compact[slot]);
      rank.threshold[lane] = static_cast<uint8_t>(
          std::lower_bound(keys.begin(), keys.end(), key) - keys.begin());
      const uint64_t below_end = (uint64_t{1} << order.left_end[n]) - 1;
      const uint64_t below_begin = (uint64_t{1} << order.first_leaf[n]) - 1;
      rank.left_leaves[lane] = static_cast<uint32_t>(below_end ^ below_begin);
    }
  }
  return forest;
}

}  // namespace plrank
