#ifndef PLRANK_CORE_PIPELINE_PROPENSITY_ESTIMATION_H_
#define PLRANK_CORE_PIPELINE_PROPENSITY_ESTIMATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"

namespace plrank {

struct PropensityEstimationOptions {
  int32_t em_iterations = 50;
  // Gradient steps of the relevance model per EM iteration.
  int32_t regression_steps = 5;
  double l2 = 1e-3;  // of the relevance model's weights
};

struct PropensityCurve {
  // theta[k] = the examination probability of position k + 1, divided by
  // that of position 1 (so theta[0] = 1): what IPS divides by.
  std::vector<double> theta;
  // Rows (shown documents) and clicks seen at each position.
  std::vector<int64_t> shown, clicks;
  double log_likelihood = 0.0;  // of the clicks at the final estimate
};

// Regression-EM under the position-based model (Wang, Golbandi, Bendersky,
// Metzler, Najork, WSDM 2018): P(click) = theta_k gamma(x), where theta_k is
// the examination probability of position k and gamma(x) the relevance
// probability of a document with features x. The E step gives each row the
// posteriors of examination and relevance; the M step sets theta_k to the
// mean examination posterior at k and refits gamma, a logistic regression
// on the standardised features (NaN = 0), by a few gradient steps on the
// relevance posteriors ("regression" in place of per-document parameters,
// so the relevance is shared across the sessions and queries of similar
// documents). Clicks are labels > 0; positions come from data.positions
// (InvalidArgument without them); candidates not shown (position 0) are
// left out. Deterministic.
absl::StatusOr<PropensityCurve> EstimatePropensities(
    const Dataset& clicks, const PropensityEstimationOptions& options = {});

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_PROPENSITY_ESTIMATION_H_
