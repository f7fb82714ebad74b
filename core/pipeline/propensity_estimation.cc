#include "core/pipeline/propensity_estimation.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"

namespace plrank {
namespace {

double Sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

}  // namespace

absl::StatusOr<PropensityCurve> EstimatePropensities(
    const Dataset& clicks, const PropensityEstimationOptions& options) {
  const size_t n = clicks.num_documents();
  if (clicks.positions.size() != n || n == 0) {
    return absl::InvalidArgumentError(
        "estimating propensities needs a display position per document (a "
        ".position file beside the data, or --position_file)");
  }
  const int32_t f = clicks.num_features;
  int32_t max_position = 1;
  for (int32_t p : clicks.positions) max_position = std::max(max_position, p);
  const size_t m = static_cast<size_t>(max_position);

  // Standardised features, row-major for the regression.
  std::vector<double> mean(f, 0.0), scale(f, 1.0);
  for (int32_t j = 0; j < f; ++j) {
    const float* column = clicks.column(j);
    double sum = 0.0, sum2 = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double v = std::isnan(column[i]) ? 0.0 : column[i];
      sum += v;
      sum2 += v * v;
    }
    mean[j] = sum / n;
    const double var = sum2 / n - mean[j] * mean[j];
    scale[j] = var > 1e-12 ? 1.0 / std::sqrt(var) : 0.0;
  }
  std::vector<double> x(n * static_cast<size_t>(f));
  for (int32_t j = 0; j < f; ++j) {
    const float* column = clicks.column(j);
    for (size_t i = 0; i < n; ++i) {
      const double v = std::isnan(column[i]) ? 0.0 : column[i];
      x[i * f + j] = (v - mean[j]) * scale[j];
    }
  }

  PropensityCurve curve;
  curve.shown.assign(m, 0);
  curve.clicks.assign(m, 0);
  // Candidates that were not shown (position 0) tell nothing about
  // examination: they are left out (no E-step target, no likelihood term).
  for (size_t i = 0; i < n; ++i) {
    if (clicks.positions[i] == 0) continue;
    const size_t k = clicks.positions[i] - 1;
    ++curve.shown[k];
    if (clicks.labels[i] > 0) ++curve.clicks[k];
  }
  // Start: examination 1 / position, relevance from the overall click rate.
  std::vector<double> theta(m);
  for (size_t k = 0; k < m; ++k) theta[k] = 1.0 / (k + 1.0);
  int64_t total_clicks = 0;
  for (int64_t c : curve.clicks) total_clicks += c;
  const double base_rate =
      std::clamp(static_cast<double>(total_clicks) / n, 1e-4, 1.0 - 1e-4);
  std::vector<double> w(f, 0.0);
  double bias = std::log(base_rate / (1.0 - base_rate));
  std::vector<double> gamma(n), relevance_target(n), gradient(f);
  std::vector<double> examined(m), count(m);
  auto predict = [&]() {
    for (size_t i = 0; i < n; ++i) {
      double z = bias;
      const double* row = x.data() + i * f;
      for (int32_t j = 0; j < f; ++j) z += w[j] * row[j];
      gamma[i] = std::clamp(Sigmoid(z), 1e-6, 1.0 - 1e-6);
    }
  };
  predict();
  for (int32_t it = 0; it < options.em_iterations; ++it) {
    // E step.
    std::fill(examined.begin(), examined.end(), 0.0);
    std::fill(count.begin(), count.end(), 0.0);
    for (size_t i = 0; i < n; ++i) {
      if (clicks.positions[i] == 0) {
        relevance_target[i] = gamma[i];  // no gradient from it
        continue;
      }
      const size_t k = clicks.positions[i] - 1;
      const double t = theta[k], g = gamma[i];
      double e, r;
      if (clicks.labels[i] > 0) {
        e = r = 1.0;
      } else {
        const double none = std::max(1.0 - t * g, 1e-12);
        e = t * (1.0 - g) / none;
        r = (1.0 - t) * g / none;
      }
      examined[k] += e;
      count[k] += 1.0;
      relevance_target[i] = r;
    }
    // M step: theta, then the relevance regression (gradient steps on the
    // cross-entropy to the soft targets; step 1 suits standardised inputs).
    for (size_t k = 0; k < m; ++k) {
      theta[k] = count[k] > 0.0 ? std::clamp(examined[k] / count[k], 1e-6, 1.0)
                                : theta[k];
    }
    for (int32_t s = 0; s < options.regression_steps; ++s) {
      std::fill(gradient.begin(), gradient.end(), 0.0);
      double bias_gradient = 0.0;
      for (size_t i = 0; i < n; ++i) {
        const double residual = gamma[i] - relevance_target[i];
        bias_gradient += residual;
        const double* row = x.data() + i * f;
        for (int32_t j = 0; j < f; ++j) gradient[j] += residual * row[j];
      }
      bias -= bias_gradient / n;
      for (int32_t j = 0; j < f; ++j) {
        w[j] -= gradient[j] / n + options.l2 * w[j];
      }
      predict();
    }
  }
  double ll = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (clicks.positions[i] == 0) continue;
    const double p = std::clamp(theta[clicks.positions[i] - 1] * gamma[i],
                                1e-12, 1.0 - 1e-12);
    ll += clicks.labels[i] > 0 ? std::log(p) : std::log(1.0 - p);
  }
  curve.log_likelihood = ll;
  // Positions never shown keep their neighbour's value (monotone fill).
  for (size_t k = 1; k < m; ++k) {
    if (curve.shown[k] == 0) theta[k] = theta[k - 1];
  }
  const double top = theta[0] > 0.0 ? theta[0] : 1.0;
  curve.theta.resize(m);
  for (size_t k = 0; k < m; ++k) curve.theta[k] = std::min(theta[k] / top, 1.0);
  return curve;
}

}  // namespace plrank
