#include "core/model/forest_scorer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

// Node bytes per tree block: inside L1 together with a group's rows, so the
// block's nodes stay resident while all groups of a document block walk it.
constexpr size_t kTreeBlockBytes = 16 * 1024;
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
int32_t* Scratch(size_t slots) {
  thread_local std::vector<int32_t> scratch;
  if (scratch.size() < slots) scratch.resize(slots);
  return scratch.data();
}

// Maps a non-NaN float to an int32 with the same order: x > y exactly when
// OrderKey(x) > OrderKey(y). Integer compares have a shorter latency than
// float compares on the walk's critical path. -0 is folded into +0 first,
// as the two compare equal as floats.
int32_t OrderKey(float value) {
  const int32_t bits = std::bit_cast<int32_t>(value + 0.0f);
  return bits ^ ((bits >> 31) & 0x7fffffff);
}

// child[value > threshold] as a compare and a conditional move. Compilers
// tend to turn the select into a branch, which mispredicts half the time
// here, or into a load that depends on the compare; both children are
// already loaded with the node.
inline uint32_t SelectChild(int32_t value, int32_t threshold,
                            const uint32_t* child) {
#if defined(__x86_64__) && defined(__GNUC__)
  uint32_t next = child[0];
  asm("cmpl %[threshold], %[value]\n\t"
      "cmovg %[right], %[next]"
      : [next] "+r"(next)
      : [value] "r"(value), [threshold] "rm"(threshold), [right] "rm"(child[1])
      : "cc");
  return next;
#else
  return child[value > threshold];
#endif
}

}  // namespace

absl::StatusOr<ForestScorer> ForestScorer::Create(const Ensemble& model) {
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

  size_t total_nodes = 0;
  for (const Tree& tree : model.trees) {
    total_nodes += tree.split_feature.size() + tree.leaf_value.size();
  }
  scorer.nodes_.reserve(total_nodes);
  scorer.node_values_.reserve(total_nodes);
  scorer.tree_roots_.reserve(model.trees.size());
  scorer.tree_depths_.reserve(model.trees.size());
  if (total_nodes * sizeof(Node) > std::numeric_limits<uint32_t>::max() ||
      static_cast<uint64_t>(2 * model.num_features) * kLanes * sizeof(float) >
          std::numeric_limits<uint32_t>::max()) {
    return absl::ResourceExhaustedError(
        "model too large for the scorer's 32-bit node and slot offsets");
  }
  scorer.tree_first_leaf_.reserve(model.trees.size());
  size_t block_bytes = 0;
  std::vector<std::pair<int32_t, int32_t>> stack;  // (node, depth)
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    const uint32_t base = static_cast<uint32_t>(scorer.nodes_.size());
    const int32_t num_internal = tree.num_internal_nodes();
    // Blocks hold whole iterations so multi-output accumulation stays simple.
    const size_t tree_bytes =
        (tree.split_feature.size() + tree.leaf_value.size()) * sizeof(Node);
    if (t % model.num_outputs == 0 &&
        (scorer.tree_block_begin_.empty() ||
         block_bytes + tree_bytes > kTreeBlockBytes)) {
      scorer.tree_block_begin_.push_back(static_cast<int32_t>(t));
      block_bytes = 0;
    }
    block_bytes += tree_bytes;
    // Internal node n lands at base + n, leaf l at base + num_internal + l;
    // links are byte offsets into nodes_.
    auto offset_of = [&](int32_t child) {
      const uint32_t index = child >= 0 ? base + child : base + num_internal + ~child;
      return index * static_cast<uint32_t>(sizeof(Node));
    };
    for (int32_t n = 0; n < num_internal; ++n) {
      const uint32_t feature = static_cast<uint32_t>(tree.split_feature[n]);
      const uint32_t slot =
          tree.default_left[n] ? feature : feature + model.num_features;
      scorer.nodes_.push_back(
          {OrderKey(tree.threshold[n]),
           static_cast<uint32_t>(slot * kLanes * sizeof(int32_t)),
           {offset_of(tree.left_child[n]), offset_of(tree.right_child[n])}});
      scorer.node_values_.push_back(0.0);
    }
    for (int32_t l = 0; l < tree.num_leaves(); ++l) {
      const uint32_t self = offset_of(~l);
      scorer.nodes_.push_back({0, 0u, {self, self}});
      scorer.node_values_.push_back(tree.leaf_value[l]);
    }
    // Node 0, or leaf 0 for a stump.
    scorer.tree_roots_.push_back(base * static_cast<uint32_t>(sizeof(Node)));
    scorer.tree_first_leaf_.push_back(offset_of(~0));
    int32_t deepest = 0;
    int32_t shallowest = num_internal > 0 ? std::numeric_limits<int32_t>::max()
                                          : 0;
    if (num_internal > 0) stack.push_back({0, 0});
    while (!stack.empty()) {
      const auto [node, node_depth] = stack.back();
      stack.pop_back();
      for (int32_t child : {tree.left_child[node], tree.right_child[node]}) {
        if (child >= 0) {
          stack.push_back({child, node_depth + 1});
        } else {
          deepest = std::max(deepest, node_depth + 1);
          shallowest = std::min(shallowest, node_depth + 1);
        }
      }
    }
    scorer.tree_depths_.push_back(deepest);
    scorer.tree_shallowest_leaf_.push_back(shallowest);
  }
  scorer.tree_block_begin_.push_back(static_cast<int32_t>(model.trees.size()));
  return scorer;
}

int32_t ForestScorer::ClampTrees(int32_t num_trees) const {
  const int32_t all = static_cast<int32_t>(tree_roots_.size());
  if (num_trees <= 0 || num_trees >= all) return all;
  const int32_t iterations = (num_trees + num_outputs_ - 1) / num_outputs_;
  return std::min(all, iterations * num_outputs_);
}

void ForestScorer::PrepareRows(const float* rows, size_t num_docs,
                               int32_t* doubled) const {
  const int32_t low_missing = OrderKey(-std::numeric_limits<float>::infinity());
  const int32_t high_missing = OrderKey(std::numeric_limits<float>::infinity());
  const size_t features = static_cast<size_t>(num_features_);
  for (size_t i = 0; i < num_docs; ++i) {
    const float* row = rows + i * features;
    int32_t* group =
        doubled + (i / kLanes) * kLanes * 2 * features + i % kLanes;
    for (size_t f = 0; f < features; ++f) {
      const bool missing = std::isnan(row[f]);
      const int32_t key = OrderKey(row[f]);
      group[f * kLanes] = missing ? low_missing : key;
      group[(features + f) * kLanes] = missing ? high_missing : key;
    }
  }
}

// Walks kDocs documents through every tree of [begin, end), kTrees =
// kLanes / kDocs trees at a time: kLanes independent walks in lockstep, so
// the CPU overlaps their loads whether a group holds many documents (one
// tree each) or a single one (several trees). Leaf values are added per
// document in tree order, so sums match the reference bit for bit.
template <size_t kDocs>
void ForestScorer::WalkGroup(const int32_t* group_rows, int32_t begin,
                             int32_t end, double* sum, double* out,
                             size_t out_stride) const {
  constexpr size_t kTrees = kLanes / kDocs;
  const char* node_bytes = reinterpret_cast<const char*>(nodes_.data());
  const char* row_bytes = reinterpret_cast<const char*>(group_rows);
  const double* values = node_values_.data();
  const int32_t num_outputs = num_outputs_;
  for (int32_t t = begin; t < end; t += static_cast<int32_t>(kTrees)) {
    uint64_t at[kLanes];  // byte offsets into nodes_
    uint64_t first_leaf[kLanes];
    int32_t shallowest = std::numeric_limits<int32_t>::max();
    int32_t deepest = 0;
    for (size_t k = 0; k < kTrees; ++k) {
      // Past the end, a lane repeats the last tree; its result is dropped.
      const int32_t tree = std::min(t + static_cast<int32_t>(k), end - 1);
      shallowest = std::min(shallowest, tree_shallowest_leaf_[tree]);
      deepest = std::max(deepest, tree_depths_[tree]);
      for (size_t d = 0; d < kDocs; ++d) {
        at[k * kDocs + d] = tree_roots_[tree];
        first_leaf[k * kDocs + d] = tree_first_leaf_[tree];
      }
    }
    // One step of lane l: its document's value sits at a fixed distance
    // from the node's slot offset (rows are interleaved), both children are
    // loaded and the comparison picks one without a branch.
    auto step = [&](size_t l) {
      const Node& node = *reinterpret_cast<const Node*>(node_bytes + at[l]);
      const int32_t value = *reinterpret_cast<const int32_t*>(
          row_bytes + node.slot_offset + (l % kDocs) * sizeof(int32_t));
      at[l] = SelectChild(value, node.threshold, node.child);
    };
    // No walk reaches a leaf in fewer than the shallowest leaf's depth of
    // steps; after that, unbalanced trees stop once every walk sits on a
    // leaf (leaves are nodes whose children are themselves).
    for (int32_t steps = shallowest; steps > 0; --steps) {
      for (size_t l = 0; l < kLanes; ++l) step(l);
    }
    for (int32_t steps = deepest - shallowest; steps > 0; --steps) {
      bool all_leaves = true;
      for (size_t l = 0; l < kLanes; ++l) {
        step(l);
        all_leaves &= at[l] >= first_leaf[l];
      }
      if (all_leaves) break;
    }
    const size_t trees = std::min<size_t>(kTrees, end - t);
    for (size_t k = 0; k < trees; ++k) {
      const int32_t tree = t + static_cast<int32_t>(k);
      double* target =
          num_outputs == 1
              ? sum
              : out + static_cast<size_t>(tree % num_outputs) * out_stride;
      for (size_t d = 0; d < kDocs; ++d) {
        target[d] += values[at[k * kDocs + d] / sizeof(Node)];
      }
    }
  }
}

void ForestScorer::AccumulateTrees(const int32_t* doubled, size_t num_docs,
                                   double* out, size_t out_stride,
                                   int32_t num_trees) const {
  const size_t group_slots = kLanes * 2 * static_cast<size_t>(num_features_);
  for (size_t b = 0; b + 1 < tree_block_begin_.size(); ++b) {
    const int32_t begin = tree_block_begin_[b];
    if (begin >= num_trees) break;
    const int32_t end = std::min(tree_block_begin_[b + 1], num_trees);
    size_t first = 0;
    while (first < num_docs) {
      // Whole groups of kLanes documents walk one tree per lane; a remainder
      // (and a small batch) splits into halves, quarters... of the lanes
      // walking 2, 4... trees at once, so no lane idles.
      const size_t left = num_docs - first;
      const size_t docs = left >= kLanes ? kLanes : std::bit_floor(left);
      const int32_t* rows =
          doubled + (first / kLanes) * group_slots + first % kLanes;
      double sum[kLanes];
      double* target = out + first;
      if (num_outputs_ == 1) std::copy_n(target, docs, sum);
      switch (docs) {
        case kLanes:
          WalkGroup<kLanes>(rows, begin, end, sum, target, out_stride);
          break;
        case kLanes / 2:
          WalkGroup<kLanes / 2>(rows, begin, end, sum, target, out_stride);
          break;
        case kLanes / 4:
          WalkGroup<kLanes / 4>(rows, begin, end, sum, target, out_stride);
          break;
        default:
          WalkGroup<kLanes / 8>(rows, begin, end, sum, target, out_stride);
      }
      if (num_outputs_ == 1) std::copy_n(sum, docs, target);
      first += docs;
    }
  }
}

void ForestScorer::RawScoresBlock(const float* rows, size_t num_docs,
                                  double* out, size_t out_stride,
                                  int32_t num_trees, int32_t* scratch) const {
  for (int32_t k = 0; k < num_outputs_; ++k) {
    std::fill_n(out + static_cast<size_t>(k) * out_stride, num_docs,
                base_score_[k]);
  }
  if (num_trees > 0) {
    PrepareRows(rows, num_docs, scratch);
    AccumulateTrees(scratch, num_docs, out, out_stride, num_trees);
  }
  if (!linear_weights_.empty()) {
    const size_t features = static_cast<size_t>(num_features_);
    for (size_t i = 0; i < num_docs; ++i) {
      const float* row = rows + i * features;
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
  int32_t* scratch = Scratch(kBlockDocs * 2 * num_features_);
  for (size_t begin = 0; begin < num_docs; begin += kBlockDocs) {
    const size_t count = std::min(kBlockDocs, num_docs - begin);
    RawScoresBlock(rows.data() + begin * num_features_, count,
                   out.data() + begin, num_docs, trees, scratch);
  }
}

void ForestScorer::Score(absl::Span<const float> rows, size_t num_docs,
                         absl::Span<double> out) const {
  CheckOrDie(rows.size() >= num_docs * num_features_,
             "Score: rows.size() < num_docs * num_features");
  CheckOrDie(out.size() >= num_docs, "Score: out.size() < num_docs");
  const int32_t trees = ClampTrees(0);
  if (num_outputs_ == 1 && transform_ == ScoreTransform::kIdentity) {
    RawScores(rows, num_docs, out, trees);
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
  int32_t* scratch = Scratch(kBlockDocs * 2 * num_features_);
  for (size_t begin = 0; begin < num_docs; begin += block) {
    const size_t count = std::min(block, num_docs - begin);
    RawScoresBlock(rows.data() + begin * num_features_, count, raw, count,
                   trees, scratch);
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
  const int32_t shared_columns = std::min(data.num_features, num_features_);
  const int64_t num_blocks =
      static_cast<int64_t>((num_docs + kBlockDocs - 1) / kBlockDocs);
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    std::vector<float> rows(kBlockDocs * num_features_, 0.0f);
    std::vector<int32_t> scratch(kBlockDocs * 2 * num_features_);
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
          rows[i * num_features_ + f] = column[i];
        }
      }
      if (transformed) {
        RawScoresBlock(rows.data(), count, raw.data(), count, trees,
                       scratch.data());
        Transform(raw.data(), count, count, result.data() + begin);
      } else {
        RawScoresBlock(rows.data(), count, result.data() + begin, num_docs,
                       trees, scratch.data());
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
