// plrank-bench-scorer: single-thread scoring throughput of ForestScorer
// against XGBoost 1.7's own CPU predictor on the SAME forest.
//
// For each model shape (trees x max leaves) it trains XGBoost
// (rank:pairwise, tree_method=hist, grow_policy=lossguide) on synthetic
// MSLR-shaped data (136 features), saves the model as JSON (cached, keyed by
// every setting that changes it), imports that JSON with
// ImportXgboostJsonFile, checks both systems give the same margins on every
// document of the scoring pool, then times batches of 1, 10, 100 and 1000
// documents (--batch_sizes): ours = ForestScorer::Score on row-major floats;
// XGBoost = XGBoosterPredictFromDense (in-place dense predict, output margin,
// nthread=1, so it predicts on the calling thread). Batches cycle through a
// pool of distinct documents, so a batch of 1 is not one cached row scored
// again and again. Times are the calling thread's CPU time, best of 3
// repetitions, as a shared 2-core machine makes wall time noisy.
//
// Own flags (before Google Benchmark's): --cache_dir=DIR (default
// $PLRANK_BENCH_CACHE, else /tmp/plrank-bench-cache), --shapes=1000x31,300x255,
// --batch_sizes=1,10,100,1000 (each 1..8192, the pool's size),
// --train_queries=300, --kernel=auto (a scoring kernel by name, e.g.
// quick_avx2 or chained_walks: ForestScorer::Options::kernel; a shape the
// kernel cannot score is an error). Prints Google Benchmark's table, then a summary of
// us/doc, docs/s and the speed-up per shape and batch size ("-" for a system
// --benchmark_filter left out).

#include <xgboost/c_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/dense_rows.h"
#include "bench/xgb_call.h"
#include "benchmark/benchmark.h"
#include "core/data/datagen.h"
#include "core/data/dataset.h"
#include "core/model/ensemble.h"
#include "core/scoring/forest_scorer.h"
#include "core/import/xgboost_import.h"

namespace plrank::bench {
namespace {

constexpr int32_t kFeatures = 136;
constexpr size_t kPoolDocs = 8192;

struct Shape {
  int32_t trees = 0;
  int32_t leaves = 0;
  std::string name() const { return absl::StrCat(trees, "x", leaves); }
};

struct Options {
  std::string cache_dir;
  std::vector<Shape> shapes = {{1000, 31}, {300, 255}};
  std::vector<size_t> batch_sizes = {1, 10, 100, 1000};
  int32_t train_queries = 300;
  std::string kernel = "auto";  // ForestScorer::Options::kernel
};

absl::Status TrainXgboost(const Shape& shape, int32_t queries,
                          const std::string& path) {
  DatagenOptions options;
  options.num_queries = queries;
  options.num_features = kFeatures;
  options.seed = 1;
  const Dataset data = GenerateDataset(options);
  const std::vector<float> dense =
      DenseRows(data, data.num_documents(), data.num_features);
  DMatrixHandle raw_matrix = nullptr;
  PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixCreateFromMat_omp(
      dense.data(), data.num_documents(), kFeatures,
      std::numeric_limits<float>::quiet_NaN(), &raw_matrix, 2));
  DMatrixPtr matrix(raw_matrix);
  std::vector<float> labels(data.labels.begin(), data.labels.end());
  PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixSetFloatInfo(
      matrix.get(), "label", labels.data(), labels.size()));
  std::vector<unsigned> groups(data.num_queries());
  for (size_t q = 0; q < groups.size(); ++q) {
    groups[q] = data.query_end(q) - data.query_begin(q);
  }
  PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixSetUIntInfo(
      matrix.get(), "group", groups.data(), groups.size()));
  BoosterHandle raw_booster = nullptr;
  PLRANK_XGB_RETURN_IF_ERROR(XGBoosterCreate(&raw_matrix, 1, &raw_booster));
  BoosterPtr booster(raw_booster);
  const std::pair<const char*, std::string> params[] = {
      {"objective", "rank:pairwise"}, {"tree_method", "hist"},
      {"grow_policy", "lossguide"},   {"max_leaves", absl::StrCat(shape.leaves)},
      {"max_depth", "0"},             {"eta", "0.1"},
      {"nthread", "2"},               {"seed", "1"},
      {"verbosity", "0"}};
  for (const auto& [name, value] : params) {
    PLRANK_XGB_RETURN_IF_ERROR(
        XGBoosterSetParam(booster.get(), name, value.c_str()));
  }
  std::fprintf(stderr, "training XGBoost %s on %zu documents...\n",
               shape.name().c_str(), data.num_documents());
  for (int32_t iteration = 0; iteration < shape.trees; ++iteration) {
    PLRANK_XGB_RETURN_IF_ERROR(
        XGBoosterUpdateOneIter(booster.get(), iteration, matrix.get()));
  }
  // Write then rename, so an interrupted run leaves no half model behind.
  const std::string temp = path + ".tmp.json";
  PLRANK_XGB_RETURN_IF_ERROR(XGBoosterSaveModel(booster.get(), temp.c_str()));
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) {
    return absl::InternalError(absl::StrCat("rename ", temp, ": ", error.message()));
  }
  return absl::OkStatus();
}

// The model JSON for `shape`, trained once and then read from the cache.
absl::StatusOr<std::string> ModelPath(const Shape& shape,
                                      const Options& options) {
  std::error_code error;
  std::filesystem::create_directories(options.cache_dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot create ", options.cache_dir, ": ", error.message()));
  }
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  const std::string path = absl::StrFormat(
      "%s/xgb%d.%d.%d_rank-pairwise_hist_lossguide_t%d_l%d_eta0.1_q%d_f%d_"
      "seed1.json",
      options.cache_dir, major, minor, patch, shape.trees, shape.leaves,
      options.train_queries, kFeatures);
  if (!std::filesystem::exists(path)) {
    if (absl::Status status = TrainXgboost(shape, options.train_queries, path);
        !status.ok()) {
      return status;
    }
  }
  return path;
}

// XGBoost's in-place dense predictor, single-threaded, margin output.
class XgboostPredictor {
 public:
  static absl::StatusOr<XgboostPredictor> Load(const std::string& path) {
    BoosterHandle raw = nullptr;
    PLRANK_XGB_RETURN_IF_ERROR(XGBoosterCreate(nullptr, 0, &raw));
    XgboostPredictor predictor;
    predictor.booster_.reset(raw);
    PLRANK_XGB_RETURN_IF_ERROR(XGBoosterLoadModel(raw, path.c_str()));
    PLRANK_XGB_RETURN_IF_ERROR(XGBoosterSetParam(raw, "nthread", "1"));
    return predictor;
  }

  // Margins of `num_docs` row-major rows; the pointer is XGBoost's buffer,
  // valid until the next call.
  absl::StatusOr<const float*> Predict(const float* rows, size_t num_docs) {
    const std::string array = absl::StrFormat(
        R"({"data": [%d, true], "shape": [%d, %d], "typestr": "<f4", )"
        R"("version": 3})",
        reinterpret_cast<uintptr_t>(rows), num_docs, kFeatures);
    static constexpr char kConfig[] =
        R"({"type": 1, "training": false, "iteration_begin": 0, )"
        R"("iteration_end": 0, "strict_shape": false, "missing": NaN, )"
        R"("cache_id": 0})";
    const bst_ulong* shape = nullptr;
    bst_ulong dims = 0;
    const float* result = nullptr;
    PLRANK_XGB_RETURN_IF_ERROR(XGBoosterPredictFromDense(
        booster_.get(), array.c_str(), kConfig, nullptr, &shape, &dims,
        &result));
    return result;
  }

 private:
  BoosterPtr booster_;
};

struct Fixture {
  Shape shape;
  ForestScorer scorer;
  XgboostPredictor xgboost;
  double mean_leaves = 0;
};

// Scoring pool: documents from held-out queries (another generator seed).
std::vector<float> MakePool() {
  DatagenOptions options;
  options.num_queries = 2 * kPoolDocs / 100;
  options.num_features = kFeatures;
  options.seed = 2;
  const Dataset pool_data = GenerateDataset(options);
  std::vector<float> pool =
      DenseRows(pool_data, kPoolDocs, pool_data.num_features);
  if (pool.size() != kPoolDocs * kFeatures) {
    std::fprintf(stderr, "scoring pool too small\n");
    std::exit(1);
  }
  return pool;
}

absl::StatusOr<std::unique_ptr<Fixture>> MakeFixture(
    const Shape& shape, const Options& options,
    const std::vector<float>& pool) {
  absl::StatusOr<std::string> path = ModelPath(shape, options);
  if (!path.ok()) return path.status();
  absl::StatusOr<Ensemble> model = ImportXgboostJsonFile(*path);
  if (!model.ok()) return model.status();
  ForestScorer::Options scoring;
  scoring.kernel = options.kernel;
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*model, scoring);
  if (!scorer.ok()) {
    return absl::Status(scorer.status().code(),
                        absl::StrCat(shape.name(), ": ", scorer.status().message()));
  }
  absl::StatusOr<XgboostPredictor> xgboost = XgboostPredictor::Load(*path);
  if (!xgboost.ok()) return xgboost.status();
  size_t leaves = 0;
  for (const Tree& tree : model->trees) leaves += tree.num_leaves();
  auto fixture = std::make_unique<Fixture>(
      Fixture{shape, *std::move(scorer), *std::move(xgboost),
              static_cast<double>(leaves) / model->trees.size()});

  // Same margins on the whole pool before anything is timed.
  std::vector<double> ours(kPoolDocs);
  fixture->scorer.Score(pool, kPoolDocs, absl::MakeSpan(ours));
  absl::StatusOr<const float*> theirs =
      fixture->xgboost.Predict(pool.data(), kPoolDocs);
  if (!theirs.ok()) return theirs.status();
  double worst = 0;
  for (size_t i = 0; i < kPoolDocs; ++i) {
    const double scale = std::max(1.0, std::abs(static_cast<double>((*theirs)[i])));
    worst = std::max(worst, std::abs(ours[i] - (*theirs)[i]) / scale);
  }
  std::fprintf(stderr,
               "%s: %zu trees, %.1f leaves/tree, scoring kernels %s; max |ours "
               "- xgboost| / max(1, |xgboost|) over %zu documents = %.2g\n",
               shape.name().c_str(), model->trees.size(), fixture->mean_leaves,
               fixture->scorer.kernel_plan_name().c_str(), kPoolDocs, worst);
  if (!(worst <= 1e-5)) {
    return absl::InternalError(
        absl::StrCat(shape.name(), ": scores differ from XGBoost's"));
  }
  return fixture;
}

enum class System { kOurs, kXgboost };

struct RunKey {
  std::string shape;
  System system;
  size_t batch;
};

void ScoreBatches(benchmark::State& state, Fixture* fixture,
                  const std::vector<float>* pool, System system, size_t batch) {
  std::vector<double> out(batch);
  size_t offset = 0;
  for (auto _ : state) {
    const float* rows = pool->data() + offset * kFeatures;
    if (system == System::kOurs) {
      fixture->scorer.Score(absl::MakeConstSpan(rows, batch * kFeatures), batch,
                            absl::MakeSpan(out));
      benchmark::DoNotOptimize(out.data());
    } else {
      absl::StatusOr<const float*> result = fixture->xgboost.Predict(rows, batch);
      if (!result.ok()) {
        state.SkipWithError(std::string(result.status().message()).c_str());
        return;
      }
      benchmark::DoNotOptimize(*result);
    }
    offset += batch;
    if (offset + batch > kPoolDocs) offset = 0;
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

// Console output as usual, plus the per-iteration times for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  explicit SummaryReporter(std::map<std::string, RunKey> keys)
      : keys_(std::move(keys)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      auto it = keys_.find(run.run_name.function_name);
      if (it == keys_.end()) continue;
      const RunKey& key = it->second;
      // The fastest repetition: the least disturbed by other processes.
      double& best =
          seconds_per_doc_[{key.shape, key.batch}][key.system == System::kOurs];
      const double seconds =
          run.cpu_accumulated_time / run.iterations / key.batch;
      if (best == 0 || seconds < best) best = seconds;
    }
  }

  void PrintSummary(const std::vector<Shape>& shapes,
                    const std::vector<size_t>& batch_sizes) const {
    std::printf(
        "\n%-9s %6s | %12s %12s | %12s %12s | %8s\n", "model", "batch",
        "xgb us/doc", "xgb docs/s", "ours us/doc", "ours docs/s", "speedup");
    for (const Shape& shape : shapes) {
      for (size_t batch : batch_sizes) {
        auto it = seconds_per_doc_.find({shape.name(), batch});
        if (it == seconds_per_doc_.end()) continue;
        const double xgb = it->second[0];
        const double ours = it->second[1];
        // A system the filter left out has no time.
        auto columns = [](double seconds) {
          return seconds > 0 ? absl::StrFormat("%12.3f %12.0f", seconds * 1e6,
                                               1 / seconds)
                             : absl::StrFormat("%12s %12s", "-", "-");
        };
        const std::string speedup = xgb > 0 && ours > 0
                                        ? absl::StrFormat("%7.2fx", xgb / ours)
                                        : std::string("       -");
        std::printf("%-9s %6zu | %s | %s | %s\n", shape.name().c_str(), batch,
                    columns(xgb).c_str(), columns(ours).c_str(),
                    speedup.c_str());
      }
    }
  }

 private:
  std::map<std::string, RunKey> keys_;
  std::map<std::pair<std::string, size_t>, std::array<double, 2>>
      seconds_per_doc_;
};

absl::StatusOr<Options> ParseOwnFlags(int* argc, char** argv) {
  Options options;
  const char* cache = std::getenv("PLRANK_BENCH_CACHE");
  options.cache_dir = cache != nullptr ? cache : "/tmp/plrank-bench-cache";
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    auto value_of = [&](const char* prefix) -> const char* {
      const size_t length = std::string(prefix).size();
      return arg.compare(0, length, prefix) == 0 ? argv[i] + length : nullptr;
    };
    if (const char* value = value_of("--cache_dir=")) {
      options.cache_dir = value;
    } else if (const char* value = value_of("--kernel=")) {
      options.kernel = value;
    } else if (const char* value = value_of("--train_queries=")) {
      if (!absl::SimpleAtoi(value, &options.train_queries) ||
          options.train_queries < 10) {
        return absl::InvalidArgumentError("--train_queries must be >= 10");
      }
    } else if (const char* value = value_of("--batch_sizes=")) {
      options.batch_sizes.clear();
      for (absl::string_view item : absl::StrSplit(value, ',')) {
        size_t batch = 0;
        if (!absl::SimpleAtoi(item, &batch) || batch < 1 || batch > kPoolDocs) {
          return absl::InvalidArgumentError(absl::StrCat(
              "bad --batch_sizes item '", item,
              "' (want a document count from 1 to ", kPoolDocs, ")"));
        }
        options.batch_sizes.push_back(batch);
      }
    } else if (const char* value = value_of("--shapes=")) {
      options.shapes.clear();
      for (absl::string_view item : absl::StrSplit(value, ',')) {
        std::vector<std::string> parts = absl::StrSplit(item, 'x');
        Shape shape;
        if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &shape.trees) ||
            !absl::SimpleAtoi(parts[1], &shape.leaves) || shape.trees < 1 ||
            shape.leaves < 2) {
          return absl::InvalidArgumentError(
              absl::StrCat("bad --shapes item '", item, "' (want TREESxLEAVES)"));
        }
        options.shapes.push_back(shape);
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return options;
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> options = ParseOwnFlags(&argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  const std::vector<float> pool = MakePool();
  std::vector<std::unique_ptr<Fixture>> fixtures;
  std::map<std::string, RunKey> keys;
  for (const Shape& shape : options->shapes) {
    absl::StatusOr<std::unique_ptr<Fixture>> fixture =
        MakeFixture(shape, *options, pool);
    if (!fixture.ok()) {
      std::fprintf(stderr, "%s\n", fixture.status().ToString().c_str());
      return 1;
    }
    fixtures.push_back(*std::move(fixture));
    for (size_t batch : options->batch_sizes) {
      for (System system : {System::kXgboost, System::kOurs}) {
        const std::string name = absl::StrFormat(
            "%s/%s/batch:%d", shape.name(),
            system == System::kOurs ? "plrank" : "xgboost", batch);
        benchmark::RegisterBenchmark(name.c_str(), ScoreBatches,
                                     fixtures.back().get(), &pool, system,
                                     batch)
            ->Repetitions(3)
            ->MinTime(0.2);
        keys[name] = {shape.name(), system, batch};
      }
    }
  }
  SummaryReporter reporter(keys);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintSummary(options->shapes, options->batch_sizes);
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) { return plrank::bench::Main(argc, argv); }
