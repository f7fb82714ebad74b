#include "core/scoring/rapid_scorer.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/scoring/in_order_leaves.h"
#include "core/scoring/order_key.h"

// RapidScorerForest's layout (the AVX-512 scan is in rapid_scorer_avx512.cc).

namespace plrank {
namespace {

// Leaf-bitvector bytes of a block's trees for one group of 64 documents:
// they stay in L2 while the group scans the block's nodes. Larger blocks
// merge more equal thresholds and restart fewer slot scans: on a 500-tree
// x 63-leaf XGBoost forest, 16 / 32 / 128 / 256 KB blocks scored at 2.09 /
// 1.96 / 1.71 / 1.59 us per document.
constexpr size_t kBlockMaskBytes = 256 * 1024;

}  // namespace

std::optional<RapidScorerForest> RapidScorerForest::Build(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots,
    size_t pad_min_docs) {
  int32_t max_leaves = 0;
  for (const Tree& tree : model.trees) {
    max_leaves = std::max(max_leaves, tree.num_leaves());
  }
  if (model.trees.empty() || model.num_outputs != 1 ||
      max_leaves > kMaxLeaves) {
    return std::nullopt;
  }
  RapidScorerForest forest;
  forest.pad_min_docs_ = pad_min_docs;
  forest.tree_bytes_ = (max_leaves + 7) / 8;
  // Whole vectors of 16 values, zero-padded: the exit leaves' values are
  // picked with two-table permutes of 16 (rapid_scorer_avx512.cc).
  forest.leaf_stride_ =
      (static_cast<size_t>(forest.tree_bytes_) * 8 + 15) / 16 * 16;
  forest.trees_per_block_ = static_cast<int32_t>(std::max<size_t>(
      1, kBlockMaskBytes / (static_cast<size_t>(forest.tree_bytes_) * kDocs)));
  forest.leaf_values_.assign(model.trees.size() * forest.leaf_stride_, 0.0);
  std::vector<SplitEntry> entries;
  const int32_t num_trees = static_cast<int32_t>(model.trees.size());
  for (int32_t begin = 0; begin < num_trees;
       begin += forest.trees_per_block_) {
    const int32_t end = std::min(num_trees, begin + forest.trees_per_block_);
    for (int32_t t = begin; t < end; ++t) {
      forest.AppendTree(model.trees[t], t, static_cast<uint32_t>(t - begin),
                        split_slots[t], &entries);
    }
    forest.AddBlock(begin, end, &entries);
  }
  return forest;
}

void RapidScorerForest::AppendTree(const Tree& tree, size_t tree_index,
                                   uint32_t tree_in_block,
                                   const std::vector<uint32_t>& slots,
                                   std::vector<SplitEntry>* entries) {
  double* leaf_values = leaf_values_.data() + tree_index * leaf_stride_;
  const InOrderLeaves order = NumberLeavesInOrder(tree, leaf_values);
  const std::vector<uint32_t>& first_leaf = order.first_leaf;
  const std::vector<uint32_t>& left_end = order.left_end;
  const uint32_t tree_base = tree_in_block * static_cast<uint32_t>(tree_bytes_);
  for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
    const uint32_t key = OrderKey(tree.threshold[n]);
    const uint32_t begin = first_leaf[n];
    const uint32_t end = left_end[n];
    for (uint32_t byte = begin / 8; byte * 8 < end; ++byte) {
      const uint32_t low = std::max(begin, byte * 8) - byte * 8;
      const uint32_t high = std::min(end, byte * 8 + 8) - byte * 8;
      const uint32_t bits = ((1u << high) - 1) & ~((1u << low) - 1);
      entries->push_back(
          {slots[n], key, {tree_base + byte, bits * 0x01010101u, 0}});
    }
  }
}

void RapidScorerForest::AddBlock(int32_t tree_begin, int32_t tree_end,
                                 std::vector<SplitEntry>* entries) {
  // Stable: a node's entries keep their order, and so does the scan's
  // effect (clearing bits commutes anyway).
  std::stable_sort(entries->begin(), entries->end(),
                   [](const SplitEntry& a, const SplitEntry& b) {
                     return a.slot != b.slot ? a.slot < b.slot
                                             : a.threshold < b.threshold;
                   });
  Block block;
  block.tree_begin = tree_begin;
  block.tree_end = tree_end;
  block.entries.reserve(entries->size());
  for (size_t i = 0; i < entries->size(); ++i) {
    const SplitEntry& entry = (*entries)[i];
    const bool new_slot = i == 0 || entry.slot != (*entries)[i - 1].slot;
    if (new_slot) {
      block.slots.push_back(entry.slot);
      block.slot_begin.push_back(
          static_cast<uint32_t>(block.thresholds.size()));
    }
    if (new_slot || entry.threshold != (*entries)[i - 1].threshold) {
      block.thresholds.push_back(entry.threshold);
      block.threshold_begin.push_back(static_cast<uint32_t>(i));
    }
    block.entries.push_back(entry.entry);
    block.entries.back().threshold = static_cast<uint32_t>(
        block.thresholds.size() - 1 - block.slot_begin.back());
  }
  block.slot_begin.push_back(static_cast<uint32_t>(block.thresholds.size()));
  for (size_t s = 0; s < block.slots.size(); ++s) {
    max_slot_thresholds_ = std::max<size_t>(
        max_slot_thresholds_, block.slot_begin[s + 1] - block.slot_begin[s]);
  }
  block.threshold_begin.push_back(static_cast<uint32_t>(entries->size()));
  blocks_.push_back(std::move(block));
  entries->clear();
}

internal::DocRange RapidScorerForest::Accumulate(
    const internal::KernelBatch& batch, internal::DocRange todo) const {
  size_t groups_end = todo.begin + todo.size() / kDocs * kDocs;
  if (todo.end - groups_end >= pad_min_docs_ &&
      groups_end + kDocs <= batch.row_capacity) {
    internal::PadWithLastDocument(batch, todo.end - 1, groups_end + kDocs);
    groups_end += kDocs;
  }
  for (size_t first = todo.begin; first < groups_end; first += kDocs) {
    const size_t docs = std::min(kDocs, todo.end - first);
    double sum[kDocs] = {};
    std::copy_n(batch.out + first, docs, sum);
    AccumulateGroup64(batch.doc_rows(first), batch.group_slots(),
                      batch.num_trees, sum);
    std::copy_n(sum, docs, batch.out + first);
  }
  return {std::min(groups_end, todo.end), todo.end};
}

}  // namespace plrank
