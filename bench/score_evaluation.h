#ifndef PLRANK_BENCH_SCORE_EVALUATION_H_
#define PLRANK_BENCH_SCORE_EVALUATION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/data/dataset.h"

namespace plrank::bench {

// The metrics every benchmarked system is judged by, in table order.
inline constexpr const char* kBenchMetricNames[] = {"ndcg@1", "ndcg@3",
                                                    "ndcg@10", "err"};
inline constexpr int kNumBenchMetrics = 4;
inline constexpr int kBenchNdcg10 = 2;  // index of "ndcg@10" above

// Reads one score per line (the files written by plrank-eval --scores_out
// and plrank-xgb-peer --scores_out). Blank lines are ignored.
absl::StatusOr<std::vector<double>> ReadScoreFile(const std::string& path);

// Mean over the queries of `test` of each kBenchMetricNames metric for the
// given scores (one per document, file order). Queries without a relevant
// document count NDCG = 1 (and ERR = 0), the project's default; ERR's grade
// scale is the test set's largest label. Fails when the counts differ.
absl::StatusOr<std::vector<double>> EvaluateScores(
    const Dataset& test, const std::vector<double>& scores);

// The same metrics per query: result[metric][query], in kBenchMetricNames
// order, for paired tests and for pooling queries of several test sets.
absl::StatusOr<std::vector<std::vector<double>>> EvaluateScoresPerQuery(
    const Dataset& test, const std::vector<double>& scores);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_SCORE_EVALUATION_H_
