#ifndef PLRANK_CORE_EXPLAIN_ENSEMBLE_EXPLAINER_H_
#define PLRANK_CORE_EXPLAIN_ENSEMBLE_EXPLAINER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model/ensemble.h"
#include "core/explain/tree_shap.h"

namespace plrank {

// Per-feature contributions to a single-output model's score, so that
//   bias() + sum_f contribution[f] == score(x)
// up to floating-point rounding. Each tree adds its path-dependent TreeSHAP
// values (core/explain/tree_shap.h) and its expected value to the bias; the
// base score is part of the bias; the optional linear part adds
// w_f * x_f to feature f (NaN counts 0, as in scoring): its reference point
// is x = 0, as training means are not stored in a model. Immutable and
// thread-safe after Create.
class EnsembleExplainer {
 public:
  // Deepest tree Explain accepts: the recursion and its scratch
  // (depth^2 / 2 path elements) stay small.
  static constexpr int32_t kMaxDepth = 1024;

  // FAILED_PRECONDITION for a model with several outputs or a non-identity
  // transform (its score is not a sum over trees, so contributions would not
  // add up to it) or a tree deeper than kMaxDepth; INVALID_ARGUMENT when
  // the model fails ValidateEnsemble.
  static absl::StatusOr<EnsembleExplainer> Create(const Ensemble& model);

  int32_t num_features() const { return num_features_; }
  // Features a contribution can be non-zero for are [0, row_width()): up to
  // the widest split, or all num_features() with linear weights.
  int32_t row_width() const { return row_width_; }
  // Expected score: base score + every tree's expected value.
  double bias() const { return bias_; }
  int32_t num_trees() const { return static_cast<int32_t>(trees_.size()); }
  int32_t max_depth() const { return max_depth_; }
  // Work of explaining one document, in the units of the server's limit:
  // sum over trees of leaves x depth^2 (TreeSHAP's cost) + row_width() (the
  // contributions to fill and sort), at least 1.
  uint64_t cost_per_document() const { return cost_per_document_; }

  // Contributions for one document: `row` holds at least row_width() floats
  // (NaN = missing); `contributions` (at least row_width() long) is
  // overwritten. `scratch` is reused between calls.
  void Explain(absl::Span<const float> row, absl::Span<double> contributions,
               std::vector<ShapTree::PathElement>* scratch) const;

  // Contributions of every document of `rows` (row-major, `num_docs` rows
  // of `row_stride` >= row_width() floats): num_docs x (num_features() + 1)
  // doubles, row-major, column f the contribution of feature f (0-based
  // here; LETOR feature f + 1) and the last column bias(), so each row adds
  // up to the document's score. What the server's Explain returns, for
  // files and arrays offline (plrank-eval --contributions_out,
  // plrank.Model.explain).
  std::vector<double> ExplainRows(absl::Span<const float> rows,
                                  size_t num_docs, size_t row_stride) const;

 private:
  EnsembleExplainer() = default;

  int32_t num_features_ = 0;
  int32_t row_width_ = 0;
  double bias_ = 0.0;
  int32_t max_depth_ = 0;
  uint64_t cost_per_document_ = 1;
  std::vector<ShapTree> trees_;
  std::vector<double> linear_weights_;  // empty or num_features_
};

}  // namespace plrank

#endif  // PLRANK_CORE_EXPLAIN_ENSEMBLE_EXPLAINER_H_
