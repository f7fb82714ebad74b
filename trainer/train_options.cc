// The flags of plrank-train, declared from the parameter table
// (trainer/params/train_params.inc), and how a set of parameter values
// becomes a TrainJob. The command line and the Python package fill the same
// TrainParamValues, so names, defaults and checks cannot drift apart.
#include "trainer/train_options.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_flags.h"
#include "common/flag_parsing.h"
#include "common/program.h"
#include "core/data/utf8.h"
#include "core/objectives/objective.h"
#include "core/objectives/registry.h"
#include "core/pipeline/linear_trainers.h"
#include "trainer/params/train_params.h"

// One flag per training parameter, with the table's type, default and help.
#define PLRANK_TRAIN_PARAM(type, name, default_value, ...) \
  ABSL_FLAG(type, name, default_value, plrank::cli::TrainParamFlagHelp(#name));
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM

namespace plrank::cli {
namespace {

// The Plackett-Luce settings of `values`, or with pl_paper the paper's (the
// preset fixes them: giving one of them too is an error). `recorded`
// receives what the artifact records for them: what trains the model.
absl::Status PlackettLuceFromValues(const TrainParamValues& values,
                                    plrank::ObjectiveOptions& objective,
                                    TrainParamValues& recorded) {
  objective.pl_topk = values.pl_topk;
  objective.pl_permutations = values.pl_permutations;
  objective.pl_skip_tied_queries = values.pl_skip_tied_queries;
  objective.pl_stop_at_lowest_label = values.pl_stop_at_lowest_label;
  objective.pl_ties = values.pl_ties;
  objective.pl_weighting = values.pl_weighting;
  objective.pl_normalize_queries = values.pl_normalize_queries;
  objective.pl_diagonal_leaf_step = values.pl_diagonal_leaf_step;
  objective.pl_newton_damping = values.pl_newton_damping;
  objective.pl_max_leaf_step = values.pl_max_leaf_step;
  if (!values.pl_paper) return absl::OkStatus();
  for (const char* fixed :
       {"pl_topk", "pl_ties", "pl_stop_at_lowest_label", "pl_weighting",
        "pl_normalize_queries", "pl_diagonal_leaf_step", "pl_newton_damping",
        "pl_max_leaf_step", "pl_skip_tied_queries"}) {
    if (values.WasGiven(fixed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pl_paper fixes --", fixed,
          "; drop one of them (or spell out the paper's flags and change "
          "that one)"));
    }
  }
  objective = plrank::PaperObjectiveOptions(objective);
  recorded.pl_topk = objective.pl_topk;
  recorded.pl_ties = objective.pl_ties;
  recorded.pl_stop_at_lowest_label = objective.pl_stop_at_lowest_label;
  recorded.pl_weighting = objective.pl_weighting;
  recorded.pl_normalize_queries = objective.pl_normalize_queries;
  recorded.pl_diagonal_leaf_step = objective.pl_diagonal_leaf_step;
  recorded.pl_newton_damping = objective.pl_newton_damping;
  recorded.pl_max_leaf_step = objective.pl_max_leaf_step;
  recorded.pl_skip_tied_queries = objective.pl_skip_tied_queries;
  return absl::OkStatus();
}

// --tree_learner: PLRank's names and LightGBM's (serial is what a single
// process does anyway; data-parallel is its distributed form).
absl::StatusOr<plrank::ParallelSplits> ParseTreeLearner(
    const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "data" || lower == "data_parallel" || lower == "serial") {
    return plrank::ParallelSplits::kData;
  }
  if (lower == "voting" || lower == "voting_parallel") {
    return plrank::ParallelSplits::kVoting;
  }
  if (lower == "feature" || lower == "feature_parallel") {
    return absl::InvalidArgumentError(
        "--tree_learner=" + name +
        ": feature-parallel is not implemented (each rank holds a share of "
        "the documents, not of the features); use data or voting");
  }
  return absl::InvalidArgumentError("--tree_learner: '" + name +
                                    "' is not one of data, voting");
}

}  // namespace

std::vector<std::string> IgnoredTrainFlags(const std::string& objective,
                                           const WasGivenFn& was_given) {
  // A linear ranker ignores the booster's and the tree losses' flags and the
  // other linear rankers'; a tree objective ignores the linear rankers' own.
  const plrank::LinearTrainer* linear = plrank::FindLinearTrainer(objective);
  std::vector<std::string> candidates;
  for (const TrainParam& param : TrainParams()) {
    if (linear != nullptr && (param.group == TrainParamGroup::kBooster ||
                              param.group == TrainParamGroup::kDistributed ||
                              param.group == TrainParamGroup::kTreeLoss)) {
      candidates.push_back(param.name);
    }
  }
  for (const plrank::LinearTrainer& trainer : plrank::LinearTrainers()) {
    if (&trainer == linear) continue;
    std::vector<std::string> flags;
    if (linear != nullptr) flags = trainer.shared_flags;
    flags.insert(flags.end(), trainer.own_flags.begin(),
                 trainer.own_flags.end());
    for (const std::string& flag : flags) {
      const bool used = linear != nullptr &&
                        (absl::c_linear_search(linear->own_flags, flag) ||
                         absl::c_linear_search(linear->shared_flags, flag));
      if (!used) candidates.push_back(flag);
    }
  }
  std::vector<std::string> ignored;
  for (const std::string& flag : candidates) {
    if (was_given(flag)) ignored.push_back("--" + flag);
  }
  return ignored;
}

absl::StatusOr<plrank::TrainJob> TrainJobFromValues(
    const TrainParamValues& values, const ReadOptions& read_options,
    const MetricOptions& metric_options) {
  plrank::TrainJob job;
  job.train_path = values.train;
  job.valid_path = values.valid;
  job.init_model_path = values.init_model;
  job.model_out = values.model_out;
  job.history_out = values.history_out;
  job.feature_names_path = values.feature_names_file;
  job.read_options = read_options;
  job.dataset_cache = values.dataset_cache;
  job.dataset_cache_dir = values.dataset_cache_dir;
  job.checkpoint_dir = values.checkpoint_dir;
  job.checkpoint_every = values.checkpoint_every;
  job.resume = values.resume;
  if (job.checkpoint_every < 1) {
    return absl::InvalidArgumentError("--checkpoint_every must be >= 1");
  }
  if (job.resume && job.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("--resume needs --checkpoint_dir");
  }
  job.metric_options = metric_options;
  absl::StatusOr<std::vector<int32_t>> eval_at =
      ParseCutoffs(values.eval_at);
  if (!eval_at.ok()) return eval_at.status();
  job.eval_at = *eval_at;

  job.objective.name = values.objective;
  if (absl::Status known = plrank::CheckObjectiveName(job.objective.name);
      !known.ok()) {
    return known;
  }
  // What the artifact records: the values, but for what a preset fixed.
  TrainParamValues recorded = values;
  absl::Status pl_status =
      PlackettLuceFromValues(values, job.objective, recorded);
  if (!pl_status.ok()) return pl_status;
  // l-ListMLE shares --pl_topk but keeps the paper's K = 10 unless asked.
  if (values.WasGiven("pl_topk")) job.listmle.topk = values.pl_topk;

  job.objective.lambdamart_sigma = values.lambdamart_sigma;
  job.objective.lambdamart_truncation = values.lambdamart_truncation;
  job.coordinate_ascent.restarts = values.ca_restarts;
  job.coordinate_ascent.max_rounds = values.ca_max_rounds;
  job.listmle.l2 = values.listmle_l2;
  job.listmle.max_iterations = values.listmle_max_iterations;

  plrank::BoosterConfig& booster = job.booster;
  booster.num_trees = values.trees;
  booster.num_leaves = values.leaves;
  booster.learning_rate = values.learning_rate;
  // Tuned for PLRank's own settings, not for the paper's.
  job.auto_learning_rate = plrank::TraitsOf(job.objective.name)
                               .auto_learning_rate &&
                           !values.pl_paper &&
                           !values.WasGiven("learning_rate");
  booster.min_data_in_leaf = values.min_data_in_leaf;
  booster.min_sum_hessian_in_leaf = values.min_sum_hessian_in_leaf;
  booster.lambda_l2 = values.lambda_l2;
  booster.max_depth = values.max_depth;
  booster.min_gain_to_split = values.min_gain_to_split;
  booster.feature_fraction = values.feature_fraction;
  booster.bagging_fraction = values.bagging_fraction;
  booster.bagging_freq = values.bagging_freq;
  booster.max_bin = values.max_bin;
  booster.num_threads = values.num_threads;
  absl::StatusOr<plrank::ParallelSplits> parallel_splits =
      ParseTreeLearner(values.tree_learner);
  if (!parallel_splits.ok()) return parallel_splits.status();
  booster.parallel_splits = *parallel_splits;
  booster.top_k = values.top_k;
  booster.seed = values.seed;
  booster.early_stopping_rounds = values.early_stopping_rounds;
  std::string split_gain = values.split_gain;
  if (split_gain == "auto") {
    // The objective declares the gain it was tuned with; linear rankers grow
    // no trees, so any value is moot for them.
    absl::StatusOr<std::unique_ptr<plrank::Objective>> objective =
        plrank::MakeObjective(job.objective);
    split_gain =
        objective.ok() && (*objective)->prefers_newton_split_gain() ? "newton"
                                                                    : "ls";
  }
  if (split_gain == "ls") {
    booster.split_gain = plrank::SplitGain::kLeastSquares;
  } else if (split_gain == "newton") {
    booster.split_gain = plrank::SplitGain::kNewton;
  } else {
    return absl::InvalidArgumentError(
        "--split_gain: '" + split_gain + "' is not one of auto, ls, newton");
  }
  if (booster.num_trees <= 0) return absl::InvalidArgumentError("--trees must be > 0");
  if (booster.num_leaves < 2)
    return absl::InvalidArgumentError("--leaves must be >= 2");
  // The booster's own checks, before any data is read; its messages name
  // the settings as the flags do.
  if (absl::Status valid = plrank::ValidateBoosterConfig(booster);
      !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", valid.message()));
  }
  if (booster.early_stopping_rounds > 0 && job.valid_path.empty()) {
    return absl::InvalidArgumentError("--early_stopping_rounds needs --valid");
  }
  job.log_period = values.quiet ? 0 : values.log_period;

  job.side_files.weight_file = values.weight_file;
  job.side_files.position_file = values.position_file;
  job.side_files.propensity_file = values.propensity_file;
  job.side_files.marginals_file = values.marginals_file;
  absl::StatusOr<plrank::PositionDebias> debias =
      plrank::ParsePositionDebias(values.position_debias);
  if (!debias.ok()) return debias.status();
  job.clicks.position_debias = *debias;
  absl::StatusOr<std::vector<double>> propensities =
      plrank::ParsePositionPropensities(values.position_propensities);
  if (!propensities.ok()) return propensities.status();
  job.clicks.position_propensities = *std::move(propensities);
  job.clicks.max_ips_weight = values.max_ips_weight;
  if (!(job.clicks.max_ips_weight >= 1.0)) {
    return absl::InvalidArgumentError("--max_ips_weight must be >= 1");
  }
  job.clicks.position_bias_regularization =
      values.position_bias_regularization;
  if (!(job.clicks.position_bias_regularization >= 0.0)) {
    return absl::InvalidArgumentError(
        "--position_bias_regularization must be >= 0");
  }
  if (job.clicks.position_debias == plrank::PositionDebias::kGam &&
      !plrank::TraitsOf(job.objective.name).position_bias) {
    return absl::InvalidArgumentError(
        "--position_debias=gam is for --objective=plrank or lambdamart");
  }

  // The artifact records every parameter, as given or defaulted; its text
  // fields hold UTF-8 only, so a value that is not (a Latin-1 file name,
  // say) is recorded C-escaped rather than failing the save. The clicks
  // and distributed split parameters are recorded when set, so that models trained without them
  // keep the artifact they had before the parameters existed. Where and how
  // often checkpoints go, and whether this run resumed, do not shape the
  // model: a resumed run's artifact equals an uninterrupted run's.
  for (const auto& [name, value] : TrainParamTexts(recorded)) {
    const TrainParam& param = *FindTrainParam(name);
    if (param.group == TrainParamGroup::kCheckpoint) continue;
    if ((param.group == TrainParamGroup::kClicks ||
         param.group == TrainParamGroup::kDistributed) &&
        value == param.default_value) {
      continue;
    }
    job.parameters[name] =
        plrank::IsValidUtf8(value) ? value : absl::CHexEscape(value);
  }
  // What 'auto' resolved to, so the artifact says which gain was used.
  job.parameters["split_gain"] = split_gain;
  return job;
}

TrainParamValues TrainParamValuesFromFlags(const WasGivenFn& was_given) {
  TrainParamValues values;
#define PLRANK_TRAIN_PARAM(type, name, ...)  \
  values.name = absl::GetFlag(FLAGS_##name); \
  if (was_given(#name)) values.given.insert(#name);
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
  return values;
}

absl::StatusOr<plrank::TrainJob> TrainJobFromFlags(const WasGivenFn& was_given) {
  absl::StatusOr<ReadOptions> read = ReadOptionsFromFlags();
  if (!read.ok()) return read.status();
  absl::StatusOr<MetricOptions> metrics = MetricOptionsFromFlags();
  if (!metrics.ok()) return metrics.status();
  return TrainJobFromValues(TrainParamValuesFromFlags(was_given), *read,
                            *metrics);
}

std::vector<std::string> TrainFlagNames() {
  std::vector<std::string> names;
  for (const TrainParam& param : TrainParams()) names.push_back(param.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace plrank::cli

namespace plrank::cli {

std::string ParameterMessage(absl::string_view message) {
  const std::vector<std::string> known = TrainFlagNames();
  std::string out;
  size_t at = 0;
  while (at < message.size()) {
    const size_t dashes = message.find("--", at);
    if (dashes == absl::string_view::npos) break;
    size_t end = dashes + 2;
    while (end < message.size() &&
           (absl::ascii_isalnum(message[end]) || message[end] == '_')) {
      ++end;
    }
    const absl::string_view name = message.substr(dashes + 2, end - dashes - 2);
    absl::StrAppend(&out, message.substr(at, dashes - at));
    if (!absl::c_linear_search(known, name)) {
      absl::StrAppend(&out, "--");  // not a flag name: leave it
    }
    absl::StrAppend(&out, name);
    at = end;
  }
  absl::StrAppend(&out, message.substr(std::min(at, message.size())));
  return out;
}

absl::StatusOr<TrainJob> TrainJobFromParams(
    const std::vector<std::pair<std::string, std::string>>& params,
    std::vector<std::string>* ignored) {
  TrainParamValues values;
  for (const auto& [name, value] : params) {
    if (FindTrainParam(name) == nullptr) {
      const std::vector<std::string> known = TrainFlagNames();
      if (std::string hint = LightGbmHint(name, known, /*flag_prefix=*/"");
          !hint.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown parameter '", name, "': ", hint));
      }
      if (std::string near = NearestName(name, known); !near.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown parameter '", name, "'; did you mean '", near, "'?"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown parameter '", name, "'"));
    }
    if (absl::Status set = SetTrainParam(name, value, &values); !set.ok()) {
      return set;
    }
  }
  // The data and metric flags are not parameters: their defaults.
  absl::StatusOr<TrainJob> job =
      TrainJobFromValues(values, ReadOptions{}, MetricOptions{});
  if (!job.ok()) {
    return absl::Status(job.status().code(),
                        ParameterMessage(job.status().message()));
  }
  if (ignored != nullptr) {
    *ignored = IgnoredTrainFlags(
        job->objective.name,
        [&values](absl::string_view name) { return values.WasGiven(name); });
  }
  return job;
}

}  // namespace plrank::cli
