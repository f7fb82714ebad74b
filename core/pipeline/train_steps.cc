#include "core/pipeline/train_steps.h"

#include <ctime>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/dataset_stats.h"
#include "core/data/feature_names.h"
#include "core/linear/linear_model.h"
#include "core/model/model_io.h"
#include "core/pipeline/auto_learning_rate.h"
#include "core/pipeline/ndcg_evaluator.h"
#include "core/pipeline/shard_loading.h"

namespace plrank {
namespace {

absl::Status CheckNotEmpty(const std::string& path, const Dataset& data) {
  if (data.num_documents() == 0 || data.num_queries() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(DataName(path), ": the dataset has no documents"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DataName(const std::string& path) {
  return path.empty() ? std::string("(in memory)") : path;
}

std::string BackgroundModelMismatch(const std::string& train_path,
                                    int32_t data_features,
                                    const std::string& model_path,
                                    int32_t model_features) {
  return absl::StrFormat("%s: %d features, but the background model %s has %d",
                         DataName(train_path), data_features, model_path,
                         model_features);
}

DataTotals CountDataTotals(const Dataset& train, const Dataset* valid,
                           Reducer* reducer) {
  double totals[3] = {
      static_cast<double>(train.num_documents()),
      static_cast<double>(train.num_queries()),
      static_cast<double>(CountQueriesWithRankingSignal(train))};
  double valid_totals[2] = {
      valid ? static_cast<double>(valid->num_documents()) : 0.0,
      valid ? static_cast<double>(valid->num_queries()) : 0.0};
  if (reducer != nullptr) {
    reducer->Sum(absl::MakeSpan(totals));
    reducer->Sum(absl::MakeSpan(valid_totals));
  }
  DataTotals out;
  out.train_documents = static_cast<int64_t>(totals[0]);
  out.train_queries = static_cast<int64_t>(totals[1]);
  out.queries_with_signal = static_cast<int64_t>(totals[2]);
  out.valid_documents = static_cast<int64_t>(valid_totals[0]);
  out.valid_queries = static_cast<int64_t>(valid_totals[1]);
  return out;
}

TrainJob ResolveAutoSettings(const TrainJob& requested,
                             int64_t train_documents) {
  TrainJob job = requested;
  job.objective =
      ResolveAutoObjectiveOptions(requested.objective, train_documents);
  if (job.objective.pl_weighting != requested.objective.pl_weighting &&
      job.parameters.count("pl_weighting") > 0) {
    job.parameters["pl_weighting"] = job.objective.pl_weighting;
  }
  if (requested.auto_learning_rate) {
    job.auto_learning_rate = false;
    job.booster.learning_rate =
        AutoLearningRate(train_documents, job.booster.num_trees);
    job.parameters["learning_rate"] = absl::StrCat(job.booster.learning_rate);
  }
  return job;
}

absl::Status CheckTrainingData(const TrainJob& job, const Dataset& train,
                               const Dataset* valid) {
  if (absl::Status status = CheckNotEmpty(job.train_path, train);
      !status.ok()) {
    return status;
  }
  if (train.num_features > kMaxModelFeatures) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d features is above the limit of %d features per model",
        DataName(job.train_path), train.num_features, kMaxModelFeatures));
  }
  if (valid == nullptr) return absl::OkStatus();
  if (absl::Status status = CheckNotEmpty(job.valid_path, *valid);
      !status.ok()) {
    return status;
  }
  if (valid->num_features != train.num_features) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d features, but the training data has %d",
        DataName(job.valid_path), valid->num_features, train.num_features));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Ensemble>> ReadInitModel(const TrainJob& job,
                                                      const Dataset& train) {
  if (job.init_model_path.empty()) return std::nullopt;
  absl::StatusOr<Ensemble> loaded = ReadModelFile(job.init_model_path);
  if (!loaded.ok()) return loaded.status();
  if (train.num_features < loaded->num_features) {
    return absl::InvalidArgumentError(
        BackgroundModelMismatch(job.train_path, train.num_features,
                                job.init_model_path, loaded->num_features));
  }
  return std::optional<Ensemble>(*std::move(loaded));
}

absl::StatusOr<std::vector<std::string>> ReadFeatureNames(
    const TrainJob& job, int32_t num_features) {
  if (job.feature_names_path.empty()) return std::vector<std::string>();
  return ReadFeatureNamesFile(job.feature_names_path, num_features);
}

std::vector<std::string> DescribeTrainingData(const TrainJob& job,
                                              int32_t num_features,
                                              const DataTotals& totals,
                                              bool learning_rate_was_auto,
                                              bool has_valid) {
  std::vector<std::string> lines;
  lines.push_back(
      absl::StrFormat("train: %s — %d queries, %d documents, %d features",
                      DataName(job.train_path), totals.train_queries,
                      totals.train_documents, num_features));
  if (learning_rate_was_auto) {
    lines.push_back(absl::StrFormat(
        "learning rate %g (auto from %d training documents and %d trees; "
        "--learning_rate sets it)",
        job.booster.learning_rate, totals.train_documents,
        job.booster.num_trees));
  }
  if (totals.queries_with_signal == 0) {
    lines.push_back(absl::StrFormat(
        "warning: %s: no query has two different labels, so there is no "
        "ranking signal: ranking losses get zero gradients and every "
        "document will score the same (check the label column)",
        DataName(job.train_path)));
  } else if (2 * totals.queries_with_signal < totals.train_queries) {
    lines.push_back(absl::StrFormat(
        "note: %s: only %d of %d queries have two different labels; the "
        "others carry no ranking signal",
        DataName(job.train_path), totals.queries_with_signal,
        totals.train_queries));
  }
  if (has_valid) {
    lines.push_back(absl::StrFormat(
        "valid: %s — %d queries, %d documents", DataName(job.valid_path),
        totals.valid_queries, totals.valid_documents));
  }
  return lines;
}

absl::Status CheckDistributedRun(const TrainJob& job, const Dataset& train,
                                 const Dataset* valid, int64_t all_queries,
                                 const TrainLog& log) {
  if (job.reducer == nullptr || job.reducer->num_ranks() <= 1) {
    return absl::OkStatus();
  }
  if (FindLinearTrainer(job.objective.name) != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--objective=%s trains single-process only (distributed training "
        "is for tree objectives)",
        job.objective.name));
  }
  // Every rank has read the same files with the same flags, or nothing
  // trains: a mismatch would grow different trees, or hang a collective.
  if (absl::Status status = job.reducer->CheckSameOnEveryRank(
          DistributedDigest(job, train, valid));
      !status.ok()) {
    return status;
  }
  log(absl::StrFormat(
      "distributed: rank %d of %d holds queries [%d, %d) of %d",
      job.reducer->rank(), job.reducer->num_ranks(), train.query_index_base,
      train.query_index_base + train.num_queries(), all_queries));
  return absl::OkStatus();
}

absl::StatusOr<TrainSummary> TrainLinearModel(
    const LinearTrainer& trainer, const TrainJob& job, const Dataset& train,
    const Dataset* valid, bool has_init_model,
    TrainClock::time_point load_start, const TrainLog& log) {
  if (!train.weights.empty() || !train.query_weights.empty() ||
      job.clicks.position_debias != PositionDebias::kNone) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--objective=%s (a linear ranker) takes no weights and no "
        "--position_debias; use a tree objective",
        job.objective.name));
  }
  if (has_init_model) {
    return absl::InvalidArgumentError(
        "--init_model applies to tree objectives, not linear rankers");
  }
  TrainSummary summary;
  summary.load_seconds = SecondsSince(load_start);
  const auto train_start = TrainClock::now();
  LinearTrainerInputs inputs;
  inputs.train = &train;
  inputs.valid = valid;
  inputs.ndcg_k = job.eval_at.front();
  inputs.seed = job.booster.seed;
  inputs.coordinate_ascent = job.coordinate_ascent;
  inputs.listmle = job.listmle;
  inputs.log = log;
  const absl::StatusOr<LinearModelResult> linear = trainer.train(inputs);
  if (!linear.ok()) return linear.status();
  summary.train_seconds = SecondsSince(train_start);
  summary.iterations = summary.best_iteration = linear->iterations;
  Ensemble& model = summary.model;
  model.num_features = train.num_features;
  model.objective = job.objective.name;
  model.linear_weights = linear->weights;
  model.parameters = job.parameters;
  // Every --eval_at cut-off of the final weights (the trainer itself
  // optimises or selects by the first).
  const std::vector<std::string> metric_names = NdcgMetricNames(job.eval_at);
  IterationMetrics last;
  last.iteration = linear->iterations;
  const NdcgEvaluator train_ndcg(&train, job.eval_at, 1,
                                 ScoreTransform::kIdentity, job.metric_options);
  const std::vector<double> train_values =
      train_ndcg(ScoreLinear(train, linear->weights));
  StoreMetrics(metric_names, train_values, &last.train);
  std::vector<double> valid_values;
  if (valid) {
    const NdcgEvaluator valid_ndcg(
        valid, job.eval_at, 1, ScoreTransform::kIdentity, job.metric_options);
    valid_values = valid_ndcg(ScoreLinear(*valid, linear->weights));
    StoreMetrics(metric_names, valid_values, &last.valid);
  }
  log(absl::StrFormat(
      "%s: train %s valid %s", job.objective.name,
      FormatMetrics(metric_names, &train_values),
      FormatMetrics(metric_names, valid ? &valid_values : nullptr)));
  model.history.push_back(std::move(last));
  model.best_iteration = 0;
  return summary;
}

TrainSummary FinishSummary(const TrainJob& job, const Dataset& train,
                           const Dataset* valid, TrainSummary summary,
                           std::vector<std::string> feature_names) {
  // A distributed run's digests are of every rank's shard (collective).
  IdentityReducer identity;
  Reducer& all = job.reducer != nullptr ? *job.reducer : identity;
  Ensemble& model = summary.model;
  model.train_data_hash = ShardedDatasetDigest(DatasetDigest(train), all);
  if (valid != nullptr) {
    model.valid_data_hash = ShardedDatasetDigest(DatasetDigest(*valid), all);
  }
  model.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
  if (!feature_names.empty()) model.feature_names = std::move(feature_names);
  HistoryInfo& history = summary.history;
  history.eval_at = job.eval_at;
  history.best_iteration = summary.best_iteration;
  history.early_stopping_rounds = job.booster.early_stopping_rounds;
  history.train_queries = summary.train_queries;
  history.valid_queries = 0;
  if (valid != nullptr) {
    double queries = static_cast<double>(valid->num_queries());
    if (job.reducer != nullptr) job.reducer->Sum(absl::MakeSpan(&queries, 1));
    history.valid_queries = static_cast<int64_t>(queries);
  }
  return summary;
}

}  // namespace plrank
