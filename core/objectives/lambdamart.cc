#include "core/objectives/lambdamart.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/ranking_order.h"

namespace plrank {

absl::Status ValidateLambdaMartOptions(const LambdaMartOptions& options) {
  if (!(options.sigma > 0.0) || !std::isfinite(options.sigma)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("lambdamart_sigma must be > 0, got %g", options.sigma));
  }
  if (options.truncation < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "lambdamart_truncation must be >= 0 (0 = all pairs), got %d",
        options.truncation));
  }
  return absl::OkStatus();
}

absl::Status LambdaMartObjective::InitQueries(const Dataset& /*train*/,
                                              uint64_t /*seed*/) {
  if (absl::Status s = ValidateLambdaMartOptions(options_); !s.ok()) return s;
  const size_t num_queries = queries().num_queries();
  inverse_ideal_dcg_.assign(num_queries, 0.0);
  skipped_queries_ = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    const double ideal = IdealDcg(
        absl::MakeConstSpan(queries().labels.data() + queries().begin(q),
                            queries().size(q)),
        options_.truncation);
    if (queries().all_equal[q] || !(ideal > 0.0)) {
      ++skipped_queries_;
      continue;
    }
    inverse_ideal_dcg_[q] = 1.0 / ideal;
  }
  discounts_.resize(queries().max_query_size);
  for (size_t r = 0; r < discounts_.size(); ++r) discounts_[r] = RankDiscount(r);
  return absl::OkStatus();
}

// One query in rank order: position r holds the document ranked r-th.
// exps[r] = exp(sigma (s_r - s_0)) lets every pair's
// exp(sigma (s_j - s_i)) = exps[j] / exps[i] (ranks i < j, so it is in
// [0, 1]) cost a multiplication instead of an exp.
struct LambdaMartObjective::RankedQuery {
  uint32_t size = 0;
  uint32_t depth = 0;  // pairs need their better-ranked document above this
  const int32_t* labels = nullptr;
  const double* gains = nullptr;
  const double* scores = nullptr;
  const double* exps = nullptr;
  double* gradients = nullptr;
  double* hessians = nullptr;
  // Training weights in rank order (query weight times document weight);
  // null when the objective has none. A pair counts the weight of its more
  // relevant document.
  const double* weights = nullptr;
};

namespace {

// Below this, 1 / exps[i] would lose precision; the row takes exps directly.
constexpr double kSmallestRowExp = 1e-250;

// Adds the lambdas and hessians of every pair (i, j > i) to the ranked
// gradients/hessians. ratio(j) = exp(sigma (s_j - s_i)) in [0, 1]. With
// r = ratio(j): rho = r / (1 + r) when i is the better-labelled document,
// 1 / (1 + r) otherwise, and rho (1 - rho) = r / (1 + r)^2 either way.
// Branch-free: equal labels give delta = 0 and add nothing.
template <typename Ranked, typename Ratio>
void AccumulateRow(const Ranked& ranked, uint32_t i, double sigma,
                   double inverse_ideal, const double* discounts,
                   Ratio ratio) {
  const int32_t label_i = ranked.labels[i];
  const double gain_i = ranked.gains[i];
  const double discount_i = discounts[i];
  double gradient_i = 0.0;
  double hessian_i = 0.0;
  for (uint32_t j = i + 1; j < ranked.size; ++j) {
    const double r = ratio(j);
    const double inverse = 1.0 / (1.0 + r);
    const int32_t sign =
        (label_i > ranked.labels[j]) - (label_i < ranked.labels[j]);
    const double delta = std::abs(gain_i - ranked.gains[j]) *
                         (discount_i - discounts[j]) * inverse_ideal;
    const double rho = sign > 0 ? r * inverse : inverse;
    double lambda = sign * sigma * delta * rho;
    double curvature = sigma * sigma * delta * r * inverse * inverse;
    if (ranked.weights != nullptr) {
      const double w = sign > 0 ? ranked.weights[i] : ranked.weights[j];
      lambda *= w;
      curvature *= w;
    }
    gradient_i -= lambda;
    ranked.gradients[j] += lambda;
    hessian_i += curvature;
    ranked.hessians[j] += curvature;
  }
  ranked.gradients[i] += gradient_i;
  ranked.hessians[i] += hessian_i;
}

// The pairs' logistic losses: delta * log(1 + exp(-sigma (s_high - s_low))).
template <typename Ranked, typename Ratio>
double RowLoss(const Ranked& ranked, uint32_t i, double sigma,
               double inverse_ideal, const double* discounts, Ratio ratio) {
  const int32_t label_i = ranked.labels[i];
  double loss = 0.0;
  for (uint32_t j = i + 1; j < ranked.size; ++j) {
    if (ranked.labels[j] == label_i) continue;
    const double delta = std::abs(ranked.gains[i] - ranked.gains[j]) *
                         (discounts[i] - discounts[j]) * inverse_ideal;
    const double softplus = std::log1p(ratio(j));
    const double w = ranked.weights == nullptr ? 1.0
                     : ranked.labels[j] > label_i ? ranked.weights[j]
                                                  : ranked.weights[i];
    // When j is the better document its margin s_j - s_i is <= 0.
    loss += w * delta * (ranked.labels[j] > label_i
                         ? softplus + sigma * (ranked.scores[i] - ranked.scores[j])
                         : softplus);
  }
  return loss;
}

// Calls fn(i, ratio) for every row i < depth with the cheapest exact ratio.
template <typename Ranked, typename Fn>
void ForEachRow(const Ranked& ranked, double sigma, Fn&& fn) {
  for (uint32_t i = 0; i < ranked.depth; ++i) {
    const double exp_i = ranked.exps[i];
    if (exp_i >= kSmallestRowExp) {
      const double inverse_exp_i = 1.0 / exp_i;
      fn(i, [&](uint32_t j) { return ranked.exps[j] * inverse_exp_i; });
    } else {
      const double score_i = ranked.scores[i];
      fn(i, [&](uint32_t j) {
        return std::exp(sigma * (ranked.scores[j] - score_i));
      });
    }
  }
}

}  // namespace

bool LambdaMartObjective::RankQuery(size_t q, const double* scores,
                                    QueryScratch& scratch,
                                    RankedQuery* ranked) const {
  if (inverse_ideal_dcg_[q] == 0.0) return false;
  const uint32_t n = queries().size(q);
  const int32_t* labels = queries().labels.data() + queries().begin(q);
  const double* gains = queries().gains.data() + queries().begin(q);
  scratch.order.resize(n);
  std::iota(scratch.order.begin(), scratch.order.end(), 0u);
  // The metrics' total order, so the ranking never depends on the sort's
  // internals.
  std::sort(
      scratch.order.begin(), scratch.order.end(), [&](uint32_t a, uint32_t b) {
        return RanksBefore(scores[a], labels[a], a, scores[b], labels[b], b);
      });
  scratch.labels.resize(n);
  const bool weighted = !training_weights().empty();
  scratch.work.resize((weighted ? 6 : 5) * static_cast<size_t>(n));
  double* work = scratch.work.data();
  ranked->size = n;
  ranked->depth = options_.truncation == 0
                      ? n
                      : std::min<uint32_t>(n, options_.truncation);
  ranked->labels = scratch.labels.data();
  ranked->gains = work;
  ranked->scores = work + n;
  ranked->exps = work + 2 * n;
  ranked->gradients = work + 3 * n;
  ranked->hessians = work + 4 * n;
  const double top = scores[scratch.order[0]];
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t d = scratch.order[r];
    scratch.labels[r] = labels[d];
    work[r] = gains[d];
    work[n + r] = scores[d];
    work[2 * n + r] = std::exp(options_.sigma * (scores[d] - top));
    work[3 * n + r] = 0.0;
    work[4 * n + r] = 0.0;
    if (weighted) {
      work[5 * n + r] = query_weight(q) * document_weight(queries().begin(q) + d);
    }
  }
  ranked->weights = weighted ? work + 5 * n : nullptr;
  return true;
}

void LambdaMartObjective::QueryDerivatives(size_t q, const double* scores,
                                           double* gradients, double* hessians,
                                           QueryScratch& scratch) const {
  const uint32_t n = queries().size(q);
  RankedQuery ranked;
  if (!RankQuery(q, scores, scratch, &ranked)) {
    std::fill(gradients, gradients + n, 0.0);
    std::fill(hessians, hessians + n, 0.0);
    return;
  }
  const double sigma = options_.sigma;
  const double inverse_ideal = inverse_ideal_dcg_[q];
  ForEachRow(ranked, sigma, [&](uint32_t i, auto ratio) {
    AccumulateRow(ranked, i, sigma, inverse_ideal, discounts_.data(), ratio);
  });
  for (uint32_t r = 0; r < n; ++r) {
    gradients[scratch.order[r]] = ranked.gradients[r];
    hessians[scratch.order[r]] = ranked.hessians[r];
  }
}

double LambdaMartObjective::QueryLoss(size_t q, const double* scores,
                                      QueryScratch& scratch) const {
  RankedQuery ranked;
  if (!RankQuery(q, scores, scratch, &ranked)) return 0.0;
  const double sigma = options_.sigma;
  double loss = 0.0;
  ForEachRow(ranked, sigma, [&](uint32_t i, auto ratio) {
    loss += RowLoss(ranked, i, sigma, inverse_ideal_dcg_[q], discounts_.data(),
                    ratio);
  });
  return loss;
}

std::vector<std::string> LambdaMartObjective::Describe() const {
  return {absl::StrFormat(
      "lambdamart: sigma %g, truncation %d%s; %d of %d queries skipped (all "
      "labels equal or ideal DCG 0)",
      options_.sigma, options_.truncation,
      options_.truncation == 0 ? " (all pairs)" : "", skipped_queries_,
      queries().num_queries())};
}

}  // namespace plrank
