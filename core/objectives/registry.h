#ifndef PLRANK_CORE_OBJECTIVES_REGISTRY_H_
#define PLRANK_CORE_OBJECTIVES_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/objectives/objective.h"
#include "core/objectives/plackett_luce/options.h"

namespace plrank {

// Everything a command line can say about the loss. Fields prefixed by an
// objective's short name only concern that objective.
struct ObjectiveOptions {
  std::string name = "plrank";
  // Plackett-Luce: PlackettLuceOptions' defaults, the product's (PLRank's
  // own settings, chosen by the multi-regime quality benchmark); the
  // weighting is "auto" here, resolved by the training size.
  // PaperObjectiveOptions() gives the paper's settings.
  int32_t pl_topk = PlackettLuceOptions().topk;
  int32_t pl_permutations = PlackettLuceOptions().permutations;
  bool pl_skip_tied_queries = PlackettLuceOptions().skip_tied_queries;
  bool pl_stop_at_lowest_label = PlackettLuceOptions().stop_at_lowest_label;
  double pl_newton_damping = PlackettLuceOptions().newton_damping;
  double pl_max_leaf_step = PlackettLuceOptions().max_leaf_step;
  uint64_t pl_seed = PlackettLuceOptions().seed;  // salt mixed into the seed
  // Tie handling: "permutation" (the paper: sampled tie-breaks), "efron" or
  // "breslow" (tie groups in closed form); and the per-term weighting of the
  // tie-group likelihood: "uniform", "gain", "position", "gain_position",
  // "pairs", "sqrt_pairs".
  std::string pl_ties = PlTiesName(PlackettLuceOptions().ties);
  // "auto": AutoPlWeighting of the training size (plackett_luce/options.h),
  // made concrete by ResolveAutoObjectiveOptions once the data is read;
  // unresolved, MakeObjective takes the small-data choice.
  std::string pl_weighting = "auto";
  bool pl_normalize_queries = PlackettLuceOptions().normalize_queries;
  bool pl_diagonal_leaf_step = PlackettLuceOptions().diagonal_leaf_step;
  bool pl_newton_split_gain = PlackettLuceOptions().newton_split_gain;
  // LambdaMART (see LambdaMartOptions): logistic slope, and the top of the
  // current ranking a pair must touch (0 = all pairs).
  double lambdamart_sigma = 1.0;
  int32_t lambdamart_truncation = 30;
  // McRank: hessians times K/(K-1) (Friedman's multi-class leaf value).
  bool mcrank_friedman_factor = true;
};

// `base` with PaperPlackettLuceOptions(), the paper's PLRank as written
// (--pl_paper), in its Plackett-Luce fields; other fields (pl_permutations
// among them: obj=m) keep `base`'s values.
ObjectiveOptions PaperObjectiveOptions(ObjectiveOptions base);

// A new, not yet Init()-ed tree objective. InvalidArgument for a name that
// is not one of TreeObjectives() (the message lists them) or out-of-range
// options. The linear rankers are registered trainers of the pipeline
// (core/pipeline/linear_trainers.h), which also checks --objective names.
absl::StatusOr<std::unique_ptr<Objective>> MakeObjective(
    const ObjectiveOptions& options);

// `options` with its data-dependent "auto" settings made concrete for the
// objective it names, from the number of training documents (the Plackett-
// Luce pick weighting, AutoPlWeighting); other objectives' options are
// returned unchanged.
ObjectiveOptions ResolveAutoObjectiveOptions(ObjectiveOptions options,
                                             int64_t train_documents);

// What a training job needs to know about an objective beyond its options;
// the registry is the one place that tells objectives apart by name.
struct ObjectiveTraits {
  // Not given, the learning rate follows the training size
  // (AutoLearningRate, core/pipeline/auto_learning_rate.h): tuned with
  // PLRank's own settings (plrank; the caller leaves out --pl_paper).
  bool auto_learning_rate = false;
  // --position_debias=gam learns a per-position bias with its trees
  // (plrank, lambdamart).
  bool position_bias = false;
};

// The traits of objective `name`; all false for a name that is not a tree
// objective (the linear rankers, a misspelt name).
ObjectiveTraits TraitsOf(const std::string& name);

// The names MakeObjective builds, in a stable order.
std::vector<std::string> TreeObjectives();

// " (for 'lambdarank' use lambdamart)" for a LightGBM or XGBoost name of an
// objective we have under another name; "" otherwise.
std::string ObjectiveNameHint(const std::string& name);

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_REGISTRY_H_
