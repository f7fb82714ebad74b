#include "core/objectives/registry.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/objectives/cosine.h"
#include "core/objectives/lambdamart.h"
#include "core/objectives/listnet_kl.h"
#include "core/objectives/mcrank.h"
#include "core/objectives/plackett_luce/plackett_luce.h"
#include "core/objectives/plackett_luce/permutation_sampled.h"
#include "core/objectives/squared_loss.h"
#include "core/objectives/xendcg.h"

namespace plrank {
namespace {

using Factory = std::function<absl::StatusOr<std::unique_ptr<Objective>>(
    const ObjectiveOptions&)>;

absl::StatusOr<std::unique_ptr<Objective>> MakePlackettLuce(
    const ObjectiveOptions& options) {
  PlackettLuceOptions pl;
  pl.topk = options.pl_topk;
  pl.permutations = options.pl_permutations;
  pl.seed = options.pl_seed;
  pl.skip_tied_queries = options.pl_skip_tied_queries;
  pl.stop_at_lowest_label = options.pl_stop_at_lowest_label;
  pl.newton_damping = options.pl_newton_damping;
  pl.max_leaf_step = options.pl_max_leaf_step;
  absl::StatusOr<PlTies> ties = ParsePlTies(options.pl_ties);
  if (!ties.ok()) return ties.status();
  pl.ties = *ties;
  absl::StatusOr<PlWeighting> weighting =
      options.pl_weighting == "auto" ? AutoPlWeighting(0)
                                     : ParsePlWeighting(options.pl_weighting);
  if (!weighting.ok()) return weighting.status();
  pl.weighting = *weighting;
  pl.normalize_queries = options.pl_normalize_queries;
  pl.diagonal_leaf_step = options.pl_diagonal_leaf_step;
  pl.newton_split_gain = options.pl_newton_split_gain;
  if (absl::Status s = ValidatePlackettLuceOptions(pl); !s.ok()) return s;
  if (pl.ties == PlTies::kPermutation) {
    return std::unique_ptr<Objective>(new PlackettLucePermutationObjective(pl));
  }
  return std::unique_ptr<Objective>(new PlackettLuceObjective(pl));
}

absl::StatusOr<std::unique_ptr<Objective>> MakeLambdaMart(
    const ObjectiveOptions& options) {
  LambdaMartOptions lambdamart;
  lambdamart.sigma = options.lambdamart_sigma;
  lambdamart.truncation = options.lambdamart_truncation;
  if (absl::Status s = ValidateLambdaMartOptions(lambdamart); !s.ok()) return s;
  return std::unique_ptr<Objective>(new LambdaMartObjective(lambdamart));
}

absl::StatusOr<std::unique_ptr<Objective>> MakeMcRank(
    const ObjectiveOptions& options) {
  McRankOptions mcrank;
  mcrank.friedman_factor = options.mcrank_friedman_factor;
  return std::unique_ptr<Objective>(new McRankObjective(mcrank));
}

template <SquaredLossTarget kTarget>
absl::StatusOr<std::unique_ptr<Objective>> MakeSquaredLoss(
    const ObjectiveOptions& /*options*/) {
  return std::unique_ptr<Objective>(new SquaredLossObjective(kTarget));
}

template <bool kConsistent>
absl::StatusOr<std::unique_ptr<Objective>> MakeCosine(
    const ObjectiveOptions& /*options*/) {
  return std::unique_ptr<Objective>(new CosineObjective(kConsistent));
}

template <bool kConsistent>
absl::StatusOr<std::unique_ptr<Objective>> MakeListNetKl(
    const ObjectiveOptions& /*options*/) {
  return std::unique_ptr<Objective>(new ListNetKlObjective(kConsistent));
}

// An explicit table rather than self-registration: static libraries drop
// unreferenced registrars. To add a loss, add one line here.
const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const auto* factories =
      new std::vector<std::pair<std::string, Factory>>{
          {"plrank", MakePlackettLuce},
          {"lambdamart", MakeLambdaMart},
          {"mcrank", MakeMcRank},
          {"mart1", MakeSquaredLoss<SquaredLossTarget::kGain>},
          {"mart2", MakeSquaredLoss<SquaredLossTarget::kLabel>},
          {"cmart1", MakeSquaredLoss<SquaredLossTarget::kNormalizedGain>},
          {"cosmart", MakeCosine<false>},
          {"ccosmart", MakeCosine<true>},
          {"klmart", MakeListNetKl<false>},
          {"cklmart", MakeListNetKl<true>},
          {"xendcg", MakeXendcg},
      };
  return *factories;
}

}  // namespace

ObjectiveOptions ResolveAutoObjectiveOptions(ObjectiveOptions options,
                                             int64_t train_documents) {
  if (options.name == "plrank" && options.pl_weighting == "auto") {
    options.pl_weighting = PlWeightingName(AutoPlWeighting(train_documents));
  }
  return options;
}

ObjectiveOptions PaperObjectiveOptions(ObjectiveOptions base) {
  const PlackettLuceOptions paper = PaperPlackettLuceOptions();
  base.pl_topk = paper.topk;
  base.pl_ties = PlTiesName(paper.ties);
  base.pl_weighting = PlWeightingName(paper.weighting);
  base.pl_normalize_queries = paper.normalize_queries;
  base.pl_diagonal_leaf_step = paper.diagonal_leaf_step;
  base.pl_skip_tied_queries = paper.skip_tied_queries;
  base.pl_stop_at_lowest_label = paper.stop_at_lowest_label;
  base.pl_newton_damping = paper.newton_damping;
  base.pl_max_leaf_step = paper.max_leaf_step;
  base.pl_newton_split_gain = paper.newton_split_gain;
  return base;
}

absl::StatusOr<std::unique_ptr<Objective>> MakeObjective(
    const ObjectiveOptions& options) {
  for (const auto& [name, factory] : Factories()) {
    if (name == options.name) return factory(options);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "objective '", options.name, "' is not a tree objective",
      ObjectiveNameHint(options.name),
      "; tree objectives: ", absl::StrJoin(TreeObjectives(), ", ")));
}

ObjectiveTraits TraitsOf(const std::string& name) {
  ObjectiveTraits traits;
  traits.auto_learning_rate = name == "plrank";
  traits.position_bias = name == "plrank" || name == "lambdamart";
  return traits;
}

std::vector<std::string> TreeObjectives() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Factories()) names.push_back(name);
  return names;
}

std::string ObjectiveNameHint(const std::string& name) {
  // LightGBM's and XGBoost's names for the ones we have.
  static const auto* kOtherNames =
      new std::vector<std::pair<std::string, std::string>>{
          {"lambdarank", "lambdamart"},    {"rank:ndcg", "lambdamart"},
          {"rank:pairwise", "lambdamart"}, {"rank_xendcg", "xendcg"},
          {"xe_ndcg", "xendcg"},           {"xendcg_mart", "xendcg"},
          {"xe_ndcg_mart", "xendcg"},      {"listnet", "klmart"},
          {"coordinate_ascent", "ca"},     {"pl", "plrank"},
          {"plackett_luce", "plrank"},
      };
  for (const auto& [other, ours] : *kOtherNames) {
    if (other == name)
      return absl::StrCat(" (for '", name, "' use ", ours, ")");
  }
  return "";
}

}  // namespace plrank
