#ifndef PLRANK_CORE_PIPELINE_NDCG_EVALUATOR_H_
#define PLRANK_CORE_PIPELINE_NDCG_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/boosting/reducer.h"
#include "core/data/dataset.h"
#include "core/data/side_files.h"
#include "core/metrics/ranking_metrics.h"
#include "core/model/ensemble.h"

namespace plrank {

// Mean NDCG@k, for each cut-off k, of the first output's final ranking
// scores: what training reports and early stopping watches. Multi-output
// models are turned into one score per document by the scorer's transform,
// which the evaluator reproduces here for consistency. Queries weigh by
// their metric weights (QueryMetricWeight) when the data has any.
class NdcgEvaluator {
 public:
  // With a reducer of more than one rank, `data` is this rank's shard and
  // the means are the whole set's (each rank's sums and counts, reduced);
  // the call is then collective. `data` must outlive the evaluator.
  NdcgEvaluator(const Dataset* data, const std::vector<int32_t>& cutoffs,
                int32_t num_outputs, ScoreTransform transform,
                const MetricOptions& options, Reducer* reducer = nullptr);

  // One mean per cut-off; `first_only` computes only the first (the others
  // are NaN). `scores` holds num_outputs blocks of the data's documents.
  std::vector<double> operator()(absl::Span<const double> scores,
                                 bool first_only = false) const;

 private:
  std::vector<double> Means(absl::Span<const double> scores,
                            bool first_only) const;
  // The mean of the non-NaN values weighted by their queries' weights (NaN
  // when no weight is left).
  double WeightedMean(const std::vector<double>& per_query) const;

  const Dataset* data_;
  std::vector<MetricSpec> specs_;
  int32_t num_outputs_;
  ScoreTransform transform_;
  MetricOptions options_;
  std::vector<double> query_weights_;  // empty: every query counts 1
  Reducer* reducer_;                   // null: single-process
};

// "ndcg@1", "ndcg@10", ... for the job's cut-offs.
std::vector<std::string> NdcgMetricNames(const std::vector<int32_t>& cutoffs);

// "0.6000", or "-" for NaN (a value not computed).
std::string FormatMetric(double value);

// "ndcg@1 0.4000 ndcg@10 0.6000" ("-" for a value not computed; every value
// "-" when `values` is null).
std::string FormatMetrics(const std::vector<std::string>& names,
                          const std::vector<double>* values);

// Every computed (non-NaN) value of `values` into `out` under its metric
// name.
void StoreMetrics(const std::vector<std::string>& names,
                  const std::vector<double>& values,
                  std::map<std::string, double>* out);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_NDCG_EVALUATOR_H_
