#include "core/objectives/plackett_luce/options.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace plrank {

PlackettLuceOptions PaperPlackettLuceOptions() {
  PlackettLuceOptions paper;
  paper.topk = 10;
  paper.permutations = 1;
  paper.skip_tied_queries = false;
  paper.stop_at_lowest_label = false;
  paper.newton_damping = 1e-6;
  paper.max_leaf_step = 100.0;
  paper.ties = PlTies::kPermutation;
  paper.weighting = PlWeighting::kUniform;
  paper.normalize_queries = false;
  paper.diagonal_leaf_step = false;
  paper.newton_split_gain = false;
  return paper;
}

absl::StatusOr<PlTies> ParsePlTies(const std::string& name) {
  if (name == "permutation") return PlTies::kPermutation;
  if (name == "efron") return PlTies::kEfron;
  if (name == "breslow") return PlTies::kBreslow;
  if (name == "independent") return PlTies::kIndependent;
  return absl::InvalidArgumentError(absl::StrFormat(
      "pl_ties: '%s' is not one of permutation, efron, breslow, independent",
      name));
}

const char* PlTiesName(PlTies ties) {
  switch (ties) {
    case PlTies::kPermutation:
      return "permutation";
    case PlTies::kEfron:
      return "efron";
    case PlTies::kBreslow:
      return "breslow";
    case PlTies::kIndependent:
      return "independent";
  }
  return "?";
}

PlWeighting AutoPlWeighting(int64_t train_documents) {
  return train_documents >= kAutoPlWeightingDocuments ? PlWeighting::kPosition
                                                      : PlWeighting::kUniform;
}

absl::StatusOr<PlWeighting> ParsePlWeighting(const std::string& name) {
  if (name == "uniform") return PlWeighting::kUniform;
  if (name == "gain") return PlWeighting::kGain;
  if (name == "position") return PlWeighting::kPosition;
  if (name == "gain_position") return PlWeighting::kGainPosition;
  if (name == "pairs") return PlWeighting::kPairs;
  if (name == "sqrt_pairs") return PlWeighting::kSqrtPairs;
  return absl::InvalidArgumentError(absl::StrFormat(
      "pl_weighting: '%s' is not one of uniform, gain, position, "
      "gain_position, pairs, sqrt_pairs",
      name));
}

const char* PlWeightingName(PlWeighting weighting) {
  switch (weighting) {
    case PlWeighting::kUniform:
      return "uniform";
    case PlWeighting::kGain:
      return "gain";
    case PlWeighting::kPosition:
      return "position";
    case PlWeighting::kGainPosition:
      return "gain_position";
    case PlWeighting::kPairs:
      return "pairs";
    case PlWeighting::kSqrtPairs:
      return "sqrt_pairs";
  }
  return "?";
}

absl::Status ValidatePlackettLuceOptions(const PlackettLuceOptions& options) {
  if (options.topk < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pl_topk must be >= 0 (0 = the whole ranking), got %d", options.topk));
  }
  // The dedup compares every permutation with the earlier ones (O(m^2)).
  if (options.permutations < 1 || options.permutations > 1000) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pl_permutations must be in [1, 1000], got %d", options.permutations));
  }
  if (options.ties != PlTies::kPermutation && options.permutations != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pl_permutations=%d applies to pl_ties=permutation; pl_ties=%s "
        "needs no sampled tie-breaks",
        options.permutations, PlTiesName(options.ties)));
  }
  if (!(options.newton_damping >= 0.0) || !std::isfinite(options.newton_damping)) {
    return absl::InvalidArgumentError("pl_newton_damping must be >= 0");
  }
  if (!(options.max_leaf_step >= 0.0)) {
    return absl::InvalidArgumentError("pl_max_leaf_step must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace plrank
