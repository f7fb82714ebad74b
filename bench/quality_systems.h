#ifndef PLRANK_BENCH_QUALITY_SYSTEMS_H_
#define PLRANK_BENCH_QUALITY_SYSTEMS_H_

// The systems plrank-bench-quality compares: PLRank variants (plrank-train
// --objective=plrank plus a flag string each, so the engineer tuning the
// objective can compare many settings in one run) and peers (XGBoost through
// plrank-xgb-peer, plrank-train's other objectives).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace plrank::bench {

struct QualitySystem {
  std::string name;  // as printed and as --candidate names it
  // True: plrank-xgb-peer --objective=<objective>; false: plrank-train
  // --objective=<objective>, then plrank-eval scores the test part.
  bool xgboost = false;
  std::string objective;
  std::vector<std::string> extra_flags;  // appended to the training command
  bool plrank_variant = false;           // from --plrank_variants, not a peer
};

// Parses "name=flags;name=flags;..." into PLRank variants. A name ends at the
// first '=' followed by '-', a blank or the end of the item, so names may
// hold '=' themselves ("K=all=--pl_topk=100000" is the variant "K=all" with
// flag --pl_topk=100000). Flags are split at blanks. Names are trimmed,
// non-empty and unique; empty items are ignored; at least one variant.
absl::StatusOr<std::vector<QualitySystem>> ParsePlrankVariants(
    absl::string_view text);

// Parses a comma-separated peer list: xgb_ndcg (XGBoost rank:ndcg),
// xgb_pairwise (XGBoost rank:pairwise), xgb_ndcg_defaults and
// xgb_pairwise_defaults (the same at XGBRanker's own defaults: depth-wise
// trees of depth 6, eta 0.3, 256 bins), or a plrank-train objective key as
// plrank-repro knows them (lambdamart, mcrank, mart2, ...). May be empty.
absl::StatusOr<std::vector<QualitySystem>> ParsePeerSystems(
    absl::string_view text);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_QUALITY_SYSTEMS_H_
