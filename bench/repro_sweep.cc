#include "bench/repro_sweep.h"

#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/repro_steps.h"
#include "bench/score_evaluation.h"
#include "core/data/letor_reader.h"
#include "core/data/letor_writer.h"
#include "core/metrics/ranking_metrics.h"
#include "nlohmann/json.hpp"

namespace plrank::bench {
namespace {

using Json = nlohmann::ordered_json;

// `data` restricted to its first `count` features (columns beyond the
// data's width, if any, are 0: an absent sparse entry).
Dataset FirstFeatures(const Dataset& data, int count) {
  Dataset out = data;
  out.num_features = count;
  const size_t n = data.num_documents();
  out.features.assign(static_cast<size_t>(count) * n, 0.0f);
  const size_t kept = static_cast<size_t>(std::min(count, data.num_features));
  std::copy(data.features.begin(), data.features.begin() + kept * n,
            out.features.begin());
  return out;
}

// Trains `system` on `fold`, scores its test part (`test`, as written) and
// returns the per-query metrics ([metric][query]).
absl::StatusOr<std::vector<std::vector<double>>> TrainAndEvaluate(
    const ReproConfig& config, const ReproSystem& system, const Fold& fold,
    const std::string& base, const Dataset& test) {
  const std::string scores_path = base + ".scores";
  absl::StatusOr<double> seconds =
      TrainAndScore(config, system, 0, fold, base, scores_path);
  if (!seconds.ok()) return seconds.status();
  absl::StatusOr<std::vector<double>> scores = ReadScoreFile(scores_path);
  if (!scores.ok()) return scores.status();
  return EvaluateScoresPerQuery(test, *scores);
}

Json Number(double value) {
  return std::isfinite(value) ? Json(value) : Json();
}

}  // namespace

bool SweepResults::ok() const {
  for (const SweepSeries& line : series) {
    for (const SweepPoint& point : line.points) {
      if (!point.error.empty()) return false;
    }
  }
  return true;
}

absl::StatusOr<SweepResults> RunFeatureSweep(
    const ReproConfig& config, const std::vector<int>& feature_counts) {
  auto progress = [&config](const std::string& line) {
    if (config.progress) config.progress(line);
  };
  if (feature_counts.empty() || config.systems.empty()) {
    return absl::InvalidArgumentError(
        "the feature sweep needs feature counts and systems");
  }
  SweepResults results;
  results.config = config;
  results.config.progress = nullptr;
  results.feature_counts = feature_counts;
  absl::StatusOr<std::vector<Fold>> folds = FoldsIn(config.folds_dir);
  if (!folds.ok()) return folds.status();
  if (config.max_folds > 0 &&
      static_cast<int>(folds->size()) > config.max_folds) {
    folds->resize(config.max_folds);
  }
  for (const Fold& fold : *folds) results.fold_names.push_back(fold.name);

  absl::StatusOr<std::unique_ptr<ScratchDirectory>> scratch =
      ScratchDirectory::Create(config.work_dir, "plrank-sweep",
                               config.keep_work_dir);
  if (!scratch.ok()) return scratch.status();
  const std::string& work = (*scratch)->path();
  if (config.keep_work_dir) progress(absl::StrCat("scratch files in ", work));

  for (const ReproSystem& system : config.systems) {
    SweepSeries line{system, {}};
    for (int count : feature_counts) line.points.push_back({count, {}, 0, ""});
    results.series.push_back(std::move(line));
  }
  for (size_t f = 0; f < folds->size(); ++f) {
    const Fold& fold = (*folds)[f];
    absl::StatusOr<Dataset> train = ReadLetorFile(fold.train, ReadOptions{});
    if (!train.ok()) return train.status();
    absl::StatusOr<Dataset> test = ReadLetorFile(fold.test, ReadOptions{});
    if (!test.ok()) return test.status();
    if (f == 0) results.data_features = train->num_features;
    for (size_t c = 0; c < feature_counts.size(); ++c) {
      const int count = feature_counts[c];
      if (count < 1 || count > train->num_features) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "feature count %d is not in 1..%d, the features of %s", count,
            train->num_features, fold.train));
      }
      const Dataset cut_test = FirstFeatures(*test, count);
      const Fold cut{absl::StrCat(fold.name, ".f", count),
                     absl::StrCat(work, "/", fold.name, ".f", count, ".train"),
                     absl::StrCat(work, "/", fold.name, ".f", count, ".test"),
                     fold.number};
      for (const auto& [data, path] :
           {std::pair{FirstFeatures(*train, count), cut.train},
            std::pair{cut_test, cut.test}}) {
        if (absl::Status status = WriteLetorFile(data, path); !status.ok()) {
          return status;
        }
      }
      for (SweepSeries& line : results.series) {
        SweepPoint& point = line.points[c];
        const std::string base =
            absl::StrCat(work, "/", cut.name, ".", line.system.key);
        absl::StatusOr<std::vector<std::vector<double>>> values =
            TrainAndEvaluate(config, line.system, cut, base, cut_test);
        if (!values.ok()) {
          if (point.error.empty()) {
            point.error =
                absl::StrCat(fold.name, ": ", values.status().message());
          }
          progress(absl::StrFormat("[%s] %s, %d features: FAILED: %s",
                                   fold.name, line.system.key, count,
                                   values.status().message()));
          continue;
        }
        const double ndcg10 = MeanIgnoringNan((*values)[kBenchNdcg10]);
        point.fold_ndcg10.push_back(ndcg10);
        progress(absl::StrFormat("[%s] %s, %d features: test NDCG@10 %.4f",
                                 fold.name, line.system.key, count, ndcg10));
      }
    }
  }
  for (SweepSeries& line : results.series) {
    for (SweepPoint& point : line.points) {
      point.ndcg10 = MeanIgnoringNan(point.fold_ndcg10);
    }
  }
  return results;
}

std::string SweepJson(const SweepResults& results) {
  const ReproConfig& c = results.config;
  Json doc;
  doc["metric"] = "ndcg@10";
  doc["feature_counts"] = results.feature_counts;
  doc["folds"] = results.fold_names;
  doc["data_features"] = results.data_features;
  doc["config"] = {{"folds_dir", c.folds_dir},
                   {"num_threads", c.num_threads},
                   {"seed", c.seed}};
  Json series = Json::array();
  for (const SweepSeries& line : results.series) {
    Json points = Json::array();
    for (const SweepPoint& point : line.points) {
      Json folds = Json::array();
      for (double value : point.fold_ndcg10) folds.push_back(Number(value));
      points.push_back({{"features", point.features},
                        {"ndcg@10", Number(point.ndcg10)},
                        {"folds", folds},
                        {"error", point.error.empty()
                                      ? Json()
                                      : Json(point.error)}});
    }
    series.push_back({{"system", line.system.key},
                      {"label", line.system.label},
                      {"points", points}});
  }
  doc["series"] = series;
  return doc.dump(1) + "\n";
}

std::string FormatSweepReport(const SweepResults& results) {
  std::string out = absl::StrFormat(
      "Fig. 2: test NDCG@10 on the first N of %d features (%d fold%s)\n\n"
      "| features |",
      results.data_features, results.fold_names.size(),
      results.fold_names.size() == 1 ? "" : "s");
  std::string rule = "| --- |";
  for (const SweepSeries& line : results.series) {
    absl::StrAppend(&out, " ", line.system.label, " |");
    absl::StrAppend(&rule, " --- |");
  }
  absl::StrAppend(&out, "\n", rule, "\n");
  for (size_t c = 0; c < results.feature_counts.size(); ++c) {
    absl::StrAppend(&out, "| ", results.feature_counts[c], " |");
    for (const SweepSeries& line : results.series) {
      const double value = line.points[c].ndcg10;
      absl::StrAppend(&out, " ",
                      std::isfinite(value) ? absl::StrFormat("%.4f", value)
                                           : std::string("failed"),
                      " |");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace plrank::bench
