#include "core/pipeline/click_training.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/pipeline/propensity_estimation.h"

namespace plrank {

absl::StatusOr<PositionDebias> ParsePositionDebias(const std::string& name) {
  if (name == "none") return PositionDebias::kNone;
  if (name == "gam") return PositionDebias::kGam;
  if (name == "ips") return PositionDebias::kIps;
  return absl::InvalidArgumentError(absl::StrCat(
      "--position_debias must be one of none, gam, ips; got '", name, "'"));
}

absl::StatusOr<std::vector<double>> ParsePositionPropensities(
    absl::string_view text) {
  std::vector<double> curve;
  for (absl::string_view part :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double value = 0.0;
    if (!absl::SimpleAtod(part, &value) || !(value > 0.0 && value <= 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--position_propensities: '", part,
          "' is not a propensity in (0, 1]"));
    }
    curve.push_back(value);
  }
  return curve;
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

namespace {

// The examination curve theta_1, theta_2, ... IPS combines with positions or
// position marginals: --position_propensities, else estimated from the
// shown documents' clicks (regression-EM).
absl::StatusOr<std::vector<double>> ExaminationCurve(
    const Dataset& train, const ClickOptions& options, ClickWeightsInfo* info) {
  std::vector<double> curve = options.position_propensities;
  if (!curve.empty()) {
    for (double p : curve) {
      if (!(p > 0.0 && p <= 1.0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--position_propensities: every value must be in (0, 1], got ",
            p));
      }
    }
    info->notes.push_back(
        absl::StrCat("ips: position propensities ", FormatCurve(curve)));
  } else {
    absl::StatusOr<PropensityCurve> estimated = EstimatePropensities(train);
    if (!estimated.ok()) return estimated.status();
    curve = estimated->theta;
    info->estimated = true;
    info->notes.push_back(absl::StrCat(
        "ips: propensities estimated by regression-EM: ", FormatCurve(curve)));
  }
  info->propensity_curve = curve;
  return curve;
}

// The id of the query holding stored document i, for messages.
std::string QueryIdOf(const Dataset& data, size_t i) {
  const size_t q = static_cast<size_t>(
      std::upper_bound(data.query_offsets.begin(), data.query_offsets.end(),
                       static_cast<uint32_t>(i)) -
      data.query_offsets.begin() - 1);
  return q < data.query_ids.size() ? data.query_ids[q] : std::to_string(q + 1);
}

// theta of 1-based position k (a position beyond the curve takes its last).
double CurveAt(const std::vector<double>& curve, size_t k) {
  return curve[std::min(k, curve.size()) - 1];
}

}  // namespace

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
  if (options.position_debias == PositionDebias::kGam) {
    if (train.positions.empty()) {
      return absl::InvalidArgumentError(
          "--position_debias=gam needs a display position per training "
          "document (<train>.position or --position_file)");
    }
    if (std::find(train.positions.begin(), train.positions.end(), 0) !=
        train.positions.end()) {
      return absl::InvalidArgumentError(
          "--position_debias=gam needs every training document shown: the "
          "positions have 0 (a candidate not shown); train gam on the shown "
          "documents (plrank-logs join's D, not D.all), or use ips");
    }
  }
  if (options.position_debias != PositionDebias::kIps) return weights;
  if (!(options.max_ips_weight >= 1.0)) {
    return absl::InvalidArgumentError("--max_ips_weight must be >= 1");
  }
  // Per-document propensity, from the most specific source.
  std::vector<double> propensity(n, 1.0);
  if (!train.marginals.empty()) {
    // Policy-aware (Oosterhuis & de Rijke, CIKM 2020): the logging policy's
    // expected examination of the document, sum_j mu(d, j) theta_j, over
    // every candidate of the ranking (unshown ones included), so the
    // selection into the shown top k is corrected too.
    absl::StatusOr<std::vector<double>> curve =
        ExaminationCurve(train, options, info);
    if (!curve.ok()) return curve.status();
    const size_t k = static_cast<size_t>(train.marginal_positions);
    for (size_t i = 0; i < n; ++i) {
      double expected = 0.0;
      for (size_t j = 0; j < k; ++j) {
        expected += train.marginals[i * k + j] * CurveAt(*curve, j + 1);
      }
      propensity[i] = expected;
    }
    info->notes.push_back(
        "ips: policy-aware propensities (the logging policy's expected "
        "examination: position marginals times the curve)");
  } else if (!train.propensities.empty()) {
    std::copy(train.propensities.begin(), train.propensities.end(),
              propensity.begin());
    info->notes.push_back("ips: per-document propensities from the data");
  } else {
    if (train.positions.empty()) {
      return absl::InvalidArgumentError(
          "--position_debias=ips needs propensities: a .propensity file or "
          "--propensity_file, position marginals (<train>.marginals or "
          "--marginals_file), or "
          "display positions (<train>.position or --position_file) with "
          "--position_propensities or none to estimate them");
    }
    absl::StatusOr<std::vector<double>> curve =
        ExaminationCurve(train, options, info);
    if (!curve.ok()) return curve.status();
    for (size_t i = 0; i < n; ++i) {
      // Not shown: never clicked (checked below), its value unused.
      propensity[i] = train.positions[i] == 0
                          ? 0.0
                          : CurveAt(*curve, train.positions[i]);
    }
  }
  if (weights.document.empty()) weights.document.assign(n, 1.0);
  int64_t clicked = 0;
  for (size_t i = 0; i < n; ++i) {
    if (train.labels[i] <= 0) continue;
    ++clicked;
    if (!(propensity[i] > 0.0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ips: training document %d (query %s) is clicked but its "
          "propensity is 0 (not shown, or no support under the logging "
          "policy)",
          i + 1, QueryIdOf(train, i)));
    }
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
