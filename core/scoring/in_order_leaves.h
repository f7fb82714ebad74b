#ifndef PLRANK_CORE_SCORING_IN_ORDER_LEAVES_H_
#define PLRANK_CORE_SCORING_IN_ORDER_LEAVES_H_

// Left-to-right leaf numbering of one tree, as the bitvector scorers
// (QuickScorer, RapidScorer) need it: a node's left subtree holds the
// contiguous leaves [first_leaf[node], left_end[node]), so "the document goes
// right here" clears exactly that range of the tree's leaf bitvector.

#include <cstdint>
#include <utility>
#include <vector>

#include "core/model/ensemble.h"

namespace plrank {

struct InOrderLeaves {
  std::vector<uint32_t> first_leaf;  // per internal node
  std::vector<uint32_t> left_end;    // per internal node
};

// Numbers the leaves of `tree` in order and writes their values to
// leaf_values[0..num_leaves); a single-leaf tree has no internal nodes and
// one leaf. Iterative, so deep trees cannot overflow the stack: state false
// = entering a node, true = its left subtree is done, so the leaf counter is
// where its left range ends.
inline InOrderLeaves NumberLeavesInOrder(const Tree& tree,
                                         double* leaf_values) {
  InOrderLeaves order{std::vector<uint32_t>(tree.num_internal_nodes()),
                      std::vector<uint32_t>(tree.num_internal_nodes())};
  if (tree.num_internal_nodes() == 0) {
    leaf_values[0] = tree.leaf_value[0];
    return order;
  }
  uint32_t next_leaf = 0;
  std::vector<std::pair<int32_t, bool>> stack = {{0, false}};
  while (!stack.empty()) {
    const auto [node, left_done] = stack.back();
    stack.pop_back();
    if (node < 0) {
      leaf_values[next_leaf++] = tree.leaf_value[~node];
    } else if (!left_done) {
      order.first_leaf[node] = next_leaf;
      stack.push_back({node, true});
      stack.push_back({tree.left_child[node], false});
    } else {
      order.left_end[node] = next_leaf;
      stack.push_back({tree.right_child[node], false});
    }
  }
  return order;
}

// The leaves of internal node n's left subtree as bits of a leaf mask (the
// bits QuickScorer clears when a document goes right there); trees of at
// most 64 leaves.
inline uint64_t LeftSubtreeMask(const InOrderLeaves& order, int32_t n) {
  const uint64_t below_end = (uint64_t{1} << order.left_end[n]) - 1;
  const uint64_t below_begin = (uint64_t{1} << order.first_leaf[n]) - 1;
  return below_end ^ below_begin;
}

}  // namespace plrank

#endif  // PLRANK_CORE_SCORING_IN_ORDER_LEAVES_H_
