#include "bench/quality_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/child_process.h"
#include "bench/score_evaluation.h"
#include "bench/scratch_directory.h"
#include "core/data/letor_reader.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank::bench {
namespace {

namespace fs = std::filesystem;

// One system on one split.
struct Outcome {
  absl::Status status;
  std::vector<std::vector<double>> per_query;  // [metric][query]
  double train_seconds = 0;
};

absl::StatusOr<ChildRun> RunOrFail(const std::vector<std::string>& argv,
                                   const std::string& base) {
  absl::StatusOr<ChildRun> run = RunChild(argv, base + ".out", base + ".err");
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        absl::StrJoin(argv, " "), " failed (exit ", run->exit_code, ", signal ",
        run->term_signal, "):\n", TailOfFile(base + ".err", 10)));
  }
  return run;
}

// Trains `system` on the split and returns (train seconds, test scores).
absl::StatusOr<std::pair<double, std::vector<double>>> TrainAndScore(
    const QualityConfig& config, const QualitySystem& system,
    const QualitySplit& split, int trees, int min_data, const std::string& base) {
  const std::string& bin = config.data.bin_dir;
  const std::string scores = base + ".scores";
  const std::string model = base + ".model";
  std::vector<std::string> argv;
  if (system.xgboost) {
    // XGBoost has no minimum document count per leaf (its min_child_weight
    // is a hessian sum), so it keeps its own default there.
    argv = {bin + "/plrank-xgb-peer", "--train=" + split.train,
            "--test=" + split.test, "--scores_out=" + scores,
            "--objective=" + system.objective};
  } else {
    argv = {bin + "/plrank-train", "--train=" + split.train,
            "--objective=" + system.objective, "--model_out=" + model,
            absl::StrCat("--min_data_in_leaf=", min_data)};
  }
  const std::string common[] = {
      absl::StrCat("--trees=", trees),
      absl::StrCat("--leaves=", config.leaves),
      absl::StrCat("--max_bin=", config.max_bin),
      absl::StrCat("--num_threads=", config.num_threads),
      absl::StrCat("--seed=", split.seed),
      "--quiet"};
  argv.insert(argv.end(), std::begin(common), std::end(common));
  if (!(system.plrank_variant && config.plrank_auto_learning_rate)) {
    argv.push_back(absl::StrCat("--learning_rate=", config.learning_rate));
  }
  argv.insert(argv.end(), system.extra_flags.begin(), system.extra_flags.end());
  absl::StatusOr<ChildRun> trained = RunOrFail(argv, base + ".train");
  if (!trained.ok()) return trained.status();
  if (!system.xgboost) {
    absl::StatusOr<ChildRun> scored =
        RunOrFail({bin + "/plrank-eval", "--model=" + model,
                   "--data=" + split.test, "--scores_out=" + scores},
                  base + ".eval");
    if (!scored.ok()) return scored.status();
  }
  absl::StatusOr<std::vector<double>> values = ReadScoreFile(scores);
  if (!values.ok()) return values.status();
  const double seconds = ReportedValue(trained->stdout_text, "train_seconds");
  return std::make_pair(seconds >= 0 ? seconds : trained->wall_seconds,
                        std::move(*values));
}

// Runs tasks 0..count-1 on `jobs` threads.
void RunParallel(int count, int jobs, const std::function<void(int)>& task) {
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i = next++; i < count; i = next++) task(i);
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::min(jobs, count); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();
}

int64_t CountEmptyQueries(const Dataset& data) {
  int64_t empty = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    bool relevant = false;
    for (size_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      relevant = relevant || data.labels[i] > 0;
    }
    empty += !relevant;
  }
  return empty;
}

void Compare(const QualityConfig& config, int candidate, QualitySetResult& set,
             const std::vector<QualitySystem>& systems) {
  const QualitySystemResult& ours = set.systems[candidate];
  for (size_t i = 0; i < set.systems.size(); ++i) {
    QualitySystemResult& row = set.systems[i];
    if (row.failed) continue;
    if (!systems[i].plrank_variant && static_cast<int>(i) != candidate &&
        (set.best_peer < 0 ||
         row.means[kBenchNdcg10] >
             set.systems[set.best_peer].means[kBenchNdcg10])) {
      set.best_peer = i;
    }
    if (ours.failed || static_cast<int>(i) == candidate) continue;
    const std::vector<double>& a = row.per_query[kBenchNdcg10];
    const std::vector<double>& b = ours.per_query[kBenchNdcg10];
    row.delta_ndcg10 = MeanIgnoringNan(a) - MeanIgnoringNan(b);
    row.p_value = PairedTTestPValue(a, b);
    if (row.p_value < config.significance_level) {
      row.mark = row.delta_ndcg10 > 0 ? 1 : -1;
    }
  }
}

QualitySetResult RunSet(const QualityConfig& config,
                        const std::vector<QualitySystem>& systems,
                        int candidate, const std::string& name,
                        const std::string& work) {
  auto progress = [&config](const std::string& line) {
    if (config.progress) config.progress(line);
  };
  QualitySetResult set;
  // Small generated sets train with the real sets' settings.
  const bool generated =
      IsGeneratedQualitySet(name) && !IsSmallQualitySet(name);
  set.trees = config.trees > 0 ? config.trees : (generated ? 300 : 100);
  set.min_data_in_leaf =
      config.min_data_in_leaf > 0 ? config.min_data_in_leaf : (generated ? 20 : 5);
  set.data.name = name;
  const std::string dir = absl::StrCat(work, "/", name);
  std::error_code ignored;
  fs::create_directories(dir, ignored);
  absl::StatusOr<QualitySetData> data = PrepareQualitySet(name, config.data, dir);
  std::vector<Dataset> tests;
  for (size_t s = 0; data.ok() && s < data->splits.size(); ++s) {
    absl::StatusOr<Dataset> test =
        ReadLetorFile(data->splits[s].test, ReadOptions{});
    if (!test.ok()) data = test.status();
    else tests.push_back(std::move(*test));
  }
  if (!data.ok()) {
    set.error = std::string(data.status().message());
    progress(absl::StrCat("[", name, "] data FAILED: ", set.error));
    if (!config.keep_work_dir) fs::remove_all(dir, ignored);
    return set;
  }
  set.data = std::move(*data);
  for (size_t s = 0; s < tests.size(); ++s) {
    set.test_queries += tests[s].num_queries();
    set.test_documents += tests[s].num_documents();
    set.empty_test_queries += CountEmptyQueries(tests[s]);
    set.train_queries += set.data.splits[s].train_queries;
    set.train_documents += set.data.splits[s].train_documents;
  }
  const int num_splits = set.data.splits.size();
  const int num_systems = systems.size();
  std::vector<Outcome> outcomes(num_splits * num_systems);
  std::mutex mutex;
  RunParallel(outcomes.size(), config.jobs, [&](int task) {
    const int s = task / num_systems, k = task % num_systems;
    const std::string base = absl::StrCat(dir, "/split", s, ".system", k);
    auto result = TrainAndScore(config, systems[k], set.data.splits[s],
                                set.trees, set.min_data_in_leaf, base);
    Outcome& outcome = outcomes[task];
    if (result.ok()) {
      outcome.train_seconds = result->first;
      auto values = EvaluateScoresPerQuery(tests[s], result->second);
      if (values.ok()) outcome.per_query = std::move(*values);
      outcome.status = values.status();
    } else {
      outcome.status = result.status();
    }
    std::lock_guard<std::mutex> lock(mutex);
    progress(
        outcome.status.ok()
            ? absl::StrFormat("[%s %s] %s: train %.1fs, NDCG@10 %.4f", name,
                              set.data.splits[s].name, systems[k].name,
                              outcome.train_seconds,
                              MeanIgnoringNan(outcome.per_query[kBenchNdcg10]))
            : absl::StrFormat("[%s %s] %s: FAILED: %s", name,
                              set.data.splits[s].name, systems[k].name,
                              outcome.status.message()));
  });
  set.systems.resize(num_systems);
  for (int k = 0; k < num_systems; ++k) {
    QualitySystemResult& row = set.systems[k];
    row.per_query.resize(kNumBenchMetrics);
    for (int s = 0; s < num_splits && !row.failed; ++s) {
      const Outcome& outcome = outcomes[s * num_systems + k];
      if (!outcome.status.ok()) {
        row.failed = true;
        row.error = absl::StrCat(set.data.splits[s].name, ": ",
                                 outcome.status.message());
        break;
      }
      row.train_seconds += outcome.train_seconds;
      for (int m = 0; m < kNumBenchMetrics; ++m) {
        row.per_query[m].insert(row.per_query[m].end(),
                                outcome.per_query[m].begin(),
                                outcome.per_query[m].end());
      }
    }
    for (const std::vector<double>& values : row.per_query) {
      row.means.push_back(row.failed ? std::numeric_limits<double>::quiet_NaN()
                                     : MeanIgnoringNan(values));
    }
  }
  Compare(config, candidate, set, systems);
  if (!config.keep_work_dir) fs::remove_all(dir, ignored);
  return set;
}

}  // namespace

absl::StatusOr<QualityResults> RunQuality(const QualityConfig& config) {
  const auto start = std::chrono::steady_clock::now();
  QualityResults results;
  for (const QualitySystem& system : config.systems) {
    if (system.xgboost &&
        !fs::exists(config.data.bin_dir + "/plrank-xgb-peer")) {
      results.notes.push_back(absl::StrCat(
          system.name, " skipped: ", config.data.bin_dir,
          "/plrank-xgb-peer is not built (no libxgboost-dev)"));
      continue;
    }
    results.systems.push_back(system);
  }
  if (results.systems.empty()) return absl::InvalidArgumentError("no system to run");
  results.candidate = -1;
  for (size_t i = 0; i < results.systems.size(); ++i) {
    if (config.candidate.empty() || results.systems[i].name == config.candidate) {
      results.candidate = i;
      break;
    }
  }
  if (results.candidate < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--candidate '", config.candidate, "' is no system"));
  }
  const std::vector<std::string> known = KnownQualitySets();
  for (const std::string& name : config.sets) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown data set '", name, "'; known: ",
                       absl::StrJoin(KnownQualitySets(), ",")));
    }
  }
  results.load_average = WarnIfMachineBusy(1.0);

  absl::StatusOr<std::unique_ptr<ScratchDirectory>> scratch =
      ScratchDirectory::Create(config.work_dir, "plrank-quality",
                               config.keep_work_dir);
  if (!scratch.ok()) return scratch.status();
  const std::string& work = (*scratch)->path();
  if (config.keep_work_dir && config.progress) {
    config.progress(absl::StrCat("scratch files in ", work));
  }
  for (const std::string& name : config.sets) {
    results.sets.push_back(
        RunSet(config, results.systems, results.candidate, name, work));
  }
  results.wall_seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return results;
}

}  // namespace plrank::bench
