#ifndef PLRANK_BENCH_QUALITY_RUN_H_
#define PLRANK_BENCH_QUALITY_RUN_H_

// plrank-bench-quality's engine: every system trained with the same trees,
// leaves, learning rate, minimum leaf size, bins and threads on every split
// of every data set (child processes: plrank-train + plrank-eval, or
// plrank-xgb-peer), test queries scored with the project's metrics and
// pooled over splits (one value per test query: queries of different folds
// or seeds are distinct units), and a paired t-test on NDCG@10 between the
// candidate and every other system. Formatting is in quality_report.h.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/quality_data.h"
#include "bench/quality_systems.h"

namespace plrank::bench {

struct QualityConfig {
  std::vector<std::string> sets;       // KnownQualitySets() names
  std::vector<QualitySystem> systems;  // PLRank variants first, then peers
  std::string candidate;               // a system name; "" = the first
  QualityDataConfig data;
  // 0 = per set: 100 trees / min 5 documents per leaf on the real sets,
  // 300 / 20 on generated ones.
  int trees = 0;
  int min_data_in_leaf = 0;
  int leaves = 31;
  double learning_rate = 0.1;
  // PLRank variants get no --learning_rate, so plrank-train picks its own
  // (its auto rate: each tool at its own defaults); peers keep the above.
  bool plrank_auto_learning_rate = false;
  int max_bin = 255;
  int num_threads = 2;  // per training run
  int jobs = 1;         // training runs at the same time
  std::string work_dir;  // parent of the scratch directory; "" = $TMPDIR, /tmp
  bool keep_work_dir = false;
  double significance_level = 0.05;
  std::function<void(absl::string_view)> progress;  // one line per step
};

struct QualitySystemResult {
  bool failed = false;
  std::string error;  // the first failure
  // [metric][query], kBenchMetricNames order, splits in order.
  std::vector<std::vector<double>> per_query;
  std::vector<double> means;  // [metric]
  double train_seconds = 0;   // summed over splits, as the trainer reported
  // NDCG@10 against the candidate: mean difference (this - candidate), the
  // paired two-tailed p-value, +1 / -1 when significantly better / worse.
  double delta_ndcg10 = 0;
  double p_value = 1;
  int mark = 0;
};

struct QualitySetResult {
  QualitySetData data;
  std::string error;  // the set could not be prepared: no rows
  int trees = 0, min_data_in_leaf = 0;
  int64_t test_queries = 0, test_documents = 0, empty_test_queries = 0;
  int64_t train_queries = 0, train_documents = 0;
  std::vector<QualitySystemResult> systems;  // as QualityResults::systems
  int best_peer = -1;  // highest NDCG@10 among peers that did not fail
};

struct QualityResults {
  std::vector<QualitySystem> systems;  // as run (XGBoost dropped if absent)
  int candidate = 0;                   // index in systems
  std::vector<std::string> notes;      // e.g. skipped systems
  std::vector<QualitySetResult> sets;
  double load_average = 0;  // when the run started
  double wall_seconds = 0;
};

// Runs everything. Fails only on a bad configuration or when no scratch
// directory can be made; a set or system that fails is reported as such.
absl::StatusOr<QualityResults> RunQuality(const QualityConfig& config);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_QUALITY_RUN_H_
