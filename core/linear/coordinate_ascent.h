#ifndef PLRANK_CORE_LINEAR_COORDINATE_ASCENT_H_
#define PLRANK_CORE_LINEAR_COORDINATE_ASCENT_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"
#include "core/linear/linear_model.h"

namespace plrank {

// Coordinate ascent on a linear ranker, directly maximizing the mean
// training NDCG@k (Metzler & Croft 2007).
//
// The search runs over weights v of standardized features (see
// FeatureScaling): one round visits every non-constant feature once, in an
// order reshuffled each round from `seed`, and line-searches its weight over
// the steps delta = +-g * scale for g in {0.001, 0.003, ..., 3, 10}, with
// scale = max(|v_f|, ||v||_1 / active features), plus the step that zeroes
// v_f. The best step is taken only if it raises the training NDCG, so the
// objective never decreases (history holds it after every round). Rounds stop
// when one gains at most `tolerance` or after `max_rounds`.
// Restart 0 starts from equal weights, restart r > 0 from weights drawn
// uniformly in [-1, 1] (stream r of `seed`); the restart with the highest
// training NDCG wins (the earliest on a tie). Only the direction of v
// matters for ranking and the steps are relative to ||v||_1, so the search
// is invariant to the scale of v; the returned weights are v normalized to
// ||v||_1 = 1 and then folded back to raw features (w_f = v_f / stddev_f).
// Queries whose labels are all equal have the same NDCG under any weights
// and are left out of the search (not out of the reported means).
struct CoordinateAscentOptions {
  int32_t ndcg_k = 10;  // 0 = whole list
  int32_t restarts = 3;
  int32_t max_rounds = 20;
  double tolerance = 1e-5;
  uint64_t seed = 1;
};

// Thread-count independent: every per-query NDCG is computed on its own and
// the sums run in query order. `valid` may be null; `log` may be empty.
absl::StatusOr<LinearModelResult> TrainCoordinateAscent(
    const Dataset& train, const Dataset* valid,
    const CoordinateAscentOptions& options,
    std::function<void(const std::string&)> log);

}  // namespace plrank

#endif  // PLRANK_CORE_LINEAR_COORDINATE_ASCENT_H_
