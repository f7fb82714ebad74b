#ifndef PLRANK_CORE_LINEAR_LINEAR_MODEL_H_
#define PLRANK_CORE_LINEAR_LINEAR_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/data/dataset.h"

namespace plrank {

// What the linear trainers return. `weights` score RAW features (one per
// training feature): score = sum_f weights[f] * x_f with NaN -> 0, exactly
// what Ensemble::linear_weights stores and ForestScorer computes.
struct LinearModelResult {
  std::vector<double> weights;
  double train_ndcg = 0.0;  // mean NDCG@k of `weights` on the training set
  double valid_ndcg = 0.0;  // same on the validation set; NaN without one
  int32_t iterations = 0;   // CA: rounds of the best restart; ListMLE: L-BFGS
  // Per-iteration training objective of the returned run: CA's internal
  // mean NDCG@k after each round (starting with the initial weights), or
  // ListMLE's log-likelihood plus prior after each L-BFGS iteration.
  std::vector<double> history;
};

// Below this many documents the linear trainers run their loops on one
// thread: an OpenMP region per line-search step costs more than the work
// (and much more on a loaded machine). Results never depend on it.
inline constexpr int64_t kLinearParallelMinDocuments = 1 << 14;

// Scores every document with raw-feature weights (NaN -> 0). Features the
// dataset has beyond weights.size(), or weights beyond its features, count
// as 0, so a validation file with a different width still scores.
std::vector<double> ScoreLinear(const Dataset& data,
                                absl::Span<const double> weights);

// Mean NDCG@k over all queries (a query without relevant document counts 1,
// the metrics library's default convention).
double MeanNdcg(const Dataset& data, absl::Span<const double> scores,
                int32_t k);

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_LINEAR_MODEL_H_
