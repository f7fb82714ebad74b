// The flags of plrank-train and how they become a TrainJob. The Python
// package (python/) sets the same flags from its params, so names, defaults
// and checks are those of the command line.
#include "trainer/train_options.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/data_flags.h"
#include "common/flag_parsing.h"
#include "common/program.h"
#include "core/data/utf8.h"
#include "core/objectives/objective.h"
#include "core/objectives/registry.h"
#include "core/pipeline/linear_trainers.h"

ABSL_FLAG(std::string, train, "", "Training data (LETOR / SVMlight ranking text).");
ABSL_FLAG(std::string, valid, "", "Validation data for progress and early stopping.");
ABSL_FLAG(bool, dataset_cache, false,
          "Read --train and --valid through binary caches (<file>.plrank.bin, "
          "or in --dataset_cache_dir): the first run parses and writes them, "
          "later runs on unchanged files (checked by a checksum of the text) "
          "skip parsing. A stale or damaged cache is rebuilt.");
ABSL_FLAG(std::string, dataset_cache_dir, "",
          "Directory for --dataset_cache files (default: beside each data "
          "file).");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Write checkpoints of the run here (<dir>/checkpoint.plrank, "
          "atomically; rank 0 of a distributed run): the trees so far and "
          "what --resume needs.");
ABSL_FLAG(int32_t, checkpoint_every, 10,
          "With --checkpoint_dir: a checkpoint every this many iterations.");
ABSL_FLAG(bool, resume, false,
          "With --checkpoint_dir: go on from its checkpoint when there is one "
          "(same flags, data and rank count; trees and scores bit-identical "
          "to an uninterrupted run's), else start from the beginning.");
// The list comes from the objective registry, so it cannot drift from what
// --objective accepts.
ABSL_FLAG(std::string, objective, "plrank",
          absl::StrCat("Loss, one of: ",
                       absl::StrJoin(plrank::KnownObjectives(), ", "),
                       " (", absl::StrJoin(plrank::LinearObjectives(), ", "),
                       " train linear models)."));
ABSL_FLAG(int32_t, trees, 100, "Boosting iterations.");
ABSL_FLAG(int32_t, leaves, 31, "Leaves per tree (leaf-wise growth).");
ABSL_FLAG(double, learning_rate, 0.1,
          "Shrinkage of every tree. Not given, --objective=plrank (without "
          "--pl_paper) picks it "
          "from the data (auto): 0.1 below 50,000 training documents, else "
          "20 / --trees within [0.1, 0.2] (0.2 up to 100 trees, 0.1 from "
          "200); every other objective uses 0.1.");
// PLRank's defaults come from ObjectiveOptions (chosen by the quality
// benchmark); --pl_paper switches to the paper's settings.
ABSL_FLAG(bool, pl_paper, false,
          "PLRank exactly as in the paper: --pl_ties=permutation --pl_topk=10 "
          "--nopl_stop_at_lowest_label --pl_weighting=uniform "
          "--pl_newton_damping=1e-6 --pl_max_leaf_step=100 (--pl_permutations "
          "still sets obj=m). Cannot be combined with those flags.");
ABSL_FLAG(int32_t, pl_topk, plrank::ObjectiveOptions().pl_topk,
          "PLRank: K, the picks of the Plackett-Luce likelihood per query "
          "(0 = the whole ranking). l-ListMLE: its K (default 10, the "
          "paper's, when this flag is not given).");
ABSL_FLAG(int32_t, pl_permutations, 1,
          "PLRank with --pl_ties=permutation: sampled tie-breaks per query "
          "(obj=m).");
ABSL_FLAG(bool, pl_skip_tied_queries, false,
          "PLRank: ignore queries whose labels are all equal.");
ABSL_FLAG(bool, pl_stop_at_lowest_label,
          plrank::ObjectiveOptions().pl_stop_at_lowest_label,
          "PLRank: no picks among the documents of the query's lowest label "
          "(they only choose among equals); --nopl_stop_at_lowest_label keeps "
          "them, as the paper does.");
ABSL_FLAG(std::string, pl_ties, plrank::ObjectiveOptions().pl_ties,
          "PLRank: equal labels as 'efron' (tie groups in closed form, the "
          "expectation over tie-breaks), 'breslow', 'independent' (each "
          "document against those labelled below it) or 'permutation' "
          "(--pl_permutations sampled tie-breaks, the paper).");
ABSL_FLAG(std::string, pl_weighting, plrank::ObjectiveOptions().pl_weighting,
          "PLRank with tie groups: per-pick weight 'uniform', 'gain' (2^label "
          "- 1), 'position' (1/log2(2 + ideal position), p-ListMLE; the "
          "default, chosen by the quality benchmark), 'gain_position', "
          "'pairs' (documents labelled below the pick) or 'sqrt_pairs'.");
ABSL_FLAG(bool, pl_normalize_queries, false,
          "PLRank with tie groups: each query's pick weights sum to 1.");
ABSL_FLAG(bool, pl_diagonal_leaf_step, false,
          "PLRank: leaf values from the diagonal Newton step -sum g/(sum h + "
          "lambda_l2) instead of the exact per-context step.");
ABSL_FLAG(double, pl_newton_damping, plrank::ObjectiveOptions().pl_newton_damping,
          "PLRank: leaf Newton denominator += this x the leaf's weighted "
          "context count.");
ABSL_FLAG(double, pl_max_leaf_step, plrank::ObjectiveOptions().pl_max_leaf_step,
          "PLRank: |leaf Newton step| is clipped to this before the learning "
          "rate (0 = no clip).");
ABSL_FLAG(double, lambdamart_sigma, 1.0, "LambdaMART: slope of the pairwise logistic.");
ABSL_FLAG(int32_t, lambdamart_truncation, 30,
          "LambdaMART: a pair counts when one document is in the current top T "
          "(0 = all pairs).");
ABSL_FLAG(int32_t, ca_restarts, 3, "CA: random restarts.");
ABSL_FLAG(int32_t, ca_max_rounds, 20, "CA: rounds over all features per restart.");
ABSL_FLAG(double, listmle_l2, 1.0, "Linear ListMLE: Gaussian prior precision.");
ABSL_FLAG(int32_t, listmle_max_iterations, 200, "Linear ListMLE: L-BFGS iterations.");
ABSL_FLAG(int32_t, min_data_in_leaf, 20, "Minimum documents per leaf.");
ABSL_FLAG(double, min_sum_hessian_in_leaf, 1e-3,
          "Minimum hessian sum per leaf (second-order split gain only).");
ABSL_FLAG(double, lambda_l2, 0.0, "L2 regularization of leaf values.");
ABSL_FLAG(int32_t, max_depth, -1,
          "Deepest leaf of a tree, as LightGBM's max_depth (1 = stumps); "
          "<= 0: no limit, --leaves alone bounds the tree.");
ABSL_FLAG(double, min_gain_to_split, 0.0,
          "A split is made only when its gain exceeds this (LightGBM's "
          "min_gain_to_split; the gain as the split gain computes it).");
ABSL_FLAG(double, feature_fraction, 1.0, "Fraction of features tried per tree.");
ABSL_FLAG(double, bagging_fraction, 1.0, "Fraction of queries per bag.");
ABSL_FLAG(int32_t, bagging_freq, 0, "Redraw the query bag every k iterations (0 = off).");
ABSL_FLAG(int32_t, max_bin, 255, "Histogram bins per feature (2..255).");
ABSL_FLAG(std::string, split_gain, "auto",
          "'ls': least squares on the pseudo-response (the paper); 'newton': "
          "second-order gain; 'auto': 'newton' for --objective=plrank "
          "(chosen by the quality benchmark), 'ls' for --pl_paper and every "
          "other objective.");
ABSL_FLAG(int32_t, num_threads, 0, "Threads (0 = all cores).");
ABSL_FLAG(uint64_t, seed, 1, "Seed of every random choice.");
ABSL_FLAG(int32_t, early_stopping_rounds, 0,
          "Stop when valid NDCG@<first eval_at> has not improved for this many "
          "iterations (0 = off).");
ABSL_FLAG(std::string, eval_at, "10", "NDCG cut-offs to report, e.g. 1,3,10.");
ABSL_FLAG(std::string, init_model, "", "Background model to continue from.");
ABSL_FLAG(std::string, model_out, "", "Where to write the model (atomically).");
ABSL_FLAG(std::string, history_out, "",
          "Write every iteration's train and valid loss and NDCG at every "
          "--eval_at cut-off as JSON here (atomically); metrics are then "
          "computed every iteration. Plot it with plrank-plot curves.");
ABSL_FLAG(std::string, feature_names_file, "",
          "One feature name per line (line i names LETOR feature i), stored "
          "in the model: plrank-eval --dump and --importance show them.");
ABSL_FLAG(int32_t, log_period, 10, "Progress line every this many iterations.");
ABSL_FLAG(bool, quiet, false, "No progress lines.");

namespace plrank::cli {
namespace {

absl::Status PlackettLuceFromFlags(const WasGivenFn& was_given,
                                   plrank::ObjectiveOptions& objective) {
  objective.pl_topk = absl::GetFlag(FLAGS_pl_topk);
  objective.pl_permutations = absl::GetFlag(FLAGS_pl_permutations);
  objective.pl_skip_tied_queries = absl::GetFlag(FLAGS_pl_skip_tied_queries);
  objective.pl_stop_at_lowest_label = absl::GetFlag(FLAGS_pl_stop_at_lowest_label);
  objective.pl_ties = absl::GetFlag(FLAGS_pl_ties);
  objective.pl_weighting = absl::GetFlag(FLAGS_pl_weighting);
  objective.pl_normalize_queries = absl::GetFlag(FLAGS_pl_normalize_queries);
  objective.pl_diagonal_leaf_step = absl::GetFlag(FLAGS_pl_diagonal_leaf_step);
  objective.pl_newton_damping = absl::GetFlag(FLAGS_pl_newton_damping);
  objective.pl_max_leaf_step = absl::GetFlag(FLAGS_pl_max_leaf_step);
  if (!absl::GetFlag(FLAGS_pl_paper)) return absl::OkStatus();
  for (const char* fixed :
       {"pl_topk", "pl_ties", "pl_stop_at_lowest_label", "pl_weighting",
        "pl_normalize_queries", "pl_diagonal_leaf_step", "pl_newton_damping",
        "pl_max_leaf_step", "pl_skip_tied_queries"}) {
    if (was_given(fixed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pl_paper fixes --", fixed,
          "; drop one of them (or spell out the paper's flags and change "
          "that one)"));
    }
  }
  objective = plrank::PaperObjectiveOptions(objective);
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> IgnoredTrainFlags(const std::string& objective,
                                           const WasGivenFn& was_given) {
  static const char* const kBoosterAndTreeLosses[] = {"trees",
                                                      "leaves",
                                                      "learning_rate",
                                                      "min_data_in_leaf",
                                                      "min_sum_hessian_in_leaf",
                                                      "lambda_l2",
                                                      "max_depth",
                                                      "min_gain_to_split",
                                                      "feature_fraction",
                                                      "bagging_fraction",
                                                      "bagging_freq",
                                                      "max_bin",
                                                      "split_gain",
                                                      "early_stopping_rounds",
                                                      "log_period",
                                                      "pl_paper",
                                                      "pl_permutations",
                                                      "pl_skip_tied_queries",
                                                      "pl_stop_at_lowest_label",
                                                      "pl_ties",
                                                      "pl_weighting",
                                                      "pl_normalize_queries",
                                                      "pl_diagonal_leaf_step",
                                                      "pl_newton_damping",
                                                      "pl_max_leaf_step",
                                                      "lambdamart_sigma",
                                                      "lambdamart_truncation"};
  // A linear ranker ignores the booster's and the tree losses' flags and the
  // other linear rankers'; a tree objective ignores the linear rankers' own.
  const plrank::LinearTrainer* linear = plrank::FindLinearTrainer(objective);
  std::vector<std::string> candidates;
  if (linear != nullptr) {
    candidates.assign(std::begin(kBoosterAndTreeLosses),
                      std::end(kBoosterAndTreeLosses));
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

absl::StatusOr<plrank::TrainJob> TrainJobFromFlags(const WasGivenFn& was_given) {
  plrank::TrainJob job;
  job.train_path = absl::GetFlag(FLAGS_train);
  job.valid_path = absl::GetFlag(FLAGS_valid);
  job.init_model_path = absl::GetFlag(FLAGS_init_model);
  job.model_out = absl::GetFlag(FLAGS_model_out);
  job.history_out = absl::GetFlag(FLAGS_history_out);
  job.feature_names_path = absl::GetFlag(FLAGS_feature_names_file);
  absl::StatusOr<plrank::ReadOptions> read = ReadOptionsFromFlags();
  if (!read.ok()) return read.status();
  job.read_options = *read;
  job.dataset_cache = absl::GetFlag(FLAGS_dataset_cache);
  job.dataset_cache_dir = absl::GetFlag(FLAGS_dataset_cache_dir);
  job.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  job.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  job.resume = absl::GetFlag(FLAGS_resume);
  if (job.checkpoint_every < 1) {
    return absl::InvalidArgumentError("--checkpoint_every must be >= 1");
  }
  if (job.resume && job.checkpoint_dir.empty()) {
    return absl::InvalidArgumentError("--resume needs --checkpoint_dir");
  }
  absl::StatusOr<plrank::MetricOptions> metrics =
      MetricOptionsFromFlags();
  if (!metrics.ok()) return metrics.status();
  job.metric_options = *metrics;
  absl::StatusOr<std::vector<int32_t>> eval_at =
      ParseCutoffs(absl::GetFlag(FLAGS_eval_at));
  if (!eval_at.ok()) return eval_at.status();
  job.eval_at = *eval_at;

  job.objective.name = absl::GetFlag(FLAGS_objective);
  if (absl::Status known = plrank::CheckObjectiveName(job.objective.name);
      !known.ok()) {
    return known;
  }
  absl::Status pl_status = PlackettLuceFromFlags(was_given, job.objective);
  if (!pl_status.ok()) return pl_status;
  // l-ListMLE shares --pl_topk but keeps the paper's K = 10 unless asked.
  if (was_given("pl_topk")) job.listmle.topk = absl::GetFlag(FLAGS_pl_topk);

  job.objective.lambdamart_sigma = absl::GetFlag(FLAGS_lambdamart_sigma);
  job.objective.lambdamart_truncation = absl::GetFlag(FLAGS_lambdamart_truncation);
  job.coordinate_ascent.restarts = absl::GetFlag(FLAGS_ca_restarts);
  job.coordinate_ascent.max_rounds = absl::GetFlag(FLAGS_ca_max_rounds);
  job.listmle.l2 = absl::GetFlag(FLAGS_listmle_l2);
  job.listmle.max_iterations = absl::GetFlag(FLAGS_listmle_max_iterations);

  plrank::BoosterConfig& booster = job.booster;
  booster.num_trees = absl::GetFlag(FLAGS_trees);
  booster.num_leaves = absl::GetFlag(FLAGS_leaves);
  booster.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  // Tuned for PLRank's own settings, not for the paper's.
  job.auto_learning_rate = job.objective.name == "plrank" &&
                           !absl::GetFlag(FLAGS_pl_paper) &&
                           !was_given("learning_rate");
  booster.min_data_in_leaf = absl::GetFlag(FLAGS_min_data_in_leaf);
  booster.min_sum_hessian_in_leaf = absl::GetFlag(FLAGS_min_sum_hessian_in_leaf);
  booster.lambda_l2 = absl::GetFlag(FLAGS_lambda_l2);
  booster.max_depth = absl::GetFlag(FLAGS_max_depth);
  booster.min_gain_to_split = absl::GetFlag(FLAGS_min_gain_to_split);
  booster.feature_fraction = absl::GetFlag(FLAGS_feature_fraction);
  booster.bagging_fraction = absl::GetFlag(FLAGS_bagging_fraction);
  booster.bagging_freq = absl::GetFlag(FLAGS_bagging_freq);
  booster.max_bin = absl::GetFlag(FLAGS_max_bin);
  booster.num_threads = absl::GetFlag(FLAGS_num_threads);
  booster.seed = absl::GetFlag(FLAGS_seed);
  booster.early_stopping_rounds = absl::GetFlag(FLAGS_early_stopping_rounds);
  std::string split_gain = absl::GetFlag(FLAGS_split_gain);
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
  job.log_period = absl::GetFlag(FLAGS_quiet) ? 0 : absl::GetFlag(FLAGS_log_period);

  // The artifact records every flag of this program, as given or defaulted;
  // its text fields hold UTF-8 only, so a value that is not (a Latin-1 file
  // name, say) is recorded C-escaped rather than failing the save.
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    // Where and how often checkpoints go, and whether this run resumed, do
    // not shape the model: a resumed run's artifact equals an
    // uninterrupted run's.
    if (IsTrainFlag(*flag) && name != "checkpoint_dir" &&
        name != "checkpoint_every" && name != "resume") {
      const std::string value = flag->CurrentValue();
      job.parameters[std::string(name)] =
          plrank::IsValidUtf8(value) ? value : absl::CHexEscape(value);
    }
  }
  // What 'auto' resolved to, so the artifact says which gain was used.
  job.parameters["split_gain"] = split_gain;
  return job;
}

std::vector<std::string> TrainFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsTrainFlag(*flag)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool IsTrainFlag(const absl::CommandLineFlag& flag) {
  return absl::StrContains(flag.Filename(), "trainer/");
}

}  // namespace plrank::cli

namespace plrank::cli {

absl::StatusOr<TrainJob> TrainJobFromParams(
    const std::vector<std::pair<std::string, std::string>>& params,
    std::vector<std::string>* ignored) {
  // Flags are process-wide: one caller at a time, and every flag set here
  // back to its previous value afterwards (absl::FlagSaver would log each
  // restore).
  static absl::Mutex mutex(absl::kConstInit);
  absl::MutexLock lock(&mutex);
  std::vector<std::pair<absl::CommandLineFlag*, std::string>> previous;
  absl::Cleanup restore = [&previous] {
    for (auto it = previous.rbegin(); it != previous.rend(); ++it) {
      std::string error;
      it->first->ParseFrom(it->second, &error);
    }
  };
  std::vector<std::string> given;
  for (const auto& [name, value] : params) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr || !IsTrainFlag(*flag)) {
      const std::vector<std::string> known = TrainFlagNames();
      if (std::string same = LightGbmEquivalent(name, known); !same.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown parameter '", name, "': LightGBM's ", name,
                         " is '", same, "' here"));
      }
      if (std::string near = NearestName(name, known); !near.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown parameter '", name, "'; did you mean '", near, "'?"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown parameter '", name, "'"));
    }
    previous.emplace_back(flag, flag->CurrentValue());
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", name, "='", value, "': ", error));
    }
    given.push_back(name);
  }
  const WasGivenFn was_given = [&given](absl::string_view name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  absl::StatusOr<TrainJob> job = TrainJobFromFlags(was_given);
  if (job.ok() && ignored != nullptr) {
    *ignored = IgnoredTrainFlags(job->objective.name, was_given);
  }
  return job;
}

}  // namespace plrank::cli
