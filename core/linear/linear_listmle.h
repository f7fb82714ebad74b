#ifndef PLRANK_CORE_LINEAR_LINEAR_LISTMLE_H_
#define PLRANK_CORE_LINEAR_LINEAR_LISTMLE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"
#include "core/linear/linear_model.h"

namespace plrank {

// Linear Plackett-Luce ranker (l-ListMLE): maximizes the top-K ListMLE
// log-likelihood of one ground-truth permutation per query plus a Gaussian
// prior -(l2 / 2) ||v||^2 on the standardized weights v (see
// ListMleObjective) with L-BFGS (liblbfgs), starting from v = 0. The prior
// is on standardized weights so that its strength does not depend on the
// units of the features; with the likelihood summed over queries, l2 = 1 is
// a unit-variance Gaussian prior per standardized weight. The returned
// weights score raw features: w_f = v_f / stddev_f.
struct LinearListMleOptions {
  int32_t topk = 10;             // K; 0 = the whole permutation
  double l2 = 1.0;               // prior precision, >= 0
  int32_t max_iterations = 200;  // L-BFGS iterations
  uint64_t seed = 1;             // tie-breaking of the permutations
  int32_t ndcg_k = 10;           // for the reported train / valid NDCG
};

// Deterministic and thread-count independent. `valid` may be null (its
// NDCG is then NaN); `log` may be empty. history holds the log-likelihood
// plus prior (the maximized quantity) after every L-BFGS iteration.
absl::StatusOr<LinearModelResult> TrainLinearListMle(
    const Dataset& train, const Dataset* valid,
    const LinearListMleOptions& options,
    std::function<void(const std::string&)> log);

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_LINEAR_LISTMLE_H_
