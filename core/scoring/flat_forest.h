#ifndef PLRANK_CORE_SCORING_FLAT_FOREST_H_
#define PLRANK_CORE_SCORING_FLAT_FOREST_H_

// The tree walks' layout of a validated Ensemble (internal to core/scoring):
// all trees' nodes in one flat array, in blocks of trees. ForestScorer builds
// it once; the walking kernels (lockstep_walks.h, chained_walks.h,
// lane_chains.h) read it or derive their own tables from it.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"
#include "core/scoring/cache_aligned.h"

namespace plrank::internal {

// Documents whose doubled rows are interleaved slot by slot (slot s of
// document i at rows[(i / kLanes) * kLanes * num_slots + s * kLanes +
// i % kLanes]; ForestScorer::PrepareRows), and independent walks in
// lockstep: enough to hide load latency, few enough to keep their positions
// in registers.
inline constexpr size_t kLanes = 8;

// 8 bytes, eight to a cache line, so a 1000-tree x 31-leaf model (about 61K
// nodes) fits in L2. A document at a node moves to child + (threshold <
// value): the two children of a node are adjacent, left then right, so a
// step is a compare and an add-with-carry. `value` is the document's key in
// `slot` of its doubled row, so missing values need no test in the walk;
// values and thresholds are compared as order-preserving unsigned keys
// (order_key.h). Leaves are nodes too, whose child is themselves and whose
// threshold no value exceeds: a group of walks proceeds in lockstep for the
// tree's depth with no data-dependent branch.
struct FlatNode {
  uint32_t threshold;  // OrderKey of the float threshold; max for a leaf
  uint16_t slot;       // doubled-row slot * kLanes * 4 / 8 (8-byte units)
  uint16_t child;      // left child (right = child + 1), block-relative
};
static_assert(sizeof(FlatNode) == 8);

struct FlatForest {
  int32_t num_outputs = 1;
  size_t num_slots = 0;                    // doubled-row slots of a document
  CacheAlignedVector<FlatNode> nodes;      // all trees, leaves included
  CacheAlignedVector<double> node_values;  // leaf value per node (0 inside)
  // Trees [tree_block_begin[b], tree_block_begin[b + 1]) form block b,
  // sized so a block's nodes stay in L2 while a block of documents walks
  // them. Its nodes start at nodes[block_node_begin[b]]; indices in
  // FlatNode::child and tree_roots are relative to that.
  std::vector<int32_t> tree_block_begin;  // num_blocks() + 1 entries
  std::vector<size_t> block_node_begin;   // num_blocks() entries
  std::vector<uint32_t> tree_roots;       // block-relative index of each root
  std::vector<int32_t> tree_depths;       // depth of each tree's deepest leaf
  std::vector<int32_t> tree_shallowest_leaf;  // and of its shallowest leaf

  int32_t num_trees() const { return static_cast<int32_t>(tree_roots.size()); }
  size_t num_blocks() const { return block_node_begin.size(); }
  // One past block b's last node.
  size_t block_node_end(size_t b) const {
    return b + 1 < num_blocks() ? block_node_begin[b + 1] : nodes.size();
  }
};

// Lays `model` out (each tree from a cache line, its nodes by cache line:
// see flat_forest.cc). split_slots[t][n] is the doubled-row slot internal
// node n of tree t tests, num_slots the slots of a row. ResourceExhausted
// when an iteration's nodes overflow the 16-bit block-relative indices.
absl::StatusOr<FlatForest> BuildFlatForest(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots, size_t num_slots);

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_FLAT_FOREST_H_
