#include "common/lightgbm_params.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace plrank {
namespace {

// LightGBM parameter (and its common aliases) -> PLRank flags of the same
// meaning, first existing one wins. Names LightGBM and PLRank share
// (learning_rate, min_data_in_leaf, lambda_l2, max_bin, max_depth,
// feature_fraction, bagging_fraction, bagging_freq, seed, num_threads,
// eval_at, early_stopping_rounds, ...) need no entry.
const std::vector<std::pair<absl::string_view, std::vector<absl::string_view>>>&
Renames() {
  static const auto* names = new std::vector<
      std::pair<absl::string_view, std::vector<absl::string_view>>>{
      {"num_leaves", {"leaves"}},
      {"num_leaf", {"leaves"}},
      {"max_leaves", {"leaves"}},
      {"max_leaf", {"leaves"}},
      {"max_leaf_nodes", {"leaves"}},
      {"num_iterations", {"trees"}},
      {"num_iteration", {"trees"}},
      {"n_iter", {"trees"}},
      {"num_tree", {"trees"}},
      {"num_trees", {"trees"}},
      {"num_round", {"trees"}},
      {"num_rounds", {"trees"}},
      {"nrounds", {"trees"}},
      {"num_boost_round", {"trees"}},
      {"n_estimators", {"trees"}},
      {"max_iter", {"trees"}},
      {"shrinkage_rate", {"learning_rate"}},
      {"eta", {"learning_rate"}},
      {"min_data_per_leaf", {"min_data_in_leaf"}},
      {"min_data", {"min_data_in_leaf"}},
      {"min_child_samples", {"min_data_in_leaf"}},
      {"min_samples_leaf", {"min_data_in_leaf"}},
      {"min_sum_hessian_per_leaf", {"min_sum_hessian_in_leaf"}},
      {"min_sum_hessian", {"min_sum_hessian_in_leaf"}},
      {"min_hessian", {"min_sum_hessian_in_leaf"}},
      {"min_child_weight", {"min_sum_hessian_in_leaf"}},
      {"min_split_gain", {"min_gain_to_split"}},
      {"tree", {"tree_learner"}},
      {"tree_type", {"tree_learner"}},
      {"tree_learner_type", {"tree_learner"}},
      {"topk", {"top_k"}},
      {"lambda", {"lambda_l2"}},
      {"reg_lambda", {"lambda_l2"}},
      {"l2_regularization", {"lambda_l2"}},
      {"sub_feature", {"feature_fraction"}},
      {"colsample_bytree", {"feature_fraction"}},
      {"sub_row", {"bagging_fraction"}},
      {"subsample", {"bagging_fraction"}},
      {"bagging", {"bagging_fraction"}},
      {"subsample_freq", {"bagging_freq"}},
      {"early_stopping_round", {"early_stopping_rounds"}},
      {"early_stopping", {"early_stopping_rounds"}},
      {"n_iter_no_change", {"early_stopping_rounds"}},
      {"num_thread", {"num_threads"}},
      {"nthread", {"num_threads"}},
      {"nthreads", {"num_threads"}},
      {"n_jobs", {"num_threads"}},
      {"random_seed", {"seed"}},
      {"random_state", {"seed"}},
      {"ndcg_eval_at", {"eval_at"}},
      {"ndcg_at", {"eval_at"}},
      {"map_eval_at", {"eval_at"}},
      {"map_at", {"eval_at"}},
      {"data", {"train"}},
      {"train_data", {"train"}},
      {"train_data_file", {"train"}},
      {"data_filename", {"train"}},
      {"output_model", {"model_out"}},
      {"model_output", {"model_out"}},
      {"input_model", {"init_model", "model"}},
      {"model_input", {"init_model", "model"}},
      {"model_in", {"init_model", "model"}},
      {"metric_freq", {"log_period"}},
      {"output_freq", {"log_period"}},
      {"sigmoid", {"lambdamart_sigma"}},
      {"lambdarank_truncation_level", {"lambdamart_truncation"}},
      {"max_position", {"lambdamart_truncation"}},
      {"save_binary", {"dataset_cache"}},
      {"is_save_binary", {"dataset_cache"}},
      {"is_save_binary_file", {"dataset_cache"}},
  };
  return *names;
}

bool Has(const std::vector<std::string>& existing, absl::string_view name) {
  return std::find(existing.begin(), existing.end(), name) != existing.end();
}

using Settings = std::vector<FlagSetting>;
using Translate = std::function<absl::StatusOr<Settings>(
    absl::string_view name, absl::string_view value)>;

// A LightGBM parameter that needs more than a new name: its value is
// translated, or accepted only where it asks for what PLRank always does.
struct Special {
  std::vector<absl::string_view> names;
  // The PLRank flag the parameter is about; the entry applies only to
  // programs that have it (a hint about bagging_seed belongs to
  // plrank-train, not plrank-server).
  absl::string_view context_flag;
  // Why the parameter is not a PLRank flag; "{}" stands for the flag
  // prefix ("--" or "").
  absl::string_view hint;
  Translate translate;
};

absl::Status Refused(absl::string_view name, absl::string_view value,
                     absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("LightGBM's ", name, "=", value, " is not supported: ", why));
}

bool IsTrue(absl::string_view value) {
  const std::string lower = absl::AsciiStrToLower(value);
  return lower == "true" || lower == "1" || lower == "+";
}
bool IsFalse(absl::string_view value) {
  const std::string lower = absl::AsciiStrToLower(value);
  return lower == "false" || lower == "0" || lower == "-";
}

// Accepted only when false (PLRank never does it); `why` explains true.
Translate OnlyFalse(absl::string_view why) {
  return [why](absl::string_view name,
               absl::string_view value) -> absl::StatusOr<Settings> {
    if (IsFalse(value)) return Settings{};
    return Refused(name, value, why);
  };
}

Translate OnlyValues(std::vector<absl::string_view> accepted,
                     absl::string_view why) {
  return [accepted, why](absl::string_view name,
                         absl::string_view value) -> absl::StatusOr<Settings> {
    const std::string lower = absl::AsciiStrToLower(value);
    for (absl::string_view same : accepted) {
      if (lower == same) return Settings{};
    }
    return Refused(name, value, why);
  };
}

constexpr absl::string_view kOneSeed =
    "one seed drives every random choice here (query bags and feature "
    "subsets): use seed";

const std::vector<Special>& Specials() {
  static const auto* specials = new std::vector<Special>{
      {{"boosting", "boosting_type", "boost"},
       "objective",
       "plrank-train grows gradient-boosted trees only (LightGBM's default, "
       "boosting=gbdt); dart, goss and rf are not supported. The loss is "
       "{}objective",
       OnlyValues({"gbdt", "gbrt"},
                  "plrank-train grows gradient-boosted trees only (gbdt): "
                  "DART's dropout, GOSS sampling and random forests are not "
                  "implemented")},
      {{"data_sample_strategy"},
       "bagging_fraction",
       "rows are bagged by whole queries ({}bagging_fraction, "
       "{}bagging_freq); GOSS is not supported",
       OnlyValues({"bagging"}, "GOSS is not implemented; bagging is "
                               "(bagging_fraction, bagging_freq)")},
      {{"objective", "objective_type", "application", "app", "loss"},
       "objective",
       "",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         const std::string lower = absl::AsciiStrToLower(value);
         if (lower == "lambdarank") return Settings{{"objective", "lambdamart"}};
         if (lower == "rank_xendcg" || lower == "xendcg" ||
             lower == "xe_ndcg" || lower == "xe_ndcg_mart" ||
             lower == "xendcg_mart") {
           return Settings{{"objective", "xendcg"}};
         }
         static const auto* kNotRanking = new std::vector<absl::string_view>{
             "regression", "regression_l1", "l1", "l2", "mse", "rmse",
             "huber", "fair", "poisson", "quantile", "mape", "gamma",
             "tweedie", "binary", "multiclass", "softmax", "multiclassova",
             "cross_entropy", "xentropy", "cross_entropy_lambda",
             "xentlambda"};
         if (std::find(kNotRanking->begin(), kNotRanking->end(), lower) ==
             kNotRanking->end()) {
           // PLRank's own names are passed on (the flag checks them).
           return Settings{{"objective", std::string(value)}};
         }
         return Refused(name, value,
                        "plrank-train trains rankers only; LightGBM's "
                        "lambdarank is objective=lambdamart and rank_xendcg "
                        "is objective=xendcg here (see --help for every "
                        "loss)");
       }},
      {{"bagging_seed", "bagging_fraction_seed", "feature_fraction_seed",
        "data_random_seed", "extra_seed", "drop_seed", "objective_seed"},
       "seed",
       "one {}seed drives every random choice here (query bags and feature "
       "subsets)",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         return Refused(name, value, kOneSeed);
       }},
      {{"lambda_l1", "reg_alpha", "l1_regularization"},
       "lambda_l2",
       "there is no L1 regularization of leaf values here; {}lambda_l2 is "
       "the L2",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         double l1 = 0;
         if (absl::SimpleAtod(value, &l1) && l1 == 0.0) return Settings{};
         return Refused(name, value,
                        "there is no L1 regularization of leaf values here "
                        "(lambda_l2 is the L2)");
       }},
      {{"metric", "metrics", "metric_types"},
       "eval_at",
       "plrank-train always reports NDCG at the {}eval_at cut-offs (early "
       "stopping watches the first); plrank-eval adds ERR and MAP",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         for (absl::string_view metric :
              absl::StrSplit(value, ',', absl::SkipWhitespace())) {
           const std::string lower =
               absl::AsciiStrToLower(absl::StripAsciiWhitespace(metric));
           if (lower != "ndcg" && lower != "lambdarank" &&
               lower != "rank_xendcg" && lower != "xendcg") {
             return Refused(name, value,
                            "plrank-train reports NDCG at the eval_at "
                            "cut-offs only (plrank-eval reports NDCG, ERR "
                            "and MAP)");
           }
         }
         return Settings{};
       }},
      {{"verbosity", "verbose"},
       "quiet",
       "{}quiet silences the progress lines and {}log_period sets how "
       "often they come",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         int level = 0;
         if (!absl::SimpleAtoi(value, &level)) {
           return absl::InvalidArgumentError(
               absl::StrCat("LightGBM's ", name, "=", value,
                            ": expected an integer level (< 1: quiet)"));
         }
         return Settings{{"quiet", level < 1 ? "true" : "false"}};
       }},
      {{"label_gain"},
       "eval_at",
       "the gain of label l is fixed at 2^l - 1 (LightGBM's default "
       "label_gain) in NDCG and in every loss that weighs by gain",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         int label = 0;
         for (absl::string_view gain :
              absl::StrSplit(value, ',', absl::SkipWhitespace())) {
           double g = 0;
           if (!absl::SimpleAtod(gain, &g) ||
               g != std::ldexp(1.0, label) - 1.0) {
             return Refused(name, value,
                            "the gain of label l is fixed at 2^l - 1 "
                            "(LightGBM's default label_gain: 0,1,3,7,...)");
           }
           ++label;
         }
         return Settings{};
       }},
      {{"task", "task_type"},
       "trees",
       "plrank-train trains; plrank-eval scores (--scores_out) and "
       "plrank-convert converts",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         const std::string lower = absl::AsciiStrToLower(value);
         if (lower == "train" || lower == "training") return Settings{};
         return Refused(name, value,
                        "plrank-train only trains; score with plrank-eval "
                        "--model=M --data=F --scores_out=F, convert with "
                        "plrank-convert");
       }},
      {{"valid", "test", "valid_data", "test_data", "valid_data_file",
        "validation_data", "valid_filenames"},
       "valid",
       "",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         if (absl::StrContains(value, ',')) {
           return Refused(name, value,
                          "plrank-train takes one validation file (valid=F)");
         }
         return Settings{{"valid", std::string(value)}};
       }},
      {{"num_class", "num_classes"},
       "objective",
       "ranking models have one output",
       OnlyValues({"1"}, "ranking models have one output")},
      {{"device_type", "device"},
       "num_threads",
       "training runs on the CPU ({}num_threads)",
       OnlyValues({"cpu"}, "training runs on the CPU only")},
      {{"force_col_wise", "force_row_wise", "deterministic",
        "is_provide_training_metric", "training_metric", "first_metric_only",
        "boost_from_average", "bagging_by_query", "use_missing"},
       "trees",
       "",
       [](absl::string_view, absl::string_view) -> absl::StatusOr<Settings> {
         // Layout choices and what PLRank always does: no effect on the
         // model here.
         return Settings{};
       }},
      {{"linear_tree", "linear_trees"},
       "trees",
       "trees have constant leaves (no linear trees)",
       OnlyFalse("trees have constant leaves (no linear trees)")},
      {{"extra_trees", "extra_tree"},
       "trees",
       "splits are the best of every bin (no extremely randomized trees)",
       OnlyFalse("splits are the best of every bin (no extremely "
                 "randomized trees)")},
      {{"monotone_constraints", "mc", "monotone_constraint",
        "interaction_constraints", "forcedsplits_filename",
        "cegb_tradeoff", "feature_contri", "path_smooth"},
       "trees",
       "split constraints are not supported",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         return Refused(name, value, "split constraints are not supported");
       }},
      {{"categorical_feature", "cat_feature", "categorical_column",
        "cat_column", "categorical_features"},
       "trees",
       "every feature is numerical (no categorical splits)",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         if (value.empty()) return Settings{};
         return Refused(name, value,
                        "every feature is numerical (no categorical "
                        "splits)");
       }},
      {{"header", "has_header", "label_column", "label", "group_column",
        "group", "group_id", "query_column", "query", "query_id",
        "weight_column", "weight", "ignore_column", "ignore_feature",
        "blacklist", "two_round", "two_round_loading"},
       "trees",
       "plrank-train reads LETOR / SVMlight text (label qid:q i:v ...), "
       "not CSV columns",
       [](absl::string_view name,
          absl::string_view value) -> absl::StatusOr<Settings> {
         if (value.empty() || IsFalse(value)) return Settings{};
         return Refused(name, value,
                        "plrank-train reads LETOR / SVMlight text (label "
                        "qid:q i:v ...) with the query id on each line, not "
                        "CSV columns or .query files");
       }},
  };
  return *specials;
}

const Special* FindSpecial(absl::string_view name,
                           const std::vector<std::string>& existing) {
  for (const Special& special : Specials()) {
    if (std::find(special.names.begin(), special.names.end(), name) !=
            special.names.end() &&
        Has(existing, special.context_flag)) {
      return &special;
    }
  }
  return nullptr;
}

}  // namespace

std::string LightGbmEquivalent(absl::string_view lightgbm_name,
                               const std::vector<std::string>& existing) {
  for (const auto& [name, ours] : Renames()) {
    if (name != lightgbm_name) continue;
    for (absl::string_view candidate : ours) {
      if (Has(existing, candidate)) return std::string(candidate);
    }
  }
  return "";
}

std::string LightGbmHint(absl::string_view name,
                         const std::vector<std::string>& existing,
                         absl::string_view flag_prefix) {
  if (std::string same = LightGbmEquivalent(name, existing); !same.empty()) {
    // Without a prefix (the Python package), the name is quoted.
    return flag_prefix.empty()
               ? absl::StrCat("LightGBM's ", name, " is '", same, "' here")
               : absl::StrCat("LightGBM's ", name, " is ", flag_prefix, same,
                              " here");
  }
  const Special* special = FindSpecial(name, existing);
  if (special == nullptr || special->hint.empty()) return "";
  return absl::StrCat("LightGBM's ", name, ": ",
                      absl::StrReplaceAll(special->hint, {{"{}", flag_prefix}}));
}

absl::StatusOr<std::vector<FlagSetting>> TranslateLightGbmParameter(
    absl::string_view name, absl::string_view value,
    const std::vector<std::string>& existing) {
  if (std::string same = LightGbmEquivalent(name, existing); !same.empty()) {
    return Settings{{same, std::string(value)}};
  }
  if (const Special* special = FindSpecial(name, existing)) {
    return special->translate(name, value);
  }
  return absl::NotFoundError(
      absl::StrCat("'", name, "' is not a LightGBM parameter PLRank knows"));
}

std::vector<std::string> KnownLightGbmNames() {
  std::vector<std::string> names;
  for (const auto& [name, ours] : Renames()) names.emplace_back(name);
  for (const Special& special : Specials()) {
    for (absl::string_view name : special.names) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace plrank
