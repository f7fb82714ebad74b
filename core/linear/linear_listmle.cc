#include "core/linear/linear_listmle.h"

#include <lbfgs.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "core/linear/feature_scaling.h"
#include "core/linear/lbfgs_status.h"
#include "core/linear/listmle_objective.h"

namespace plrank {
namespace {

struct LbfgsState {
  ListMleObjective* objective;
  int32_t num_features;
  std::vector<double>* history;
  std::function<void(const std::string&)>* log;
  int32_t iterations = 0;
};

lbfgsfloatval_t EvaluateCallback(void* instance, const lbfgsfloatval_t* x,
                                 lbfgsfloatval_t* g, const int n,
                                 const lbfgsfloatval_t /*step*/) {
  auto* state = static_cast<LbfgsState*>(instance);
  return state->objective->Evaluate(absl::MakeConstSpan(x, n),
                                    absl::MakeSpan(g, n));
}

int ProgressCallback(void* instance, const lbfgsfloatval_t* /*x*/,
                     const lbfgsfloatval_t* /*g*/, const lbfgsfloatval_t fx,
                     const lbfgsfloatval_t /*xnorm*/,
                     const lbfgsfloatval_t gnorm,
                     const lbfgsfloatval_t /*step*/, int /*n*/, int k,
                     int /*ls*/) {
  auto* state = static_cast<LbfgsState*>(instance);
  state->iterations = k;
  state->history->push_back(-fx);
  if (*state->log && (k <= 1 || k % 10 == 0)) {
    (*state->log)(absl::StrFormat(
        "listmle iteration %d: log-likelihood + prior %.6f, |gradient| %.3g", k,
        -fx, gnorm));
  }
  return 0;
}

struct LbfgsDeleter {
  void operator()(lbfgsfloatval_t* p) const { lbfgs_free(p); }
};

}  // namespace

absl::StatusOr<LinearModelResult> TrainLinearListMle(
    const Dataset& train, const Dataset* valid,
    const LinearListMleOptions& options,
    std::function<void(const std::string&)> log) {
  if (options.topk < 0 || options.ndcg_k < 0) {
    return absl::InvalidArgumentError("listmle: topk and ndcg_k must be >= 0");
  }
  if (!(options.l2 >= 0.0) || !std::isfinite(options.l2)) {
    return absl::InvalidArgumentError("listmle: l2 must be finite and >= 0");
  }
  if (options.max_iterations < 1) {
    return absl::InvalidArgumentError("listmle: max_iterations must be >= 1");
  }
  if (train.num_queries() == 0) {
    return absl::InvalidArgumentError("listmle: the training set has no query");
  }
  const FeatureScaling scaling = ComputeFeatureScaling(train);
  ListMleObjective objective(train, scaling, options.topk, options.l2,
                             options.seed);
  LinearModelResult result;
  result.weights.assign(train.num_features, 0.0);
  if (scaling.num_active > 0 && objective.num_informative_queries() > 0) {
    const int32_t m = train.num_features;
    std::unique_ptr<lbfgsfloatval_t, LbfgsDeleter> x(lbfgs_malloc(m));
    if (x == nullptr)
      return absl::ResourceExhaustedError("listmle: lbfgs_malloc");
    std::fill(x.get(), x.get() + m, 0.0);
    lbfgs_parameter_t parameters;
    lbfgs_parameter_init(&parameters);
    parameters.max_iterations = options.max_iterations;
    parameters.epsilon = 1e-6;  // |g| / max(1, |x|)
    parameters.past = 5;        // or: objective gained < 1e-10 (relative)
    parameters.delta = 1e-10;   // over the last 5 iterations
    LbfgsState state{&objective, m, &result.history, &log};
    lbfgsfloatval_t fx = 0.0;
    const int status = lbfgs(m, x.get(), &fx, EvaluateCallback,
                             ProgressCallback, &state, &parameters);
    // liblbfgs leaves x at the last accepted point on line-search failures,
    // so any status still leaves a usable model; only a non-finite one is not.
    for (int32_t f = 0; f < m; ++f) {
      if (!std::isfinite(x.get()[f])) {
        return absl::InternalError(absl::StrCat(
            "listmle: L-BFGS diverged (", LbfgsStatusText(status), ")"));
      }
    }
    if (log) {
      log(absl::StrFormat(
          "listmle: L-BFGS stopped after %d iterations: %s; log-likelihood "
          "+ prior %.6f over %d queries",
          state.iterations, LbfgsStatusText(status), -fx,
          objective.num_informative_queries()));
    }
    result.weights = scaling.FoldToRaw(absl::MakeConstSpan(x.get(), m));
    result.iterations = state.iterations;
  }
  result.train_ndcg =
      MeanNdcg(train, ScoreLinear(train, result.weights), options.ndcg_k);
  result.valid_ndcg =
      valid == nullptr ? std::numeric_limits<double>::quiet_NaN()
                       : MeanNdcg(*valid, ScoreLinear(*valid, result.weights),
                                  options.ndcg_k);
  return result;
}

}  // namespace plrank
