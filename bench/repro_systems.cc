#include "bench/repro_systems.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace plrank::bench {
namespace {

struct Known {
  const char* key;
  const char* label;
  bool linear;
  bool scaled_trees;
};

constexpr Known kKnownSystems[] = {
    {"lambdamart", "LambdaMART", false, false},
    {"mcrank", "McRank", false, true},
    {"mart1", "MART-1", false, false},
    {"mart2", "MART-2", false, false},
    {"cmart1", "c-MART-1", false, false},
    {"cosmart", "CosMART", false, false},
    {"ccosmart", "c-CosMART", false, false},
    {"klmart", "KLMART", false, false},
    {"cklmart", "c-KLMART", false, false},
    {"ca", "CA", true, false},
    {"listmle", "l-ListMLE", true, false},
};

}  // namespace

std::string DefaultReproSystemList() {
  std::string list = "plrank1,plrank3,plrank";
  for (const Known& known : kKnownSystems)
    absl::StrAppend(&list, ",", known.key);
  return list;
}

absl::StatusOr<std::vector<ReproSystem>> ParseReproSystems(
    std::string_view list) {
  std::vector<ReproSystem> systems;
  absl::flat_hash_set<std::string> seen;
  for (absl::string_view piece :
       absl::StrSplit(absl::string_view(list.data(), list.size()), ',',
                      absl::SkipEmpty())) {
    const std::string key =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(piece));
    if (key.empty()) continue;
    if (key == "all") {
      absl::StatusOr<std::vector<ReproSystem>> all =
          ParseReproSystems(DefaultReproSystemList());
      for (ReproSystem& system : *all) {
        if (!seen.insert(system.key).second) {
          return absl::InvalidArgumentError(
              absl::StrCat("system ", system.key, " listed twice"));
        }
        systems.push_back(std::move(system));
      }
      continue;
    }
    ReproSystem system;
    absl::string_view rest = key;
    int permutations = 0;
    if (absl::ConsumePrefix(&rest, "plrank")) {
      if (rest.empty()) {
        // PLRank with the trainer's defaults.
        system.key = "plrank";
        system.label = "PLRank(default)";
        system.permutations = 0;
      } else if (!absl::SimpleAtoi(rest, &permutations) || permutations < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown system '", key,
            "' (PLRank is plrank (defaults) or plrank<m>, the paper's obj=m, "
            "m >= 1)"));
      } else {
        system.key = absl::StrCat("plrank", permutations);
        system.label = absl::StrCat("PLRank(obj=", permutations, ")");
        system.permutations = permutations;
      }
      system.objective = "plrank";
    } else {
      const Known* found =
          std::find_if(std::begin(kKnownSystems), std::end(kKnownSystems),
                       [&](const Known& known) { return key == known.key; });
      if (found == std::end(kKnownSystems)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown system '", key, "'; known: ", DefaultReproSystemList()));
      }
      system.key = found->key;
      system.label = found->label;
      system.objective = found->key;
      system.linear = found->linear;
      system.scaled_trees = found->scaled_trees;
    }
    if (!seen.insert(system.key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("system ", system.key, " listed twice"));
    }
    systems.push_back(std::move(system));
  }
  if (systems.empty()) return absl::InvalidArgumentError("no system given");
  return systems;
}

std::vector<std::string> PaperPlrankArgs(int permutations) {
  return {"--pl_paper", absl::StrCat("--pl_permutations=", permutations)};
}

}  // namespace plrank::bench
