#ifndef PLRANK_CORE_PIPELINE_CLICK_TRAINING_H_
#define PLRANK_CORE_PIPELINE_CLICK_TRAINING_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"

namespace plrank {

// --position_debias (docs/clicks-training.md).
enum class PositionDebias {
  kNone,  // positions, if any, are not used
  kGam,   // a per-position additive bias learned with the trees
  kIps,   // clicked documents weighted by 1 / propensity
};
absl::StatusOr<PositionDebias> ParsePositionDebias(const std::string& name);
const char* PositionDebiasName(PositionDebias debias);
// The --position_propensities list "p1,p2,..." (plrank-train, plrank-logs
// join): each value a propensity in (0, 1]; empty text gives an empty list.
absl::StatusOr<std::vector<double>> ParsePositionPropensities(
    absl::string_view text);

struct ClickOptions {
  PositionDebias position_debias = PositionDebias::kNone;
  // ips: propensity (examination probability) of positions 1, 2, ... (a
  // position beyond the list gets the last value), combined with the data's
  // position marginals when it has them, else with its positions. Empty:
  // the data's per-document propensities when it has no marginals, else
  // estimated from the clicks (EstimatePropensities).
  std::vector<double> position_propensities;
  // ips: 1 / propensity is clipped to this (variance against bias).
  double max_ips_weight = 20.0;
  // gam: lambda of PositionBiasConfig.
  double position_bias_regularization = 0.0;
};

// What TrainingWeightsFor decided, for the log and the artifact.
struct ClickWeightsInfo {
  std::vector<std::string> notes;   // human-readable lines
  // ips: the propensity curve used when it came from positions (given or
  // estimated); empty for per-document propensities.
  std::vector<double> propensity_curve;
  bool estimated = false;
  int64_t clipped = 0;  // clicked documents whose 1 / propensity was clipped
};

// The weights the objective trains with: the data's document and query
// weights, times (ips) min(1 / propensity, max_ips_weight) on every clicked
// document (label > 0). The propensity, from the most specific source:
//   - position marginals mu(d, j) (data.marginals, every candidate of each
//     logged ranking, unshown ones with label 0): the policy-aware
//     propensity sum_j mu(d, j) theta_j, the logging policy's expected
//     examination of d; the loss then runs over all candidates, so the
//     policy's choice of what to show is corrected as well as position;
//   - per-document propensities (data.propensities);
//   - theta at the document's display position.
// Empty when there is nothing to weigh, so unweighted training stays
// bit-identical. InvalidArgument when ips or gam lacks what it needs
// (positions, propensities or a curve), when gam meets a candidate that was
// not shown (position 0), or when a clicked document has propensity 0.
absl::StatusOr<TrainingWeights> TrainingWeightsFor(const Dataset& train,
                                                   const ClickOptions& options,
                                                   ClickWeightsInfo* info);

// "0.0000,-0.3124,..." (the artifact's parameters record curves so).
std::string FormatCurve(const std::vector<double>& curve);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_CLICK_TRAINING_H_
