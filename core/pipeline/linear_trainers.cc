#include "core/pipeline/linear_trainers.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/objectives/registry.h"

namespace plrank {
namespace {

absl::StatusOr<LinearModelResult> TrainCa(const LinearTrainerInputs& inputs) {
  CoordinateAscentOptions options = inputs.coordinate_ascent;
  options.ndcg_k = inputs.ndcg_k;
  options.seed = inputs.seed;
  return TrainCoordinateAscent(*inputs.train, inputs.valid, options,
                               inputs.log);
}

absl::StatusOr<LinearModelResult> TrainListMle(
    const LinearTrainerInputs& inputs) {
  LinearListMleOptions options = inputs.listmle;
  options.ndcg_k = inputs.ndcg_k;
  options.seed = inputs.seed;
  return TrainLinearListMle(*inputs.train, inputs.valid, options, inputs.log);
}

}  // namespace

// An explicit table, as the tree objectives' (static libraries drop
// self-registering objects). To add a linear ranker, add one line here.
const std::vector<LinearTrainer>& LinearTrainers() {
  static const auto* trainers = new std::vector<LinearTrainer>{
      {"ca", TrainCa, {"ca_restarts", "ca_max_rounds"}, {}},
      // l-ListMLE's K is PLRank's --pl_topk.
      {"listmle",
       TrainListMle,
       {"listmle_l2", "listmle_max_iterations"},
       {"pl_topk"}},
  };
  return *trainers;
}

const LinearTrainer* FindLinearTrainer(const std::string& name) {
  for (const LinearTrainer& trainer : LinearTrainers()) {
    if (name == trainer.name) return &trainer;
  }
  return nullptr;
}

std::vector<std::string> LinearObjectives() {
  std::vector<std::string> names;
  for (const LinearTrainer& trainer : LinearTrainers()) {
    names.push_back(trainer.name);
  }
  return names;
}

bool IsLinearObjective(const std::string& name) {
  return FindLinearTrainer(name) != nullptr;
}

std::vector<std::string> KnownObjectives() {
  std::vector<std::string> names = TreeObjectives();
  for (const std::string& name : LinearObjectives()) names.push_back(name);
  return names;
}

absl::Status CheckObjectiveName(const std::string& name) {
  const std::vector<std::string> known = KnownObjectives();
  if (std::find(known.begin(), known.end(), name) != known.end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--objective: unknown objective '", name, "'", ObjectiveNameHint(name),
      "; known: ", absl::StrJoin(known, ", ")));
}

}  // namespace plrank
