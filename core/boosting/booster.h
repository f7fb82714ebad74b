#ifndef PLRANK_CORE_BOOSTING_BOOSTER_H_
#define PLRANK_CORE_BOOSTING_BOOSTER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/boosting/reducer.h"
#include "core/boosting/tree_learner.h"
#include "core/model/ensemble.h"
#include "core/objectives/objective.h"

namespace plrank {

enum class SplitGain {
  kLeastSquares,  // the paper: fit the pseudo-response, every document weight 1
  kNewton,        // second order: (sum g)^2 / (sum h + lambda), LightGBM-style
};

struct BoosterConfig {
  int32_t num_trees = 100;
  int32_t num_leaves = 31;
  double learning_rate = 0.1;
  int32_t min_data_in_leaf = 20;
  double min_sum_hessian_in_leaf = 1e-3;
  double lambda_l2 = 0.0;
  int32_t max_depth = 0;           // deepest leaf (root = 0); <= 0: no limit
  double min_gain_to_split = 0.0;  // a split must gain more than this
  double feature_fraction = 1.0;   // per tree
  double bagging_fraction = 1.0;   // fraction of queries per bag
  int32_t bagging_freq = 0;        // redraw the bag every k iterations; 0 = off
  int32_t max_bin = 255;           // <= 255
  SplitGain split_gain = SplitGain::kLeastSquares;
  int32_t early_stopping_rounds = 0;  // 0 = off; needs a validation evaluator
  uint64_t seed = 1;
  int32_t num_threads = 0;  // 0 = all cores; at most kMaxBoosterThreads
  // Distributed runs only: how splits are found over the ranks
  // (TreeLearnerConfig); top_k >= 1.
  ParallelSplits parallel_splits = ParallelSplits::kData;
  int32_t top_k = 20;
};

// More threads than any machine we run on has cores; far more (10^5) and
// the OpenMP runtime aborts or crashes creating them.
inline constexpr int32_t kMaxBoosterThreads = 1024;

// The checks of `config` alone (TrainBooster makes them too): fractions in
// (0, 1], max_bin in [2, 255], num_threads in [0, kMaxBoosterThreads], a
// finite positive learning rate, finite
// non-negative lambda_l2, min_sum_hessian_in_leaf and min_gain_to_split
// (NaN refused). Messages start with the setting's name.
absl::Status ValidateBoosterConfig(const BoosterConfig& config);

// What the booster reports after each iteration (for progress lines).
struct IterationReport {
  int32_t iteration = 0;   // 1-based
  int32_t num_trees = 0;   // configured total
  double train_loss = 0.0;
  double train_metric = 0.0;   // from the train evaluator, NaN if none
  double valid_metric = 0.0;   // from the valid evaluator, NaN if none
  double elapsed_seconds = 0.0;
};

// Scores -> a metric where higher is better (e.g. mean NDCG@10). Scores use
// the objective's layout (num_outputs blocks); evaluators apply the score
// transform themselves.
using Evaluator = std::function<double(absl::Span<const double> scores)>;

// A per-position additive bias learned jointly with the trees
// (--position_debias=gam, as LightGBM 4.1's lambdarank position bias): the
// objective sees score_i + b[positions[i] - 1]; after each iteration's
// gradients, every b_p takes one regularised Newton step
//   b_p -= learning_rate (G_p + lambda N_p b_p) / (H_p + lambda N_p + 1e-9),
// G_p, H_p the summed gradients and hessians of the documents shown at p
// and N_p their count, then b is shifted so that b_1 = 0 (ranking losses
// see only differences). The trees (the saved model) never see b.
struct PositionBiasConfig {
  absl::Span<const int32_t> positions;  // per training document, >= 1
  double regularization = 0.0;          // lambda
};
struct BoosterResult;

struct BoosterInputs {
  const Dataset* train = nullptr;
  const Dataset* valid = nullptr;        // optional
  Objective* objective = nullptr;        // already Init()-ed on train
  // Initial scores (background model), layout as the objective's; empty = 0.
  std::vector<double> init_train_scores;
  std::vector<double> init_valid_scores;
  Evaluator train_evaluator;             // optional, for progress
  Evaluator valid_evaluator;             // optional; drives early stopping
  std::function<void(const IterationReport&)> on_iteration;  // optional
  // Optional, called after on_iteration: true ends training after this
  // iteration (every iteration run is kept unless early stopping picks an
  // earlier best). The Python package's per-iteration callbacks.
  std::function<bool(const IterationReport&)> stop_after;
  // Distributed training (data-parallel by query): every rank passes its
  // own shard of the training and validation sets (Dataset::
  // query_index_base places it in the whole set; bin boundaries come from a
  // sample gathered over the ranks, FitBinMappers) and its Reducer; the
  // reducer sums gradients' histograms, leaf statistics and the training
  // loss. Evaluators see this rank's scores and must return the metric of
  // the whole set (reduced) so every rank takes the same early-stopping
  // decision. Null (or one rank): single-process.
  Reducer* reducer = nullptr;
  // Optional: learn a position bias jointly (single-output objectives).
  const PositionBiasConfig* position_bias = nullptr;
  // Resuming a checkpointed run: the result of its first
  // resume->history.size() iterations (trees of every iteration, not cut to
  // the best). Their trees are replayed into the scores, and boosting goes
  // on from there with the same bags, feature subsets and objective state,
  // so the trees are bit-identical to an uninterrupted run's. Null: start.
  const BoosterResult* resume = nullptr;
  // Called after every iteration with the state so far (all trees grown,
  // history, best iteration and metric), e.g. to write a checkpoint.
  std::function<void(const BoosterResult&)> on_state;
};

struct BoosterResult {
  // Trees only (learning rate folded into leaf values); the caller fills in
  // the rest of the Ensemble (objective name, parameters, base model trees).
  std::vector<Tree> trees;
  std::vector<IterationReport> history;
  int32_t best_iteration = 0;   // 1-based; == history.size() w/o early stop
  int32_t num_features = 0;
  // With inputs.position_bias: b_p for p = 1..max position (b_1 = 0).
  std::vector<double> position_bias;
  // The best valid metric so far (-inf before any), for resuming.
  double best_metric = -std::numeric_limits<double>::infinity();
};

// Histogram gradient boosting with leaf-wise (best-first) trees.
// Deterministic for a given config.seed whatever config.num_threads.
absl::StatusOr<BoosterResult> TrainBooster(const BoosterConfig& config,
                                           const BoosterInputs& inputs);

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_BOOSTER_H_
