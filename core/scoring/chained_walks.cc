#include "core/scoring/chained_walks.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "core/scoring/lockstep_walks.h"
#include "core/scoring/tree_walk_step.h"

namespace plrank::internal {
namespace {

// Fewest documents that chain (a group of kLanes, padded); fewer walk in
// lockstep. With nodes laid out by cache line, 300 x 255 measured 2.24 /
// 1.87 / 1.62 us per document at batch 5 / 6 / 7 chained against 2.55 / 2.47
// / 2.54 in lockstep, and 2.78 against 2.40 at batch 4.
constexpr size_t kChainMinDocs = 5;
// Fewest documents left after whole chained groups that are padded to a
// group and chained; 2 walk in lockstep and 1 in lane chains instead
// (300 x 255, us per document: batch 10 1.93 with the 2 walked, 2.30
// padded; batch 11 1.98 padded, 2.09 with the 3 walked). Walked in lockstep
// a remainder reads forest nodes, a second copy of the model the chains
// have pushed out of cache (300 x 255 at batch 100: 2.01 us/doc with 4 of
// the 100 walked, against 1.72 for a batch of 96; bench/results/scorer.md).
constexpr size_t kChainPadMinDocs = 3;

}  // namespace

ChainedWalksKernel::ChainedWalksKernel(std::shared_ptr<const FlatForest> forest)
    : forest_(std::move(forest)) {
  const FlatForest& f = *forest_;
  const size_t blocks = f.num_blocks();
  nodes_.reserve(f.nodes.size() + 8 * blocks);
  values_.reserve(f.nodes.size() + 8 * blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = f.block_node_begin[b];
    const size_t last = f.block_node_end(b);
    const uint16_t parking = static_cast<uint16_t>(last - first);
    block_begin_.push_back(nodes_.size());
    int32_t min_rounds = 0;
    for (int32_t t = f.tree_block_begin[b]; t < f.tree_block_begin[b + 1];
         ++t) {
      const size_t tree_first = first + f.tree_roots[t];
      const size_t tree_last = t + 1 < f.tree_block_begin[b + 1]
                                   ? first + f.tree_roots[t + 1]
                                   : last;
      // A leaf's step adds its value and moves to the next tree's root; when
      // that root is a split, the leaf takes the root's fields instead, so
      // its step also makes the next tree's first move (one step fewer per
      // tree). A single-leaf next tree keeps the plain step, as its own
      // value must be added too.
      const bool has_next = t + 1 < f.tree_block_begin[b + 1];
      const uint16_t next =
          has_next ? static_cast<uint16_t>(f.tree_roots[t + 1]) : parking;
      const bool merge =
          has_next && f.nodes[first + next].threshold != kLeafThreshold;
      const FlatNode leaf_step =
          merge ? f.nodes[first + next] : FlatNode{kLeafThreshold, 0, next};
      for (size_t n = tree_first; n < tree_last; ++n) {
        const bool leaf = f.nodes[n].threshold == kLeafThreshold;
        nodes_.push_back(leaf ? leaf_step : f.nodes[n]);
        // x + -0.0 == x for every x (even -0.0), so internal steps change
        // no sum.
        values_.push_back(leaf ? f.node_values[n] : -0.0);
      }
      min_rounds += f.tree_shallowest_leaf[t] + (merge ? 0 : 1);
    }
    nodes_.push_back({kLeafThreshold, 0, parking});
    values_.push_back(-0.0);
    // The next block starts a cache line, as its trees are laid out by line.
    while (nodes_.size() % (kCacheLineBytes / sizeof(FlatNode)) != 0) {
      nodes_.push_back({kLeafThreshold, 0, parking});
      values_.push_back(-0.0);
    }
    min_rounds_.push_back(min_rounds);
  }
}

void ChainedWalksKernel::ChainGroup(const uint32_t* group_rows, size_t block,
                                    double* sum) const {
  const FlatForest& forest = *forest_;
  const FlatNode* nodes = nodes_.data() + block_begin_[block];
  const double* values = values_.data() + block_begin_[block];
  const char* row_bytes = reinterpret_cast<const char*>(group_rows);
  // The parking node follows the block's nodes (see the constructor).
  const uint64_t parking = static_cast<uint64_t>(
      forest.block_node_end(block) - forest.block_node_begin[block]);
  // Each walk holds its node's fields in a register (StepHeldNode), named
  // one by one so that all eight stay in registers.
  static_assert(kLanes == 8);
  const uint64_t root = forest.tree_roots[forest.tree_block_begin[block]];
  uint64_t n0;
  std::memcpy(&n0, &nodes[root], sizeof(n0));
  uint64_t n1 = n0, n2 = n0, n3 = n0, n4 = n0, n5 = n0, n6 = n0, n7 = n0;
  const double root_value = values[root];
  double t0 = sum[0] + root_value, t1 = sum[1] + root_value,
         t2 = sum[2] + root_value, t3 = sum[3] + root_value,
         t4 = sum[4] + root_value, t5 = sum[5] + root_value,
         t6 = sum[6] + root_value, t7 = sum[7] + root_value;
  KeepScalar(t0), KeepScalar(t1), KeepScalar(t2), KeepScalar(t3);
  KeepScalar(t4), KeepScalar(t5), KeepScalar(t6), KeepScalar(t7);
  const char* node_bytes = reinterpret_cast<const char*>(nodes);
  // The parking node's word is unique but for the last tree's leaves, which
  // step to it adding nothing more (their own values are already added).
  uint64_t parked;
  std::memcpy(&parked, &nodes[parking], sizeof(parked));
  auto walk = [&]<bool kBmi2>() {
    auto round = [&] {
      StepHeldNode<0, kBmi2>(n0, row_bytes, node_bytes, values, &t0);
      StepHeldNode<4, kBmi2>(n1, row_bytes, node_bytes, values, &t1);
      StepHeldNode<8, kBmi2>(n2, row_bytes, node_bytes, values, &t2);
      StepHeldNode<12, kBmi2>(n3, row_bytes, node_bytes, values, &t3);
      StepHeldNode<16, kBmi2>(n4, row_bytes, node_bytes, values, &t4);
      StepHeldNode<20, kBmi2>(n5, row_bytes, node_bytes, values, &t5);
      StepHeldNode<24, kBmi2>(n6, row_bytes, node_bytes, values, &t6);
      StepHeldNode<28, kBmi2>(n7, row_bytes, node_bytes, values, &t7);
    };
    for (int32_t r = min_rounds_[block]; r > 0; --r) round();
    while (((n0 ^ parked) | (n1 ^ parked) | (n2 ^ parked) | (n3 ^ parked) |
            (n4 ^ parked) | (n5 ^ parked) | (n6 ^ parked) | (n7 ^ parked)) !=
           0) {
      for (int32_t r = 0; r < 4; ++r) round();
    }
  };
  RunHeldWalk(CpuHasBmi2(), walk);
  const double total[kLanes] = {t0, t1, t2, t3, t4, t5, t6, t7};
  std::copy_n(total, kLanes, sum);
}

DocRange ChainedWalksKernel::Accumulate(const KernelBatch& batch,
                                        DocRange todo) const {
  if (todo.size() < kChainMinDocs) return todo;
  const FlatForest& forest = *forest_;
  const size_t remainder = todo.size() % kLanes;
  // todo.begin starts a group, so these end one.
  const bool pad = remainder >= kChainPadMinDocs &&
                   todo.end + (kLanes - remainder) <= batch.row_capacity;
  const size_t chained_end =
      pad ? todo.end + (kLanes - remainder) : todo.end - remainder;
  if (pad) PadWithLastDocument(batch, todo.end - 1, chained_end);
  for (size_t b = 0; b < forest.num_blocks(); ++b) {
    const int32_t begin = forest.tree_block_begin[b];
    if (begin >= batch.num_trees) break;
    const int32_t end =
        std::min(forest.tree_block_begin[b + 1], batch.num_trees);
    // The chain of a block runs to its last tree: a block cut short by
    // num_trees is walked in lockstep.
    const bool whole = end == forest.tree_block_begin[b + 1];
    for (size_t first = todo.begin; first < chained_end; first += kLanes) {
      const size_t docs = std::min(kLanes, todo.end - first);
      double* target = batch.out + first;
      double sum[kLanes] = {};
      std::copy_n(target, docs, sum);
      if (whole) {
        ChainGroup(batch.doc_rows(first), b, sum);
      } else {
        WalkLockstep(forest, kLanes, batch.doc_rows(first), b, begin, end, sum,
                     target, batch.out_stride);
      }
      std::copy_n(sum, docs, target);
    }
  }
  return pad ? DocRange{todo.end, todo.end} : DocRange{chained_end, todo.end};
}

}  // namespace plrank::internal
