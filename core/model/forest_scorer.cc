#include "core/model/forest_scorer.h"

#include <algorithm>
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
// Documents walking one tree in lockstep: enough independent walks to hide
// load latency, few enough to keep their positions in registers.
constexpr size_t kGroupDocs = 8;
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
float* Scratch(size_t floats) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < floats) scratch.resize(floats);
  return scratch.data();
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
  size_t block_bytes = 0;
  std::vector<std::pair<int32_t, int32_t>> stack;  // (node, depth)
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const Tree& tree = model.trees[t];
    const int32_t base = static_cast<int32_t>(scorer.nodes_.size());
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
    // Internal node n lands at base + n, leaf l at base + num_internal + l.
    auto relocate = [&](int32_t child) {
      return child >= 0 ? base + child : base + num_internal + ~child;
    };
    for (int32_t n = 0; n < num_internal; ++n) {
      const uint32_t feature = static_cast<uint32_t>(tree.split_feature[n]);
      scorer.nodes_.push_back(
          {tree.default_left[n] ? feature : feature + model.num_features,
           tree.threshold[n],
           {relocate(tree.left_child[n]), relocate(tree.right_child[n])}});
      scorer.node_values_.push_back(0.0);
    }
    for (int32_t l = 0; l < tree.num_leaves(); ++l) {
      const int32_t self = base + num_internal + l;
      scorer.nodes_.push_back({0u, 0.0f, {self, self}});
      scorer.node_values_.push_back(tree.leaf_value[l]);
    }
    scorer.tree_roots_.push_back(base);  // node 0, or leaf 0 for a stump
    scorer.tree_first_leaf_.push_back(base + num_internal);
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
                               float* doubled) const {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const size_t features = static_cast<size_t>(num_features_);
  for (size_t i = 0; i < num_docs; ++i) {
    const float* row = rows + i * features;
    float* low = doubled + i * 2 * features;
    float* high = low + features;
    for (size_t f = 0; f < features; ++f) {
      const bool missing = std::isnan(row[f]);
      low[f] = missing ? -kInf : row[f];
      high[f] = missing ? kInf : row[f];
    }
  }
}

void ForestScorer::AccumulateTrees(const float* doubled, size_t num_docs,
                                   double* out, size_t out_stride,
                                   int32_t num_trees) const {
  const Node* nodes = nodes_.data();
  const double* values = node_values_.data();
  const int32_t* roots = tree_roots_.data();
  const int32_t* depths = tree_depths_.data();
  const int32_t* first_leaves = tree_first_leaf_.data();
  const int32_t* shallowest = tree_shallowest_leaf_.data();
  const size_t stride = 2 * static_cast<size_t>(num_features_);
  const int32_t num_outputs = num_outputs_;
  for (size_t b = 0; b + 1 < tree_block_begin_.size(); ++b) {
    const int32_t begin = tree_block_begin_[b];
    if (begin >= num_trees) break;
    const int32_t end = std::min(tree_block_begin_[b + 1], num_trees);
    for (size_t group = 0; group < num_docs; group += kGroupDocs) {
      const size_t count = std::min(kGroupDocs, num_docs - group);
      // A short last group repeats its last row; the extra results are
      // dropped.
      const float* row[kGroupDocs];
      for (size_t d = 0; d < kGroupDocs; ++d) {
        row[d] = doubled + (group + std::min(d, count - 1)) * stride;
      }
      double sum[kGroupDocs] = {};
      if (num_outputs == 1) {
        for (size_t d = 0; d < count; ++d) sum[d] = out[group + d];
      }
      for (int32_t t = begin; t < end; ++t) {
        int32_t at[kGroupDocs];
        for (size_t d = 0; d < kGroupDocs; ++d) at[d] = roots[t];
        // The walks are independent, so the CPU overlaps their loads; the
        // select is an index, not a branch.
        // No document can reach a leaf in fewer than the shallowest leaf's
        // depth of steps; after that, unbalanced trees stop once every
        // document sits on a leaf.
        for (int32_t step = shallowest[t]; step > 0; --step) {
          for (size_t d = 0; d < kGroupDocs; ++d) {
            const Node& node = nodes[at[d]];
            at[d] = node.child[row[d][node.slot] > node.threshold];
          }
        }
        const int32_t first_leaf = first_leaves[t];
        for (int32_t step = depths[t] - shallowest[t]; step > 0; --step) {
          int32_t lowest = std::numeric_limits<int32_t>::max();
          for (size_t d = 0; d < kGroupDocs; ++d) {
            const Node& node = nodes[at[d]];
            at[d] = node.child[row[d][node.slot] > node.threshold];
            lowest = std::min(lowest, at[d]);
          }
          if (lowest >= first_leaf) break;
        }
        if (num_outputs == 1) {
          for (size_t d = 0; d < kGroupDocs; ++d) sum[d] += values[at[d]];
        } else {
          double* target =
              out + static_cast<size_t>(t % num_outputs) * out_stride + group;
          for (size_t d = 0; d < count; ++d) target[d] += values[at[d]];
        }
      }
      if (num_outputs == 1) {
        for (size_t d = 0; d < count; ++d) out[group + d] = sum[d];
      }
    }
  }
}

void ForestScorer::RawScoresBlock(const float* rows, size_t num_docs,
                                  double* out, size_t out_stride,
                                  int32_t num_trees, float* scratch) const {
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
  float* scratch = Scratch(kBlockDocs * 2 * num_features_);
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
  float* scratch = Scratch(kBlockDocs * 2 * num_features_);
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
    std::vector<float> scratch(kBlockDocs * 2 * num_features_);
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
