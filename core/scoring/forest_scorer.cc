#include "core/scoring/forest_scorer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/model/model_io.h"
#include "core/scoring/cache_aligned.h"
#include "core/scoring/cpu_features.h"
#include "core/scoring/order_key.h"
#include "core/scoring/row_keys.h"
#include "core/scoring/tree_walk_step.h"

namespace plrank {
namespace {

using internal::CpuHasBmi2;
using internal::kLeafThreshold;
using internal::RunHeldWalk;
using internal::StepHeldNode;

// Node bytes per tree block: the block's nodes (and, for chained walks,
// their values) stay in L2 while all groups of a document block walk it, and
// chained walks wait for the slowest of 8 documents once per block. With
// nodes laid out by cache line, 300 x 255 measured 1.35 / 1.39 / 1.39 / 1.46
// us per document at batch 1000 with 128 / 96 / 160 / 64 KB (scorer.md).
constexpr size_t kTreeBlockBytes = 128 * 1024;
// Fewest documents that chain (a group of kLanes, padded); fewer walk in
// lockstep. With nodes laid out by cache line, 300 x 255 measured 2.24 /
// 1.87 / 1.62 us per document at batch 5 / 6 / 7 chained against 2.55 / 2.47
// / 2.54 in lockstep, and 2.78 against 2.40 at batch 4.
constexpr size_t kChainMinDocs = 5;
// Fewest documents left after whole chained groups that are padded to a
// group and chained; 2 walk in lockstep and 1 in lane chains instead
// (300 x 255, us per document: batch 10 1.93 with the 2 walked, 2.30
// padded; batch 11 1.98 padded, 2.09 with the 3 walked).
constexpr size_t kChainPadMinDocs = 3;
// Stack buffer for raw multi-output scores inside Score (no allocation).
constexpr size_t kStackRawScores = 1024;

void CheckOrDie(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "ForestScorer precondition failed: %s\n", what);
    std::abort();
  }
}

// Per-thread scratch for doubled rows; grows once per thread, so scoring
// does not allocate in steady state.
uint32_t* Scratch(size_t entries) {
  thread_local std::vector<uint32_t> scratch;
  if (scratch.size() < entries) scratch.resize(entries);
  return scratch.data();
}

// Encoded child of Tree (>= 0 internal node, < 0 leaf ~c; kFiller for a
// position no walk reaches) for the layout below.
struct LaidOutNode {
  int32_t encoded;
  int32_t depth;
  uint32_t first_child;  // position of the left child (internal nodes only)
};
constexpr int32_t kFiller = std::numeric_limits<int32_t>::min();
// Nodes (8 bytes each) per cache line.
constexpr uint32_t kLineNodes = internal::kCacheLineBytes / 8;

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

absl::StatusOr<ForestScorer> ForestScorer::Create(const Ensemble& model,
                                                  DenseScoring dense) {
  Options options;
  options.dense = dense;
  return Create(model, options);
}

absl::StatusOr<ForestScorer> ForestScorer::Create(const Ensemble& model,
                                                  const Options& options) {
  // An unknown kernel name fails before any work.
  const absl::string_view forced_name = options.kernel;
  const ScoringKernel* forced = nullptr;
  if (!forced_name.empty() && forced_name != kAutoScoringKernel) {
    forced = FindScoringKernel(forced_name);
    if (forced == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown scoring kernel '", forced_name, "' (known: ",
                       kAutoScoringKernel, ", ", ScoringKernelNames(), ")"));
    }
  }
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return status;
  }
  ForestScorer scorer;
  scorer.num_features_ = model.num_features;
  scorer.num_outputs_ = model.num_outputs;
  scorer.transform_ = model.transform;
  scorer.base_score_ = model.base_score;
  scorer.base_score_.resize(model.num_outputs, 0.0);
  scorer.linear_weights_ = model.linear_weights;

  // Slots of the doubled rows: only features some split tests, and a second
  // pair for features some split tests with zero as missing. Sized by the
  // widest split, not by the declared feature count (untrusted input).
  int32_t widest_split = -1;
  for (const Tree& tree : model.trees) {
    for (int32_t feature : tree.split_feature) {
      widest_split = std::max(widest_split, feature);
    }
  }
  scorer.row_width_ =
      model.linear_weights.empty() ? widest_split + 1 : model.num_features;
  std::vector<int32_t> slot_of_feature(widest_split + 1, -1);
  std::vector<int32_t> zero_slot_of_feature(widest_split + 1, -1);
  size_t total_nodes = 0;
  for (const Tree& tree : model.trees) {
    total_nodes += tree.split_feature.size() + tree.leaf_value.size();
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      slot_of_feature[tree.split_feature[n]] = 0;
      if (tree.treats_zero_as_missing(n)) {
        zero_slot_of_feature[tree.split_feature[n]] = 0;
      }
    }
  }
  for (int32_t f = 0; f <= widest_split; ++f) {
    if (slot_of_feature[f] >= 0) {
      slot_of_feature[f] = static_cast<int32_t>(scorer.used_features_.size());
      scorer.used_features_.push_back(f);
    }
    if (zero_slot_of_feature[f] >= 0) {
      zero_slot_of_feature[f] =
          static_cast<int32_t>(scorer.zero_features_.size());
      scorer.zero_features_.push_back(f);
    }
  }
  const size_t used = scorer.used_features_.size();
  const size_t zero_used = scorer.zero_features_.size();
  constexpr size_t kSlotUnits = kLanes * sizeof(uint32_t) / 8;
  if (scorer.num_slots() * kSlotUnits > std::numeric_limits<uint16_t>::max()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "model splits on ", used, " distinct features (", zero_used,
        " of them with zero as missing, which count twice); the scorer "
        "supports at most ",
        std::numeric_limits<uint16_t>::max() / (2 * kSlotUnits)));
  }
  // Block-relative node indices are 16-bit; one index is kept for the
  // chained layout's parking node.
  constexpr size_t kMaxBlockNodes = (size_t{1} << 16) - 1;
  scorer.nodes_.reserve(total_nodes);
  scorer.node_values_.reserve(total_nodes);
  scorer.tree_roots_.reserve(model.trees.size());
  scorer.tree_depths_.reserve(model.trees.size());
  scorer.tree_shallowest_leaf_.reserve(model.trees.size());
  std::vector<std::vector<uint32_t>> split_slots(model.trees.size());
  for (size_t t = 0; t < model.trees.size(); ++t) {
    // Each tree starts a cache line (see LayOutTree).
    while (scorer.nodes_.size() % kLineNodes != 0) {
      scorer.nodes_.push_back({kLeafThreshold, 0, 0});
      scorer.node_values_.push_back(0.0);
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
          scorer.nodes_.size() - (scorer.block_node_begin_.empty()
                                      ? 0
                                      : scorer.block_node_begin_.back());
      if (scorer.tree_block_begin_.empty() ||
          (block_nodes + iteration_nodes) * sizeof(Node) > kTreeBlockBytes ||
          block_nodes + iteration_nodes > kMaxBlockNodes) {
        scorer.tree_block_begin_.push_back(static_cast<int32_t>(t));
        scorer.block_node_begin_.push_back(scorer.nodes_.size());
      }
    }
    const Tree& tree = model.trees[t];
    // Doubled-row slot of each split: the walks' and QuickScorer's.
    std::vector<uint32_t>& node_slots = split_slots[t];
    node_slots.resize(tree.num_internal_nodes());
    for (int32_t n = 0; n < tree.num_internal_nodes(); ++n) {
      const int32_t feature = tree.split_feature[n];
      if (tree.treats_zero_as_missing(n)) {
        const uint32_t zero_slot = static_cast<uint32_t>(
            2 * used + static_cast<size_t>(zero_slot_of_feature[feature]));
        node_slots[n] = tree.default_left[n]
                            ? zero_slot
                            : zero_slot + static_cast<uint32_t>(zero_used);
        continue;
      }
      const uint32_t feature_slot =
          static_cast<uint32_t>(slot_of_feature[feature]);
      node_slots[n] = tree.default_left[n]
                          ? feature_slot
                          : feature_slot + static_cast<uint32_t>(used);
    }
    const size_t base = scorer.nodes_.size() - scorer.block_node_begin_.back();
    const std::vector<LaidOutNode> order = LayOutTree(tree);
    int32_t deepest = 0;
    int32_t shallowest = std::numeric_limits<int32_t>::max();
    for (size_t i = 0; i < order.size(); ++i) {
      const int32_t node = order[i].encoded;
      if (node == kFiller) {
        scorer.nodes_.push_back({kLeafThreshold, 0, 0});
        scorer.node_values_.push_back(0.0);
        continue;
      }
      if (node < 0) {
        deepest = std::max(deepest, order[i].depth);
        shallowest = std::min(shallowest, order[i].depth);
        scorer.nodes_.push_back(
            {kLeafThreshold, 0, static_cast<uint16_t>(base + i)});
        scorer.node_values_.push_back(tree.leaf_value[~node]);
        continue;
      }
      scorer.nodes_.push_back(
          {OrderKey(tree.threshold[node]),
           static_cast<uint16_t>(node_slots[node] * kSlotUnits),
           static_cast<uint16_t>(base + order[i].first_child)});
      scorer.node_values_.push_back(0.0);
    }
    scorer.tree_roots_.push_back(static_cast<uint32_t>(base));
    scorer.tree_depths_.push_back(deepest);
    scorer.tree_shallowest_leaf_.push_back(shallowest);
  }
  scorer.tree_block_begin_.push_back(static_cast<int32_t>(model.trees.size()));

  int32_t max_leaves = 0;
  for (const Tree& tree : model.trees) {
    max_leaves = std::max(max_leaves, tree.num_leaves());
  }
  scorer.shape_ = {model.num_outputs, static_cast<int32_t>(model.trees.size()),
                   max_leaves, scorer.num_slots()};
  const CpuFeatures& cpu = CpuFeatures::Detected();
  if (forced != nullptr) {
    if (std::string why = forced->incompatibility(scorer.shape_, cpu);
        !why.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("scoring kernel ", forced->name, " ", why));
    }
    if (absl::Status status =
            scorer.BuildForcedKernel(*forced, model, split_slots);
        !status.ok()) {
      return status;
    }
    return scorer;
  }
  // The chooser: every compatible kernel, each taking the documents it
  // scores best (see the class comment and AccumulateTrees).
  const auto compatible = [&](ScoringKernelId id) {
    return GetScoringKernel(id).incompatibility(scorer.shape_, cpu).empty();
  };
  if (compatible(ScoringKernelId::kQuickAvx512)) {
    scorer.quick_ = QuickScorerForest::Build(model, split_slots, true);
  } else if (compatible(ScoringKernelId::kQuickAvx2)) {
    scorer.quick_ = QuickScorerForest::Build(model, split_slots, false);
  }
  if (compatible(ScoringKernelId::kRapidAvx512)) {
    scorer.rapid_ = RapidScorerForest::Build(model, split_slots);
  }
  if (options.dense == DenseScoring::kAllow &&
      compatible(ScoringKernelId::kDenseAvx512Vbmi)) {
    scorer.dense_ = DenseScorerForest::Build(model, split_slots);
  }
  if (!scorer.quick_.has_value() &&
      compatible(ScoringKernelId::kChainedWalks)) {
    scorer.BuildChains();
  }
  if (!scorer.dense_.has_value() && compatible(ScoringKernelId::kLaneChains)) {
    scorer.BuildLaneChains();
  }
  scorer.SetPlan();
  return scorer;
}

absl::Status ForestScorer::BuildForcedKernel(
    const ScoringKernel& kernel, const Ensemble& model,
    const std::vector<std::vector<uint32_t>>& split_slots) {
  bool built = true;
  switch (kernel.id) {
    case ScoringKernelId::kRapidAvx512:
      rapid_ = RapidScorerForest::Build(model, split_slots);
      built = rapid_.has_value();
      break;
    case ScoringKernelId::kDenseAvx512Vbmi:
      dense_ = DenseScorerForest::Build(model, split_slots);
      built = dense_.has_value();
      break;
    case ScoringKernelId::kQuickAvx512:
    case ScoringKernelId::kQuickAvx2:
      quick_ = QuickScorerForest::Build(
          model, split_slots, kernel.id == ScoringKernelId::kQuickAvx512);
      built = quick_.has_value();
      break;
    case ScoringKernelId::kChainedWalks:
      BuildChains();
      break;
    case ScoringKernelId::kLaneChains:
      BuildLaneChains();
      built = !lane_nodes_.empty();
      lanes_for_all_ = true;
      break;
    case ScoringKernelId::kLockstepWalks:
      break;
  }
  if (!built) {
    return absl::FailedPreconditionError(absl::StrCat(
        "scoring kernel ", kernel.name,
        " cannot lay out this model (DenseScorer: at most ",
        DenseScorerForest::kMaxSlots,
        " tested slots of at most 255 thresholds each; lane chains: at most "
        "2^31 nodes)"));
  }
  plan_ = {kernel.id};
  // Documents a kernel leaves (remainders of its groups, tree prefixes for
  // the chains) walk in lockstep; DenseScorer takes every document.
  if (kernel.id != ScoringKernelId::kDenseAvx512Vbmi &&
      kernel.id != ScoringKernelId::kLockstepWalks) {
    plan_.push_back(ScoringKernelId::kLockstepWalks);
  }
  return absl::OkStatus();
}

void ForestScorer::SetPlan() {
  plan_.clear();
  if (rapid_.has_value()) plan_.push_back(ScoringKernelId::kRapidAvx512);
  if (dense_.has_value()) {
    // DenseScorer takes every document RapidScorer leaves.
    plan_.push_back(ScoringKernelId::kDenseAvx512Vbmi);
    return;
  }
  if (quick_.has_value()) {
    plan_.push_back(quick_->has_avx512() ? ScoringKernelId::kQuickAvx512
                                         : ScoringKernelId::kQuickAvx2);
  }
  if (!chain_nodes_.empty()) plan_.push_back(ScoringKernelId::kChainedWalks);
  if (!lane_nodes_.empty()) plan_.push_back(ScoringKernelId::kLaneChains);
  plan_.push_back(ScoringKernelId::kLockstepWalks);
}

std::string ForestScorer::kernel_plan_name() const {
  std::string name;
  for (ScoringKernelId id : plan_) {
    if (!name.empty()) name += '+';
    absl::StrAppend(&name, GetScoringKernel(id).name);
  }
  return name;
}

int32_t ForestScorer::ClampTrees(int32_t num_trees) const {
  const int32_t all = static_cast<int32_t>(tree_roots_.size());
  if (num_trees <= 0 || num_trees >= all) return all;
  const int32_t iterations = (num_trees + num_outputs_ - 1) / num_outputs_;
  return std::min(all, iterations * num_outputs_);
}

void ForestScorer::PrepareRows(const float* rows, size_t num_docs,
                               size_t row_stride, uint32_t* doubled) const {
  const uint32_t low_missing =
      OrderKey(-std::numeric_limits<float>::infinity());
  const uint32_t high_missing =
      OrderKey(std::numeric_limits<float>::infinity());
  const size_t used = used_features_.size();
  const size_t zero_used = zero_features_.size();
  const size_t slots = num_slots();
  static_assert(internal::kKeyGroupDocs == kLanes);
  static const bool avx2 = internal::CpuHasAvx2ForRowKeys();
  // The used features' keys, a group of kLanes documents at a time (whole
  // groups with AVX2 where the CPU has it); features with zero as missing
  // one document at a time below.
  for (size_t first = 0; first < num_docs; first += kLanes) {
    const size_t docs = std::min(kLanes, num_docs - first);
    uint32_t* group = doubled + first * slots;
    const float* group_rows = rows + first * row_stride;
    if (avx2 && docs == kLanes) {
      internal::KeyGroupAvx2(group_rows, row_stride, used_features_.data(),
                             used, low_missing, high_missing, group,
                             group + used * kLanes);
    } else {
      internal::KeyGroupScalar(group_rows, row_stride, docs,
                               used_features_.data(), used, low_missing,
                               high_missing, group, group + used * kLanes);
    }
  }
  for (size_t i = 0; i < num_docs; ++i) {
    const float* row = rows + i * row_stride;
    uint32_t* group = doubled + (i / kLanes) * kLanes * slots + i % kLanes;
    uint32_t* zero_group = group + 2 * used * kLanes;
    for (size_t k = 0; k < zero_used; ++k) {
      const float value = row[zero_features_[k]];
      const bool missing =
          std::isnan(value) || std::fabs(value) <= kZeroAsMissingBound;
      const uint32_t key = OrderKey(value);
      zero_group[k * kLanes] = missing ? low_missing : key;
      zero_group[(zero_used + k) * kLanes] = missing ? high_missing : key;
    }
  }
}

// Walks kDocs documents through every tree of [begin, end), kTrees =
// kLanes / kDocs trees at a time: kLanes independent walks in lockstep, so
// the CPU overlaps their loads whether a group holds many documents (one
// tree each) or a single one (several trees). Leaf values are added per
// document in tree order, so sums match the reference bit for bit.
template <size_t kDocs>
void ForestScorer::WalkGroup(const uint32_t* group_rows, size_t block,
                             int32_t begin, int32_t end, double* sum,
                             double* out, size_t out_stride) const {
  constexpr size_t kTrees = kLanes / kDocs;
  const Node* nodes = nodes_.data() + block_node_begin_[block];
  const double* values = node_values_.data() + block_node_begin_[block];
  const char* row_bytes = reinterpret_cast<const char*>(group_rows);
  const int32_t num_outputs = num_outputs_;
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
      shallowest = std::min(shallowest, tree_shallowest_leaf_[tree]);
      deepest = std::max(deepest, tree_depths_[tree]);
      uint64_t root;
      std::memcpy(&root, &nodes[tree_roots_[tree]], sizeof(root));
      for (size_t d = 0; d < kDocs; ++d) start[k * kDocs + d] = root;
      // The next trees' top levels (breadth-first: the first 15 nodes span
      // two cache lines) load while these trees are walked; this matters
      // when the model does not fit in L2 and a small batch walks it once.
      const int32_t next = t + static_cast<int32_t>(kTrees + k);
      if (next < end) {
        const char* root_bytes =
            reinterpret_cast<const char*>(nodes + tree_roots_[next]);
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

void ForestScorer::AccumulateTrees(uint32_t* doubled, size_t num_docs,
                                   double* out, size_t out_stride,
                                   int32_t num_trees) const {
  const size_t group_slots = kLanes * num_slots();
  if (lanes_for_all_ && num_trees == this->num_trees()) {
    thread_local std::vector<uint32_t> record;
    record.resize(tree_roots_.size() + 1);
    for (size_t i = 0; i < num_docs; ++i) {
      LaneChainDocument(doubled + i / kLanes * group_slots + i % kLanes,
                        out + i, record.data());
    }
    return;
  }
  // RapidScorer takes groups of 64, QuickScorer groups of 16 or 8 of the
  // rest; the rest walk the trees.
  size_t quick_docs = 0;
  if (rapid_.has_value()) {
    quick_docs = RapidScoreGroups(doubled, num_docs, out, num_trees);
  }
  if (dense_.has_value()) {
    DenseScoreDocuments(doubled, quick_docs, num_docs, out, num_trees);
    return;
  }
  if (quick_.has_value() && quick_docs < num_docs) {
    quick_docs += QuickScoreGroups(doubled + quick_docs / kLanes * group_slots,
                                   num_docs - quick_docs, out + quick_docs,
                                   out_stride, num_trees);
  }
  // A single document left after groups of kLanes (or a batch of one) goes
  // through the lane chains when all trees are used. Two or more cost less
  // walking in lockstep: on 300 255-leaf trees, a batch of 10 (8 + 2)
  // measured 3.6 us per document with the 2 walked, 4.4 with them in lanes.
  if (!lane_nodes_.empty() && num_trees == this->num_trees() &&
      (num_docs - quick_docs) % kLanes == 1) {
    thread_local std::vector<uint32_t> record;
    record.resize(tree_roots_.size() + 1);
    const size_t last = num_docs - 1;
    LaneChainDocument(doubled + last / kLanes * group_slots + last % kLanes,
                      out + last, record.data());
    if (--num_docs == quick_docs) return;
  }
  // Chained walks read a second copy of the nodes and their values: worth
  // it from kChainMinDocs documents, padded to a group of kLanes.
  const bool use_chains =
      !chain_nodes_.empty() && num_docs - quick_docs >= kChainMinDocs;
  // A remainder of kChainPadMinDocs to kLanes - 1 documents chains too,
  // padded with copies of the last document whose sums are dropped: walked
  // in lockstep it reads nodes_, a second copy of the model the chains have
  // pushed out of cache (300 x 255 at batch 100: 2.01 us/doc with 4 of the
  // 100 walked, against 1.72 for a batch of 96; bench/results/scorer.md).
  // Two documents cost less walked than padded to 8.
  const bool pad =
      use_chains && (num_docs - quick_docs) % kLanes >= kChainPadMinDocs;
  const size_t chained_docs =
      pad ? (num_docs + kLanes - 1) / kLanes * kLanes : num_docs;
  if (chained_docs > num_docs) {
    PadWithLastDocument(doubled, num_docs, chained_docs);
  }
  for (size_t b = 0; b + 1 < tree_block_begin_.size(); ++b) {
    const int32_t begin = tree_block_begin_[b];
    if (begin >= num_trees) break;
    const int32_t end = std::min(tree_block_begin_[b + 1], num_trees);
    size_t first = quick_docs;
    if (first >= num_docs) break;
    while (first < num_docs) {
      // Whole groups of kLanes documents walk one tree per lane (a padded
      // remainder too, when chained); otherwise a remainder (and a small
      // batch) splits into halves, quarters... of the lanes walking 2, 4...
      // trees at once, so no lane idles.
      const size_t left = num_docs - first;
      const bool chain = use_chains && end == tree_block_begin_[b + 1] &&
                         first % kLanes == 0 && (left >= kLanes || pad);
      const size_t docs = left >= kLanes ? kLanes
                          : chain        ? left
                                         : std::bit_floor(left);
      const uint32_t* rows =
          doubled + (first / kLanes) * group_slots + first % kLanes;
      double sum[kLanes] = {};
      double* target = out + first;
      if (num_outputs_ == 1) std::copy_n(target, docs, sum);
      switch (chain ? kLanes : docs) {
        case kLanes:
          if (chain) {
            ChainGroup(rows, b, sum);
          } else {
            WalkGroup<kLanes>(rows, b, begin, end, sum, target, out_stride);
          }
          break;
        case kLanes / 2:
          WalkGroup<kLanes / 2>(rows, b, begin, end, sum, target, out_stride);
          break;
        case kLanes / 4:
          WalkGroup<kLanes / 4>(rows, b, begin, end, sum, target, out_stride);
          break;
        default:
          WalkGroup<kLanes / 8>(rows, b, begin, end, sum, target, out_stride);
      }
      if (num_outputs_ == 1) std::copy_n(sum, docs, target);
      first += docs;
    }
  }
}

void ForestScorer::RawScoresBlock(const float* rows, size_t num_docs,
                                  size_t row_stride, double* out,
                                  size_t out_stride, int32_t num_trees,
                                  uint32_t* scratch) const {
  for (int32_t k = 0; k < num_outputs_; ++k) {
    std::fill_n(out + static_cast<size_t>(k) * out_stride, num_docs,
                base_score_[k]);
  }
  if (num_trees > 0) {
    PrepareRows(rows, num_docs, row_stride, scratch);
    AccumulateTrees(scratch, num_docs, out, out_stride, num_trees);
  }
  if (!linear_weights_.empty()) {
    const size_t features = static_cast<size_t>(num_features_);
    for (size_t i = 0; i < num_docs; ++i) {
      const float* row = rows + i * row_stride;
      double linear = 0.0;
      for (size_t f = 0; f < features; ++f) {
        if (!std::isnan(row[f])) linear += linear_weights_[f] * row[f];
      }
      out[i] += linear;
    }
  }
}

void ForestScorer::Transform(const double* raw, size_t raw_stride,
                             size_t num_docs, double* out) const {
  if (transform_ == ScoreTransform::kIdentity) {
    std::copy_n(raw, num_docs, out);
    return;
  }
  // kExpectedRelevance: sum_k k * softmax(raw)_k, shifted by the max for
  // stability.
  for (size_t i = 0; i < num_docs; ++i) {
    double max_raw = -std::numeric_limits<double>::infinity();
    for (int32_t k = 0; k < num_outputs_; ++k) {
      max_raw = std::max(max_raw, raw[k * raw_stride + i]);
    }
    double normalizer = 0.0;
    double weighted = 0.0;
    for (int32_t k = 0; k < num_outputs_; ++k) {
      const double e = std::exp(raw[k * raw_stride + i] - max_raw);
      normalizer += e;
      weighted += k * e;
    }
    out[i] = weighted / normalizer;
  }
}

void ForestScorer::RawScores(absl::Span<const float> rows, size_t num_docs,
                             absl::Span<double> out, int32_t num_trees) const {
  CheckOrDie(rows.size() >= num_docs * num_features_,
             "RawScores: rows.size() < num_docs * num_features");
  CheckOrDie(out.size() >= num_docs * num_outputs_,
             "RawScores: out.size() < num_docs * num_outputs");
  const int32_t trees = ClampTrees(num_trees);
  uint32_t* scratch = Scratch(block_row_entries(num_docs));
  for (size_t begin = 0; begin < num_docs; begin += kBlockDocs) {
    const size_t count = std::min(kBlockDocs, num_docs - begin);
    RawScoresBlock(rows.data() + begin * num_features_, count, num_features_,
                   out.data() + begin, num_docs, trees, scratch);
  }
}

void ForestScorer::Score(absl::Span<const float> rows, size_t num_docs,
                         absl::Span<double> out, size_t row_stride) const {
  if (row_stride == 0) row_stride = static_cast<size_t>(num_features_);
  CheckOrDie(row_stride >= static_cast<size_t>(row_width_),
             "Score: row_stride < row_width");
  CheckOrDie(rows.size() >= num_docs * row_stride,
             "Score: rows.size() < num_docs * row_stride");
  CheckOrDie(out.size() >= num_docs, "Score: out.size() < num_docs");
  const int32_t trees = ClampTrees(0);
  uint32_t* scratch = Scratch(block_row_entries(num_docs));
  if (num_outputs_ == 1 && transform_ == ScoreTransform::kIdentity) {
    for (size_t begin = 0; begin < num_docs; begin += kBlockDocs) {
      const size_t count = std::min(kBlockDocs, num_docs - begin);
      RawScoresBlock(rows.data() + begin * row_stride, count, row_stride,
                     out.data() + begin, num_docs, trees, scratch);
    }
    return;
  }
  const size_t outputs = static_cast<size_t>(num_outputs_);
  const size_t block =
      std::clamp<size_t>(kStackRawScores / outputs, 1, kBlockDocs);
  double stack_raw[kStackRawScores];
  std::vector<double> heap_raw;  // only for more than kStackRawScores outputs
  double* raw = stack_raw;
  if (outputs > kStackRawScores) {
    heap_raw.resize(outputs);
    raw = heap_raw.data();
  }
  for (size_t begin = 0; begin < num_docs; begin += block) {
    const size_t count = std::min(block, num_docs - begin);
    RawScoresBlock(rows.data() + begin * row_stride, count, row_stride, raw,
                   count, trees, scratch);
    Transform(raw, count, count, out.data() + begin);
  }
}

std::vector<double> ForestScorer::ScoreColumns(const Dataset& data,
                                               int32_t num_trees,
                                               bool transformed) const {
  const size_t num_docs = data.num_documents();
  const size_t outputs = static_cast<size_t>(num_outputs_);
  std::vector<double> result(transformed ? num_docs : num_docs * outputs);
  const int32_t trees = ClampTrees(num_trees);
  // Rows hold only the columns the model reads (row_width_), so a model
  // declaring many features costs no memory for columns it never tests.
  const size_t stride = static_cast<size_t>(row_width_);
  const int32_t shared_columns = std::min(data.num_features, row_width_);
  const int64_t num_blocks =
      static_cast<int64_t>((num_docs + kBlockDocs - 1) / kBlockDocs);
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    std::vector<float> rows(kBlockDocs * stride, 0.0f);
    std::vector<uint32_t> scratch(block_row_entries());
    std::vector<double> raw(transformed ? kBlockDocs * outputs : 0);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
    for (int64_t b = 0; b < num_blocks; ++b) {
      const size_t begin = static_cast<size_t>(b) * kBlockDocs;
      const size_t count = std::min(kBlockDocs, num_docs - begin);
      // Transpose the block; columns beyond the data's stay 0.
      for (int32_t f = 0; f < shared_columns; ++f) {
        const float* column = data.column(f) + begin;
        for (size_t i = 0; i < count; ++i) {
          rows[i * stride + f] = column[i];
        }
      }
      if (transformed) {
        RawScoresBlock(rows.data(), count, stride, raw.data(), count, trees,
                       scratch.data());
        Transform(raw.data(), count, count, result.data() + begin);
      } else {
        RawScoresBlock(rows.data(), count, stride, result.data() + begin,
                       num_docs, trees, scratch.data());
      }
    }
  }
  return result;
}

std::vector<double> ForestScorer::ScoreDataset(const Dataset& data) const {
  return ScoreColumns(data, 0, /*transformed=*/true);
}

std::vector<double> ForestScorer::RawScoresDataset(const Dataset& data,
                                                   int32_t num_trees) const {
  return ScoreColumns(data, num_trees, /*transformed=*/false);
}

}  // namespace plrank
