#ifndef PLRANK_TRAINER_LOGS_LOGGED_EVALUATION_H_
#define PLRANK_TRAINER_LOGS_LOGGED_EVALUATION_H_

// plrank-eval --logged=D --model=M: the candidate M's expected clicks and
// click-DCG@k under the logging policy's click logs, by IPS and SNIPS
// (core/policy/counterfactual.h), from the evaluation files plrank-logs
// join wrote beside D (D.all, D.all.position, D.all.marginals).

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "core/model/ensemble.h"
#include "core/policy/counterfactual.h"

namespace plrank::logs {

// dcg_at = 0: the logged depth of each ranking. FAILED_PRECONDITION (with
// the count) when the candidate needs positions the logs do not support.
absl::StatusOr<CounterfactualEstimate> EvaluateLogged(
    const std::string& joined, const Ensemble& candidate, size_t dcg_at);

// The report plrank-eval prints.
std::string FormatLoggedEstimate(const std::string& joined,
                                 const CounterfactualEstimate& estimate,
                                 size_t dcg_at);

}  // namespace plrank::logs

#endif  // PLRANK_TRAINER_LOGS_LOGGED_EVALUATION_H_
