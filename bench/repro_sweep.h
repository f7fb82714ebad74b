#ifndef PLRANK_BENCH_REPRO_SWEEP_H_
#define PLRANK_BENCH_REPRO_SWEEP_H_

// plrank-repro --feature_sweep: the paper's Fig. 2, test NDCG@10 of the
// linear rankers (l-ListMLE, CA) as the number of features grows. Each
// system is trained on the first N features of each fold's train part
// (features N+1.. dropped) and scored on the same features of its test part.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/repro_lib.h"
#include "bench/repro_systems.h"

namespace plrank::bench {

struct SweepPoint {
  int features = 0;
  std::vector<double> fold_ndcg10;  // one per fold (failed folds left out)
  double ndcg10 = 0;                // mean of fold_ndcg10; NaN if none
  std::string error;                // the first failure, if any
};

struct SweepSeries {
  ReproSystem system;
  std::vector<SweepPoint> points;   // in feature_counts order
};

struct SweepResults {
  ReproConfig config;               // systems, folds_dir, seed, ...
  std::vector<int> feature_counts;
  std::vector<std::string> fold_names;
  int data_features = 0;            // features of the first fold's train part
  std::vector<SweepSeries> series;  // one per system
  bool ok() const;                  // no point failed
};

// Runs every system of config.systems at every count of `feature_counts`
// on the folds of config.folds_dir (config.max_folds of them when > 0).
// Fails when nothing can run: no folds, unreadable data, an empty list or a
// count above the data's features. A failed training run marks its point.
absl::StatusOr<SweepResults> RunFeatureSweep(
    const ReproConfig& config, const std::vector<int>& feature_counts);

// The --sweep_out document (README "Reproducing the paper's comparison"):
//   {"metric": "ndcg@10", "feature_counts": [...], "folds": [...],
//    "data_features": 46, "config": {...},
//    "series": [{"system": "listmle", "label": "l-ListMLE",
//                "points": [{"features": 5, "ndcg@10": 0.71,
//                            "folds": [0.71], "error": null}, ...]}, ...]}
std::string SweepJson(const SweepResults& results);

// A Markdown table: one row per feature count, one column per system.
std::string FormatSweepReport(const SweepResults& results);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_REPRO_SWEEP_H_
