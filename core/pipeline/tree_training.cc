// TrainTreeModel (train_steps.h): the tree branch of a training job, with
// its objective, metrics, checkpoints and the model it assembles.
#include <omp.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/file_io.h"
#include "core/pipeline/checkpoint.h"
#include "core/pipeline/fnv1a64.h"
#include "core/pipeline/metric_recorder.h"
#include "core/pipeline/ndcg_evaluator.h"
#include "core/pipeline/shard_loading.h"
#include "core/pipeline/train_steps.h"
#include "core/pipeline/training_history.h"
#include "core/scoring/forest_scorer.h"

namespace plrank {
namespace {

// The objective bound to the validation set, for its loss in the history;
// null (with a note) when it cannot be: e.g. McRank's classes come from the
// labels, and the valid set's may differ from the training set's.
std::shared_ptr<const Objective> ValidLossObjective(const TrainJob& job,
                                                    const Dataset& valid,
                                                    int32_t num_outputs,
                                                    const TrainLog& log) {
  absl::StatusOr<std::unique_ptr<Objective>> objective =
      MakeObjective(job.objective);
  absl::Status status = objective.status();
  if (status.ok()) status = (*objective)->Init(valid, job.booster.seed);
  if (status.ok() && (*objective)->num_outputs() != num_outputs) {
    status = absl::FailedPreconditionError(
        absl::StrFormat("%d outputs on the valid set, %d on the training set",
                        (*objective)->num_outputs(), num_outputs));
  }
  if (!status.ok()) {
    log(absl::StrCat("history: no valid loss (", status.message(), ")"));
    return nullptr;
  }
  return std::shared_ptr<const Objective>(std::move(*objective));
}

// The job's objective, weighted (clicks, side files) and bound to the
// training set; `click_info` receives the clicks' notes and curves.
absl::StatusOr<std::unique_ptr<Objective>> TrainingObjective(
    const TrainJob& job, const Dataset& train, ClickWeightsInfo* click_info,
    const TrainLog& log) {
  absl::StatusOr<std::unique_ptr<Objective>> objective =
      MakeObjective(job.objective);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<TrainingWeights> weights =
      TrainingWeightsFor(train, job.clicks, click_info);
  if (!weights.ok()) return weights.status();
  for (const std::string& note : click_info->notes) log(note);
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
  return objective;
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
  for (const auto& [name, value] : job.parameters) {
    if (name == "model_out" || name == "history_out" || name == "quiet" ||
        name == "log_period" || name == "num_threads" ||
        name == "dataset_cache" || name == "dataset_cache_dir") {
      continue;
    }
    hash.AddLine(name + "=" + value);
  }
  hash.AddLine(job.objective.name);
  hash.AddLine(absl::StrCat("ranks ", reducer.num_ranks()));
  hash.AddLine(ShardedDatasetDigest(DatasetDigest(train), reducer));
  if (valid != nullptr) {
    hash.AddLine(ShardedDatasetDigest(DatasetDigest(*valid), reducer));
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
        path,
        ": the checkpoint is of another run (other flags, data or rank "
        "count); resume with the run's own flags and data, or use another "
        "--checkpoint_dir"));
  }
  const BoosterResult& state = checkpoint->state;
  bool sound =
      state.trees.size() ==
          state.history.size() * static_cast<size_t>(num_outputs) &&
      state.num_features == num_features &&
      state.history.size() <= static_cast<size_t>(job.booster.num_trees);
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

// Checkpoints of a run with job.checkpoint_dir: resumes from one (with
// job.resume) into `resumed` and `recorder`, and makes the booster write
// one every checkpoint_every iterations (rank 0). `resumed` and `recorder`
// must outlive the booster run.
absl::Status AttachCheckpoints(const TrainJob& job, const Dataset& train,
                               const Dataset* valid, int32_t num_outputs,
                               Reducer& reducer, MetricRecorder* recorder,
                               std::optional<Checkpoint>* resumed,
                               BoosterInputs* inputs, const TrainLog& log) {
  const uint64_t digest = CheckpointDigest(job, train, valid, reducer);
  if (job.resume) {
    absl::StatusOr<std::optional<Checkpoint>> read = ReadCheckpointForJob(
        job, digest, train.num_features, num_outputs, reducer);
    if (!read.ok()) return read.status();
    *resumed = *std::move(read);
  }
  if (*resumed) {
    Checkpoint& from = **resumed;
    const int32_t done = static_cast<int32_t>(from.state.history.size());
    log(absl::StrFormat("resuming from %s after iteration %d of %d",
                        CheckpointPath(job.checkpoint_dir), done,
                        job.booster.num_trees));
    recorder->Resume(
        done, {from.train_metrics, from.valid_metrics, from.valid_losses});
    inputs->resume = &from.state;
  }
  const bool writes = reducer.rank() == 0;
  const int32_t every = std::max(job.checkpoint_every, 1);
  const int32_t kill_after = TestKillAfterIteration(reducer.rank());
  inputs->on_state = [&job, recorder, log, digest, writes, every,
                      kill_after](const BoosterResult& state) {
    const int32_t iteration = static_cast<int32_t>(state.history.size());
    if (writes && iteration % every == 0) {
      Checkpoint checkpoint;
      checkpoint.job_digest = digest;
      checkpoint.state = state;
      MetricRecorder::State metrics = recorder->state();
      checkpoint.train_metrics = std::move(metrics.train);
      checkpoint.valid_metrics = std::move(metrics.valid);
      checkpoint.valid_losses = std::move(metrics.valid_loss);
      if (absl::Status written =
              WriteCheckpoint(job.checkpoint_dir, checkpoint);
          !written.ok()) {
        log(absl::StrCat("warning: checkpoint not written: ",
                         written.message()));
      }
    }
    if (iteration == kill_after) std::raise(SIGKILL);
  };
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainSummary> TrainTreeModel(
    const TrainJob& job, const Dataset& train, const Dataset* valid,
    std::optional<Ensemble> init_model, bool record_history,
    TrainClock::time_point load_start, const TrainLog& log) {
  ClickWeightsInfo click_info;
  absl::StatusOr<std::unique_ptr<Objective>> objective =
      TrainingObjective(job, train, &click_info, log);
  if (!objective.ok()) return objective.status();
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
  TrainSummary summary;
  summary.load_seconds = SecondsSince(load_start);

  // The booster sees the first cut-off; the recorder keeps them all.
  MetricRecorder recorder(job.eval_at, job.log_period, job.booster.num_trees,
                          /*every_iteration=*/record_history);
  inputs.train_evaluator = recorder.TrainEvaluator(
      NdcgEvaluator(&train, job.eval_at, num_outputs, transform,
                    job.metric_options, job.reducer));
  IdentityReducer identity;
  Reducer& reducer = job.reducer != nullptr ? *job.reducer : identity;
  if (valid) {
    std::shared_ptr<const Objective> valid_loss;
    if (record_history) {
      valid_loss = ValidLossObjective(job, *valid, num_outputs, log);
    }
    inputs.valid_evaluator = recorder.ValidEvaluator(
        NdcgEvaluator(valid, job.eval_at, num_outputs, transform,
                      job.metric_options, job.reducer),
        /*early_stopping=*/job.booster.early_stopping_rounds > 0,
        std::move(valid_loss), &reducer);
  }
  inputs.on_iteration = [&recorder, &log](const IterationReport& report) {
    if (recorder.LogDue(report.iteration)) log(recorder.ProgressLine(report));
  };
  if (job.on_iteration) {
    inputs.stop_after = [&recorder, &job](const IterationReport& report) {
      return job.on_iteration(recorder.At(report.iteration, report.train_loss));
    };
  }
  std::optional<Checkpoint> resumed;
  if (!job.checkpoint_dir.empty()) {
    if (absl::Status status =
            AttachCheckpoints(job, train, valid, num_outputs, reducer,
                              &recorder, &resumed, &inputs, log);
        !status.ok()) {
      return status;
    }
  }

  const auto train_start = TrainClock::now();
  absl::StatusOr<BoosterResult> result = TrainBooster(job.booster, inputs);
  if (!result.ok()) return result.status();
  summary.train_seconds = SecondsSince(train_start);
  summary.iterations = static_cast<int32_t>(result->history.size());
  summary.best_iteration = result->best_iteration;

  Ensemble& model = summary.model;
  if (init_model) {
    model = *std::move(init_model);
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
    model.parameters["position_bias_curve"] =
        FormatCurve(result->position_bias);
    log(absl::StrCat("gam: learned position bias b_1..b_",
                     result->position_bias.size(), ": ",
                     FormatCurve(result->position_bias)));
  }
  if (!click_info.propensity_curve.empty()) {
    model.parameters["ips_propensity_curve"] =
        FormatCurve(click_info.propensity_curve);
  }
  summary.history.trees = job.booster.num_trees;
  for (const IterationReport& report : result->history) {
    summary.history.valid_loss.push_back(
        recorder.ValidLossAt(report.iteration));
    model.history.push_back(recorder.At(report.iteration, report.train_loss));
  }
  model.best_iteration = result->best_iteration;
  if (job.booster.early_stopping_rounds > 0) {
    log(absl::StrFormat(
        "early stopping: best iteration %d (valid ndcg@%d %s); kept %d of %d "
        "iterations",
        result->best_iteration, job.eval_at.front(),
        FormatMetric(
            ValidScoreAt(model, job.eval_at.front(), result->best_iteration)),
        result->best_iteration, summary.iterations));
  }
  return summary;
}

}  // namespace plrank
