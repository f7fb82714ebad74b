#include "core/scoring/lockstep_walks.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/scoring/tree_walk_step.h"

namespace plrank::internal {
namespace {

// Walks kDocs documents through every tree of [begin, end), kTrees =
// kLanes / kDocs trees at a time: kLanes independent walks in lockstep, so
// the CPU overlaps their loads whether a group holds many documents (one
// tree each) or a single one (several trees). Leaf values are added per
// document in tree order, so sums match the reference bit for bit.
template <size_t kDocs>
void WalkGroup(const FlatForest& forest, const uint32_t* group_rows,
               size_t block, int32_t begin, int32_t end, double* sum,
               double* out, size_t out_stride) {
  constexpr size_t kTrees = kLanes / kDocs;
  const FlatNode* nodes = forest.nodes.data() + forest.block_node_begin[block];
  const double* values =
      forest.node_values.data() + forest.block_node_begin[block];
  const char* row_bytes = reinterpret_cast<const char*>(group_rows);
  const int32_t num_outputs = forest.num_outputs;
  const std::vector<uint32_t>& tree_roots = forest.tree_roots;
  const char* node_bytes = reinterpret_cast<const char*>(nodes);
  const bool bmi2 = CpuHasBmi2();
  static_assert(kLanes == 8);
  for (int32_t t = begin; t < end; t += static_cast<int32_t>(kTrees)) {
    // Each walk holds its node's fields in a register (StepHeldNode), named
    // one by one so that all eight stay in registers.
    uint64_t start[kLanes];  // root words
    int32_t shallowest = std::numeric_limits<int32_t>::max();
    int32_t deepest = 0;
    for (size_t k = 0; k < kTrees; ++k) {
      // Past the end, a lane repeats the last tree; its result is dropped.
      const int32_t tree = std::min(t + static_cast<int32_t>(k), end - 1);
      shallowest = std::min(shallowest, forest.tree_shallowest_leaf[tree]);
      deepest = std::max(deepest, forest.tree_depths[tree]);
      uint64_t root;
      std::memcpy(&root, &nodes[tree_roots[tree]], sizeof(root));
      for (size_t d = 0; d < kDocs; ++d) start[k * kDocs + d] = root;
      // The next trees' top levels (breadth-first: the first 15 nodes span
      // two cache lines) load while these trees are walked; this matters
      // when the model does not fit in L2 and a small batch walks it once.
      const int32_t next = t + static_cast<int32_t>(kTrees + k);
      if (next < end) {
        const char* root_bytes =
            reinterpret_cast<const char*>(nodes + tree_roots[next]);
        __builtin_prefetch(root_bytes);
        __builtin_prefetch(root_bytes + 64);
      }
    }
    uint64_t n0 = start[0], n1 = start[1], n2 = start[2], n3 = start[3],
             n4 = start[4], n5 = start[5], n6 = start[6], n7 = start[7];
    auto walk = [&]<bool kBmi2>() {
      // One step of every walk: lane l's document's value sits at a fixed
      // distance from the node's slot (rows are interleaved).
      auto round = [&] {
        StepHeldNode<0 % kDocs * 4, kBmi2>(n0, row_bytes, node_bytes);
        StepHeldNode<1 % kDocs * 4, kBmi2>(n1, row_bytes, node_bytes);
        StepHeldNode<2 % kDocs * 4, kBmi2>(n2, row_bytes, node_bytes);
        StepHeldNode<3 % kDocs * 4, kBmi2>(n3, row_bytes, node_bytes);
        StepHeldNode<4 % kDocs * 4, kBmi2>(n4, row_bytes, node_bytes);
        StepHeldNode<5 % kDocs * 4, kBmi2>(n5, row_bytes, node_bytes);
        StepHeldNode<6 % kDocs * 4, kBmi2>(n6, row_bytes, node_bytes);
        StepHeldNode<7 % kDocs * 4, kBmi2>(n7, row_bytes, node_bytes);
      };
      // No walk reaches a leaf in fewer than the shallowest leaf's depth of
      // steps; after that, unbalanced trees stop once every walk sits on a
      // leaf (a leaf's step leaves the walk where it is). Checking that
      // costs as much as a step, so it is done every kCheckEvery rounds.
      constexpr int32_t kCheckEvery = 4;
      for (int32_t steps = shallowest; steps > 0; --steps) round();
      for (int32_t steps = deepest - shallowest; steps > 0;
           steps -= kCheckEvery) {
        for (int32_t r = 0; r < std::min(steps, kCheckEvery) - 1; ++r) {
          round();
        }
        const uint64_t b0 = n0, b1 = n1, b2 = n2, b3 = n3, b4 = n4, b5 = n5,
                       b6 = n6, b7 = n7;
        round();
        if (((n0 ^ b0) | (n1 ^ b1) | (n2 ^ b2) | (n3 ^ b3) | (n4 ^ b4) |
             (n5 ^ b5) | (n6 ^ b6) | (n7 ^ b7)) == 0) {
          break;
        }
      }
    };
    RunHeldWalk(bmi2, walk);
    // A leaf is its own left child: its index is in its child field.
    const uint64_t leaves[kLanes] = {n0 >> 48, n1 >> 48, n2 >> 48, n3 >> 48,
                                     n4 >> 48, n5 >> 48, n6 >> 48, n7 >> 48};
    const size_t trees = std::min<size_t>(kTrees, end - t);
    for (size_t k = 0; k < trees; ++k) {
      const int32_t tree = t + static_cast<int32_t>(k);
      double* target =
          num_outputs == 1
              ? sum
              : out + static_cast<size_t>(tree % num_outputs) * out_stride;
      for (size_t d = 0; d < kDocs; ++d) {
        target[d] += values[leaves[k * kDocs + d]];
      }
    }
  }
}

}  // namespace

void WalkLockstep(const FlatForest& forest, size_t docs,
                  const uint32_t* group_rows, size_t block, int32_t begin,
                  int32_t end, double* sum, double* out, size_t out_stride) {
  static_assert(kLanes == 8);
  switch (docs) {
    case kLanes:
      WalkGroup<kLanes>(forest, group_rows, block, begin, end, sum, out,
                        out_stride);
      break;
    case kLanes / 2:
      WalkGroup<kLanes / 2>(forest, group_rows, block, begin, end, sum, out,
                            out_stride);
      break;
    case kLanes / 4:
      WalkGroup<kLanes / 4>(forest, group_rows, block, begin, end, sum, out,
                            out_stride);
      break;
    default:
      WalkGroup<kLanes / 8>(forest, group_rows, block, begin, end, sum, out,
                            out_stride);
  }
}

DocRange LockstepWalksKernel::Accumulate(const KernelBatch& batch,
                                         DocRange todo) const {
  const FlatForest& forest = *forest_;
  for (size_t b = 0; b < forest.num_blocks(); ++b) {
    const int32_t begin = forest.tree_block_begin[b];
    if (begin >= batch.num_trees) break;
    const int32_t end =
        std::min(forest.tree_block_begin[b + 1], batch.num_trees);
    for (size_t first = todo.begin; first < todo.end;) {
      const size_t left = todo.end - first;
      const size_t docs = left >= kLanes ? kLanes : std::bit_floor(left);
      double* target = batch.out + first;
      double sum[kLanes] = {};
      if (forest.num_outputs == 1) std::copy_n(target, docs, sum);
      WalkLockstep(forest, docs, batch.doc_rows(first), b, begin, end, sum,
                   target, batch.out_stride);
      if (forest.num_outputs == 1) std::copy_n(sum, docs, target);
      first += docs;
    }
  }
  return {todo.end, todo.end};
}

}  // namespace plrank::internal
