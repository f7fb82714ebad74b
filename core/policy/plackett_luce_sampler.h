#ifndef PLRANK_CORE_POLICY_PLACKETT_LUCE_SAMPLER_H_
#define PLRANK_CORE_POLICY_PLACKETT_LUCE_SAMPLER_H_

// The stochastic ranking policy of a Plackett-Luce model: a ranking is drawn
// position by position, each time picking one of the documents not yet
// placed with probability proportional to exp(score / temperature). Drawn
// here by the Gumbel top-k trick (sort by score / temperature + Gumbel
// noise), which gives exactly that distribution in one pass. Every draw is
// reproducible from its seed (the project's own generator, core/data/
// random.h, whose streams are pinned across library versions).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace plrank {

struct PolicyOptions {
  // > 0 and finite: p(d) ∝ exp(score / temperature). (Temperature 0, the
  // deterministic ranking, is the caller's existing sort, not this class.)
  double temperature = 1.0;
  // Documents placed: min(top_k, documents); 0 = all.
  size_t top_k = 0;
};

// One drawn ranking.
struct SampledRanking {
  // Document indices, best first; `top_k` of them.
  std::vector<uint32_t> order;
  // order.size() values: the probability that the document at position j
  // was picked there given the documents above it (its weight over the
  // weights of every document not yet placed).
  std::vector<double> pick_probabilities;
  // Sum of the logs of pick_probabilities: the log-probability of the
  // drawn prefix under the policy.
  double log_probability = 0.0;
};

// The policy of one query's scores. Keeps the scaled log-weights
// (score / temperature) and their log-normaliser; no allocation per draw
// beyond the returned ranking.
class PlackettLucePolicy {
 public:
  // INVALID_ARGUMENT when the temperature is not > 0 and finite, when there
  // are no scores, or when a score (or score / temperature) is not finite.
  static absl::StatusOr<PlackettLucePolicy> Create(
      absl::Span<const double> scores, const PolicyOptions& options);

  size_t num_documents() const { return log_weights_.size(); }
  // Positions placed by each draw: min(top_k, documents).
  size_t num_positions() const { return num_positions_; }
  // score / temperature of each document.
  absl::Span<const double> log_weights() const { return log_weights_; }

  // Draws one ranking from stream (seed, stream).
  SampledRanking Sample(uint64_t seed, uint64_t stream = 0) const;

  // The pick probabilities and log-probability of a given prefix (indices
  // of distinct documents), as Sample reports them for a drawn one.
  SampledRanking Score(absl::Span<const uint32_t> prefix) const;

  // Marginal probabilities P(document d is placed at position j), for
  // j < num_positions(), estimated from `samples` draws of streams
  // (seed, 1..samples). Rao-Blackwellised: each draw adds, for every
  // position j and every document d not placed above j in that draw, the
  // probability that d is picked at j given that draw's prefix — not just
  // the indicator of the document drawn there. The estimate is unbiased,
  // exact at position 0, and > 0 for every (d, j) the policy can produce,
  // so it can be divided by. Returned row-major: [j * num_documents() + d].
  // Costs samples x (num_documents() + num_positions()^2).
  std::vector<double> EstimateMarginals(size_t samples, uint64_t seed) const;

 private:
  PlackettLucePolicy(std::vector<double> log_weights, size_t num_positions);

  // Fills `order` (resized to num_documents()) so that its first
  // num_positions() entries are the Gumbel top-k of stream (seed, stream).
  void DrawOrder(uint64_t seed, uint64_t stream, std::vector<double>& keys,
                 std::vector<uint32_t>& order) const;
  // log of the sum of weights of the documents NOT in prefix[0..j) for
  // every j <= prefix.size(), by positive additions only (stable).
  void RemainingLogMass(absl::Span<const uint32_t> prefix,
                        std::vector<double>& remaining) const;

  std::vector<double> log_weights_;
  size_t num_positions_ = 0;
  double max_log_weight_ = 0.0;
  double log_total_ = 0.0;  // log sum of all weights
};

}  // namespace plrank

#endif  // PLRANK_CORE_POLICY_PLACKETT_LUCE_SAMPLER_H_
