#include "core/scoring/quick_scorer.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

#include "core/scoring/in_order_leaves.h"
#include "core/scoring/order_key.h"

namespace plrank {
namespace {

// Split nodes per block: with the block's leaf masks they stay in L2 while
// a group of documents scans them. Larger blocks mean fewer scan restarts.
constexpr size_t kBlockNodes = 8192;

}  // namespace

std::optional<QuickScorerForest> QuickScorerForest::Build(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots, bool avx512) {
  for (const Tree& tree : model.trees) {
    if (tree.num_leaves() > kMaxLeaves) return std::nullopt;
  }
  if (model.num_outputs > kMaxBlockTrees) return std::nullopt;
  QuickScorerForest forest;
  forest.avx512_ = avx512;
  forest.num_outputs_ = model.num_outputs;
  forest.leaf_values_.assign(model.trees.size() * kMaxLeaves, 0.0);
  std::vector<SplitNode> nodes;
  int32_t block_begin = 0;
  const int32_t num_trees = static_cast<int32_t>(model.trees.size());
  for (int32_t t = 0; t < num_trees; ++t) {
    // Blocks hold whole iterations, so a num_trees prefix ends on one.
    if (t % model.num_outputs == 0 &&
        (nodes.size() >= kBlockNodes ||
         t - block_begin + model.num_outputs > kMaxBlockTrees)) {
      forest.AddBlock(block_begin, t, &nodes);
      block_begin = t;
    }
    forest.AppendTree(model.trees[t], t, static_cast<uint32_t>(t - block_begin),
                      split_slots[t], &nodes);
  }
  if (num_trees > 0) forest.AddBlock(block_begin, num_trees, &nodes);
  return forest;
}

void QuickScorerForest::AppendTree(const Tree& tree, size_t tree_index,
                                   uint32_t tree_in_block,
                                   const std::vector<uint32_t>& slots,
                                   std::vector<SplitNode>* nodes) {
  // Number leaves left to right (in-order); a node's left subtree holds a
  // contiguous range of them.
  double* leaf_values = leaf_values_.data() + tree_index * kMaxLeaves;
  const InOrderLeaves order = NumberLeavesInOrder(tree, leaf_values);
  for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
    const int32_t signed_key = SignedOrderKey(tree.threshold[n]);
    nodes->push_back({slots[n], signed_key,
                      static_cast<uint32_t>(LeftSubtreeMask(order, n)),
                      tree_in_block});
  }
}

void QuickScorerForest::AddBlock(int32_t tree_begin, int32_t tree_end,
                                 std::vector<SplitNode>* nodes) {
  std::stable_sort(nodes->begin(), nodes->end(),
                   [](const SplitNode& a, const SplitNode& b) {
                     return a.slot != b.slot ? a.slot < b.slot
                                             : a.threshold < b.threshold;
                   });
  Block block;
  block.tree_begin = tree_begin;
  block.tree_end = tree_end;
  block.thresholds.reserve(nodes->size());
  block.left_leaves.reserve(nodes->size());
  block.tree_of_node.reserve(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i) {
    const SplitNode& node = (*nodes)[i];
    if (i == 0 || node.slot != (*nodes)[i - 1].slot) {
      block.slots.push_back(node.slot);
      block.slot_begin.push_back(static_cast<uint32_t>(i));
    }
    block.thresholds.push_back(node.threshold);
    block.left_leaves.push_back(node.left_leaves);
    block.tree_of_node.push_back(node.tree * kLanes);
  }
  block.slot_begin.push_back(static_cast<uint32_t>(nodes->size()));
  blocks_.push_back(std::move(block));
  nodes->clear();
}

__attribute__((target("avx2"))) void QuickScorerForest::AccumulateGroup(
    const uint32_t* group_rows, int32_t num_trees, int32_t num_outputs,
    double* sum, double* out, size_t out_stride) const {
  alignas(32) uint32_t masks[kMaxBlockTrees * kLanes];
  const __m256i all_ones = _mm256_set1_epi32(-1);
  const __m256i sign = _mm256_set1_epi32(static_cast<int32_t>(0x80000000u));
  for (const Block& block : blocks_) {
    if (block.tree_begin >= num_trees) break;
    const int32_t block_trees = block.tree_end - block.tree_begin;
    for (int32_t k = 0; k < block_trees; ++k) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(masks + k * kLanes),
                         all_ones);
    }
    const int32_t* thresholds = block.thresholds.data();
    const uint32_t* left_leaves = block.left_leaves.data();
    const uint32_t* tree_of_node = block.tree_of_node.data();
    for (size_t s = 0; s < block.slots.size(); ++s) {
      const __m256i values = _mm256_xor_si256(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
              group_rows + block.slots[s] * kLanes)),
          sign);
      const uint32_t end = block.slot_begin[s + 1];
      for (uint32_t i = block.slot_begin[s]; i < end; ++i) {
        const __m256i right =
            _mm256_cmpgt_epi32(values, _mm256_set1_epi32(thresholds[i]));
        if (_mm256_testz_si256(right, right)) break;
        __m256i* mask = reinterpret_cast<__m256i*>(masks + tree_of_node[i]);
        const __m256i cleared =
            _mm256_and_si256(right, _mm256_set1_epi32(
                                        static_cast<int32_t>(left_leaves[i])));
        _mm256_store_si256(mask,
                           _mm256_andnot_si256(cleared,
                                               _mm256_load_si256(mask)));
      }
    }
    const int32_t end_tree = std::min(block.tree_end, num_trees);
    for (int32_t t = block.tree_begin; t < end_tree; ++t) {
      const uint32_t* tree_masks = masks + (t - block.tree_begin) * kLanes;
      const double* values = leaf_values_.data() + t * kMaxLeaves;
      double* target =
          num_outputs == 1
              ? sum
              : out + static_cast<size_t>(t % num_outputs) * out_stride;
      for (size_t d = 0; d < kLanes; ++d) {
        target[d] += values[std::countr_zero(tree_masks[d])];
      }
    }
  }
}

internal::DocRange QuickScorerForest::Accumulate(
    const internal::KernelBatch& batch, internal::DocRange todo) const {
  static_assert(kLanes == internal::kLanes);
  constexpr size_t kWide = 2 * kLanes;
  size_t first = todo.begin;
  if (avx512_) {
    size_t wide_end = first + todo.size() / kWide * kWide;
    if (num_outputs_ == 1 && todo.end - wide_end >= kPadDocs &&
        wide_end + kWide <= batch.row_capacity) {
      internal::PadWithLastDocument(batch, todo.end - 1, wide_end + kWide);
      wide_end += kWide;
    }
    for (; first < wide_end; first += kWide) {
      const size_t docs = std::min(kWide, todo.end - first);
      double sum[kWide] = {};
      double* target = batch.out + first;
      if (num_outputs_ == 1) std::copy_n(target, docs, sum);
      AccumulateGroup16(batch.doc_rows(first), batch.group_slots(),
                        batch.num_trees, num_outputs_, sum, target,
                        batch.out_stride);
      if (num_outputs_ == 1) std::copy_n(sum, docs, target);
    }
    if (first >= todo.end) return {todo.end, todo.end};
  }
  const size_t groups_end = first + (todo.end - first) / kLanes * kLanes;
  for (; first < groups_end; first += kLanes) {
    double sum[kLanes];
    double* target = batch.out + first;
    if (num_outputs_ == 1) std::copy_n(target, kLanes, sum);
    AccumulateGroup(batch.doc_rows(first), batch.num_trees, num_outputs_, sum,
                    target, batch.out_stride);
    if (num_outputs_ == 1) std::copy_n(sum, kLanes, target);
  }
  return {first, todo.end};
}

}  // namespace plrank
