#ifndef PLRANK_CORE_PIPELINE_METRIC_RECORDER_H_
#define PLRANK_CORE_PIPELINE_METRIC_RECORDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/boosting/booster.h"
#include "core/boosting/reducer.h"
#include "core/model/ensemble.h"
#include "core/objectives/objective.h"
#include "core/pipeline/ndcg_evaluator.h"

namespace plrank {

// The metrics of one boosting run: the booster's train and valid
// evaluators, which compute NDCG only when it is due, and what they
// computed, by iteration, for progress lines, callbacks, checkpoints and
// the model's history.
//
// Metrics are costly next to one boosting iteration on big data: a
// progress line is due every log_period iterations and on the last; a due
// evaluation computes every --eval_at cut-off; with early stopping the
// valid set's first cut-off is computed every iteration (and only that one
// between progress lines); `every_iteration` (--history_out, the Python
// package's history) makes every iteration due for metrics, not for
// progress lines. The recorder must outlive the evaluators it hands out.
class MetricRecorder {
 public:
  MetricRecorder(std::vector<int32_t> eval_at, int32_t log_period,
                 int32_t total_iterations, bool every_iteration);

  // A progress line is due after `iteration`.
  bool LogDue(int32_t iteration) const;
  // Metrics are computed after `iteration`.
  bool MetricsDue(int32_t iteration) const;

  // The booster's train evaluator: NDCG at every cut-off when due, else
  // NaN. Counts its calls as iterations.
  Evaluator TrainEvaluator(NdcgEvaluator ndcg);
  // The booster's valid evaluator: as the train one, and the first cut-off
  // every iteration when `early_stopping`; with `valid_loss` (not null) the
  // objective's loss on the valid set every iteration, summed over the
  // reducer's ranks.
  Evaluator ValidEvaluator(NdcgEvaluator ndcg, bool early_stopping,
                           std::shared_ptr<const Objective> valid_loss,
                           Reducer* reducer);

  // "[ 3/10] elapsed 1.0s eta 2.3s loss 0.5 train ndcg@10 0.7 valid ..."
  std::string ProgressLine(const IterationReport& report) const;
  // The iteration's loss and computed metrics, as the model's history keeps
  // them.
  IterationMetrics At(int32_t iteration, double train_loss) const;
  // The valid loss computed after `iteration`, NaN when none.
  double ValidLossAt(int32_t iteration) const;

  // State kept in checkpoints; Resume puts it back after `done` iterations.
  struct State {
    std::map<int32_t, std::vector<double>> train;
    std::map<int32_t, std::vector<double>> valid;
    std::map<int32_t, double> valid_loss;
  };
  State state() const;
  void Resume(int32_t done, State state);

 private:
  struct Computed {
    int32_t calls = 0;
    std::map<int32_t, std::vector<double>> by_iteration;
    std::map<int32_t, double> loss_by_iteration;  // valid loss (history)
  };
  static const std::vector<double>* ValuesAt(const Computed& computed,
                                             int32_t iteration);

  std::vector<std::string> names_;
  int32_t log_period_;
  int32_t total_;
  bool every_iteration_;
  Computed train_;
  Computed valid_;
};

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_METRIC_RECORDER_H_
