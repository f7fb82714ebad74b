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
#include "core/pipeline/fnv1a64.h"
#include "core/pipeline/shard_loading.h"
#include "core/pipeline/train_steps.h"
#include "core/pipeline/training_history.h"

namespace plrank {
namespace {

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
    // The exit status is 1, but the model is complete: say so, so that a
    // script does not retrain (or discard) a good model.
    return absl::Status(
        status.code(),
        absl::StrCat("--history_out: ", status.message(), "; the model was "
                     "written to ", job.model_out, " (only the history is "
                     "missing)"));
  }
  log(absl::StrFormat("wrote %s (%d iterations)", job.history_out,
                      model.history.size()));
  return absl::OkStatus();
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
  // Each rank holds its own shard, so the data enter by their agreed shape
  // only (the shards' query ids were checked when they were read).
  for (const auto& [name, value] : job.parameters) {
    hash.AddLine(name + "=" + value);
  }
  hash.AddLine(job.objective.name);
  hash.AddLine(absl::StrCat("features ", train.num_features, " max label ",
                            train.max_label(), " valid ", valid != nullptr));
  return hash.value();
}

absl::StatusOr<TrainData> LoadTrainData(
    const TrainJob& job, const std::function<void(const std::string&)>& log) {
  if (job.train_path.empty()) {
    return absl::InvalidArgumentError("no training data (--train)");
  }
  // A background model must fit the training data: the data is read at
  // its own width and compared with the model's (issue 39: a 300-feature
  // model continued on 46-feature data, padded to 300, trained silently).
  // --num_features sets the width explicitly instead, e.g. for data whose
  // last features are absent from every line.
  ReadOptions read_options = job.read_options;
  int32_t init_model_features = 0;
  if (!job.init_model_path.empty() && read_options.num_features == 0) {
    absl::StatusOr<Ensemble> init_model = ReadModelFile(job.init_model_path);
    if (!init_model.ok()) return init_model.status();
    init_model_features = init_model->num_features;
    read_options.max_feature_index =
        std::max(read_options.max_feature_index, init_model_features);
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
  if (init_model_features > 0 &&
      data.train.num_features != init_model_features) {
    return absl::InvalidArgumentError(absl::StrCat(
        BackgroundModelMismatch(job.train_path, data.train.num_features,
                                job.init_model_path, init_model_features),
        data.train.num_features < init_model_features
            ? absl::StrFormat(" (give --num_features=%d if the data's last "
                              "features are absent from every line)",
                              init_model_features)
            : ""));
  }
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
  const auto load_start = TrainClock::now();
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
    const TrainJob& requested_job, const Dataset& train, const Dataset* valid,
    bool record_history, const std::function<void(const std::string&)>& log) {
  if (absl::Status status = CheckJob(requested_job); !status.ok()) {
    return status;
  }
  const DataTotals totals =
      CountDataTotals(train, valid, requested_job.reducer);
  const TrainJob job =
      ResolveAutoSettings(requested_job, totals.train_documents);
  const auto load_start = TrainClock::now();
  SetThreads(job);
  if (absl::Status status = CheckTrainingData(job, train, valid);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<std::optional<Ensemble>> init_model =
      ReadInitModel(job, train);
  if (!init_model.ok()) return init_model.status();
  absl::StatusOr<std::vector<std::string>> feature_names =
      ReadFeatureNames(job, train.num_features);
  if (!feature_names.ok()) return feature_names.status();
  for (const std::string& line : DescribeTrainingData(
           job, train.num_features, totals,
           /*learning_rate_was_auto=*/requested_job.auto_learning_rate,
           /*has_valid=*/valid != nullptr)) {
    log(line);
  }
  if (absl::Status status =
          CheckDistributedRun(job, train, valid, totals.train_queries, log);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<TrainSummary> summary;
  if (const LinearTrainer* trainer = FindLinearTrainer(job.objective.name)) {
    summary = TrainLinearModel(*trainer, job, train, valid,
                               init_model->has_value(), load_start, log);
  } else {
    summary = TrainTreeModel(job, train, valid, *std::move(init_model),
                             record_history, load_start, log);
  }
  if (!summary.ok()) return summary.status();
  summary->train_documents = totals.train_documents;
  summary->train_queries = totals.train_queries;
  return FinishSummary(job, train, valid, *std::move(summary),
                       *std::move(feature_names));
}

}  // namespace plrank
