#include "core/objectives/registry.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "core/objectives/plackett_luce.h"

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
  if (absl::Status s = ValidatePlackettLuceOptions(pl); !s.ok()) return s;
  return std::unique_ptr<Objective>(new PlackettLuceObjective(pl));
}

// An explicit table rather than self-registration: static libraries drop
// unreferenced registrars. To add a loss, add one line here.
const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const auto* factories =
      new std::vector<std::pair<std::string, Factory>>{
          {"plrank", MakePlackettLuce},
      };
  return *factories;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Objective>> MakeObjective(
    const ObjectiveOptions& options) {
  for (const auto& [name, factory] : Factories()) {
    if (name == options.name) return factory(options);
  }
  return absl::InvalidArgumentError(
      "unknown objective '" + options.name +
      "'; known: " + absl::StrJoin(KnownObjectives(), ", "));
}

std::vector<std::string> KnownObjectives() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Factories()) names.push_back(name);
  return names;
}

}  // namespace plrank
