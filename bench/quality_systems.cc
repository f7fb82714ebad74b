#include "bench/quality_systems.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/repro_systems.h"

namespace plrank::bench {
namespace {

// Index of the '=' ending a variant's name, or npos.
size_t NameEnd(absl::string_view item) {
  for (size_t i = 0; i < item.size(); ++i) {
    if (item[i] != '=') continue;
    if (i + 1 == item.size() || item[i + 1] == '-' ||
        absl::ascii_isspace(static_cast<unsigned char>(item[i + 1]))) {
      return i;
    }
  }
  return absl::string_view::npos;
}

}  // namespace

absl::StatusOr<std::vector<QualitySystem>> ParsePlrankVariants(
    absl::string_view text) {
  std::vector<QualitySystem> variants;
  absl::flat_hash_set<std::string> names;
  for (absl::string_view item : absl::StrSplit(text, ';')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    const size_t end = NameEnd(item);
    if (end == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PLRank variant '", item,
          "' is not name=flags (e.g. 'top all=--pl_topk=100000', or 'name=' "
          "for no extra flag)"));
    }
    QualitySystem variant;
    variant.name = std::string(absl::StripAsciiWhitespace(item.substr(0, end)));
    variant.objective = "plrank";
    variant.plrank_variant = true;
    for (absl::string_view flag : absl::StrSplit(
             item.substr(end + 1), absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      variant.extra_flags.emplace_back(flag);
    }
    if (variant.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("PLRank variant '", item, "' has no name"));
    }
    if (!names.insert(variant.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("PLRank variant '", variant.name, "' given twice"));
    }
    variants.push_back(std::move(variant));
  }
  if (variants.empty()) {
    return absl::InvalidArgumentError("no PLRank variant given");
  }
  return variants;
}

absl::StatusOr<std::vector<QualitySystem>> ParsePeerSystems(
    absl::string_view text) {
  std::vector<QualitySystem> peers;
  absl::flat_hash_set<std::string> keys;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    const std::string key =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(piece));
    if (key.empty()) continue;
    if (!keys.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("system ", key, " listed twice"));
    }
    QualitySystem peer;
    if (key == "xgb_ndcg" || key == "xgb_pairwise") {
      peer.xgboost = true;
      peer.objective = key == "xgb_ndcg" ? "rank:ndcg" : "rank:pairwise";
      peer.name = absl::StrCat("XGBoost ", peer.objective);
    } else if (key == "xgb_ndcg_defaults" || key == "xgb_pairwise_defaults") {
      // XGBoost as a user gets it out of the box (XGBRanker 1.7: depth-wise
      // trees of depth 6, eta 0.3, 256 bins), not at the benchmark's
      // settings; only the number of trees is the benchmark's.
      peer.xgboost = true;
      peer.objective =
          key == "xgb_ndcg_defaults" ? "rank:ndcg" : "rank:pairwise";
      peer.name = absl::StrCat("XGBoost ", peer.objective, " (own defaults)");
      peer.extra_flags = {
          "--xgb_params=grow_policy=depthwise,max_depth=6,max_leaves=0,"
          "eta=0.3,max_bin=256"};
    } else if (key == "xendcg") {
      // Not one of the paper's systems: LightGBM's rank_xendcg, a PL-family
      // point of comparison.
      peer.objective = "xendcg";
      peer.name = "XE-NDCG (rank_xendcg)";
    } else {
      absl::StatusOr<std::vector<ReproSystem>> known = ParseReproSystems(key);
      if (!known.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown system '", key,
                         "' (xgb_ndcg, xgb_pairwise, xgb_ndcg_defaults, "
                         "xgb_pairwise_defaults, or a plrank-train "
                         "objective such as lambdamart)"));
      }
      peer.objective = known->front().objective;
      peer.name = known->front().label;
      if (known->front().objective == "plrank" &&
          known->front().permutations > 0) {
        // plrank<m>: the paper's PLRank(obj=m), as in plrank-repro.
        peer.extra_flags = PaperPlrankArgs(known->front().permutations);
      }
    }
    peers.push_back(std::move(peer));
  }
  return peers;
}

}  // namespace plrank::bench
