#ifndef PLRANK_BENCH_REPRO_SYSTEMS_H_
#define PLRANK_BENCH_REPRO_SYSTEMS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank::bench {

// One row of the paper's comparison: a plrank-train objective with its
// settings. Every system shares the tree learner, so only the loss differs
// (the paper's "one code template").
struct ReproSystem {
  std::string key;        // as given in --systems: "plrank3", "mart2", ...
  std::string label;      // as printed: "PLRank(obj=3)", "MART-2", ...
  std::string objective;  // plrank-train --objective
  // PLRank's obj=m (the paper's PLRank, --pl_paper); 0 = PLRank with the
  // trainer's defaults; 1 for every other system.
  int permutations = 1;
  bool linear = false;    // CA and l-ListMLE: no trees, --trees is moot
  // Multiplies --trees: McRank boosts one tree per class per iteration and
  // the paper gives it 2.5x the iterations (2500 vs 1000).
  bool scaled_trees = false;
};

// The paper's thirteen rows in table order: PLRank(obj=1), PLRank(obj=3),
// LambdaMART, McRank, MART-1, MART-2, c-MART-1, CosMART, c-CosMART, KLMART,
// c-KLMART, CA, l-ListMLE.
std::string DefaultReproSystemList();

// Parses a comma-separated list of keys: plrank<m> (m >= 1; "plrank" alone
// is plrank1), lambdamart, mcrank, mart1, mart2, cmart1, cosmart, ccosmart,
// klmart, cklmart, ca, listmle; "all" expands to the default list. Keys are
// case-insensitive; duplicates and unknown keys are errors.
absl::StatusOr<std::vector<ReproSystem>> ParseReproSystems(
    std::string_view list);

// plrank-train arguments of the paper's PLRank(obj=m).
std::vector<std::string> PaperPlrankArgs(int permutations);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_REPRO_SYSTEMS_H_
