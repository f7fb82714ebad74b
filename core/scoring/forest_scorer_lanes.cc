#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/scoring/forest_scorer.h"
#include "core/scoring/tree_walk_step.h"

// ForestScorer's lane chains for single documents (see LaneChainDocument).

namespace plrank {

// Lanes of a single document's walks, each through every kChainLanes-th
// tree. On 300 255-leaf trees a document measured 4.5 / 3.85 / 3.87 / 4.2
// us with 6 / 7 / 8 / 10 lanes (fewer overlap fewer loads; more spill).
constexpr size_t kChainLanes = 8;

using internal::kLeafThreshold;
using internal::NextNode;

void ForestScorer::BuildLaneChains() {
  const size_t num_trees = tree_roots_.size();
  const size_t blocks = block_node_begin_.size();
  // Every step reads a row slot, leaves too: a forest of single leaves has
  // no slots (nor a row to read), and no walk to speed up.
  if (num_slots() == 0 ||
      nodes_.size() + 1 > std::numeric_limits<uint32_t>::max() / 2) {
    return;
  }
  // Global index of each tree's root, and of the parking node after all.
  std::vector<uint32_t> roots(num_trees);
  std::vector<size_t> tree_base(num_trees);  // its block's first node
  for (size_t b = 0; b < blocks; ++b) {
    for (int32_t t = tree_block_begin_[b]; t < tree_block_begin_[b + 1]; ++t) {
      roots[t] = static_cast<uint32_t>(block_node_begin_[b] + tree_roots_[t]);
      tree_base[t] = block_node_begin_[b];
    }
  }
  const uint32_t parking = static_cast<uint32_t>(nodes_.size());
  const uint32_t no_record = static_cast<uint32_t>(num_trees);
  lane_nodes_.resize(nodes_.size() + 1);
  lane_values_.assign(nodes_.size() + 1, 0.0);
  std::vector<int32_t> lane_rounds(kChainLanes, 0);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t base = block_node_begin_[b];
    for (int32_t t = tree_block_begin_[b]; t < tree_block_begin_[b + 1]; ++t) {
      const size_t first = roots[t];
      const size_t last =
          static_cast<size_t>(t) + 1 < num_trees ? roots[t + 1] : nodes_.size();
      // A leaf records itself as tree t's exit and moves to the root of the
      // lane's next tree, t + kChainLanes; when that root splits, the leaf
      // takes its fields and so makes that tree's first move too (as the
      // chained walks do, see BuildChains).
      const size_t next_tree = static_cast<size_t>(t) + kChainLanes;
      LaneNode leaf_step = {kLeafThreshold, parking, 0,
                            static_cast<uint32_t>(t)};
      if (next_tree < num_trees) {
        const Node& root = nodes_[roots[next_tree]];
        leaf_step.child = roots[next_tree];
        if (root.threshold != kLeafThreshold) {
          leaf_step = {root.threshold,
                       static_cast<uint32_t>(tree_base[next_tree] + root.child),
                       static_cast<uint32_t>(root.slot) * 8,
                       static_cast<uint32_t>(t)};
        }
      }
      const bool merged = leaf_step.threshold != kLeafThreshold;
      for (size_t n = first; n < last; ++n) {
        const Node& node = nodes_[n];
        if (node.threshold == kLeafThreshold) {
          lane_nodes_[n] = leaf_step;
          lane_values_[n] = node_values_[n];
        } else {
          lane_nodes_[n] = {node.threshold,
                            static_cast<uint32_t>(base + node.child),
                            static_cast<uint32_t>(node.slot) * 8, no_record};
        }
      }
      lane_rounds[t % kChainLanes] += tree_shallowest_leaf_[t] + !merged;
    }
  }
  lane_nodes_[parking] = {kLeafThreshold, parking, 0, no_record};
  lane_parking_ = parking;
  // No lane parks before its trees' shallowest leaves are reached.
  lane_min_rounds_ = *std::max_element(lane_rounds.begin(), lane_rounds.end());
  lane_first_roots_.assign(kChainLanes, parking);
  for (size_t l = 0; l < std::min<size_t>(kChainLanes, num_trees); ++l) {
    lane_first_roots_[l] = roots[l];
  }
}

// One document walks all trees in 8 lanes: lane l walks trees l, l + 8,
// l + 16, ... one after another without waiting for the others (a lockstep
// walk of 8 trees waits at each for the deepest of 8 paths; on 255-leaf
// trees that is far deeper than the mean). Each step records the node as
// its tree's exit (internal nodes write to a spare entry, leaves to their
// tree's), and the exit leaves' values are added in tree order at the end,
// so the sum is bit-identical.
void ForestScorer::LaneChainDocument(const uint32_t* doc_row, double* sum,
                                     uint32_t* record) const {
  const LaneNode* nodes = lane_nodes_.data();
  const char* row_bytes = reinterpret_cast<const char*>(doc_row);
  uint64_t at[kChainLanes];
  for (size_t l = 0; l < kChainLanes; ++l) at[l] = lane_first_roots_[l];
  auto round = [&] {
    for (size_t l = 0; l < kChainLanes; ++l) {
      const LaneNode node = nodes[at[l]];
      record[node.record] = static_cast<uint32_t>(at[l]);
      const uint32_t value =
          *reinterpret_cast<const uint32_t*>(row_bytes + node.value_offset);
      at[l] = NextNode(node.child, node.threshold, value);
    }
  };
  for (int32_t r = lane_min_rounds_; r > 0; --r) round();
  for (;;) {
    bool parked = true;
    for (size_t l = 0; l < kChainLanes; ++l) parked &= at[l] == lane_parking_;
    if (parked) break;
    for (int32_t r = 0; r < 4; ++r) round();
  }
  double total = *sum;
  const size_t num_trees = tree_roots_.size();
  const double* values = lane_values_.data();
  for (size_t t = 0; t < num_trees; ++t) total += values[record[t]];
  *sum = total;
}

}  // namespace plrank
