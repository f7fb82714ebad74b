#ifndef PLRANK_CORE_OBJECTIVES_MCRANK_H_
#define PLRANK_CORE_OBJECTIVES_MCRANK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"

namespace plrank {

struct McRankOptions {
  // Multiply the hessians by K / (K - 1), so that the default Newton leaf is
  // Friedman's (K - 1)/K * sum r / sum |r|(1 - |r|) (as LightGBM's multiclass
  // does); false: the plain diagonal p (1 - p).
  bool friedman_factor = true;
};

// McRank (Li, Burges & Wu 2007): multi-class boosting over the labels
// 0..K-1, K = max training label + 1 (num_outputs() = K after Init; one tree
// per class per iteration). Pointwise softmax cross entropy
//   Loss = sum_i [log sum_k exp(s_ik) - s_i,y_i],
//   g_ik = p_ik - [y_i = k],   h_ik = factor * p_ik (1 - p_ik).
// Scores are out-major: s_ik = scores[k * num_documents + i]. Documents are
// ranked by the expected relevance sum_k k p_ik, which the trainer asks the
// scorer for (output_transform() is ScoreTransform::kExpectedRelevance). Every
// query is used, also those whose labels are all equal (the classes still carry
// information).
class McRankObjective : public QueryObjective {
 public:
  // More classes than this is almost surely a mislabeled file.
  static constexpr int32_t kMaxClasses = 32;

  explicit McRankObjective(const McRankOptions& options) : options_(options) {}

  std::string name() const override { return "mcrank"; }
  // 1 before Init.
  int32_t num_outputs() const override { return num_classes_; }
  ScoreTransform output_transform() const override {
    return ScoreTransform::kExpectedRelevance;
  }
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;
  std::vector<std::string> Describe() const override;

  // Softmax over the num_classes outputs of document `document` out of
  // `num_documents` (out-major scores) into probabilities[0..num_classes).
  static void ClassProbabilities(absl::Span<const double> scores,
                                 size_t num_documents, int32_t num_classes,
                                 size_t document, double* probabilities);

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;

 private:
  McRankOptions options_;
  int32_t num_classes_ = 1;
  double hessian_factor_ = 1.0;  // K / (K - 1) or 1
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_MCRANK_H_
