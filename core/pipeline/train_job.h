#ifndef PLRANK_CORE_PIPELINE_TRAIN_JOB_H_
#define PLRANK_CORE_PIPELINE_TRAIN_JOB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/boosting/booster.h"
#include "core/boosting/reducer.h"
#include "core/data/letor_reader.h"
#include "core/data/side_files.h"
#include "core/linear/coordinate_ascent.h"
#include "core/linear/linear_listmle.h"
#include "core/metrics/ranking_metrics.h"
#include "core/model/ensemble.h"
#include "core/objectives/registry.h"
#include "core/pipeline/click_training.h"
#include "core/pipeline/linear_trainers.h"
#include "core/pipeline/training_history.h"

namespace plrank {

// One training run, end to end: read the data, continue from an optional
// background model, boost, and write the model artifact atomically. The CLI
// (`plrank-train`) and the tests drive the same code.
struct TrainJob {
  std::string train_path;
  std::string valid_path;        // optional
  std::string init_model_path;   // optional background model
  std::string model_out;         // required
  // Optional: every iteration's train and valid loss and every --eval_at
  // NDCG as JSON (core/pipeline/training_history.h), written atomically.
  // Metrics are then computed at every iteration, not only on progress lines.
  std::string history_out;
  // Optional: one feature name per line (line i names LETOR feature i),
  // stored in the model; dumps and importance tables then show them.
  std::string feature_names_path;
  ReadOptions read_options;
  // Side files of --train (docs/clicks-training.md): explicit paths, else
  // "<train>.weight" / ".position" / ".propensity" when they exist. The
  // valid set's are always looked for beside it (its weights weigh its
  // queries in the metrics).
  SideFileOptions side_files;
  // Weights and position debiasing (ips, gam) of tree objectives.
  ClickOptions clicks;
  // Read --train / --valid through binary caches (core/data/dataset_cache.h)
  // in dataset_cache_dir ("" = beside each file): the first run parses and
  // writes them, later runs on unchanged files skip parsing.
  bool dataset_cache = false;
  std::string dataset_cache_dir;
  ObjectiveOptions objective;
  BoosterConfig booster;
  // Replace booster.learning_rate with AutoLearningRate(training documents,
  // booster.num_trees) once the data is read (plrank-train sets this for
  // --objective=plrank when --learning_rate is not given); the log names
  // the rate and parameters["learning_rate"] records it.
  bool auto_learning_rate = false;
  // Linear rankers (LinearTrainers(): --objective=ca | listmle) use these
  // instead of the booster; their NDCG cut-off and seed come from eval_at
  // and booster.seed.
  CoordinateAscentOptions coordinate_ascent;
  LinearListMleOptions listmle;
  // NDCG cut-offs reported during training; early stopping watches the
  // first one on the validation set.
  std::vector<int32_t> eval_at = {10};
  MetricOptions metric_options;
  // Progress every log_period iterations (and on the last); 0 = never.
  int32_t log_period = 10;
  // Recorded verbatim in the artifact (flag name -> value).
  std::map<std::string, std::string> parameters;
  // Optional, tree objectives: called after every boosting iteration with
  // its metrics (train loss; train and valid NDCG at every eval_at cut-off
  // when they were computed that iteration: always with record_history);
  // returning true ends training after it. The Python package's callbacks.
  std::function<bool(const IterationMetrics&)> on_iteration;
  // Distributed training (not owned; null or one rank = single-process):
  // every rank runs the same job and reads only its share of --train and
  // --valid (core/pipeline/shard_loading.h: a {rank} path names one file per
  // rank, else each rank reads its byte range of the one file, cut at query
  // starts), and trains on it (BoosterInputs::reducer). Before training the
  // ranks check that they agree on parameters and data shape
  // (DistributedDigest); only rank 0 writes model_out, history_out and
  // checkpoints. Tree objectives only.
  Reducer* reducer = nullptr;
  // Checkpoints (core/pipeline/checkpoint.h): with checkpoint_dir set, rank
  // 0 writes <dir>/checkpoint.plrank atomically every checkpoint_every
  // iterations; with resume, a run finding one there (written by the same
  // flags, data and rank count) goes on from it, its trees and scores
  // bit-identical to an uninterrupted run's; finding none, it starts.
  std::string checkpoint_dir;
  int32_t checkpoint_every = 10;
  bool resume = false;
};

struct TrainSummary {
  double load_seconds = 0.0;
  double train_seconds = 0.0;
  int32_t iterations = 0;       // iterations run
  int32_t best_iteration = 0;   // iterations kept in the model
  int64_t train_documents = 0;
  int64_t train_queries = 0;
  Ensemble model;               // as written to model_out
  // --position_debias=gam: b_1..b_m (b_1 = 0); also printed and stored in
  // model.parameters["position_bias_curve"].
  std::vector<double> position_bias;
  // With record_history (or history_out): TrainingHistoryJson(model,
  // history) is the --history_out document.
  HistoryInfo history;
};

// The data of one run, read as RunTrainJob reads it.
struct TrainData {
  Dataset train;
  std::optional<Dataset> valid;
};

// `log` receives human-readable lines (objective description, progress).
// Reads the data (LoadTrainData), trains (TrainOnData) and writes model_out
// and history_out.
absl::StatusOr<TrainSummary> RunTrainJob(
    const TrainJob& job, const std::function<void(const std::string&)>& log);

// Reads job.train_path and job.valid_path with job.read_options; the
// feature width comes from job.init_model_path when it is set and
// read_options.num_features is 0, and the valid set gets the train set's.
absl::StatusOr<TrainData> LoadTrainData(
    const TrainJob& job, const std::function<void(const std::string&)>& log);

// One training run on data in memory (the Python package): what RunTrainJob
// does once the data is read, without writing anything (job.model_out and
// job.history_out are not used; metrics are computed every iteration, as
// for history_out, when `record_history` is set). job.train_path and
// job.valid_path only name the sets in log lines. The summary's model is
// stamped (data digests, creation time) as RunTrainJob writes it.
absl::StatusOr<TrainSummary> TrainOnData(
    const TrainJob& job, const Dataset& train, const Dataset* valid,
    bool record_history, const std::function<void(const std::string&)>& log);

// What the ranks of a distributed run must agree on before training: the
// job's parameters and the agreed shape of the data (feature count, label
// range, whether there is a validation set); each rank holds its own shard.
uint64_t DistributedDigest(const TrainJob& job, const Dataset& train,
                           const Dataset* valid);

// 64-bit FNV-1a digest of a dataset's labels, query layout and features,
// and of its side files' values when it has any (weights, positions,
// propensities), in hex; recorded in the artifact so a model can be traced
// to its data, and part of the checkpoint digest, so a changed .weight file
// is never resumed with the old one's state.
std::string DatasetDigest(const Dataset& data);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_TRAIN_JOB_H_
