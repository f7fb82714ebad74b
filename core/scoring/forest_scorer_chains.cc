#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/scoring/forest_scorer.h"
#include "core/scoring/tree_walk_step.h"

// ForestScorer's chained walks: the layout and the walk (see ChainGroup).

namespace plrank {

using internal::CpuHasBmi2;
using internal::KeepScalar;
using internal::kLeafThreshold;
using internal::RunHeldWalk;
using internal::StepHeldNode;

void ForestScorer::BuildChains() {
  const size_t blocks = block_node_begin_.size();
  chain_nodes_.reserve(nodes_.size() + 8 * blocks);
  chain_values_.reserve(nodes_.size() + 8 * blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = block_node_begin_[b];
    const size_t last = b + 1 < blocks ? block_node_begin_[b + 1] : nodes_.size();
    const uint16_t parking = static_cast<uint16_t>(last - first);
    chain_block_begin_.push_back(chain_nodes_.size());
    int32_t min_rounds = 0;
    for (int32_t t = tree_block_begin_[b]; t < tree_block_begin_[b + 1]; ++t) {
      const size_t tree_first = first + tree_roots_[t];
      const size_t tree_last =
          t + 1 < tree_block_begin_[b + 1] ? first + tree_roots_[t + 1] : last;
      // A leaf's step adds its value and moves to the next tree's root; when
      // that root is a split, the leaf takes the root's fields instead, so
      // its step also makes the next tree's first move (one step fewer per
      // tree). A single-leaf next tree keeps the plain step, as its own
      // value must be added too.
      const bool has_next = t + 1 < tree_block_begin_[b + 1];
      const uint16_t next =
          has_next ? static_cast<uint16_t>(tree_roots_[t + 1]) : parking;
      const bool merge =
          has_next && nodes_[first + next].threshold != kLeafThreshold;
      const Node leaf_step =
          merge ? nodes_[first + next] : Node{kLeafThreshold, 0, next};
      for (size_t n = tree_first; n < tree_last; ++n) {
        const bool leaf = nodes_[n].threshold == kLeafThreshold;
        chain_nodes_.push_back(leaf ? leaf_step : nodes_[n]);
        // x + -0.0 == x for every x (even -0.0), so internal steps change
        // no sum.
        chain_values_.push_back(leaf ? node_values_[n] : -0.0);
      }
      min_rounds += tree_shallowest_leaf_[t] + (merge ? 0 : 1);
    }
    chain_nodes_.push_back({kLeafThreshold, 0, parking});
    chain_values_.push_back(-0.0);
    // The next block starts a cache line, as its trees are laid out by line.
    while (chain_nodes_.size() % (internal::kCacheLineBytes / sizeof(Node)) !=
           0) {
      chain_nodes_.push_back({kLeafThreshold, 0, parking});
      chain_values_.push_back(-0.0);
    }
    chain_min_rounds_.push_back(min_rounds);
  }
}

// Each of 8 documents walks all trees of block `block` one after another
// without waiting for the others: a leaf's step adds its value and jumps to
// the next tree's root, the last tree's leaves to a parking node. Lockstep
// walks (WalkGroup) wait at every tree for the deepest of 8 paths; here only
// the block's last tree waits.
void ForestScorer::ChainGroup(const uint32_t* group_rows, size_t block,
                              double* sum) const {
  const Node* nodes = chain_nodes_.data() + chain_block_begin_[block];
  const double* values = chain_values_.data() + chain_block_begin_[block];
  const char* row_bytes = reinterpret_cast<const char*>(group_rows);
  // The parking node follows the block's nodes (BuildChains).
  const uint64_t parking = static_cast<uint64_t>(
      (block + 1 < block_node_begin_.size() ? block_node_begin_[block + 1]
                                            : nodes_.size()) -
      block_node_begin_[block]);
  // Each walk holds its node's fields in a register (StepHeldNode), named
  // one by one so that all eight stay in registers.
  static_assert(kLanes == 8);
  const uint64_t root = tree_roots_[tree_block_begin_[block]];
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
    for (int32_t r = chain_min_rounds_[block]; r > 0; --r) round();
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

}  // namespace plrank
