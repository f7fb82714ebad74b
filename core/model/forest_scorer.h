#ifndef PLRANK_CORE_MODEL_FOREST_SCORER_H_
#define PLRANK_CORE_MODEL_FOREST_SCORER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/model/ensemble.h"

namespace plrank {

// A validated Ensemble flattened for fast scoring: all trees' nodes in one
// contiguous array, evaluated block of trees by block of documents. Immutable
// and thread-safe after Create.
class ForestScorer {
 public:
  // Validates `model` (ValidateEnsemble) and flattens it.
  static absl::StatusOr<ForestScorer> Create(const Ensemble& model);

  // Documents scored together; rows of a block stay in cache while a block
  // of trees is walked.
  static constexpr size_t kBlockDocs = 64;

  int32_t num_features() const { return num_features_; }
  int32_t num_outputs() const { return num_outputs_; }
  int32_t num_trees() const { return static_cast<int32_t>(tree_roots_.size()); }

  // Raw per-output scores: out[k * num_docs + i]. `rows` is row-major
  // (num_docs x num_features). Uses the first `num_trees` trees (rounded to
  // whole iterations: ceil(num_trees / num_outputs) iterations, capped at
  // all); <= 0 = all. Preconditions (checked, abort on violation):
  // rows.size() >= num_docs * num_features(), out.size() >= num_docs *
  // num_outputs(). No allocation.
  void RawScores(absl::Span<const float> rows, size_t num_docs,
                 absl::Span<double> out, int32_t num_trees = 0) const;

  // Final ranking scores (transform applied), one per document; all trees.
  // Raw outputs sum as ((base + tree_0 + tree_1 + ...) + linear), trees in
  // order, so results are reproducible bit for bit.
  void Score(absl::Span<const float> rows, size_t num_docs,
             absl::Span<double> out) const;

  // Convenience over a columnar Dataset, parallel over blocks of documents
  // when built with OpenMP (results do not depend on the thread count).
  // Columns the model lacks (data.num_features > num_features()) are ignored,
  // as no tree or weight can refer to them; columns the data lacks read as 0.
  // Output layout as in RawScores / Score.
  std::vector<double> ScoreDataset(const Dataset& data) const;
  std::vector<double> RawScoresDataset(const Dataset& data,
                                       int32_t num_trees = 0) const;

 private:
  // Internal node, 16 bytes so four share a cache line. A child c >= 0 is an
  // absolute index into nodes_; c < 0 is leaf ~c, an absolute index into
  // leaf_values_. Bit 31 of feature_and_flag is default_left.
  struct Node {
    uint32_t feature_and_flag;
    float threshold;
    int32_t left;
    int32_t right;
  };
  static constexpr uint32_t kDefaultLeftBit = 0x80000000u;

  ForestScorer() = default;

  // Adds trees [0, num_trees) to out[k * out_stride + i], i < num_docs <=
  // kBlockDocs, for row-major `rows` of num_features_ floats each.
  void AccumulateTrees(const float* rows, size_t num_docs, double* out,
                       size_t out_stride, int32_t num_trees) const;
  // Full raw scores of one block of rows: base score, trees, linear part.
  void RawScoresBlock(const float* rows, size_t num_docs, double* out,
                      size_t out_stride, int32_t num_trees) const;
  // Applies the transform to raw[k * raw_stride + i] -> out[i].
  void Transform(const double* raw, size_t raw_stride, size_t num_docs,
                 double* out) const;
  int32_t ClampTrees(int32_t num_trees) const;
  // Shared by ScoreDataset/RawScoresDataset; `transformed` picks Score.
  std::vector<double> ScoreColumns(const Dataset& data, int32_t num_trees,
                                   bool transformed) const;

  int32_t num_features_ = 0;
  int32_t num_outputs_ = 1;
  ScoreTransform transform_ = ScoreTransform::kIdentity;
  std::vector<double> base_score_;        // num_outputs_ entries
  std::vector<Node> nodes_;                // all trees' internal nodes
  std::vector<double> leaf_values_;        // all trees' leaves
  std::vector<int32_t> tree_roots_;        // node index, or ~leaf for stumps
  // Trees [tree_block_begin_[b], tree_block_begin_[b + 1]) form block b, sized
  // so a block's nodes stay in L1 while a block of documents walks them.
  std::vector<int32_t> tree_block_begin_;
  std::vector<double> linear_weights_;     // empty or num_features_
};

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_FOREST_SCORER_H_
