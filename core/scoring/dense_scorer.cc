#include "core/scoring/dense_scorer.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/scoring/in_order_leaves.h"
#include "core/scoring/order_key.h"

// DenseScorerForest's layout (the AVX-512 evaluation is in
// dense_scorer_avx512.cc).

namespace plrank {
namespace {

// Threshold rank of padding nodes: no bin (at most 255) exceeds it.
constexpr uint8_t kNeverRight = 255;

}  // namespace

std::optional<DenseScorerForest> DenseScorerForest::Build(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots) {
  if (model.trees.empty() || model.num_outputs != 1) {
    return std::nullopt;
  }
  int32_t ranks = 0;
  for (const Tree& tree : model.trees) {
    if (tree.num_leaves() > kMaxLeaves) return std::nullopt;
    ranks = std::max(ranks, tree.num_internal_nodes());
  }
  std::optional<SlotBins> bins = SlotBins::Build(model, split_slots);
  if (!bins.has_value()) return std::nullopt;
  DenseScorerForest forest(*std::move(bins));

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
    const InOrderLeaves order = NumberLeavesInOrder(tree, leaf_values);
    const size_t lane = t % kGroupTrees;
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      const uint32_t slot = split_slots[t][n];
      RankVectors& rank = forest.rank_vectors_[t / kGroupTrees * ranks + n];
      rank.slot[lane] = forest.bins_.CompactSlot(slot);
      rank.threshold[lane] =
          forest.bins_.ThresholdRank(slot, OrderKey(tree.threshold[n]));
      rank.left_leaves[lane] = static_cast<uint32_t>(LeftSubtreeMask(order, n));
    }
  }
  return forest;
}

internal::DocRange DenseScorerForest::Accumulate(
    const internal::KernelBatch& batch, internal::DocRange todo) const {
  for (size_t i = todo.begin; i < todo.end; i += kMaxDocs) {
    const size_t docs = std::min(kMaxDocs, todo.end - i);
    const uint32_t* keys[kMaxDocs];
    for (size_t d = 0; d < docs; ++d) keys[d] = batch.doc_rows(i + d);
    AccumulateDocuments(keys, docs, internal::kLanes, batch.num_trees,
                        batch.out + i);
  }
  return {todo.end, todo.end};
}

}  // namespace plrank
