#ifndef PLRANK_CORE_PIPELINE_TRAIN_STEPS_H_
#define PLRANK_CORE_PIPELINE_TRAIN_STEPS_H_

// The steps of TrainOnData (train_job.h), in the order it runs them. Each
// is a function of its inputs, tested on its own
// (tests/unit/pipeline/train_steps_test.cc); TrainOnData only chains them.
//
//   CountDataTotals      the whole set's sizes (collective when distributed)
//   ResolveAutoSettings  every "auto" setting made concrete, and recorded
//   CheckTrainingData    the data in memory against the job
//   ReadInitModel        the background model, checked against the data
//   ReadFeatureNames     --feature_names_file
//   DescribeTrainingData the log lines about the data
//   CheckDistributedRun  what the ranks must agree on (collective)
//   TrainLinearModel     or TrainTreeModel: the model
//   FinishSummary        the data digests, names and history record

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/boosting/reducer.h"
#include "core/data/dataset.h"
#include "core/model/ensemble.h"
#include "core/pipeline/linear_trainers.h"
#include "core/pipeline/train_job.h"

namespace plrank {

using TrainLog = std::function<void(const std::string&)>;
using TrainClock = std::chrono::steady_clock;

// Seconds from `start` to now, for the steps' log lines.
inline double SecondsSince(TrainClock::time_point start) {
  return std::chrono::duration<double>(TrainClock::now() - start).count();
}

// "train.txt", or "(in memory)" for data that came from no file: how the
// steps' messages name a data set.
std::string DataName(const std::string& path);

// "<train>: N features, but the background model <model> has M": the one
// wording for data and --init_model that disagree on the feature count
// (ReadInitModel here, and the loader's check in train_job.cc).
std::string BackgroundModelMismatch(const std::string& train_path,
                                    int32_t data_features,
                                    const std::string& model_path,
                                    int32_t model_features);

// The whole training and validation sets' sizes: a distributed rank holds
// its shard only, so with a reducer of several ranks the counts are summed
// over them (collective).
struct DataTotals {
  int64_t train_documents = 0;
  int64_t train_queries = 0;
  int64_t queries_with_signal = 0;  // queries with two different labels
  int64_t valid_documents = 0;      // 0 without a validation set
  int64_t valid_queries = 0;
};
DataTotals CountDataTotals(const Dataset& train, const Dataset* valid,
                           Reducer* reducer);

// The job with every setting that follows the training size made concrete
// for `train_documents` documents: pl_weighting "auto"
// (ResolveAutoObjectiveOptions) and, with job.auto_learning_rate, the
// learning rate (AutoLearningRate; auto_learning_rate is then false).
// job.parameters record what was chosen, so the artifact says it: the
// learning rate always, pl_weighting when it is recorded at all.
TrainJob ResolveAutoSettings(const TrainJob& job, int64_t train_documents);

// The data in memory against the job: both sets have documents, the
// training set's width is within kMaxModelFeatures and the valid set has
// the training set's width. Messages name the sets by their paths.
absl::Status CheckTrainingData(const TrainJob& job, const Dataset& train,
                               const Dataset* valid);

// job.init_model_path's model (nullopt without one); InvalidArgument when
// the data has fewer features than it.
absl::StatusOr<std::optional<Ensemble>> ReadInitModel(const TrainJob& job,
                                                      const Dataset& train);

// job.feature_names_path's names (empty without one), one per feature.
absl::StatusOr<std::vector<std::string>> ReadFeatureNames(const TrainJob& job,
                                                          int32_t num_features);

// The lines that describe the data before training: the training set, the
// learning rate when `learning_rate_was_auto`, a warning or note when few
// queries carry a ranking signal, and the validation set (with `has_valid`).
std::vector<std::string> DescribeTrainingData(const TrainJob& job,
                                              int32_t num_features,
                                              const DataTotals& totals,
                                              bool learning_rate_was_auto,
                                              bool has_valid);

// With a reducer of several ranks: refuses linear rankers, checks that
// every rank runs the same job on data of the same shape (collective) and
// logs this rank's share. OK and silent otherwise.
absl::Status CheckDistributedRun(const TrainJob& job, const Dataset& train,
                                 const Dataset* valid, int64_t all_queries,
                                 const TrainLog& log);

// A linear ranker's model (`trainer`, LinearTrainers()) with its NDCG at
// every cut-off in the history; refuses weights, --position_debias and a
// background model. load_seconds counts from `load_start`.
absl::StatusOr<TrainSummary> TrainLinearModel(
    const LinearTrainer& trainer, const TrainJob& job, const Dataset& train,
    const Dataset* valid, bool has_init_model,
    TrainClock::time_point load_start, const TrainLog& log);

// A tree ensemble boosted on `train` (after `init_model`'s trees when it is
// set), with its metrics (MetricRecorder), checkpoints and resuming
// (job.checkpoint_dir), the summary's history record but for the fields
// FinishSummary fills in. load_seconds counts from `load_start`.
absl::StatusOr<TrainSummary> TrainTreeModel(
    const TrainJob& job, const Dataset& train, const Dataset* valid,
    std::optional<Ensemble> init_model, bool record_history,
    TrainClock::time_point load_start, const TrainLog& log);

// The summary as TrainOnData returns it: the model stamped with the data
// digests (collective when distributed) and creation time, the feature
// names, and the history record's job-wide fields (cut-offs, best
// iteration, early stopping, query counts).
TrainSummary FinishSummary(const TrainJob& job, const Dataset& train,
                           const Dataset* valid, TrainSummary summary,
                           std::vector<std::string> feature_names);

}  // namespace plrank

#endif  // PLRANK_CORE_PIPELINE_TRAIN_STEPS_H_
