#include "core/pipeline/click_training.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/pipeline/propensity_estimation.h"

namespace plrank {

absl::StatusOr<PositionDebias> ParsePositionDebias(const std::string& name) {
  if (name == "none") return PositionDebias::kNone;
  if (name == "gam") return PositionDebias::kGam;
  if (name == "ips") return PositionDebias::kIps;
  return absl::InvalidArgumentError(absl::StrCat(
      "--position_debias must be one of none, gam, ips; got '", name, "'"));
}

const char* PositionDebiasName(PositionDebias debias) {
  switch (debias) {
    case PositionDebias::kNone:
      return "none";
    case PositionDebias::kGam:
      return "gam";
    case PositionDebias::kIps:
      return "ips";
  }
  return "none";
}

std::string FormatCurve(const std::vector<double>& curve) {
  std::string text;
  for (size_t k = 0; k < curve.size(); ++k) {
    absl::StrAppendFormat(&text, "%s%.6g", k == 0 ? "" : ",", curve[k]);
  }
  return text;
}

absl::StatusOr<TrainingWeights> TrainingWeightsFor(const Dataset& train,
                                                   const ClickOptions& options,
                                                   ClickWeightsInfo* info) {
  TrainingWeights weights;
  const size_t n = train.num_documents();
  if (!train.query_weights.empty()) {
    weights.query.assign(train.query_weights.begin(),
                         train.query_weights.end());
  }
  if (!train.weights.empty()) {
    weights.document.assign(train.weights.begin(), train.weights.end());
  }
  if (options.position_debias == PositionDebias::kGam && train.positions.empty()) {
    return absl::InvalidArgumentError(
        "--position_debias=gam needs a display position per training "
        "document (<train>.position or --position_file)");
  }
  if (options.position_debias != PositionDebias::kIps) return weights;
  if (!(options.max_ips_weight >= 1.0)) {
    return absl::InvalidArgumentError("--max_ips_weight must be >= 1");
  }
  // Per-document propensity, from the most specific source.
  std::vector<double> propensity(n, 1.0);
  if (!train.propensities.empty()) {
    std::copy(train.propensities.begin(), train.propensities.end(),
              propensity.begin());
    info->notes.push_back("ips: per-document propensities from the data");
  } else {
    if (train.positions.empty()) {
      return absl::InvalidArgumentError(
          "--position_debias=ips needs propensities: a .propensity file or "
          "--propensity_file, or display positions (<train>.position or "
          "--position_file) with --position_propensities or none to estimate "
          "them");
    }
    std::vector<double> curve = options.position_propensities;
    if (curve.empty()) {
      absl::StatusOr<PropensityCurve> estimated = EstimatePropensities(train);
      if (!estimated.ok()) return estimated.status();
      curve = estimated->theta;
      info->estimated = true;
      info->notes.push_back(absl::StrCat(
          "ips: propensities estimated by regression-EM: ", FormatCurve(curve)));
    } else {
      for (double p : curve) {
        if (!(p > 0.0 && p <= 1.0)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--position_propensities: every value must be in (0, 1], got ",
              p));
        }
      }
      info->notes.push_back(
          absl::StrCat("ips: position propensities ", FormatCurve(curve)));
    }
    info->propensity_curve = curve;
    for (size_t i = 0; i < n; ++i) {
      const size_t k = std::min<size_t>(train.positions[i], curve.size()) - 1;
      propensity[i] = curve[k];
    }
  }
  if (weights.document.empty()) weights.document.assign(n, 1.0);
  int64_t clicked = 0;
  for (size_t i = 0; i < n; ++i) {
    if (train.labels[i] <= 0) continue;
    ++clicked;
    double factor = 1.0 / propensity[i];
    if (factor > options.max_ips_weight) {
      factor = options.max_ips_weight;
      ++info->clipped;
    }
    weights.document[i] *= factor;
  }
  info->notes.push_back(absl::StrFormat(
      "ips: %d clicked documents weighted by 1 / propensity, %d clipped at "
      "--max_ips_weight=%g",
      clicked, info->clipped, options.max_ips_weight));
  return weights;
}

}  // namespace plrank
