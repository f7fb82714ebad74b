#include "core/pipeline/train_job.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/dataset_cache.h"
#include "core/data/dataset_stats.h"
#include "core/data/feature_names.h"
#include "core/data/file_io.h"
#include "core/data/shard_files.h"
#include "core/linear/linear_model.h"
#include "core/model/model_io.h"
#include "core/pipeline/auto_learning_rate.h"
#include "core/pipeline/checkpoint.h"
#include "core/pipeline/shard_loading.h"
#include "core/pipeline/training_history.h"
#include "core/scoring/forest_scorer.h"

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

// Mean NDCG@k, for each cut-off k, of the first output's final ranking
// scores. Multi-output models are turned into one score per document by the
// scorer's transform, which the evaluator reproduces here for consistency.
class NdcgEvaluator {
 public:
  // With a reducer of more than one rank, `data` is this rank's shard and
  // the means are the whole set's (each rank's sums and counts, reduced);
  // the call is then collective.
  NdcgEvaluator(const Dataset* data, const std::vector<int32_t>& cutoffs,
                int32_t num_outputs, ScoreTransform transform,
                const MetricOptions& options, Reducer* reducer = nullptr)
      : data_(data),
        num_outputs_(num_outputs),
        transform_(transform),
        options_(options),
        reducer_(reducer != nullptr && reducer->num_ranks() > 1 ? reducer
                                                                : nullptr) {
    for (int32_t k : cutoffs) specs_.push_back({MetricSpec::Kind::kNdcg, k});
    if (HasQueryMetricWeights(*data)) {
      query_weights_.resize(data->num_queries());
      for (size_t q = 0; q < query_weights_.size(); ++q) {
        query_weights_[q] = QueryMetricWeight(*data, q);
      }
    }
  }

  // One mean per cut-off; `first_only` computes only the first (the others
  // are NaN).
  std::vector<double> operator()(absl::Span<const double> scores,
                                 bool first_only = false) const {
    const size_t n = data_->num_documents();
    if (num_outputs_ == 1 || transform_ == ScoreTransform::kIdentity) {
      return Means(scores.subspan(0, n), first_only);
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
    return Means(ranking, first_only);
  }

 private:
  std::vector<double> Means(absl::Span<const double> scores,
                            bool first_only) const {
    std::vector<double> means(specs_.size(),
                              std::numeric_limits<double>::quiet_NaN());
    const size_t computed = first_only ? 1 : specs_.size();
    if (reducer_ == nullptr) {
      for (size_t m = 0; m < computed; ++m) {
        const std::vector<double> per_query =
            PerQueryMetric(*data_, scores, specs_[m], options_);
        means[m] = query_weights_.empty() ? MeanIgnoringNan(per_query)
                                          : WeightedMean(per_query);
      }
      return means;
    }
    // Sums and (weighted) counts of the queries with a value, over every
    // rank.
    std::vector<double> sums(2 * computed, 0.0);
    for (size_t m = 0; m < computed; ++m) {
      const std::vector<double> per_query =
          PerQueryMetric(*data_, scores, specs_[m], options_);
      for (size_t q = 0; q < per_query.size(); ++q) {
        if (std::isnan(per_query[q])) continue;
        const double w = query_weights_.empty() ? 1.0 : query_weights_[q];
        sums[2 * m] += w * per_query[q];
        sums[2 * m + 1] += w;
      }
    }
    reducer_->Sum(absl::MakeSpan(sums));
    for (size_t m = 0; m < computed; ++m) {
      if (sums[2 * m + 1] > 0) means[m] = sums[2 * m] / sums[2 * m + 1];
    }
    return means;
  }

  // The mean of the non-NaN values weighted by their queries' weights (NaN
  // when no weight is left).
  double WeightedMean(const std::vector<double>& per_query) const {
    double sum = 0.0, total = 0.0;
    for (size_t q = 0; q < per_query.size(); ++q) {
      if (std::isnan(per_query[q])) continue;
      sum += query_weights_[q] * per_query[q];
      total += query_weights_[q];
    }
    return total > 0.0 ? sum / total : std::numeric_limits<double>::quiet_NaN();
  }

  const Dataset* data_;
  std::vector<MetricSpec> specs_;
  int32_t num_outputs_;
  ScoreTransform transform_;
  MetricOptions options_;
  std::vector<double> query_weights_;  // empty: every query counts 1
  Reducer* reducer_;  // null: single-process
};

absl::StatusOr<Dataset> LoadDataset(
    const std::string& path, const ReadOptions& options,
    const SideFileOptions& side_files, const TrainJob& job,
    const std::function<void(const std::string&)>& log) {
  ReadStats stats;
  absl::StatusOr<Dataset> data;
  if (job.dataset_cache) {
    absl::StatusOr<CachedDataset> cached =
        ReadLetorFileCached(path, options, job.dataset_cache_dir);
    if (!cached.ok()) return cached.status();
    log(absl::StrCat("dataset cache: ", cached->note));
    stats = cached->stats;
    data = std::move(cached->data);
  } else {
    data = ReadLetorFile(path, options, &stats);
  }
  if (!data.ok()) return data.status();
  if (std::string note = DuplicateFeaturesNote(path, stats); !note.empty()) {
    log(note);
  }
  if (data->num_documents() == 0 || data->num_queries() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the dataset has no documents"));
  }
  std::vector<std::string> notes;
  if (absl::Status s = ReadSideFiles(path, side_files, &*data, &notes);
      !s.ok()) {
    return s;
  }
  for (const std::string& note : notes) log(note);
  return data;
}

std::string FormatMetric(double value) {
  return std::isnan(value) ? std::string("-") : absl::StrFormat("%.4f", value);
}

// "ndcg@1 0.4000 ndcg@10 0.6000" ("-" for a value not computed).
std::string FormatMetrics(const std::vector<std::string>& names,
                          const std::vector<double>* values) {
  std::string text;
  for (size_t m = 0; m < names.size(); ++m) {
    absl::StrAppend(&text, m == 0 ? "" : " ", names[m], " ",
                    FormatMetric(values == nullptr
                                     ? std::numeric_limits<double>::quiet_NaN()
                                     : (*values)[m]));
  }
  return text;
}

// Every computed value of `values` into `out` under its metric name.
void StoreMetrics(const std::vector<std::string>& names,
                  const std::vector<double>& values,
                  std::map<std::string, double>* out) {
  for (size_t m = 0; m < names.size() && m < values.size(); ++m) {
    if (!std::isnan(values[m])) (*out)[names[m]] = values[m];
  }
}

// The data digests and creation time RunTrainJob writes with the model.
// A distributed run's digests are of every rank's shard (collective).
void Stamp(const Dataset& train, const Dataset* valid, Reducer* reducer,
           Ensemble& model) {
  IdentityReducer identity;
  Reducer& all = reducer != nullptr ? *reducer : identity;
  model.train_data_hash = ShardedDatasetDigest(DatasetDigest(train), all);
  if (valid != nullptr) {
    model.valid_data_hash = ShardedDatasetDigest(DatasetDigest(*valid), all);
  }
  model.created_unix_seconds = static_cast<int64_t>(std::time(nullptr));
}

// Fills in the summary's history record (but for the per-iteration valid
// loss, which the booster run collects) and stamps the model.
TrainSummary Finish(const TrainJob& job, const Dataset& train,
                    const Dataset* valid, TrainSummary summary,
                    std::vector<std::string> feature_names,
                    HistoryInfo history = {}) {
  Stamp(train, valid, job.reducer, summary.model);
  if (!feature_names.empty()) {
    summary.model.feature_names = std::move(feature_names);
  }
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
  summary.history = std::move(history);
  return summary;
}

// Writes the artifact and, when asked, the training history.
absl::Status WriteOutputs(const TrainJob& job, const TrainSummary& summary,
                          const std::function<void(const std::string&)>& log) {
  const Ensemble& model = summary.model;
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
  if (job.history_out.empty()) return absl::OkStatus();
  if (absl::Status status = WriteFileAtomically(
          job.history_out, TrainingHistoryJson(model, summary.history));
      !status.ok()) {
    return status;
  }
  log(absl::StrFormat("wrote %s (%d iterations)", job.history_out,
                      model.history.size()));
  return absl::OkStatus();
}

// "train.txt", or "(in memory)" for data that came from no file.
std::string DataName(const std::string& path) {
  return path.empty() ? std::string("(in memory)") : path;
}

// What both RunTrainJob and TrainOnData check before any data is read.
absl::Status CheckJob(const TrainJob& job) {
  if (job.eval_at.empty()) {
    return absl::InvalidArgumentError("--eval_at needs at least one cut-off");
  }
  // A misspelt --objective fails now, not after the data has loaded.
  return CheckObjectiveName(job.objective.name);
}

// Every parallel region (objectives, metrics, scoring) uses the requested
// thread count, not only the booster's: idle OpenMP workers spin.
void SetThreads(const TrainJob& job) {
  omp_set_num_threads(job.booster.num_threads > 0 ? job.booster.num_threads
                                                  : omp_get_num_procs());
}

// The objective bound to the validation set, for its loss in the history;
// null (with a note) when it cannot be: e.g. McRank's classes come from the
// labels, and the valid set's may differ from the training set's.
std::shared_ptr<const Objective> ValidLossObjective(
    const TrainJob& job, const Dataset& valid, int32_t num_outputs,
    const std::function<void(const std::string&)>& log) {
  absl::StatusOr<std::unique_ptr<Objective>> objective =
      MakeObjective(job.objective);
  absl::Status status = objective.status();
  if (status.ok()) status = (*objective)->Init(valid, job.booster.seed);
  if (status.ok() && (*objective)->num_outputs() != num_outputs) {
    status = absl::FailedPreconditionError(absl::StrFormat(
        "%d outputs on the valid set, %d on the training set",
        (*objective)->num_outputs(), num_outputs));
  }
  if (!status.ok()) {
    log(absl::StrCat("history: no valid loss (", status.message(), ")"));
    return nullptr;
  }
  return std::shared_ptr<const Objective>(std::move(*objective));
}

// Test hook (tests/e2e, tests/distributed): PLRANK_TEST_KILL_AFTER_ITERATION
// = "K" or "R:K" makes rank 0 (or rank R) SIGKILL itself right after
// iteration K (and its checkpoint, when due), to show that --resume goes on
// bit-identically. 0 = never.
int32_t TestKillAfterIteration(int32_t rank) {
  const char* value = std::getenv("PLRANK_TEST_KILL_AFTER_ITERATION");
  if (value == nullptr) return 0;
  absl::string_view text(value);
  int32_t kill_rank = 0, iteration = 0;
  if (const size_t colon = text.find(':'); colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(text.substr(0, colon), &kill_rank)) return 0;
    text = text.substr(colon + 1);
  }
  if (!absl::SimpleAtoi(text, &iteration) || kill_rank != rank) return 0;
  return iteration;
}

// What a checkpoint must have been written by: the same parameters, but
// for those that never change a tree (where outputs go, logging, threads,
// the dataset cache; the checkpoint flags are not parameters), objective,
// rank count and data (every shard's digest). A restarted job may write
// elsewhere (plrank-publish picks a new directory) and still resume.
// Collective.
uint64_t CheckpointDigest(const TrainJob& job, const Dataset& train,
                          const Dataset* valid, Reducer& reducer) {
  Fnv1a64 hash;
  auto add = [&hash](const std::string& text) {
    hash.Add(text.data(), text.size());
    hash.Add("\n", 1);
  };
  for (const auto& [name, value] : job.parameters) {
    if (name == "model_out" || name == "history_out" || name == "quiet" ||
        name == "log_period" || name == "num_threads" ||
        name == "dataset_cache" || name == "dataset_cache_dir") {
      continue;
    }
    add(name + "=" + value);
  }
  add(job.objective.name);
  add(absl::StrCat("ranks ", reducer.num_ranks()));
  add(ShardedDatasetDigest(DatasetDigest(train), reducer));
  if (valid != nullptr) {
    add(ShardedDatasetDigest(DatasetDigest(*valid), reducer));
  }
  return hash.value();
}

// The checkpoint to resume from (nullopt: none yet, train from the start).
// Rank 0 reads it and sends it to every rank, so all resume from the same
// bytes. Collective.
absl::StatusOr<std::optional<Checkpoint>> ReadCheckpointForJob(
    const TrainJob& job, uint64_t digest, int32_t num_features,
    int32_t num_outputs, Reducer& reducer) {
  const std::string path = CheckpointPath(job.checkpoint_dir);
  std::string message;  // "none", "error <why>" or "file <bytes>"
  if (reducer.rank() == 0) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      message = "none";
    } else {
      absl::StatusOr<std::string> bytes = ReadWholeFile(path);
      message = bytes.ok() ? "file " + *bytes
                           : "error " + std::string(bytes.status().message());
    }
  }
  reducer.Broadcast(&message);
  if (message == "none") return std::nullopt;
  if (absl::StartsWith(message, "error ")) {
    return absl::FailedPreconditionError(message.substr(6));
  }
  absl::StatusOr<Checkpoint> checkpoint =
      ParseCheckpoint(std::string_view(message).substr(5), path);
  if (!checkpoint.ok()) return checkpoint.status();
  if (checkpoint->job_digest != digest) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": the checkpoint is of another run (other flags, data or rank "
        "count); resume with the run's own flags and data, or use another "
        "--checkpoint_dir"));
  }
  const BoosterResult& state = checkpoint->state;
  bool sound = state.trees.size() ==
                   state.history.size() * static_cast<size_t>(num_outputs) &&
               state.num_features == num_features &&
               state.history.size() <=
                   static_cast<size_t>(job.booster.num_trees);
  for (const Tree& tree : state.trees) {
    for (int32_t feature : tree.split_feature) {
      sound = sound && feature < num_features;
    }
  }
  if (!sound) {
    return absl::DataLossError(absl::StrCat(
        path, ": the checkpoint's trees do not fit this run (damaged)"));
  }
  return checkpoint;
}

}  // namespace

std::string DatasetDigest(const Dataset& data) {
  Fnv1a64 hash;
  hash.Add(&data.num_features, sizeof(data.num_features));
  hash.Add(data.labels.data(), data.labels.size() * sizeof(int32_t));
  hash.Add(data.query_offsets.data(),
           data.query_offsets.size() * sizeof(uint32_t));
  hash.Add(data.features.data(), data.features.size() * sizeof(float));
  // Side files enter only when present, so data without them keep their
  // digest; each is tagged, so equal bytes in different roles differ.
  auto side = [&hash](std::string_view tag, const auto& values) {
    if (values.empty()) return;
    hash.Add(tag.data(), tag.size());
    hash.Add(values.data(), values.size() * sizeof(values[0]));
  };
  side("weight", data.weights);
  side("query weight", data.query_weights);
  side("position", data.positions);
  side("propensity", data.propensities);
  side("marginals", data.marginals);
  return absl::StrFormat("fnv1a64:%016x", hash.value());
}

uint64_t DistributedDigest(const TrainJob& job, const Dataset& train,
                           const Dataset* valid) {
  Fnv1a64 hash;
  auto add = [&hash](const std::string& text) {
    hash.Add(text.data(), text.size());
    hash.Add("\n", 1);
  };
  // Each rank holds its own shard, so the data enter by their agreed shape
  // only (the shards' query ids were checked when they were read).
  for (const auto& [name, value] : job.parameters) add(name + "=" + value);
  add(job.objective.name);
  add(absl::StrCat("features ", train.num_features, " max label ",
                   train.max_label(), " valid ", valid != nullptr));
  return hash.value();
}

absl::StatusOr<TrainData> LoadTrainData(
    const TrainJob& job, const std::function<void(const std::string&)>& log) {
  if (job.train_path.empty()) {
    return absl::InvalidArgumentError("no training data (--train)");
  }
  // A background model fixes the feature width for every file.
  ReadOptions read_options = job.read_options;
  if (!job.init_model_path.empty() && read_options.num_features == 0) {
    absl::StatusOr<Ensemble> init_model = ReadModelFile(job.init_model_path);
    if (!init_model.ok()) return init_model.status();
    read_options.num_features = init_model->num_features;
    read_options.num_features_origin = absl::StrCat(
        "the feature count of --init_model ", job.init_model_path);
  }
  // Distributed (or a {rank} path): each rank reads only its share.
  IdentityReducer identity;
  Reducer& reducer = job.reducer != nullptr ? *job.reducer : identity;
  const bool sharded = reducer.num_ranks() > 1 ||
                       HasRankPlaceholder(job.train_path) ||
                       HasRankPlaceholder(job.valid_path);
  // A shard's side files are those beside its file ({rank} files); a byte
  // range of one file does not line up with the whole file's side files,
  // which the line-count check then refuses.
  auto load = [&](const std::string& path, const ReadOptions& options,
                  const SideFileOptions& side_files) -> absl::StatusOr<Dataset> {
    absl::StatusOr<ShardSource> source = ResolveShardSource(
        path, options, reducer.rank(), reducer.num_ranks());
    if (!source.ok()) return source.status();
    absl::StatusOr<Dataset> data =
        LoadDataset(source->path, source->options, side_files, job, log);
    if (!data.ok() || !sharded) return data;
    // Group-size files number their queries; renumbered by their place in
    // the whole set, as single-process reading of the whole numbers them.
    bool numbered = !ResolveQueryFile(source->path, source->options).empty();
    for (size_t q = 0; numbered && q < data->query_ids.size(); ++q) {
      numbered = data->query_ids[q] == absl::StrCat(q);
    }
    if (absl::Status agreed =
            AgreeOverShards(source->name, options.num_features > 0, numbered,
                            reducer, &*data);
        !agreed.ok()) {
      return agreed;
    }
    return data;
  };
  TrainData data;
  absl::StatusOr<Dataset> train =
      load(job.train_path, read_options, job.side_files);
  if (!train.ok()) return train.status();
  data.train = *std::move(train);
  // Checked now rather than when the model is written after training.
  if (data.train.num_features > kMaxModelFeatures) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d features is above the limit of %d features per model",
        job.train_path, data.train.num_features, kMaxModelFeatures));
  }
  if (!job.valid_path.empty()) {
    ReadOptions valid_options = read_options;
    valid_options.num_features = data.train.num_features;
    absl::StatusOr<Dataset> valid =
        load(job.valid_path, valid_options, SideFileOptions{});
    if (!valid.ok()) return valid.status();
    data.valid = *std::move(valid);
  }
  return data;
}

absl::StatusOr<TrainSummary> RunTrainJob(
    const TrainJob& job, const std::function<void(const std::string&)>& log) {
  if (job.train_path.empty()) {
    return absl::InvalidArgumentError("no training data (--train)");
  }
  if (job.model_out.empty()) {
    return absl::InvalidArgumentError("no output path (--model_out)");
  }
  // Only rank 0 of a distributed run writes.
  const bool writes = job.reducer == nullptr || job.reducer->rank() == 0;
  // A target that can never be written (e.g. /dev/full) fails now, not
  // after training.
  for (const std::string* out : {&job.model_out, &job.history_out}) {
    if (!writes) break;
    if (out->empty()) continue;
    if (absl::Status target = CheckOutputTarget(*out); !target.ok()) {
      return target;
    }
  }
  if (absl::Status status = CheckJob(job); !status.ok()) return status;
  const auto load_start = Clock::now();
  SetThreads(job);
  absl::StatusOr<TrainData> data = LoadTrainData(job, log);
  if (!data.ok()) return data.status();
  const double read_seconds = SecondsSince(load_start);
  absl::StatusOr<TrainSummary> summary =
      TrainOnData(job, data->train, data->valid ? &*data->valid : nullptr,
                  /*record_history=*/!job.history_out.empty(), log);
  if (!summary.ok()) return summary.status();
  summary->load_seconds += read_seconds;
  if (!writes) return summary;
  if (absl::Status status = WriteOutputs(job, *summary, log); !status.ok()) {
    return status;
  }
  return summary;
}

absl::StatusOr<TrainSummary> TrainOnData(
    const TrainJob& requested_job, const Dataset& train_data,
    const Dataset* valid_data, bool record_history,
    const std::function<void(const std::string&)>& log) {
  if (absl::Status status = CheckJob(requested_job); !status.ok()) {
    return status;
  }
  // The whole set's counts (a distributed rank holds its shard only).
  IdentityReducer identity;
  Reducer& reducer =
      requested_job.reducer != nullptr ? *requested_job.reducer : identity;
  double totals[3] = {static_cast<double>(train_data.num_documents()),
                      static_cast<double>(train_data.num_queries()),
                      static_cast<double>(
                          CountQueriesWithRankingSignal(train_data))};
  double valid_totals[2] = {
      valid_data ? static_cast<double>(valid_data->num_documents()) : 0.0,
      valid_data ? static_cast<double>(valid_data->num_queries()) : 0.0};
  reducer.Sum(absl::MakeSpan(totals));
  reducer.Sum(absl::MakeSpan(valid_totals));
  const int64_t all_documents = static_cast<int64_t>(totals[0]);
  const int64_t all_queries = static_cast<int64_t>(totals[1]);
  const int64_t with_signal = static_cast<int64_t>(totals[2]);
  std::optional<TrainJob> resolved;
  // Loss settings that follow the training size; the artifact records what
  // "auto" chose.
  if (ObjectiveOptions concrete = ResolveAutoObjectiveOptions(
          requested_job.objective, all_documents);
      concrete.pl_weighting != requested_job.objective.pl_weighting) {
    resolved = requested_job;
    resolved->objective = concrete;
    if (resolved->parameters.count("pl_weighting") > 0) {
      resolved->parameters["pl_weighting"] = concrete.pl_weighting;
    }
  }
  if (requested_job.auto_learning_rate) {
    if (!resolved) resolved = requested_job;
    resolved->auto_learning_rate = false;
    resolved->booster.learning_rate =
        AutoLearningRate(all_documents, resolved->booster.num_trees);
    resolved->parameters["learning_rate"] =
        absl::StrCat(resolved->booster.learning_rate);
  }
  const TrainJob& job = resolved ? *resolved : requested_job;
  TrainSummary summary;
  const auto load_start = Clock::now();
  SetThreads(job);
  const Dataset& train = train_data;
  const Dataset* const valid = valid_data;  // null: no validation set
  if (train.num_documents() == 0 || train.num_queries() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        DataName(job.train_path), ": the dataset has no documents"));
  }
  if (train.num_features > kMaxModelFeatures) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d features is above the limit of %d features per model",
        DataName(job.train_path), train.num_features, kMaxModelFeatures));
  }
  if (valid) {
    if (valid->num_documents() == 0 || valid->num_queries() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          DataName(job.valid_path), ": the dataset has no documents"));
    }
    if (valid->num_features != train.num_features) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d features, but the training data has %d",
          DataName(job.valid_path), valid->num_features,
          train.num_features));
    }
  }
  std::optional<Ensemble> init_model;
  if (!job.init_model_path.empty()) {
    absl::StatusOr<Ensemble> loaded = ReadModelFile(job.init_model_path);
    if (!loaded.ok()) return loaded.status();
    init_model = *std::move(loaded);
    if (train.num_features < init_model->num_features) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d features, but the background model %s has %d",
          DataName(job.train_path), train.num_features,
          job.init_model_path, init_model->num_features));
    }
  }
  summary.train_documents = all_documents;
  summary.train_queries = all_queries;
  log(absl::StrFormat("train: %s — %d queries, %d documents, %d features",
                      DataName(job.train_path), all_queries, all_documents,
                      train.num_features));
  if (requested_job.auto_learning_rate) {
    log(absl::StrFormat(
        "learning rate %g (auto from %d training documents and %d trees; "
        "--learning_rate sets it)",
        job.booster.learning_rate, all_documents, job.booster.num_trees));
  }
  std::vector<std::string> feature_names;
  if (!job.feature_names_path.empty()) {
    absl::StatusOr<std::vector<std::string>> names =
        ReadFeatureNamesFile(job.feature_names_path, train.num_features);
    if (!names.ok()) return names.status();
    feature_names = *std::move(names);
  }
  if (with_signal == 0) {
    log(absl::StrFormat(
        "warning: %s: no query has two different labels, so there is no "
        "ranking signal: ranking losses get zero gradients and every "
        "document will score the same (check the label column)",
        DataName(job.train_path)));
  } else if (2 * with_signal < all_queries) {
    log(absl::StrFormat(
        "note: %s: only %d of %d queries have two different labels; the "
        "others carry no ranking signal",
        DataName(job.train_path), with_signal, all_queries));
  }
  if (valid) {
    log(absl::StrFormat("valid: %s — %d queries, %d documents",
                        DataName(job.valid_path),
                        static_cast<int64_t>(valid_totals[1]),
                        static_cast<int64_t>(valid_totals[0])));
  }

  std::vector<std::string> metric_names;
  for (int32_t cutoff : job.eval_at) {
    metric_names.push_back(absl::StrCat("ndcg@", cutoff));
  }

  const bool distributed =
      job.reducer != nullptr && job.reducer->num_ranks() > 1;
  if (distributed) {
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
  }

  if (const LinearTrainer* trainer = FindLinearTrainer(job.objective.name)) {
    if (!train.weights.empty() || !train.query_weights.empty() ||
        job.clicks.position_debias != PositionDebias::kNone) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--objective=%s (a linear ranker) takes no weights and no "
          "--position_debias; use a tree objective",
          job.objective.name));
    }
    if (init_model) {
      return absl::InvalidArgumentError(
          "--init_model applies to tree objectives, not linear rankers");
    }
    summary.load_seconds = SecondsSince(load_start);
    const auto train_start = Clock::now();
    LinearTrainerInputs inputs;
    inputs.train = &train;
    inputs.valid = valid;
    inputs.ndcg_k = job.eval_at.front();
    inputs.seed = job.booster.seed;
    inputs.coordinate_ascent = job.coordinate_ascent;
    inputs.listmle = job.listmle;
    inputs.log = log;
    const absl::StatusOr<LinearModelResult> linear = trainer->train(inputs);
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
    IterationMetrics last;
    last.iteration = linear->iterations;
    const NdcgEvaluator train_ndcg(&train, job.eval_at, 1,
                                   ScoreTransform::kIdentity,
                                   job.metric_options);
    const std::vector<double> train_values =
        train_ndcg(ScoreLinear(train, linear->weights));
    StoreMetrics(metric_names, train_values, &last.train);
    std::vector<double> valid_values;
    if (valid) {
      const NdcgEvaluator valid_ndcg(valid, job.eval_at, 1,
                                     ScoreTransform::kIdentity,
                                     job.metric_options);
      valid_values = valid_ndcg(ScoreLinear(*valid, linear->weights));
      StoreMetrics(metric_names, valid_values, &last.valid);
    }
    log(absl::StrFormat("%s: train %s valid %s", job.objective.name,
                        FormatMetrics(metric_names, &train_values),
                        FormatMetrics(metric_names,
                                      valid ? &valid_values : nullptr)));
    model.history.push_back(std::move(last));
    model.best_iteration = 0;
    return Finish(job, train, valid, std::move(summary),
                  std::move(feature_names));
  }

  absl::StatusOr<std::unique_ptr<Objective>> objective =
      MakeObjective(job.objective);
  if (!objective.ok()) return objective.status();
  ClickWeightsInfo click_info;
  absl::StatusOr<TrainingWeights> weights =
      TrainingWeightsFor(train, job.clicks, &click_info);
  if (!weights.ok()) return weights.status();
  for (const std::string& note : click_info.notes) log(note);
  if (!weights->empty()) {
    log(absl::StrFormat("training weights: %s%s",
                        weights->document.empty() ? "" : "per document ",
                        weights->query.empty() ? "" : "per query"));
  }
  (*objective)->SetTrainingWeights(*std::move(weights));
  if (absl::Status status = (*objective)->Init(train, job.booster.seed);
      !status.ok()) {
    return status;
  }
  for (const std::string& line : (*objective)->Describe()) log(line);
  const int32_t num_outputs = (*objective)->num_outputs();
  // Declared by the objective, never inferred from the output count.
  const ScoreTransform transform = (*objective)->output_transform();

  BoosterInputs inputs;
  inputs.train = &train;
  inputs.valid = valid;
  inputs.objective = objective->get();
  inputs.reducer = job.reducer;
  PositionBiasConfig position_bias;
  if (job.clicks.position_debias == PositionDebias::kGam) {
    position_bias.positions = train.positions;
    position_bias.regularization = job.clicks.position_bias_regularization;
    inputs.position_bias = &position_bias;
    log("gam: a per-position bias is learned with the trees (the model "
        "scores without it)");
  }
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
    inputs.init_train_scores = scorer->RawScoresDataset(train);
    if (valid) inputs.init_valid_scores = scorer->RawScoresDataset(*valid);
  }
  summary.load_seconds = SecondsSince(load_start);

  // Metrics are costly next to one boosting iteration on big data: evaluate
  // only when a progress line is due, or every iteration when early
  // stopping needs the validation curve. A due evaluation computes every
  // --eval_at cut-off (kept for the log line and the model's history);
  // early stopping watches the first, and between progress lines only that
  // one is computed. The booster sees the first cut-off. --history_out
  // makes every iteration due for metrics (not for progress lines).
  const int32_t total = job.booster.num_trees;
  auto log_due = [&job, total](int32_t iteration) {
    return job.log_period > 0 &&
           (iteration % job.log_period == 0 || iteration == total);
  };
  const bool every_iteration = record_history;
  auto due = [log_due, every_iteration](int32_t iteration) {
    return every_iteration || log_due(iteration);
  };
  struct Computed {
    int32_t calls = 0;
    std::map<int32_t, std::vector<double>> by_iteration;
    std::map<int32_t, double> loss_by_iteration;  // valid loss (history)
  };
  auto train_values = std::make_shared<Computed>();
  auto valid_values = std::make_shared<Computed>();
  NdcgEvaluator train_ndcg(&train, job.eval_at, num_outputs, transform,
                           job.metric_options, job.reducer);
  inputs.train_evaluator = [train_ndcg, train_values,
                            due](absl::Span<const double> scores) {
    const int32_t iteration = ++train_values->calls;
    if (!due(iteration)) return std::numeric_limits<double>::quiet_NaN();
    std::vector<double>& values = train_values->by_iteration[iteration];
    values = train_ndcg(scores);
    return values.front();
  };
  if (valid) {
    NdcgEvaluator valid_ndcg(valid, job.eval_at, num_outputs, transform,
                             job.metric_options, job.reducer);
    const bool every = job.booster.early_stopping_rounds > 0;
    std::shared_ptr<const Objective> valid_loss;
    if (every_iteration) {
      valid_loss = ValidLossObjective(job, *valid, num_outputs, log);
    }
    inputs.valid_evaluator = [valid_ndcg, valid_values, due, every,
                              valid_loss, &reducer](
                                 absl::Span<const double> scores) {
      const int32_t iteration = ++valid_values->calls;
      if (valid_loss != nullptr) {
        double loss = valid_loss->Loss(scores);
        reducer.Sum(absl::MakeSpan(&loss, 1));  // the whole set's
        valid_values->loss_by_iteration[iteration] = loss;
      }
      const bool all = due(iteration);
      if (!all && !every) return std::numeric_limits<double>::quiet_NaN();
      std::vector<double>& values = valid_values->by_iteration[iteration];
      values = valid_ndcg(scores, /*first_only=*/!all);
      return values.front();
    };
  }
  auto values_at = [](const Computed& computed, int32_t iteration)
      -> const std::vector<double>* {
    auto it = computed.by_iteration.find(iteration);
    return it == computed.by_iteration.end() ? nullptr : &it->second;
  };
  inputs.on_iteration = [&](const IterationReport& report) {
    if (!log_due(report.iteration)) return;
    const double per_iteration = report.elapsed_seconds / report.iteration;
    const double eta = per_iteration * (report.num_trees - report.iteration);
    log(absl::StrFormat(
        "[%*d/%d] elapsed %.1fs eta %.1fs loss %.5g train %s valid %s",
        static_cast<int>(std::to_string(report.num_trees).size()),
        report.iteration, report.num_trees, report.elapsed_seconds, eta,
        report.train_loss,
        FormatMetrics(metric_names,
                      values_at(*train_values, report.iteration)),
        FormatMetrics(metric_names,
                      values_at(*valid_values, report.iteration))));
  };

  if (job.on_iteration) {
    inputs.stop_after = [&](const IterationReport& report) {
      IterationMetrics metrics;
      metrics.iteration = report.iteration;
      metrics.train_loss = report.train_loss;
      if (const std::vector<double>* values =
              values_at(*train_values, report.iteration)) {
        StoreMetrics(metric_names, *values, &metrics.train);
      }
      if (const std::vector<double>* values =
              values_at(*valid_values, report.iteration)) {
        StoreMetrics(metric_names, *values, &metrics.valid);
      }
      return job.on_iteration(metrics);
    };
  }
  // Checkpoints: resume from one, and write one every checkpoint_every
  // iterations (rank 0).
  std::optional<Checkpoint> resumed;
  if (!job.checkpoint_dir.empty()) {
    const uint64_t digest = CheckpointDigest(job, train, valid, reducer);
    if (job.resume) {
      absl::StatusOr<std::optional<Checkpoint>> read =
          ReadCheckpointForJob(job, digest, train.num_features, num_outputs,
                               reducer);
      if (!read.ok()) return read.status();
      resumed = *std::move(read);
    }
    if (resumed) {
      const int32_t done =
          static_cast<int32_t>(resumed->state.history.size());
      log(absl::StrFormat("resuming from %s after iteration %d of %d",
                          CheckpointPath(job.checkpoint_dir), done,
                          job.booster.num_trees));
      train_values->calls = valid_values->calls = done;
      train_values->by_iteration = resumed->train_metrics;
      valid_values->by_iteration = resumed->valid_metrics;
      valid_values->loss_by_iteration = resumed->valid_losses;
      inputs.resume = &resumed->state;
    }
    const bool writes = reducer.rank() == 0;
    const int32_t every = std::max(job.checkpoint_every, 1);
    const int32_t kill_after = TestKillAfterIteration(reducer.rank());
    inputs.on_state = [&, digest, writes, every,
                       kill_after](const BoosterResult& state) {
      const int32_t iteration = static_cast<int32_t>(state.history.size());
      if (writes && iteration % every == 0) {
        Checkpoint checkpoint;
        checkpoint.job_digest = digest;
        checkpoint.state = state;
        checkpoint.train_metrics = train_values->by_iteration;
        checkpoint.valid_metrics = valid_values->by_iteration;
        checkpoint.valid_losses = valid_values->loss_by_iteration;
        if (absl::Status written =
                WriteCheckpoint(job.checkpoint_dir, checkpoint);
            !written.ok()) {
          log(absl::StrCat("warning: checkpoint not written: ",
                           written.message()));
        }
      }
      if (iteration == kill_after) std::raise(SIGKILL);
    };
  }

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
  model.num_features = train.num_features;
  model.objective = job.objective.name;
  model.num_outputs = num_outputs;
  model.transform = transform;
  for (Tree& tree : result->trees) model.trees.push_back(std::move(tree));
  model.parameters = job.parameters;
  if (!result->position_bias.empty()) {
    summary.position_bias = result->position_bias;
    model.parameters["position_bias_curve"] = FormatCurve(result->position_bias);
    log(absl::StrCat("gam: learned position bias b_1..b_",
                     result->position_bias.size(), ": ",
                     FormatCurve(result->position_bias)));
  }
  if (!click_info.propensity_curve.empty()) {
    model.parameters["ips_propensity_curve"] =
        FormatCurve(click_info.propensity_curve);
  }
  HistoryInfo history;
  history.trees = job.booster.num_trees;
  for (const IterationReport& report : result->history) {
    auto loss = valid_values->loss_by_iteration.find(report.iteration);
    history.valid_loss.push_back(loss == valid_values->loss_by_iteration.end()
                                     ? std::numeric_limits<double>::quiet_NaN()
                                     : loss->second);
    IterationMetrics metrics;
    metrics.iteration = report.iteration;
    metrics.train_loss = report.train_loss;
    if (const std::vector<double>* values =
            values_at(*train_values, report.iteration)) {
      StoreMetrics(metric_names, *values, &metrics.train);
    }
    if (const std::vector<double>* values =
            values_at(*valid_values, report.iteration)) {
      StoreMetrics(metric_names, *values, &metrics.valid);
    }
    model.history.push_back(std::move(metrics));
  }
  model.best_iteration = result->best_iteration;
  if (job.booster.early_stopping_rounds > 0) {
    log(absl::StrFormat(
        "early stopping: best iteration %d (valid ndcg@%d %s); kept %d of %d "
        "iterations",
        result->best_iteration, job.eval_at.front(),
        FormatMetric(ValidScoreAt(model, job.eval_at.front(),
                                  result->best_iteration)),
        result->best_iteration, summary.iterations));
  }
  return Finish(job, train, valid, std::move(summary),
                std::move(feature_names), std::move(history));
}

}  // namespace plrank
