#include "core/policy/counterfactual.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank {
namespace {

constexpr double kZ95 = 1.959963984540054;

Interval MeanInterval(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= n;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double half =
      values.size() > 1 ? kZ95 * std::sqrt(squares / (n - 1) / n) : 0.0;
  return {mean, mean - half, mean + half};
}

// sum(v) / sum(w) with the delta-method interval.
Interval RatioInterval(const std::vector<double>& v,
                       const std::vector<double>& w) {
  const double n = static_cast<double>(v.size());
  double sv = 0.0, sw = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    sv += v[i];
    sw += w[i];
  }
  if (sw <= 0) return {0.0, 0.0, 0.0};
  const double ratio = sv / sw;
  const double mean_w = sw / n;
  double squares = 0.0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double r = v[i] - ratio * w[i];
    squares += r * r;
  }
  const double half =
      v.size() > 1
          ? kZ95 * std::sqrt(squares / (n - 1) / n) / mean_w
          : 0.0;
  return {ratio, ratio - half, ratio + half};
}

double Gain(size_t position) {  // 0-based position
  return 1.0 / std::log2(static_cast<double>(position) + 2.0);
}

}  // namespace

absl::StatusOr<CounterfactualEstimate> EstimateCandidate(
    absl::Span<const LoggedRanking> logged,
    absl::Span<const std::vector<uint32_t>> candidate_orders, size_t dcg_k) {
  if (logged.empty()) {
    return absl::InvalidArgumentError("no logged rankings to evaluate on");
  }
  if (candidate_orders.size() != logged.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(candidate_orders.size(), " candidate rankings for ",
                     logged.size(), " logged rankings"));
  }
  const size_t count = logged.size();
  std::vector<double> logged_clicks(count), logged_dcg(count);
  std::vector<double> ips_clicks(count), ips_dcg(count), weights(count);
  CounterfactualEstimate estimate;
  estimate.rankings = count;
  uint64_t unsupported = 0;
  for (size_t i = 0; i < count; ++i) {
    const LoggedRanking& ranking = logged[i];
    const size_t n = ranking.shown_at.size();
    const size_t k = ranking.num_positions;
    const std::vector<uint32_t>& order = candidate_orders[i];
    if (ranking.clicked.size() != n || ranking.marginals.size() != k * n ||
        k == 0 || k > n || order.size() < k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "logged ranking ", i, " is inconsistent (", n, " documents, ", k,
          " positions, ", ranking.marginals.size(), " marginals, ",
          order.size(), " candidate documents)"));
    }
    for (size_t d = 0; d < n; ++d) {
      const uint32_t at = ranking.shown_at[d];
      if (ranking.clicked[d] && at >= 1 && at <= k) {
        logged_clicks[i] += 1.0;
        if (at <= dcg_k) logged_dcg[i] += Gain(at - 1);
      }
    }
    double weight_sum = 0.0;
    for (size_t j = 0; j < k; ++j) {
      const uint32_t d = order[j];
      if (d >= n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "candidate ranking ", i, " names document ", d, " of ", n));
      }
      ++estimate.placements;
      const double mu = ranking.marginals[j * n + d];
      if (!(mu > 0)) {
        ++unsupported;
        continue;
      }
      if (ranking.shown_at[d] != j + 1) continue;
      weight_sum += 1.0 / mu;
      if (!ranking.clicked[d]) continue;
      ips_clicks[i] += 1.0 / mu;
      if (j < dcg_k) ips_dcg[i] += Gain(j) / mu;
    }
    weights[i] = weight_sum / static_cast<double>(k);
  }
  if (unsupported > 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        unsupported, " of ", estimate.placements,
        " candidate placements put a document at a position where the "
        "logging policy never shows it (no support); the logs cannot "
        "evaluate this candidate (log with sampling, temperature > 0)"));
  }
  estimate.logged_clicks = MeanInterval(logged_clicks);
  estimate.logged_dcg = MeanInterval(logged_dcg);
  estimate.ips_clicks = MeanInterval(ips_clicks);
  estimate.ips_dcg = MeanInterval(ips_dcg);
  estimate.snips_clicks = RatioInterval(ips_clicks, weights);
  estimate.snips_dcg = RatioInterval(ips_dcg, weights);
  estimate.mean_weight = MeanInterval(weights).value;
  return estimate;
}

}  // namespace plrank
