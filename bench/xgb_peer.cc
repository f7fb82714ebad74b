// plrank-xgb-peer: trains XGBoost 1.7 (C API) on a LETOR file with the same
// reader PLRank uses, so the benchmark compares learners, not parsers.
//
// Prints `load_seconds=` (reading + DMatrix construction) and
// `train_seconds=` (the boosting loop only; XGBoost's quantile sketch and
// histogram index are built lazily inside the first iteration, so they
// count as training, as PLRank's binning does) on stdout.

#include <xgboost/c_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "bench/dense_rows.h"
#include "bench/train_flag.h"
#include "bench/xgb_call.h"
#include "common/program.h"
#include "core/data/dataset.h"
#include "core/data/file_io.h"
#include "core/data/letor_reader.h"

ABSL_FLAG(std::string, train, "", "LETOR training file (required)");
ABSL_FLAG(std::string, test, "", "LETOR file to score (optional)");
ABSL_FLAG(std::string, scores_out, "",
          "where to write one test score per test line");
ABSL_FLAG(std::string, model_out, "", "optional XGBoost model file (.json)");
ABSL_FLAG(std::string, objective, "rank:ndcg",
          "XGBoost objective: rank:ndcg, rank:pairwise or rank:map");
PLRANK_BENCH_TRAIN_FLAG(trees, 100, "boosting rounds");
PLRANK_BENCH_TRAIN_FLAG(leaves, 31, "max_leaves (lossguide growth, no depth cap)");
PLRANK_BENCH_TRAIN_FLAG(learning_rate, 0.1, "eta");
PLRANK_BENCH_TRAIN_FLAG(max_bin, 255, "histogram bins per feature");
PLRANK_BENCH_TRAIN_FLAG(num_threads, 2, "nthread");
PLRANK_BENCH_TRAIN_FLAG(seed, 0, "XGBoost seed");
ABSL_FLAG(std::string, xgb_params, "",
          "further XGBoost parameters, name=value,name=value, set after the "
          "ones the flags above set (so they win): e.g. "
          "grow_policy=depthwise,max_depth=6,max_leaves=0,eta=0.3 for "
          "XGBRanker's own defaults");
ABSL_FLAG(bool, quiet, false, "only print the timing lines");

namespace plrank::bench {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::StatusOr<DMatrixPtr> MakeDMatrix(const Dataset& data, int32_t width,
                                       int32_t threads, bool with_labels) {
  std::vector<float> dense = DenseRows(data, data.num_documents(), width);
  DMatrixHandle raw = nullptr;
  PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixCreateFromMat_omp(
      dense.data(), data.num_documents(), width,
      std::numeric_limits<float>::quiet_NaN(), &raw, threads));
  DMatrixPtr matrix(raw);
  if (with_labels) {
    std::vector<float> labels(data.labels.begin(), data.labels.end());
    PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixSetFloatInfo(
        matrix.get(), "label", labels.data(), labels.size()));
    std::vector<unsigned> groups(data.num_queries());
    for (size_t q = 0; q < groups.size(); ++q) {
      groups[q] = data.query_end(q) - data.query_begin(q);
    }
    PLRANK_XGB_RETURN_IF_ERROR(XGDMatrixSetUIntInfo(
        matrix.get(), "group", groups.data(), groups.size()));
  }
  return matrix;
}

using XgbParams = std::vector<std::pair<std::string, std::string>>;

// "name=value,name=value" (blanks around items ignored) into pairs.
absl::StatusOr<XgbParams> ParseXgbParams(absl::string_view text) {
  XgbParams params;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    if (equals == absl::string_view::npos || equals == 0 ||
        equals + 1 == item.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--xgb_params: '", item, "' is not name=value"));
    }
    params.emplace_back(std::string(item.substr(0, equals)),
                        std::string(item.substr(equals + 1)));
  }
  return params;
}

// The flags' parameters, then `extra` (--xgb_params), in that order.
absl::Status SetParams(BoosterHandle booster, const XgbParams& extra) {
  XgbParams params = {
      {"objective", absl::GetFlag(FLAGS_objective)},
      {"tree_method", "hist"},
      {"grow_policy", "lossguide"},
      {"max_leaves", absl::StrCat(absl::GetFlag(FLAGS_leaves))},
      {"max_depth", "0"},
      {"eta", absl::StrCat(absl::GetFlag(FLAGS_learning_rate))},
      {"max_bin", absl::StrCat(absl::GetFlag(FLAGS_max_bin))},
      {"nthread", absl::StrCat(absl::GetFlag(FLAGS_num_threads))},
      {"seed", absl::StrCat(absl::GetFlag(FLAGS_seed))},
      {"verbosity", absl::GetFlag(FLAGS_quiet) ? "0" : "1"},
  };
  params.insert(params.end(), extra.begin(), extra.end());
  for (const auto& [name, value] : params) {
    PLRANK_XGB_RETURN_IF_ERROR(
        XGBoosterSetParam(booster, name.c_str(), value.c_str()));
  }
  return absl::OkStatus();
}

absl::Status WriteScores(BoosterHandle booster, DMatrixHandle test,
                         size_t expected, const std::string& path) {
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0,)"
      R"( "iteration_end": 0, "strict_shape": false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  PLRANK_XGB_RETURN_IF_ERROR(XGBoosterPredictFromDMatrix(
      booster, test, config, &shape, &dims, &result));
  if (dims != 1 || shape[0] != expected) {
    return absl::InternalError(absl::StrCat(
        "unexpected prediction shape (", dims, " dims) for ", expected, " rows"));
  }
  std::string text;
  for (size_t i = 0; i < expected; ++i) {
    absl::StrAppendFormat(&text, "%.9g\n", result[i]);
  }
  return WriteFileAtomically(path, text);
}

absl::Status Run() {
  const std::string train_path = absl::GetFlag(FLAGS_train);
  if (train_path.empty()) return absl::InvalidArgumentError("--train is required");
  const int32_t threads = absl::GetFlag(FLAGS_num_threads);
  const bool quiet = absl::GetFlag(FLAGS_quiet);
  absl::StatusOr<XgbParams> extra_params =
      ParseXgbParams(absl::GetFlag(FLAGS_xgb_params));
  if (!extra_params.ok()) return extra_params.status();

  const Clock::time_point load_start = Clock::now();
  DMatrixPtr train;
  int32_t width = 0;
  {
    absl::StatusOr<Dataset> data = ReadLetorFile(train_path, ReadOptions{});
    if (!data.ok()) return data.status();
    width = data->num_features;
    absl::StatusOr<DMatrixPtr> matrix = MakeDMatrix(*data, width, threads, true);
    if (!matrix.ok()) return matrix.status();
    train = std::move(*matrix);
    if (!quiet) {
      std::fprintf(stderr, "train: %zu documents, %zu queries, %d features\n",
                   data->num_documents(), data->num_queries(), width);
    }
  }  // the Dataset is freed before training, as XGBoost keeps its own copy
  const double load_seconds = SecondsSince(load_start);

  BoosterHandle raw_booster = nullptr;
  DMatrixHandle train_handle = train.get();
  PLRANK_XGB_RETURN_IF_ERROR(XGBoosterCreate(&train_handle, 1, &raw_booster));
  BoosterPtr booster(raw_booster);
  if (absl::Status s = SetParams(booster.get(), *extra_params); !s.ok())
    return s;

  const int32_t trees = absl::GetFlag(FLAGS_trees);
  const Clock::time_point train_start = Clock::now();
  for (int32_t iteration = 0; iteration < trees; ++iteration) {
    PLRANK_XGB_RETURN_IF_ERROR(
        XGBoosterUpdateOneIter(booster.get(), iteration, train.get()));
  }
  const double train_seconds = SecondsSince(train_start);
  train.reset();

  if (const std::string model_out = absl::GetFlag(FLAGS_model_out);
      !model_out.empty()) {
    PLRANK_XGB_RETURN_IF_ERROR(XGBoosterSaveModel(booster.get(), model_out.c_str()));
  }
  if (const std::string test_path = absl::GetFlag(FLAGS_test); !test_path.empty()) {
    const std::string scores_out = absl::GetFlag(FLAGS_scores_out);
    if (scores_out.empty()) return absl::InvalidArgumentError("--test needs --scores_out");
    absl::StatusOr<Dataset> data = ReadLetorFile(test_path, ReadOptions{});
    if (!data.ok()) return data.status();
    // Features beyond the training width were never split on; missing
    // trailing ones are absent (0), as in the Dataset.
    absl::StatusOr<DMatrixPtr> test = MakeDMatrix(*data, width, threads, false);
    if (!test.ok()) return test.status();
    if (absl::Status s = WriteScores(booster.get(), test->get(),
                                     data->num_documents(), scores_out);
        !s.ok()) {
      return s;
    }
  }
  std::printf("load_seconds=%.3f\ntrain_seconds=%.3f\n", load_seconds,
              train_seconds);
  return absl::OkStatus();
}

}  // namespace
}  // namespace plrank::bench

int main(int argc, char** argv) {
  std::vector<char*> rest = plrank::ParseProgramFlags(
      argc, argv,
      "Trains XGBoost (hist, lossguide) on a LETOR file.\n"
      "  plrank-xgb-peer --train F --test T --scores_out S "
      "--objective=rank:ndcg --trees 100 --leaves 31");
  if (rest.size() > 1) {
    std::fprintf(stderr, "plrank-xgb-peer: error: unexpected argument %s\n", rest[1]);
    return 2;
  }
  absl::Status status = plrank::bench::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "plrank-xgb-peer: error: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
