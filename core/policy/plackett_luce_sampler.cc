#include "core/policy/plackett_luce_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/data/random.h"

namespace plrank {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
// 1 / (remaining mass) is clamped here: only reached when every document
// left has a weight below e^-690 of the best one, where the products with
// those (underflowed) weights are 0 anyway; the clamp keeps them from
// becoming 0 * inf = NaN.
constexpr double kMaxInverseMass = 1e300;

double LogAdd(double a, double b) {
  if (a == kNegativeInfinity) return b;
  if (b == kNegativeInfinity) return a;
  const double high = std::max(a, b);
  return high + std::log1p(std::exp(-std::abs(a - b)));
}

// A Gumbel(0, 1) variate from 53 random bits, never infinite: u is in
// (0, 1) strictly.
double Gumbel(Xoshiro256& random) {
  const double u =
      (static_cast<double>(random.Next() >> 11) + 0.5) * 0x1.0p-53;
  return -std::log(-std::log(u));
}

}  // namespace

absl::StatusOr<PlackettLucePolicy> PlackettLucePolicy::Create(
    absl::Span<const double> scores, const PolicyOptions& options) {
  if (!(options.temperature > 0) || !std::isfinite(options.temperature)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sampling temperature must be > 0 and finite, got ",
        options.temperature));
  }
  if (scores.empty()) {
    return absl::InvalidArgumentError("no documents to rank");
  }
  std::vector<double> log_weights(scores.size());
  for (size_t d = 0; d < scores.size(); ++d) {
    log_weights[d] = scores[d] / options.temperature;
    if (!std::isfinite(scores[d]) || !std::isfinite(log_weights[d])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "document ", d, " has score ", scores[d],
          ", which at temperature ", options.temperature,
          " is not a finite log-weight"));
    }
  }
  const size_t positions = options.top_k == 0
                               ? scores.size()
                               : std::min(options.top_k, scores.size());
  return PlackettLucePolicy(std::move(log_weights), positions);
}

PlackettLucePolicy::PlackettLucePolicy(std::vector<double> log_weights,
                                       size_t num_positions)
    : log_weights_(std::move(log_weights)), num_positions_(num_positions) {
  max_log_weight_ =
      *std::max_element(log_weights_.begin(), log_weights_.end());
  double sum = 0.0;
  for (double w : log_weights_) sum += std::exp(w - max_log_weight_);
  log_total_ = max_log_weight_ + std::log(sum);
}

void PlackettLucePolicy::DrawOrder(uint64_t seed, uint64_t stream,
                                   std::vector<double>& keys,
                                   std::vector<uint32_t>& order) const {
  const size_t n = log_weights_.size();
  Xoshiro256 random(seed, stream);
  keys.resize(n);
  for (size_t d = 0; d < n; ++d) keys[d] = log_weights_[d] + Gumbel(random);
  order.resize(n);
  std::iota(order.begin(), order.end(), 0u);
  // A strict total order (key desc, then index): the draw is a function of
  // the keys alone.
  auto better = [&keys](uint32_t a, uint32_t b) {
    if (keys[a] != keys[b]) return keys[a] > keys[b];
    return a < b;
  };
  const size_t k = num_positions_;
  if (k < n) {
    std::nth_element(order.begin(), order.begin() + k, order.end(), better);
  }
  std::sort(order.begin(), order.begin() + k, better);
}

void PlackettLucePolicy::RemainingLogMass(
    absl::Span<const uint32_t> prefix, std::vector<double>& remaining) const {
  const size_t n = log_weights_.size();
  thread_local std::vector<char> placed;
  placed.assign(n, 0);
  for (uint32_t d : prefix) placed[d] = 1;
  double rest_max = kNegativeInfinity;
  for (size_t d = 0; d < n; ++d) {
    if (!placed[d]) rest_max = std::max(rest_max, log_weights_[d]);
  }
  double rest = kNegativeInfinity;
  if (rest_max != kNegativeInfinity) {
    double sum = 0.0;
    for (size_t d = 0; d < n; ++d) {
      if (!placed[d]) sum += std::exp(log_weights_[d] - rest_max);
    }
    rest = rest_max + std::log(sum);
  }
  remaining.resize(prefix.size() + 1);
  remaining[prefix.size()] = rest;
  for (size_t j = prefix.size(); j-- > 0;) {
    remaining[j] = LogAdd(remaining[j + 1], log_weights_[prefix[j]]);
  }
}

SampledRanking PlackettLucePolicy::Score(
    absl::Span<const uint32_t> prefix) const {
  SampledRanking ranking;
  ranking.order.assign(prefix.begin(), prefix.end());
  std::vector<double> remaining;
  RemainingLogMass(prefix, remaining);
  ranking.pick_probabilities.resize(prefix.size());
  for (size_t j = 0; j < prefix.size(); ++j) {
    const double log_pick = log_weights_[prefix[j]] - remaining[j];
    ranking.pick_probabilities[j] = std::exp(log_pick);
    ranking.log_probability += log_pick;
  }
  return ranking;
}

SampledRanking PlackettLucePolicy::Sample(uint64_t seed,
                                          uint64_t stream) const {
  std::vector<double> keys;
  std::vector<uint32_t> order;
  DrawOrder(seed, stream, keys, order);
  return Score(absl::MakeConstSpan(order.data(), num_positions_));
}

std::vector<double> PlackettLucePolicy::EstimateMarginals(
    size_t samples, uint64_t seed) const {
  const size_t n = log_weights_.size();
  const size_t k = num_positions_;
  std::vector<double> sums(k * n, 0.0);
  if (samples == 0) return sums;
  // sums[j * n + d] = sum over draws where d is not placed above j of
  // 1 / R_j (R_j: weight of the documents not placed above j, relative to
  // the best weight). Documents not placed in a draw all get the same
  // terms, so those are kept once (cumulative[s * k + j], over draws < s)
  // and handed to a document lazily for the run of draws since it was last
  // placed: a document never unplaced above j keeps exactly 0.
  std::vector<double> cumulative((samples + 1) * k, 0.0);
  std::vector<size_t> unplaced_since(n, 0);
  std::vector<double> keys;
  std::vector<uint32_t> order;
  std::vector<double> remaining;
  std::vector<double> inverse(k);
  for (size_t s = 0; s < samples; ++s) {
    DrawOrder(seed, s + 1, keys, order);
    const absl::Span<const uint32_t> prefix(order.data(), k);
    RemainingLogMass(prefix, remaining);
    for (size_t j = 0; j < k; ++j) {
      inverse[j] =
          std::min(std::exp(max_log_weight_ - remaining[j]), kMaxInverseMass);
    }
    for (size_t p = 0; p < k; ++p) {
      const uint32_t d = prefix[p];
      // The draws since d was last placed, where it was unplaced throughout.
      for (size_t j = 0; j < k; ++j) {
        sums[j * n + d] += cumulative[s * k + j] -
                           cumulative[unplaced_since[d] * k + j];
      }
      // This draw: d was unplaced at positions 0..p.
      for (size_t j = 0; j <= p; ++j) sums[j * n + d] += inverse[j];
      unplaced_since[d] = s + 1;
    }
    for (size_t j = 0; j < k; ++j) {
      cumulative[(s + 1) * k + j] = cumulative[s * k + j] + inverse[j];
    }
  }
  std::vector<double> marginals(k * n);
  for (size_t d = 0; d < n; ++d) {
    const double weight = std::exp(log_weights_[d] - max_log_weight_);
    for (size_t j = 0; j < k; ++j) {
      const double sum = sums[j * n + d] + cumulative[samples * k + j] -
                         cumulative[unplaced_since[d] * k + j];
      marginals[j * n + d] =
          std::min(1.0, weight * sum / static_cast<double>(samples));
    }
  }
  return marginals;
}

}  // namespace plrank
