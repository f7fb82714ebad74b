#ifndef PLRANK_BENCH_REPRO_LIB_H_
#define PLRANK_BENCH_REPRO_LIB_H_

// The paper-reproduction harness behind plrank-repro: every system of Xia,
// Zhai & Wang's comparison trained by plrank-train on each fold's train part
// and scored by plrank-eval on its test part, both run as child processes.
// Produces the data of the paper's Table 1 (test NDCG@1/3/10 and ERR with
// paired t-tests), Table 3 (PLRank(obj=m) context compression) and Table 4
// (training time relative to MART). Formatting lives in repro_report.h.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/repro_systems.h"

namespace plrank::bench {

struct ReproConfig {
  std::string folds_dir;  // holds Fold*/{train,test}.txt (make-folds.sh)
  std::string bin_dir;    // where plrank-train and plrank-eval are
  std::string
      work_dir;  // parent of the scratch directory; "" = $TMPDIR or /tmp
  bool keep_work_dir = false;
  std::vector<ReproSystem> systems;
  int trees = 100;
  int leaves = 31;
  double learning_rate = 0.1;
  double mcrank_trees_factor = 2.5;  // McRank trains round(trees * factor)
  int max_folds = 0;                 // 0 = every fold found
  int num_threads = 2;
  uint64_t seed = 1;
  // Table 1 marks differences from this system (a key of `systems`); when it
  // is not among them, the first PLRank row, else the first row.
  std::string reference = "plrank1";
  double significance_level = 0.05;
  // Table 3: PLRank(obj=m) for these m, one tree each on the first fold's
  // training part. Empty = no Table 3.
  std::vector<int> obj_list = {3, 6, 9, 12, 15, 18, 21};
  // Receives one line per finished step ("[fold 2/5] lambdamart: ...").
  std::function<void(std::string_view)> progress;
};

struct ReproSystemResult {
  ReproSystem system;
  int trees = 0;        // trees trained per fold (0 for linear systems)
  bool failed = false;  // some fold failed: the row is left out
  std::string error;    // the first failure
  std::vector<double> fold_train_seconds;       // plrank-train's train_seconds
  std::vector<std::vector<double>> fold_means;  // [fold][metric]
  // [metric][query]: every test query of every fold, in fold order, so rows
  // of different systems pair query by query.
  std::vector<std::vector<double>> per_query;
  std::vector<double> means;     // [metric] mean of the fold means
  std::vector<double> p_values;  // [metric] vs the reference row; NaN if none
  // [metric] +1 significantly better than the reference, -1 worse, 0 not.
  std::vector<int> marks;
  double train_seconds = 0;  // sum over folds
};

// One Table 3 row: the PLRank(obj=m) context statistics Describe() printed.
struct CompressionRow {
  int permutations = 0;
  bool stop_at_lowest_label = true;  // false: the paper's plain top-K
  int64_t distinct = 0;
  int64_t total = 0;
  double ratio = 0;                  // distinct / total
  double equivalent_objectives = 0;  // ratio * m
  std::string error;                 // non-empty when the run failed
};

struct ReproResults {
  ReproConfig config;
  std::vector<std::string> fold_names;
  int64_t num_test_queries = 0;        // over all folds
  int64_t num_empty_test_queries = 0;  // without any relevant document
  std::vector<ReproSystemResult> systems;
  int reference = -1;      // index in systems of Table 1's reference row
  int time_baseline = -1;  // Table 4's "MART": mart2, else mart1, else -1
  // Table 3, for each m in obj_list: our default (stop at the lowest
  // label) then the paper's plain top-K.
  std::vector<CompressionRow> compression;
  double load_average = 0;  // 1-minute load when the run started
  bool ok() const;          // no system failed, every Table 3 run worked
};

// Runs the whole comparison. Fails only when nothing can be run (no folds,
// no scratch directory, unreadable test data); a system failing on a fold
// marks its row failed and the run goes on.
absl::StatusOr<ReproResults> RunRepro(const ReproConfig& config);

// Parses "contexts: N distinct of T (ratio R, ...)" out of plrank-train's
// output; fails when there is no such line.
absl::StatusOr<CompressionRow> ParseContextsLine(std::string_view text);

// Parses a comma-separated list of positive integers ("3,6,9").
absl::StatusOr<std::vector<int>> ParsePositiveIntList(std::string_view text);

}  // namespace plrank::bench

#endif  // PLRANK_BENCH_REPRO_LIB_H_
