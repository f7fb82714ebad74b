#ifndef PLRANK_CORE_OBJECTIVES_LAMBDAMART_H_
#define PLRANK_CORE_OBJECTIVES_LAMBDAMART_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/query_objective.h"

namespace plrank {

struct LambdaMartOptions {
  double sigma = 1.0;  // slope of the pairwise logistic
  // Only pairs with at least one document among the top `truncation` of the
  // current ranking contribute (LightGBM's lambdarank_truncation_level, whose
  // default is also 30); the NDCG normalizer is the ideal DCG@truncation.
  // 0 = every pair, normalized by the whole-list ideal DCG.
  int32_t truncation = 30;
};
absl::Status ValidateLambdaMartOptions(const LambdaMartOptions& options);

// LambdaMART (Burges 2010) with LightGBM's lambdarank gradients and hessians.
//
// Per query, documents are ranked by the current scores in the project's one
// ranking order (RanksBefore, core/data/ranking_order.h: descending; ties by
// ascending label then index). For every pair
// (h, l) with label_h > label_l and min(rank_h, rank_l) < truncation:
//   dN   = (G_h - G_l) |D(rank_h) - D(rank_l)| / IDCG@truncation,
//          G = 2^r - 1, D(r) = 1 / log2(r + 2)
//   rho  = 1 / (1 + exp(sigma (s_h - s_l)))
//   g_h -= sigma dN rho,   g_l += sigma dN rho
//   h_h += sigma^2 dN rho (1 - rho),   h_l += the same.
// These are the exact gradient and diagonal Hessian of
//   Loss = sum_pairs dN log(1 + exp(-sigma (s_h - s_l)))
// (each pair times the training weight of its more relevant document, when
// there are weights) with dN frozen at the current ranking, which is what Loss() returns (it is
// piecewise smooth: dN jumps when two scores cross). Queries whose labels are
// all equal or whose ideal DCG is 0 get g = h = 0. Leaf values are the
// default Newton step -sum g / (sum h + lambda_l2).
class LambdaMartObjective : public QueryObjective {
 public:
  explicit LambdaMartObjective(const LambdaMartOptions& options)
      : options_(options) {}

  std::string name() const override { return "lambdamart"; }
  std::vector<std::string> Describe() const override;

  // Gradients and hessians of query q in double precision (scores, outputs
  // point at the query's first document); for tests and diagnostics.
  void QueryDerivatives(size_t q, const double* scores, double* gradients,
                        double* hessians, QueryScratch& scratch) const override;
  double QueryLoss(size_t q, const double* scores,
                   QueryScratch& scratch) const override;

 protected:
  absl::Status InitQueries(const Dataset& train, uint64_t seed) override;
  // Pair (h, l) counts w_q w_h: the weight of its more relevant document
  // (for IPS, 1 / propensity of the click), as unbiased LambdaMART does.
  bool applies_own_weights() const override { return true; }

 private:
  struct RankedQuery;
  // Ranks query q by scores and copies what the pair loops read into
  // scratch, in rank order; false if q carries no signal.
  bool RankQuery(size_t q, const double* scores, QueryScratch& scratch,
                 RankedQuery* ranked) const;

  LambdaMartOptions options_;
  std::vector<double> inverse_ideal_dcg_;  // per query; 0 = skip the query
  std::vector<double> discounts_;          // D(rank) for rank < max size
  int32_t skipped_queries_ = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_LAMBDAMART_H_
