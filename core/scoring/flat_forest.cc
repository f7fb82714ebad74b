#include "core/scoring/flat_forest.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/scoring/order_key.h"
#include "core/scoring/tree_walk_step.h"

namespace plrank::internal {
namespace {

// Node bytes per tree block: the block's nodes (and, for chained walks,
// their values) stay in L2 while all groups of a document block walk it, and
// chained walks wait for the slowest of 8 documents once per block. With
// nodes laid out by cache line, 300 x 255 measured 1.35 / 1.39 / 1.39 / 1.46
// us per document at batch 1000 with 128 / 96 / 160 / 64 KB (scorer.md).
constexpr size_t kTreeBlockBytes = 128 * 1024;

// Encoded child of Tree (>= 0 internal node, < 0 leaf ~c; kFiller for a
// position no walk reaches) for the layout below.
struct LaidOutNode {
  int32_t encoded;
  int32_t depth;
  uint32_t first_child;  // position of the left child (internal nodes only)
};
constexpr int32_t kFiller = std::numeric_limits<int32_t>::min();
// Nodes (8 bytes each) per cache line.
constexpr uint32_t kLineNodes = kCacheLineBytes / 8;

// How many training documents (or how much hessian) pass each internal node
// of `tree`, from its leaves' counts or covers; 1 per leaf without either.
std::vector<double> SubtreeWeights(const Tree& tree) {
  const auto leaf_weight = [&](int32_t leaf) {
    if (!tree.leaf_cover.empty()) return std::max(tree.leaf_cover[leaf], 0.0);
    if (!tree.leaf_count.empty()) {
      return static_cast<double>(std::max(tree.leaf_count[leaf], 0));
    }
    return 1.0;
  };
  const int32_t internal = tree.num_internal_nodes();
  std::vector<double> weight(internal, -1.0);
  // Children before parents without recursion (trees are validated, so
  // every internal node is reached once from the root).
  std::vector<int32_t> stack = {0};
  while (!stack.empty()) {
    const int32_t node = stack.back();
    double total = 0.0;
    bool ready = true;
    for (int32_t child : {tree.left_child[node], tree.right_child[node]}) {
      if (child < 0) {
        total += leaf_weight(~child);
      } else if (weight[child] < 0.0) {
        stack.push_back(child);
        ready = false;
      } else {
        total += weight[child];
      }
    }
    if (ready) {
      weight[node] = total;
      stack.pop_back();
    }
  }
  return weight;
}

// `tree`'s nodes laid out by cache line, for a tree whose first node starts
// a line: each node's two children adjacent, left then right (the walk's
// child + (value > threshold)), every such pair inside one line, and a line
// filled with the pair below a node plus the pairs below its children and
// grandchildren, most visited first. A path then reads a new line about
// every second step instead of every step from the fourth level on (the
// breadth-first order's), so more of a walk's loads hit L1. Position 0 is
// the root and position 1 a filler, so pairs start at even positions.
std::vector<LaidOutNode> LayOutTree(const Tree& tree) {
  if (tree.num_internal_nodes() == 0) return {{~0, 0, 0}};
  const std::vector<double> weight = SubtreeWeights(tree);
  const auto heavier = [&](const std::vector<LaidOutNode>& order, uint32_t a,
                           uint32_t b) {
    return weight[order[a].encoded] < weight[order[b].encoded];
  };
  std::vector<LaidOutNode> order = {{0, 0, 0}, {kFiller, 0, 0}};
  order.reserve(tree.split_feature.size() + tree.leaf_value.size() + 1);
  // Positions of internal nodes whose children have no place yet; the
  // heaviest is taken first.
  std::vector<uint32_t> pending = {0};
  std::vector<uint32_t> frontier;
  while (!pending.empty()) {
    frontier.assign(1, pending.back());
    pending.pop_back();
    // The pairs below this node fill the rest of the current line.
    for (uint32_t room = (kLineNodes - order.size() % kLineNodes) / 2;
         room > 0 && !frontier.empty(); --room) {
      const auto heaviest = std::max_element(
          frontier.begin(), frontier.end(),
          [&](uint32_t a, uint32_t b) { return heavier(order, a, b); });
      const uint32_t parent = *heaviest;
      frontier.erase(heaviest);
      const int32_t node = order[parent].encoded;
      order[parent].first_child = static_cast<uint32_t>(order.size());
      for (int32_t child : {tree.left_child[node], tree.right_child[node]}) {
        if (child >= 0) frontier.push_back(static_cast<uint32_t>(order.size()));
        order.push_back({child, order[parent].depth + 1, 0});
      }
    }
    // The rest start lines of their own.
    std::sort(frontier.begin(), frontier.end(),
              [&](uint32_t a, uint32_t b) { return heavier(order, a, b); });
    pending.insert(pending.end(), frontier.begin(), frontier.end());
  }
  return order;
}

}  // namespace

absl::StatusOr<FlatForest> BuildFlatForest(
    const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots, size_t num_slots) {
  FlatForest forest;
  forest.num_outputs = model.num_outputs;
  forest.num_slots = num_slots;
  constexpr size_t kSlotUnits = kLanes * sizeof(uint32_t) / 8;
  // Block-relative node indices are 16-bit; one index is kept for the
  // chained layout's parking node.
  constexpr size_t kMaxBlockNodes = (size_t{1} << 16) - 1;
  size_t total_nodes = 0;
  for (const Tree& tree : model.trees) {
    total_nodes += tree.split_feature.size() + tree.leaf_value.size();
  }
  forest.nodes.reserve(total_nodes);
  forest.node_values.reserve(total_nodes);
  forest.tree_roots.reserve(model.trees.size());
  forest.tree_depths.reserve(model.trees.size());
  forest.tree_shallowest_leaf.reserve(model.trees.size());
  for (size_t t = 0; t < model.trees.size(); ++t) {
    // Each tree starts a cache line (see LayOutTree).
    while (forest.nodes.size() % kLineNodes != 0) {
      forest.nodes.push_back({kLeafThreshold, 0, 0});
      forest.node_values.push_back(0.0);
    }
    // Blocks hold whole iterations so multi-output accumulation stays simple.
    if (t % model.num_outputs == 0) {
      // Laid out, a tree takes its nodes, a filler after the root and the
      // rest of its last line.
      size_t iteration_nodes = 0;
      for (size_t k = t;
           k < std::min(t + model.num_outputs, model.trees.size()); ++k) {
        const size_t laid_out = model.trees[k].split_feature.size() +
                                model.trees[k].leaf_value.size() + 1;
        iteration_nodes +=
            (laid_out + kLineNodes - 1) / kLineNodes * kLineNodes;
      }
      if (iteration_nodes > kMaxBlockNodes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "iteration ", t / model.num_outputs, " has ", iteration_nodes,
            " tree nodes laid out by cache line; the scorer supports at "
            "most ",
            kMaxBlockNodes));
      }
      const size_t block_nodes =
          forest.nodes.size() - (forest.block_node_begin.empty()
                                     ? 0
                                     : forest.block_node_begin.back());
      if (forest.tree_block_begin.empty() ||
          (block_nodes + iteration_nodes) * sizeof(FlatNode) >
              kTreeBlockBytes ||
          block_nodes + iteration_nodes > kMaxBlockNodes) {
        forest.tree_block_begin.push_back(static_cast<int32_t>(t));
        forest.block_node_begin.push_back(forest.nodes.size());
      }
    }
    const Tree& tree = model.trees[t];
    const std::vector<uint32_t>& node_slots = split_slots[t];
    const size_t base = forest.nodes.size() - forest.block_node_begin.back();
    const std::vector<LaidOutNode> order = LayOutTree(tree);
    int32_t deepest = 0;
    int32_t shallowest = std::numeric_limits<int32_t>::max();
    for (size_t i = 0; i < order.size(); ++i) {
      const int32_t node = order[i].encoded;
      if (node == kFiller) {
        forest.nodes.push_back({kLeafThreshold, 0, 0});
        forest.node_values.push_back(0.0);
        continue;
      }
      if (node < 0) {
        deepest = std::max(deepest, order[i].depth);
        shallowest = std::min(shallowest, order[i].depth);
        forest.nodes.push_back(
            {kLeafThreshold, 0, static_cast<uint16_t>(base + i)});
        forest.node_values.push_back(tree.leaf_value[~node]);
        continue;
      }
      forest.nodes.push_back(
          {OrderKey(tree.threshold[node]),
           static_cast<uint16_t>(node_slots[node] * kSlotUnits),
           static_cast<uint16_t>(base + order[i].first_child)});
      forest.node_values.push_back(0.0);
    }
    forest.tree_roots.push_back(static_cast<uint32_t>(base));
    forest.tree_depths.push_back(deepest);
    forest.tree_shallowest_leaf.push_back(shallowest);
  }
  forest.tree_block_begin.push_back(static_cast<int32_t>(model.trees.size()));

  return forest;
}

}  // namespace plrank::internal
