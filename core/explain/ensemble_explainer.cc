#include "core/explain/ensemble_explainer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/model/model_io.h"

namespace plrank {

absl::StatusOr<EnsembleExplainer> EnsembleExplainer::Create(
    const Ensemble& model) {
  if (absl::Status status = ValidateEnsemble(model); !status.ok()) {
    return status;
  }
  if (model.num_outputs != 1 || model.transform != ScoreTransform::kIdentity) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the model has ", model.num_outputs,
        " outputs combined by a softmax (expected relevance); feature "
        "contributions are computed only for single-output models, whose "
        "score is a sum over trees"));
  }
  EnsembleExplainer explainer;
  explainer.num_features_ = model.num_features;
  explainer.bias_ = model.base_score.empty() ? 0.0 : model.base_score[0];
  explainer.linear_weights_ = model.linear_weights;
  explainer.trees_.reserve(model.trees.size());
  constexpr uint64_t kMaxCost = std::numeric_limits<uint64_t>::max() / 2;
  uint64_t cost = 0;
  for (size_t t = 0; t < model.trees.size(); ++t) {
    const ShapTree& tree = explainer.trees_.emplace_back(model.trees[t]);
    if (tree.depth() > kMaxDepth) {
      return absl::FailedPreconditionError(
          absl::StrCat("tree ", t, " is ", tree.depth(),
                       " splits deep; feature contributions are computed for "
                       "trees of at most ",
                       kMaxDepth));
    }
    explainer.max_depth_ = std::max(explainer.max_depth_, tree.depth());
    explainer.row_width_ = std::max(explainer.row_width_, tree.row_width());
    explainer.bias_ += tree.expected_value();
    const uint64_t depth = static_cast<uint64_t>(tree.depth());
    cost = std::min(kMaxCost, cost + static_cast<uint64_t>(tree.num_leaves()) *
                                         depth * depth);
  }
  if (!model.linear_weights.empty()) explainer.row_width_ = model.num_features;
  cost += static_cast<uint64_t>(explainer.row_width_);
  explainer.cost_per_document_ = std::max<uint64_t>(cost, 1);
  return explainer;
}

void EnsembleExplainer::Explain(
    absl::Span<const float> row, absl::Span<double> contributions,
    std::vector<ShapTree::PathElement>* scratch) const {
  std::fill(contributions.begin(), contributions.begin() + row_width_, 0.0);
  for (const ShapTree& tree : trees_) {
    tree.AddContributions(row, contributions, scratch);
  }
  for (size_t f = 0; f < linear_weights_.size(); ++f) {
    if (!std::isnan(row[f])) contributions[f] += linear_weights_[f] * row[f];
  }
}

std::vector<double> EnsembleExplainer::ExplainRows(
    absl::Span<const float> rows, size_t num_docs, size_t row_stride) const {
  const size_t columns = static_cast<size_t>(num_features_) + 1;
  std::vector<double> out(num_docs * columns, 0.0);
  std::vector<ShapTree::PathElement> scratch;
  for (size_t i = 0; i < num_docs; ++i) {
    double* line = out.data() + i * columns;
    Explain(rows.subspan(i * row_stride, row_stride),
            absl::MakeSpan(line, columns - 1), &scratch);
    line[columns - 1] = bias_;
  }
  return out;
}

}  // namespace plrank
