#include "core/pipeline/metric_recorder.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"

namespace plrank {

MetricRecorder::MetricRecorder(std::vector<int32_t> eval_at, int32_t log_period,
                               int32_t total_iterations, bool every_iteration)
    : names_(NdcgMetricNames(eval_at)),
      log_period_(log_period),
      total_(total_iterations),
      every_iteration_(every_iteration) {}

bool MetricRecorder::LogDue(int32_t iteration) const {
  return log_period_ > 0 &&
         (iteration % log_period_ == 0 || iteration == total_);
}

bool MetricRecorder::MetricsDue(int32_t iteration) const {
  return every_iteration_ || LogDue(iteration);
}

Evaluator MetricRecorder::TrainEvaluator(NdcgEvaluator ndcg) {
  return [this, ndcg = std::move(ndcg)](absl::Span<const double> scores) {
    const int32_t iteration = ++train_.calls;
    if (!MetricsDue(iteration)) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    std::vector<double>& values = train_.by_iteration[iteration];
    values = ndcg(scores);
    return values.front();
  };
}

Evaluator MetricRecorder::ValidEvaluator(
    NdcgEvaluator ndcg, bool early_stopping,
    std::shared_ptr<const Objective> valid_loss, Reducer* reducer) {
  return [this, ndcg = std::move(ndcg), early_stopping,
          valid_loss = std::move(valid_loss),
          reducer](absl::Span<const double> scores) {
    const int32_t iteration = ++valid_.calls;
    if (valid_loss != nullptr) {
      double loss = valid_loss->Loss(scores);
      // The whole set's.
      if (reducer != nullptr) reducer->Sum(absl::MakeSpan(&loss, 1));
      valid_.loss_by_iteration[iteration] = loss;
    }
    const bool all = MetricsDue(iteration);
    if (!all && !early_stopping) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    std::vector<double>& values = valid_.by_iteration[iteration];
    values = ndcg(scores, /*first_only=*/!all);
    return values.front();
  };
}

const std::vector<double>* MetricRecorder::ValuesAt(const Computed& computed,
                                                    int32_t iteration) {
  auto it = computed.by_iteration.find(iteration);
  return it == computed.by_iteration.end() ? nullptr : &it->second;
}

std::string MetricRecorder::ProgressLine(const IterationReport& report) const {
  const double per_iteration = report.elapsed_seconds / report.iteration;
  const double eta = per_iteration * (report.num_trees - report.iteration);
  return absl::StrFormat(
      "[%*d/%d] elapsed %.1fs eta %.1fs loss %.5g train %s valid %s",
      static_cast<int>(std::to_string(report.num_trees).size()),
      report.iteration, report.num_trees, report.elapsed_seconds, eta,
      report.train_loss,
      FormatMetrics(names_, ValuesAt(train_, report.iteration)),
      FormatMetrics(names_, ValuesAt(valid_, report.iteration)));
}

IterationMetrics MetricRecorder::At(int32_t iteration,
                                    double train_loss) const {
  IterationMetrics metrics;
  metrics.iteration = iteration;
  metrics.train_loss = train_loss;
  if (const std::vector<double>* values = ValuesAt(train_, iteration)) {
    StoreMetrics(names_, *values, &metrics.train);
  }
  if (const std::vector<double>* values = ValuesAt(valid_, iteration)) {
    StoreMetrics(names_, *values, &metrics.valid);
  }
  return metrics;
}

double MetricRecorder::ValidLossAt(int32_t iteration) const {
  auto loss = valid_.loss_by_iteration.find(iteration);
  return loss == valid_.loss_by_iteration.end()
             ? std::numeric_limits<double>::quiet_NaN()
             : loss->second;
}

MetricRecorder::State MetricRecorder::state() const {
  return State{train_.by_iteration, valid_.by_iteration,
               valid_.loss_by_iteration};
}

void MetricRecorder::Resume(int32_t done, State state) {
  train_.calls = valid_.calls = done;
  train_.by_iteration = std::move(state.train);
  valid_.by_iteration = std::move(state.valid);
  valid_.loss_by_iteration = std::move(state.valid_loss);
}

}  // namespace plrank
