#ifndef PLRANK_CORE_POLICY_COUNTERFACTUAL_H_
#define PLRANK_CORE_POLICY_COUNTERFACTUAL_H_

// Counterfactual evaluation of a candidate ranking from the clicks logged
// under a stochastic logging policy, by the item-position estimator: a click
// on document d logged at position j counts for a candidate that also puts d
// at j, divided by the logging policy's marginal probability mu(d, j) of
// showing d at j. Unbiased (for inverse propensity scoring, IPS) whenever a
// click depends only on the document and its position and mu(d, j) > 0 at
// every (d, j) the candidate uses; the self-normalised form (SNIPS) divides
// by the mean of the importance weights instead of their expectation (1),
// trading a small bias for a smaller variance.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace plrank {

// One logged ranking (a request) over its n candidate documents.
struct LoggedRanking {
  // Positions the logging policy filled (k); only these are evaluated.
  size_t num_positions = 0;
  // k x n, row-major [j * n + d]: the logging policy's probability of
  // showing d at position j (0-based).
  std::vector<double> marginals;
  // n values: the 1-based position d was shown at, 0 = not shown.
  std::vector<uint32_t> shown_at;
  // n values: whether d was clicked (only shown documents can be).
  std::vector<uint8_t> clicked;
};

// A value with its normal-approximation 95 % confidence interval.
struct Interval {
  double value = 0.0;
  double low = 0.0;
  double high = 0.0;
};

struct CounterfactualEstimate {
  size_t rankings = 0;
  // Candidate placements checked (sum of k over rankings).
  uint64_t placements = 0;
  // Expected clicks per ranking over the top k positions, and click-DCG
  // over the top dcg_k (a click at position j gains 1 / log2(j + 1)).
  Interval logged_clicks, logged_dcg;  // what the logging policy got
  Interval ips_clicks, ips_dcg;
  Interval snips_clicks, snips_dcg;
  // Mean importance weight per position (1 in expectation); far from 1
  // means too few logs for this candidate.
  double mean_weight = 0.0;
};

// `candidate_orders[i]` ranks the documents of logged[i] best first (at
// least its num_positions entries). FAILED_PRECONDITION, with the count,
// when the candidate puts a document at a position where the logging
// policy's marginal is 0 (no support: no estimate can be unbiased);
// INVALID_ARGUMENT on inconsistent sizes or no rankings.
absl::StatusOr<CounterfactualEstimate> EstimateCandidate(
    absl::Span<const LoggedRanking> logged,
    absl::Span<const std::vector<uint32_t>> candidate_orders, size_t dcg_k);

}  // namespace plrank

#endif  // PLRANK_CORE_POLICY_COUNTERFACTUAL_H_
