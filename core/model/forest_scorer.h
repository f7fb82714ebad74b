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
  // 16 bytes, four to a cache line. A document goes to child[value >
  // threshold] where value is its doubled row's slot (see PrepareRows), so
  // missing values need no test in the walk. Values and thresholds are
  // compared as order-preserving integer keys (OrderKey in the .cc): an
  // integer compare and conditional move is the shortest dependency chain a
  // step can have. Offsets are in bytes so a step needs no index arithmetic.
  // Leaves are nodes too, whose children are themselves: a group of walks
  // proceeds in lockstep for the tree's depth with no data-dependent branch.
  struct Node {
    int32_t threshold;     // OrderKey of the float threshold
    uint32_t slot_offset;  // slot * kLanes * sizeof(int32_t)
    uint32_t child[2];     // byte offsets into nodes_: left, right
  };

  // Independent tree walks in lockstep: enough to hide load latency, few
  // enough to keep their positions in registers. Also the number of
  // documents whose doubled rows are interleaved slot by slot.
  static constexpr size_t kLanes = 8;
  static_assert(kBlockDocs % kLanes == 0);

  ForestScorer() = default;

  // Copies `num_docs` rows (num_features_ floats each) into doubled rows of
  // 2 * num_features_ order keys (see Node): slot f holds x_f with NaN -> -inf (default left
  // goes left: -inf <= any finite threshold), slot num_features_ + f holds x_f
  // with NaN -> +inf (default right). Thresholds are finite, so real
  // infinities are routed the same way as before. Rows are interleaved in
  // groups of kLanes documents: slot s of document i is at
  // doubled[(i / kLanes) * kLanes * 2 * num_features_ + s * kLanes + i % kLanes].
  void PrepareRows(const float* rows, size_t num_docs, int32_t* doubled) const;
  // Adds trees [0, num_trees) to out[k * out_stride + i], i < num_docs, for
  // doubled rows.
  void AccumulateTrees(const int32_t* doubled, size_t num_docs, double* out,
                       size_t out_stride, int32_t num_trees) const;
  // Adds trees [begin, end) for the kDocs doubled rows `rows`: to sum[d]
  // when there is one output, else to out[(t % outputs) * out_stride + d].
  // `group_rows` points at the first document's slot 0 in its interleaved
  // group.
  template <size_t kDocs>
  void WalkGroup(const int32_t* group_rows, int32_t begin, int32_t end,
                 double* sum, double* out, size_t out_stride) const;
  // Full raw scores of at most kBlockDocs rows: base score, trees, linear
  // part. `scratch` holds kBlockDocs doubled rows.
  void RawScoresBlock(const float* rows, size_t num_docs, double* out,
                      size_t out_stride, int32_t num_trees,
                      int32_t* scratch) const;
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
  std::vector<Node> nodes_;                // all trees, leaves included
  std::vector<double> node_values_;        // leaf value per node (0 inside)
  std::vector<uint32_t> tree_roots_;       // byte offset of each tree's root
  std::vector<int32_t> tree_depths_;       // depth of each tree's deepest leaf
  std::vector<int32_t> tree_shallowest_leaf_;  // and of its shallowest leaf
  std::vector<uint32_t> tree_first_leaf_;  // leaves are at byte offsets >= this
  // Trees [tree_block_begin_[b], tree_block_begin_[b + 1]) form block b, sized
  // so a block's nodes stay in L1 while a block of documents walks them.
  std::vector<int32_t> tree_block_begin_;
  std::vector<double> linear_weights_;     // empty or num_features_
};

}  // namespace plrank

#endif  // PLRANK_CORE_MODEL_FOREST_SCORER_H_
