#include "core/boosting/booster.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <omp.h>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/boosting/bin_sample.h"
#include "core/boosting/binned_dataset.h"
#include "core/boosting/sampling.h"
#include "core/boosting/tree_learner.h"

namespace plrank {
namespace {

absl::Status Validate(const BoosterConfig& config, const BoosterInputs& inputs) {
  if (inputs.train == nullptr || inputs.objective == nullptr) {
    return absl::InvalidArgumentError("booster needs a train set and an objective");
  }
  const Dataset& train = *inputs.train;
  if (train.features.size() != train.num_documents() * train.num_features) {
    return absl::InvalidArgumentError("train feature matrix has the wrong size");
  }
  if (absl::Status valid = ValidateBoosterConfig(config); !valid.ok()) {
    return valid;
  }
  const int32_t outputs = inputs.objective->num_outputs();
  if (outputs < 1) return absl::InvalidArgumentError("objective has no outputs");
  const size_t train_size = train.num_documents() * outputs;
  if (!inputs.init_train_scores.empty() &&
      inputs.init_train_scores.size() != train_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("init_train_scores has ", inputs.init_train_scores.size(),
                     " entries, expected ", train_size));
  }
  if (inputs.position_bias != nullptr) {
    if (outputs != 1) {
      return absl::InvalidArgumentError(
          "a learned position bias needs a single-output objective");
    }
    if (inputs.position_bias->positions.size() != train.num_documents()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "position bias: ", inputs.position_bias->positions.size(),
          " positions for ", train.num_documents(), " training documents"));
    }
    for (int32_t p : inputs.position_bias->positions) {
      if (p < 1) return absl::InvalidArgumentError("positions must be >= 1");
    }
    if (!(inputs.position_bias->regularization >= 0.0)) {
      return absl::InvalidArgumentError(
          "position bias regularization must be >= 0");
    }
  }
  if (inputs.valid != nullptr) {
    const Dataset& valid = *inputs.valid;
    if (valid.num_features != train.num_features ||
        valid.features.size() != valid.num_documents() * valid.num_features) {
      return absl::InvalidArgumentError("valid set does not match the train features");
    }
    const size_t valid_size = valid.num_documents() * outputs;
    if (!inputs.init_valid_scores.empty() &&
        inputs.init_valid_scores.size() != valid_size) {
      return absl::InvalidArgumentError("init_valid_scores has the wrong size");
    }
  }
  return absl::OkStatus();
}

std::vector<double> InitialScores(const std::vector<double>& given, size_t size) {
  return given.empty() ? std::vector<double>(size, 0.0) : given;
}

// scores[i] += leaf value of document i; documents without a leaf (out of the
// bag) are routed through the binned tree.
void AddTree(const GrownTree& grown, const BinnedDataset& binned,
             absl::Span<const int32_t> leaf_of_document, double* scores,
             int32_t num_threads) {
  const int64_t n = static_cast<int64_t>(binned.num_documents());
  const std::vector<double>& values = grown.tree.leaf_value;
#pragma omp parallel for schedule(static) num_threads(num_threads) if (n >= 16384)
  for (int64_t i = 0; i < n; ++i) {
    const int32_t leaf = leaf_of_document.empty() || leaf_of_document[i] < 0
                             ? grown.LeafOf(binned, i)
                             : leaf_of_document[i];
    scores[i] += values[leaf];
  }
}

// The largest of every rank's `mine` (collective: rank 0 gathers, then
// broadcasts), so shards that saw different largest positions size their
// reduced position sums alike.
int32_t MaxOverRanks(int32_t mine, Reducer& reducer) {
  const std::vector<std::string> all = reducer.Gather(std::to_string(mine));
  std::string largest = std::to_string(mine);
  if (reducer.rank() == 0) {
    int32_t value = mine;
    for (const std::string& text : all) {
      int32_t other = 0;
      if (absl::SimpleAtoi(text, &other)) value = std::max(value, other);
    }
    largest = std::to_string(value);
  }
  reducer.Broadcast(&largest);
  int32_t value = mine;
  return absl::SimpleAtoi(largest, &value) ? value : mine;
}

// One regularised Newton step of every position's bias from this
// iteration's gradients (PositionBiasConfig), summed over the ranks.
void StepPositionBias(const PositionBiasConfig& config,
                      absl::Span<const float> gradients,
                      absl::Span<const float> hessians, double learning_rate,
                      Reducer& reducer, std::vector<double>* bias) {
  const size_t m = bias->size();
  std::vector<double> sums(3 * m, 0.0);  // G, H, N per position
  for (size_t i = 0; i < config.positions.size(); ++i) {
    const size_t p = static_cast<size_t>(config.positions[i]) - 1;
    if (hessians[i] == 0.0f && gradients[i] == 0.0f) continue;  // no signal
    sums[p] += gradients[i];
    sums[m + p] += hessians[i];
    sums[2 * m + p] += 1.0;
  }
  reducer.Sum(absl::MakeSpan(sums));
  const double lambda = config.regularization;
  for (size_t p = 0; p < m; ++p) {
    const double count = sums[2 * m + p];
    if (count == 0.0) continue;
    (*bias)[p] -= learning_rate * (sums[p] + lambda * count * (*bias)[p]) /
                  (sums[m + p] + lambda * count + 1e-9);
  }
  const double anchor = (*bias)[0];
  for (double& b : *bias) b -= anchor;
}

// scores[i] += the leaf value of document i, routed through `tree` by its
// raw values: the same leaf as the binned routing (BinMapper's contract), so
// replaying a checkpoint's trees gives the scores boosting had.
void ReplayTree(const Tree& tree, const Dataset& data, double* scores,
                int32_t num_threads) {
  const int64_t n = static_cast<int64_t>(data.num_documents());
#pragma omp parallel for schedule(static) num_threads(num_threads) if (n >= 16384)
  for (int64_t i = 0; i < n; ++i) {
    int32_t node = tree.num_internal_nodes() == 0 ? ~0 : 0;
    while (node >= 0) {
      const float x = data.value(i, tree.split_feature[node]);
      const bool left = std::isnan(x) ? tree.default_left[node] != 0
                                      : x <= tree.threshold[node];
      node = left ? tree.left_child[node] : tree.right_child[node];
    }
    scores[i] += tree.leaf_value[~node];
  }
}

}  // namespace

absl::Status ValidateBoosterConfig(const BoosterConfig& config) {
  if (config.num_trees < 0) {
    return absl::InvalidArgumentError("num_trees must be >= 0");
  }
  if (config.num_leaves < 1) {
    return absl::InvalidArgumentError("num_leaves must be >= 1");
  }
  if (config.max_bin < 2 || config.max_bin > 255) {
    return absl::InvalidArgumentError("max_bin must be in [2, 255]");
  }
  if (config.num_threads < 0 || config.num_threads > kMaxBoosterThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be in [0, ", kMaxBoosterThreads,
                     "] (0 = all cores), got ", config.num_threads));
  }
  if (!(config.feature_fraction > 0.0 && config.feature_fraction <= 1.0)) {
    return absl::InvalidArgumentError("feature_fraction must be in (0, 1]");
  }
  if (!(config.bagging_fraction > 0.0 && config.bagging_fraction <= 1.0)) {
    return absl::InvalidArgumentError("bagging_fraction must be in (0, 1]");
  }
  // NaN fails every comparison: written so that it is refused, not let
  // through (a NaN lambda or minimum hessian would silently stop every split).
  if (!(config.learning_rate > 0.0 && std::isfinite(config.learning_rate))) {
    return absl::InvalidArgumentError("learning_rate must be finite and > 0");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, double>{"lambda_l2", config.lambda_l2},
        {"min_sum_hessian_in_leaf", config.min_sum_hessian_in_leaf},
        {"min_gain_to_split", config.min_gain_to_split}}) {
    if (!(value >= 0.0 && std::isfinite(value))) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be finite and >= 0, got ", value));
    }
  }
  if (config.top_k < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k must be >= 1, got ", config.top_k));
  }
  return absl::OkStatus();
}

absl::StatusOr<BoosterResult> TrainBooster(const BoosterConfig& config,
                                           const BoosterInputs& inputs) {
  if (absl::Status status = Validate(config, inputs); !status.ok()) return status;
  const absl::Time start = absl::Now();
  const Dataset& train = *inputs.train;
  Objective& objective = *inputs.objective;
  const int32_t threads =
      config.num_threads > 0 ? config.num_threads : omp_get_num_procs();
  const int32_t outputs = objective.num_outputs();
  const size_t n = train.num_documents();

  IdentityReducer identity;
  Reducer& reducer = inputs.reducer != nullptr ? *inputs.reducer : identity;
  const BinnedDataset train_bins = BinnedDataset::FromMappers(
      train,
      FitBinMappers(train, config.max_bin, kMaxBinningSample, reducer,
                    threads),
      threads);
  const bool track_valid = inputs.valid != nullptr && inputs.valid_evaluator;
  BinnedDataset valid_bins;
  std::vector<double> valid_scores;
  if (track_valid) {
    valid_bins = BinnedDataset::BuildWithMappers(*inputs.valid, train_bins, threads);
    valid_scores = InitialScores(inputs.init_valid_scores,
                                 inputs.valid->num_documents() * outputs);
  }
  std::vector<double> scores = InitialScores(inputs.init_train_scores, n * outputs);

  TreeLearnerConfig learner_config;
  learner_config.num_leaves = config.num_leaves;
  learner_config.num_threads = threads;
  learner_config.rules.newton = config.split_gain == SplitGain::kNewton;
  learner_config.rules.lambda_l2 = config.lambda_l2;
  learner_config.rules.min_data_in_leaf = std::max(config.min_data_in_leaf, 1);
  learner_config.rules.min_sum_hessian_in_leaf = config.min_sum_hessian_in_leaf;
  learner_config.max_depth = config.max_depth;
  learner_config.min_gain_to_split = config.min_gain_to_split;
  learner_config.reducer = inputs.reducer;
  learner_config.parallel_splits = config.parallel_splits;
  learner_config.top_k = config.top_k;
  TreeLearner learner(train_bins, learner_config);

  // Bags are drawn over the whole set's queries (the same on every rank);
  // this shard takes its stretch of them.
  double total_queries = static_cast<double>(train.num_queries());
  reducer.Sum(absl::MakeSpan(&total_queries, 1));
  const size_t first_query = static_cast<size_t>(train.query_index_base);
  const bool bagging = config.bagging_freq > 0 && config.bagging_fraction < 1.0;
  std::vector<uint8_t> query_in_bag;  // empty = every query
  std::vector<uint32_t> bag;
  DocumentsOfBag(train, query_in_bag, &bag);
  auto draw_bag = [&](int32_t iteration) {
    const std::vector<uint8_t> all = DrawQueryBag(
        static_cast<size_t>(total_queries), config.bagging_fraction,
        config.seed, iteration / config.bagging_freq);
    query_in_bag.assign(all.begin() + first_query,
                        all.begin() + first_query + train.num_queries());
    DocumentsOfBag(train, query_in_bag, &bag);
  };

  // Scores the objective sees: the trees' plus the position bias (gam).
  const PositionBiasConfig* const gam = inputs.position_bias;
  std::vector<double> bias;
  std::vector<double> biased_scores;
  if (gam != nullptr) {
    int32_t max_position = 1;
    for (int32_t p : gam->positions) max_position = std::max(max_position, p);
    bias.assign(MaxOverRanks(max_position, reducer), 0.0);
    biased_scores.resize(n);
  }
  auto objective_scores = [&]() -> absl::Span<const double> {
    if (gam == nullptr) return scores;
    for (size_t i = 0; i < n; ++i) {
      biased_scores[i] = scores[i] + bias[gam->positions[i] - 1];
    }
    return biased_scores;
  };

  std::vector<float> gradients(n * outputs), hessians(n * outputs);
  std::vector<int32_t> leaf_of_document(n * outputs);
  std::vector<GrownTree> grown(outputs);
  std::vector<double> leaf_values;
  const bool early_stopping = track_valid && config.early_stopping_rounds > 0;

  BoosterResult result;
  int32_t first_iteration = 0;
  if (inputs.resume != nullptr) {
    // The trees so far, added to the scores in the order boosting added
    // them (routing raw values agrees with the binned routing).
    result = *inputs.resume;
    first_iteration = static_cast<int32_t>(result.history.size());
    for (size_t t = 0; t < result.trees.size(); ++t) {
      const int32_t k = static_cast<int32_t>(t % outputs);
      ReplayTree(result.trees[t], train, scores.data() + k * n, threads);
      if (track_valid) {
        ReplayTree(result.trees[t], *inputs.valid,
                   valid_scores.data() + k * inputs.valid->num_documents(),
                   threads);
      }
    }
    objective.StartAtIteration(first_iteration);
    if (gam != nullptr && first_iteration > 0) {
      // The bias goes on from where the checkpointed run left it.
      if (result.position_bias.size() != bias.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "resume: the checkpoint holds a position bias of ",
            result.position_bias.size(), " positions, this run has ",
            bias.size(), "; delete the checkpoint to train from the start"));
      }
      bias = result.position_bias;
    }
  }
  result.num_features = train.num_features;
  double& best_metric = result.best_metric;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int32_t iteration = first_iteration; iteration < config.num_trees;
       ++iteration) {
    if (early_stopping && iteration > 0 &&
        iteration - result.best_iteration >= config.early_stopping_rounds) {
      break;  // a resumed run that had already stopped
    }
    if (bagging && (iteration % config.bagging_freq == 0 ||
                    iteration == first_iteration)) {
      draw_bag(iteration);
    }
    const absl::Span<const double> seen = objective_scores();
    objective.ComputeGradients(seen, query_in_bag, absl::MakeSpan(gradients),
                               absl::MakeSpan(hessians));
    // All trees of an iteration see the scores it started with.
    for (int32_t k = 0; k < outputs; ++k) {
      const absl::Span<const float> g =
          absl::MakeConstSpan(gradients).subspan(k * n, n);
      const absl::Span<const float> h =
          absl::MakeConstSpan(hessians).subspan(k * n, n);
      const std::vector<int32_t> features = DrawFeatureSubset(
          train_bins.num_features(), config.feature_fraction, config.seed,
          static_cast<uint64_t>(iteration) * outputs + k);
      learner.Grow(bag, g, h, features, &grown[k]);
      const absl::Span<int32_t> leaves =
          absl::MakeSpan(leaf_of_document).subspan(k * n, n);
      std::fill(leaves.begin(), leaves.end(), -1);
      learner.AssignBagLeaves(leaves);

      Tree& tree = grown[k].tree;
      LeafAssignment assignment;
      assignment.num_leaves = tree.num_leaves();
      assignment.output = k;
      assignment.leaf_of_document = leaves;
      assignment.gradients = g;
      assignment.hessians = h;
      assignment.lambda_l2 = config.lambda_l2;
      leaf_values.assign(tree.num_leaves(), 0.0);
      std::vector<double> statistics =
          objective.LeafStatistics(seen, assignment);
      reducer.Sum(absl::MakeSpan(statistics));
      objective.LeafValuesFromStatistics(statistics, assignment,
                                         absl::MakeSpan(leaf_values));
      for (int32_t l = 0; l < tree.num_leaves(); ++l) {
        tree.leaf_value[l] = std::isfinite(leaf_values[l])
                                 ? config.learning_rate * leaf_values[l]
                                 : 0.0;
      }
    }
    for (int32_t k = 0; k < outputs; ++k) {
      AddTree(grown[k], train_bins,
              absl::MakeConstSpan(leaf_of_document).subspan(k * n, n),
              scores.data() + k * n, threads);
      if (track_valid) {
        AddTree(grown[k], valid_bins, {},
                valid_scores.data() + k * inputs.valid->num_documents(), threads);
      }
      result.trees.push_back(std::move(grown[k].tree));
    }
    if (gam != nullptr) {
      StepPositionBias(*gam, gradients, hessians, config.learning_rate,
                       reducer, &bias);
      result.position_bias = bias;  // part of the state a checkpoint keeps
    }

    IterationReport report;
    report.iteration = iteration + 1;
    report.num_trees = config.num_trees;
    // The whole set's loss: each shard's, summed in rank order.
    report.train_loss = objective.Loss(objective_scores());
    reducer.Sum(absl::MakeSpan(&report.train_loss, 1));
    report.train_metric = inputs.train_evaluator ? inputs.train_evaluator(scores) : nan;
    report.valid_metric = track_valid ? inputs.valid_evaluator(valid_scores) : nan;
    report.elapsed_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    result.history.push_back(report);
    if (inputs.on_iteration) inputs.on_iteration(report);
    const bool stop = inputs.stop_after && inputs.stop_after(report);

    if (report.valid_metric > best_metric) {
      best_metric = report.valid_metric;
      result.best_iteration = iteration + 1;
    }
    if (inputs.on_state) inputs.on_state(result);
    if (early_stopping &&
        iteration + 1 - result.best_iteration >= config.early_stopping_rounds) {
      break;
    }
    if (stop) break;
  }
  // Without early stopping, or when the metric never improved (NaN), every
  // iteration is kept.
  if (!early_stopping || result.best_iteration == 0) {
    result.best_iteration = static_cast<int32_t>(result.history.size());
  }
  result.trees.resize(static_cast<size_t>(result.best_iteration) * outputs);
  result.position_bias = std::move(bias);
  return result;
}

}  // namespace plrank
