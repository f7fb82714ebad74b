#include "core/pipeline/train_job.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include <omp.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/file_io.h"
#include "core/model/forest_scorer.h"
#include "core/model/model_io.h"

namespace plrank {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class Fnv1a64 {
 public:
  void Add(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ = (hash_ ^ bytes[i]) * 1099511628211ull;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

// Mean NDCG@k of the first output's final ranking scores. Multi-output
// models are turned into one score per document by the scorer's transform,
// which the evaluator reproduces here for consistency.
class NdcgEvaluator {
 public:
  NdcgEvaluator(const Dataset* data, int32_t k, int32_t num_outputs,
                ScoreTransform transform, const MetricOptions& options)
      : data_(data),
        spec_{MetricSpec::Kind::kNdcg, k},
        num_outputs_(num_outputs),
        transform_(transform),
        options_(options) {}

  double operator()(absl::Span<const double> scores) const {
    const size_t n = data_->num_documents();
    if (num_outputs_ == 1 || transform_ == ScoreTransform::kIdentity) {
      return MeanIgnoringNan(
          PerQueryMetric(*data_, scores.subspan(0, n), spec_, options_));
    }
    std::vector<double> ranking(n);
    for (size_t i = 0; i < n; ++i) {
      double max_raw = -std::numeric_limits<double>::infinity();
      for (int32_t k = 0; k < num_outputs_; ++k) {
        max_raw = std::max(max_raw, scores[k * n + i]);
      }
      double normalizer = 0.0, expectation = 0.0;
      for (int32_t k = 0; k < num_outputs_; ++k) {
        const double p = std::exp(scores[k * n + i] - max_raw);
        normalizer += p;
        expectation += k * p;
      }
      ranking[i] = expectation / normalizer;
    }
    return MeanIgnoringNan(PerQueryMetric(*data_, ranking, spec_, options_));
  }

 private:
  const Dataset* data_;
  MetricSpec spec_;
  int32_t num_outputs_;
  ScoreTransform transform_;
  MetricOptions options_;
};

absl::StatusOr<Dataset> LoadDataset(const std::string& path,
                                    const ReadOptions& options) {
  absl::StatusOr<Dataset> data = ReadLetorFile(path, options);
  if (!data.ok()) return data.status();
  if (data->num_documents() == 0 || data->num_queries() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the dataset has no documents"));
  }
  return data;
}

std::string FormatMetric(double value) {
  return std::isnan(value) ? std::string("-") : absl::StrFormat("%.4f", value);
}

// Stamps the data digests and creation time, then writes the artifact.
absl::StatusOr<TrainSummary> Finish(
    const TrainJob& job, const Dataset& train, const Dataset* valid,
    const std::function<void(const std::string&)>& log, TrainSummary summary) {
  Ensemble& model = summary.model;
  model.train_data_hash = DatasetDigest(train);
  if (valid != nullptr) model.valid_data_hash = DatasetDigest(*valid);
  model.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  // A new version directory (<base>/<model>/<version>/) is created on demand.
  const std::filesystem::path parent =
      std::filesystem::path(job.model_out).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    return absl::InternalError(absl::StrCat(
        parent.string(), ": cannot create directory: ", error.message()));
  }
  if (absl::Status status = WriteModelFile(model, job.model_out);
      !status.ok()) {
    return status;
  }
  log(absl::StrFormat("wrote %s (%d trees, %d linear weights)", job.model_out,
                      model.trees.size(), model.linear_weights.size()));
  return summary;
}

}  // namespace

bool IsLinearObjective(const std::string& name) {
  return name == "ca" || name == "listmle";
}

std::string DatasetDigest(const Dataset& data) {
  Fnv1a64 hash;
  hash.Add(&data.num_features, sizeof(data.num_features));
  hash.Add(data.labels.data(), data.labels.size() * sizeof(int32_t));
  hash.Add(data.query_offsets.data(),
           data.query_offsets.size() * sizeof(uint32_t));
  hash.Add(data.features.data(), data.features.size() * sizeof(float));
  return absl::StrFormat("fnv1a64:%016x", hash.value());
}

absl::StatusOr<TrainSummary> RunTrainJob(
    const TrainJob& job, const std::function<void(const std::string&)>& log) {
  if (job.train_path.empty()) {
    return absl::InvalidArgumentError("no training data (--train)");
  }
  if (job.model_out.empty()) {
    return absl::InvalidArgumentError("no output path (--model_out)");
  }
  // A target that can never be written (e.g. /dev/full) fails now, not
  // after training.
  if (absl::Status target = CheckOutputTarget(job.model_out); !target.ok()) {
    return target;
  }
  if (job.eval_at.empty()) {
    return absl::InvalidArgumentError("--eval_at needs at least one cut-off");
  }
  TrainSummary summary;
  const auto load_start = Clock::now();
  // Every parallel region (objectives, metrics, scoring) uses the requested
  // thread count, not only the booster's: idle OpenMP workers spin.
  omp_set_num_threads(job.booster.num_threads > 0 ? job.booster.num_threads
                                                  : omp_get_num_procs());

  // A background model fixes the feature width for every file.
  std::optional<Ensemble> init_model;
  ReadOptions read_options = job.read_options;
  if (!job.init_model_path.empty()) {
    absl::StatusOr<Ensemble> loaded = ReadModelFile(job.init_model_path);
    if (!loaded.ok()) return loaded.status();
    init_model = *std::move(loaded);
    if (read_options.num_features == 0) {
      read_options.num_features = init_model->num_features;
      read_options.num_features_origin = absl::StrCat(
          "the feature count of --init_model ", job.init_model_path);
    }
  }
  absl::StatusOr<Dataset> train = LoadDataset(job.train_path, read_options);
  if (!train.ok()) return train.status();
  // Checked now rather than when the model is written after training.
  if (train->num_features > kMaxModelFeatures) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d features is above the limit of %d features per model",
        job.train_path, train->num_features, kMaxModelFeatures));
  }
  std::optional<Dataset> valid;
  if (!job.valid_path.empty()) {
    ReadOptions valid_options = read_options;
    valid_options.num_features = train->num_features;
    absl::StatusOr<Dataset> loaded = LoadDataset(job.valid_path, valid_options);
    if (!loaded.ok()) return loaded.status();
    valid = *std::move(loaded);
  }
  summary.train_documents = static_cast<int64_t>(train->num_documents());
  summary.train_queries = static_cast<int64_t>(train->num_queries());
  log(absl::StrFormat("train: %s — %d queries, %d documents, %d features",
                      job.train_path, train->num_queries(),
                      train->num_documents(), train->num_features));
  if (valid) {
    log(absl::StrFormat("valid: %s — %d queries, %d documents",
                        job.valid_path, valid->num_queries(),
                        valid->num_documents()));
  }

  if (IsLinearObjective(job.objective.name)) {
    if (init_model) {
      return absl::InvalidArgumentError(
          "--init_model applies to tree objectives, not linear rankers");
    }
    summary.load_seconds = SecondsSince(load_start);
    const auto train_start = Clock::now();
    absl::StatusOr<LinearModelResult> linear;
    if (job.objective.name == "ca") {
      CoordinateAscentOptions options = job.coordinate_ascent;
      options.ndcg_k = job.eval_at.front();
      options.seed = job.booster.seed;
      linear = TrainCoordinateAscent(*train, valid ? &*valid : nullptr,
                                     options, log);
    } else {
      LinearListMleOptions options = job.listmle;
      options.ndcg_k = job.eval_at.front();
      options.seed = job.booster.seed;
      linear = TrainLinearListMle(*train, valid ? &*valid : nullptr, options,
                                  log);
    }
    if (!linear.ok()) return linear.status();
    summary.train_seconds = SecondsSince(train_start);
    summary.iterations = summary.best_iteration = linear->iterations;
    Ensemble& model = summary.model;
    model.num_features = train->num_features;
    model.objective = job.objective.name;
    model.linear_weights = linear->weights;
    model.parameters = job.parameters;
    IterationMetrics last;
    last.iteration = linear->iterations;
    const std::string metric_name = absl::StrCat("ndcg@", job.eval_at.front());
    last.train[metric_name] = linear->train_ndcg;
    if (valid) last.valid[metric_name] = linear->valid_ndcg;
    model.history.push_back(std::move(last));
    model.best_iteration = 0;
    return Finish(job, *train, valid ? &*valid : nullptr, log,
                  std::move(summary));
  }

  absl::StatusOr<std::unique_ptr<Objective>> objective =
      MakeObjective(job.objective);
  if (!objective.ok()) return objective.status();
  if (absl::Status status = (*objective)->Init(*train, job.booster.seed);
      !status.ok()) {
    return status;
  }
  for (const std::string& line : (*objective)->Describe()) log(line);
  const int32_t num_outputs = (*objective)->num_outputs();
  const ScoreTransform transform = num_outputs > 1
                                       ? ScoreTransform::kExpectedRelevance
                                       : ScoreTransform::kIdentity;

  BoosterInputs inputs;
  inputs.train = &*train;
  inputs.valid = valid ? &*valid : nullptr;
  inputs.objective = objective->get();
  if (init_model) {
    if (init_model->num_outputs != num_outputs) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the background model has %d outputs but objective '%s' needs "
          "%d",
          job.init_model_path, init_model->num_outputs, job.objective.name,
          num_outputs));
    }
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(*init_model);
    if (!scorer.ok()) return scorer.status();
    inputs.init_train_scores = scorer->RawScoresDataset(*train);
    if (valid) inputs.init_valid_scores = scorer->RawScoresDataset(*valid);
  }
  summary.load_seconds = SecondsSince(load_start);

  // Metrics are costly next to one boosting iteration on big data: evaluate
  // only when a progress line is due, or every iteration when early
  // stopping needs the validation curve.
  const int32_t total = job.booster.num_trees;
  const int32_t k = job.eval_at.front();
  auto due = [&job, total](int32_t iteration) {
    return job.log_period > 0 &&
           (iteration % job.log_period == 0 || iteration == total);
  };
  auto train_calls = std::make_shared<int32_t>(0);
  auto valid_calls = std::make_shared<int32_t>(0);
  NdcgEvaluator train_ndcg(&*train, k, num_outputs, transform,
                           job.metric_options);
  inputs.train_evaluator = [train_ndcg, train_calls,
                            due](absl::Span<const double> scores) {
    return due(++*train_calls) ? train_ndcg(scores)
                               : std::numeric_limits<double>::quiet_NaN();
  };
  if (valid) {
    NdcgEvaluator valid_ndcg(&*valid, k, num_outputs, transform,
                             job.metric_options);
    const bool every = job.booster.early_stopping_rounds > 0;
    inputs.valid_evaluator = [valid_ndcg, valid_calls, due,
                              every](absl::Span<const double> scores) {
      return (due(++*valid_calls) || every)
                 ? valid_ndcg(scores)
                 : std::numeric_limits<double>::quiet_NaN();
    };
  }
  const std::string metric_name = absl::StrCat("ndcg@", k);
  inputs.on_iteration = [&](const IterationReport& report) {
    if (!due(report.iteration)) return;
    const double per_iteration = report.elapsed_seconds / report.iteration;
    const double eta = per_iteration * (report.num_trees - report.iteration);
    log(absl::StrFormat(
        "[%*d/%d] elapsed %.1fs eta %.1fs loss %.5g train %s %s valid %s %s",
        static_cast<int>(std::to_string(report.num_trees).size()),
        report.iteration, report.num_trees, report.elapsed_seconds, eta,
        report.train_loss, metric_name, FormatMetric(report.train_metric),
        metric_name, FormatMetric(report.valid_metric)));
  };

  const auto train_start = Clock::now();
  absl::StatusOr<BoosterResult> result = TrainBooster(job.booster, inputs);
  if (!result.ok()) return result.status();
  summary.train_seconds = SecondsSince(train_start);
  summary.iterations = static_cast<int32_t>(result->history.size());
  summary.best_iteration = result->best_iteration;

  Ensemble& model = summary.model;
  if (init_model) {
    model = *init_model;
    model.history.clear();
  }
  model.num_features = train->num_features;
  model.objective = job.objective.name;
  model.num_outputs = num_outputs;
  model.transform = transform;
  for (Tree& tree : result->trees) model.trees.push_back(std::move(tree));
  model.parameters = job.parameters;
  for (const IterationReport& report : result->history) {
    IterationMetrics metrics;
    metrics.iteration = report.iteration;
    metrics.train_loss = report.train_loss;
    if (!std::isnan(report.train_metric)) {
      metrics.train[metric_name] = report.train_metric;
    }
    if (!std::isnan(report.valid_metric)) {
      metrics.valid[metric_name] = report.valid_metric;
    }
    model.history.push_back(std::move(metrics));
  }
  model.best_iteration = result->best_iteration;
  if (result->best_iteration < summary.iterations) {
    log(absl::StrFormat("early stopping: kept %d of %d iterations",
                        result->best_iteration, summary.iterations));
  }
  return Finish(job, *train, valid ? &*valid : nullptr, log,
                std::move(summary));
}

}  // namespace plrank
