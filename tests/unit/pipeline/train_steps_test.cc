// The steps of TrainOnData (core/pipeline/train_steps.h), each on its own.
#include "core/pipeline/train_steps.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/data/datagen.h"
#include "core/model/model_io.h"
#include "core/pipeline/linear_trainers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Two queries: one with a ranking signal (labels 0, 1, 2), one without.
Dataset Small(int32_t features = 2) {
  Dataset data;
  data.num_features = features;
  data.labels = {0, 1, 2, 1, 1};
  data.query_offsets = {0, 3, 5};
  data.query_ids = {"0", "1"};
  data.features.assign(data.labels.size() * features, 0.0f);
  for (size_t i = 0; i < data.labels.size(); ++i) {
    data.features[i * features] = static_cast<float>(data.labels[i]);
  }
  return data;
}

Dataset Generated(int32_t queries) {
  DatagenOptions options;
  options.num_queries = queries;
  options.num_features = 6;
  options.seed = 5;
  return GenerateDataset(options);
}

TrainJob SmallJob() {
  TrainJob job;
  job.booster.num_trees = 3;
  job.booster.num_leaves = 4;
  job.booster.min_data_in_leaf = 1;
  job.booster.num_threads = 1;
  job.log_period = 0;
  job.eval_at = {1, 3};
  return job;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(TrainStepsTest, CountDataTotalsCountsBothSetsAndTheQueriesWithSignal) {
  const Dataset train = Small();
  const Dataset valid = Small();
  const DataTotals totals = CountDataTotals(train, &valid, nullptr);
  EXPECT_EQ(totals.train_documents, 5);
  EXPECT_EQ(totals.train_queries, 2);
  EXPECT_EQ(totals.queries_with_signal, 1);
  EXPECT_EQ(totals.valid_documents, 5);
  EXPECT_EQ(totals.valid_queries, 2);
  EXPECT_EQ(CountDataTotals(train, nullptr, nullptr).valid_queries, 0);
}

TEST(TrainStepsTest, ResolveAutoSettingsMakesEveryAutoConcreteAndRecordsIt) {
  TrainJob job = SmallJob();
  job.objective.name = "plrank";
  job.objective.pl_weighting = "auto";
  job.auto_learning_rate = true;
  job.booster.num_trees = 100;
  job.parameters["pl_weighting"] = "auto";
  job.parameters["learning_rate"] = "0.1";
  // Small data: uniform picks, the usual rate.
  TrainJob small = ResolveAutoSettings(job, 1'000);
  EXPECT_EQ(small.objective.pl_weighting, "uniform");
  EXPECT_EQ(small.parameters.at("pl_weighting"), "uniform");
  EXPECT_FALSE(small.auto_learning_rate);
  EXPECT_DOUBLE_EQ(small.booster.learning_rate, 0.1);
  EXPECT_EQ(small.parameters.at("learning_rate"), "0.1");
  // Large data: position weights, 20 / trees capped at 0.2.
  TrainJob large = ResolveAutoSettings(job, 100'000);
  EXPECT_EQ(large.objective.pl_weighting, "position");
  EXPECT_EQ(large.parameters.at("pl_weighting"), "position");
  EXPECT_DOUBLE_EQ(large.booster.learning_rate, 0.2);
  EXPECT_EQ(large.parameters.at("learning_rate"), "0.2");
  // Nothing auto: nothing changes, nothing is recorded that was not.
  TrainJob fixed = SmallJob();
  fixed.objective.pl_weighting = "gain";
  fixed.booster.learning_rate = 0.05;
  TrainJob same = ResolveAutoSettings(fixed, 100'000);
  EXPECT_EQ(same.objective.pl_weighting, "gain");
  EXPECT_DOUBLE_EQ(same.booster.learning_rate, 0.05);
  EXPECT_THAT(same.parameters, IsEmpty());
  // Only plrank resolves its weighting.
  TrainJob other = job;
  other.objective.name = "lambdamart";
  other.auto_learning_rate = false;
  EXPECT_EQ(ResolveAutoSettings(other, 100'000).objective.pl_weighting, "auto");
}

TEST(TrainStepsTest, CheckTrainingDataRefusesEmptyAndMismatchedSets) {
  TrainJob job = SmallJob();
  job.valid_path = "v.txt";
  const Dataset train = Small();
  EXPECT_TRUE(CheckTrainingData(job, train, nullptr).ok());
  const Dataset valid = Small();
  EXPECT_TRUE(CheckTrainingData(job, train, &valid).ok());
  const absl::Status empty = CheckTrainingData(job, Dataset{}, nullptr);
  EXPECT_THAT(empty.message(), HasSubstr("(in memory): the dataset has no"));
  const Dataset narrow = Small(1);
  const absl::Status width = CheckTrainingData(job, train, &narrow);
  EXPECT_EQ(width.message(), "v.txt: 1 features, but the training data has 2");
}

TEST(TrainStepsTest, ReadInitModelChecksTheDataWidth) {
  TrainJob job = SmallJob();
  job.objective.name = "lambdamart";
  EXPECT_FALSE(ReadInitModel(job, Small())->has_value());
  const Dataset six = Generated(20);
  absl::StatusOr<TrainSummary> trained =
      TrainTreeModel(job, six, nullptr, std::nullopt, false, TrainClock::now(),
                     [](const std::string&) {});
  ASSERT_TRUE(trained.ok()) << trained.status();
  job.init_model_path = TempPath("train_steps_init.pb");
  ASSERT_TRUE(WriteModelFile(trained->model, job.init_model_path).ok());
  absl::StatusOr<std::optional<Ensemble>> refused = ReadInitModel(job, Small());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("2 features, but the background model"));
  absl::StatusOr<std::optional<Ensemble>> read = ReadInitModel(job, six);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)->num_features, 6);
}

TEST(TrainStepsTest, ReadFeatureNamesReadsOnePerFeature) {
  TrainJob job = SmallJob();
  EXPECT_THAT(*ReadFeatureNames(job, 2), IsEmpty());
  job.feature_names_path = TempPath("train_steps_names.txt");
  std::ofstream(job.feature_names_path) << "bm25\npagerank\n";
  EXPECT_THAT(*ReadFeatureNames(job, 2), ElementsAre("bm25", "pagerank"));
}

TEST(TrainStepsTest, DescribeTrainingDataNamesTheSetsAndTheSignal) {
  TrainJob job = SmallJob();
  job.train_path = "t.txt";
  job.valid_path = "v.txt";
  job.booster.learning_rate = 0.2;
  DataTotals totals;
  totals.train_documents = 50;
  totals.train_queries = 4;
  totals.queries_with_signal = 1;
  totals.valid_documents = 20;
  totals.valid_queries = 2;
  EXPECT_THAT(DescribeTrainingData(job, 7, totals, true, true),
              ElementsAre("train: t.txt — 4 queries, 50 documents, 7 features",
                          "learning rate 0.2 (auto from 50 training documents "
                          "and 3 trees; --learning_rate sets it)",
                          "note: t.txt: only 1 of 4 queries have two "
                          "different labels; the others carry no ranking "
                          "signal",
                          "valid: v.txt — 2 queries, 20 documents"));
  totals.queries_with_signal = 0;
  const std::vector<std::string> none =
      DescribeTrainingData(job, 7, totals, false, false);
  ASSERT_THAT(none, SizeIs(2));
  EXPECT_THAT(none[1], HasSubstr("warning: t.txt: no query has two"));
  totals.queries_with_signal = 4;
  EXPECT_THAT(DescribeTrainingData(job, 7, totals, false, false), SizeIs(1));
}

TEST(TrainStepsTest, CheckDistributedRunIsSilentInOneProcess) {
  TrainJob job = SmallJob();
  job.objective.name = "ca";
  std::vector<std::string> log;
  EXPECT_TRUE(
      CheckDistributedRun(job, Small(), nullptr, 2,
                          [&](const std::string& line) { log.push_back(line); })
          .ok());
  EXPECT_THAT(log, IsEmpty());
}

TEST(TrainStepsTest, TrainLinearModelRefusesWeightsAndBackgroundModels) {
  TrainJob job = SmallJob();
  job.objective.name = "ca";
  const LinearTrainer* ca = FindLinearTrainer("ca");
  ASSERT_NE(ca, nullptr);
  const auto now = TrainClock::now();
  auto quiet = [](const std::string&) {};
  Dataset weighted = Generated(20);
  weighted.query_weights.assign(weighted.num_queries(), 1.0f);
  EXPECT_THAT(TrainLinearModel(*ca, job, weighted, nullptr, false, now, quiet)
                  .status()
                  .message(),
              HasSubstr("takes no weights"));
  EXPECT_THAT(
      TrainLinearModel(*ca, job, Generated(20), nullptr, true, now, quiet)
          .status()
          .message(),
      HasSubstr("--init_model applies to tree objectives"));
}

TEST(TrainStepsTest, TrainLinearModelRecordsEveryCutoffOfTheFinalWeights) {
  TrainJob job = SmallJob();
  job.objective.name = "ca";
  job.coordinate_ascent.restarts = 1;
  job.coordinate_ascent.max_rounds = 2;
  job.parameters["objective"] = "ca";
  const Dataset train = Generated(30);
  const Dataset valid = Generated(10);
  std::vector<std::string> log;
  absl::StatusOr<TrainSummary> summary = TrainLinearModel(
      *FindLinearTrainer("ca"), job, train, &valid, false, TrainClock::now(),
      [&](const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(summary.ok()) << summary.status();
  const Ensemble& model = summary->model;
  EXPECT_EQ(model.objective, "ca");
  EXPECT_THAT(model.linear_weights, SizeIs(6));
  EXPECT_EQ(model.parameters.at("objective"), "ca");
  ASSERT_THAT(model.history, SizeIs(1));
  EXPECT_THAT(model.history[0].train, SizeIs(2));
  EXPECT_THAT(model.history[0].valid, SizeIs(2));
  EXPECT_THAT(log.back(), HasSubstr("ca: train ndcg@1 "));
}

TEST(TrainStepsTest, TrainTreeModelKeepsEveryIterationsMetricsWithHistory) {
  TrainJob job = SmallJob();
  job.objective.name = "lambdamart";
  const Dataset train = Generated(30);
  const Dataset valid = Generated(10);
  int32_t callbacks = 0;
  job.on_iteration = [&callbacks](const IterationMetrics& metrics) {
    ++callbacks;
    EXPECT_EQ(metrics.train.size(), 2u);
    return false;
  };
  absl::StatusOr<TrainSummary> summary = TrainTreeModel(
      job, train, &valid, std::nullopt,
      /*record_history=*/true, TrainClock::now(), [](const std::string&) {});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(callbacks, 3);
  EXPECT_EQ(summary->iterations, 3);
  EXPECT_THAT(summary->model.trees, SizeIs(3));
  EXPECT_EQ(summary->history.trees, 3);
  ASSERT_THAT(summary->history.valid_loss, SizeIs(3));
  ASSERT_THAT(summary->model.history, SizeIs(3));
  for (const IterationMetrics& metrics : summary->model.history) {
    EXPECT_THAT(metrics.train, SizeIs(2));
    EXPECT_THAT(metrics.valid, SizeIs(2));
  }
}

TEST(TrainStepsTest, TrainTreeModelContinuesABackgroundModel) {
  TrainJob job = SmallJob();
  job.objective.name = "lambdamart";
  const Dataset train = Generated(30);
  absl::StatusOr<TrainSummary> first =
      TrainTreeModel(job, train, nullptr, std::nullopt, false,
                     TrainClock::now(), [](const std::string&) {});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<TrainSummary> second =
      TrainTreeModel(job, train, nullptr, first->model, false,
                     TrainClock::now(), [](const std::string&) {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(second->model.trees, SizeIs(6));
  EXPECT_THAT(second->model.history, SizeIs(3));
  // A background model of another output count is refused.
  Ensemble three = first->model;
  three.num_outputs = 3;
  EXPECT_THAT(TrainTreeModel(job, train, nullptr, three, false,
                             TrainClock::now(), [](const std::string&) {})
                  .status()
                  .message(),
              HasSubstr("the background model has 3 outputs"));
}

TEST(TrainStepsTest, FinishSummaryStampsTheModelAndTheHistoryRecord) {
  TrainJob job = SmallJob();
  job.booster.early_stopping_rounds = 4;
  const Dataset train = Small();
  const Dataset valid = Small();
  TrainSummary summary;
  summary.best_iteration = 2;
  summary.train_queries = 2;
  summary.history.trees = 3;
  const TrainSummary done =
      FinishSummary(job, train, &valid, summary, {"a", "b"});
  EXPECT_EQ(done.model.train_data_hash, DatasetDigest(train));
  EXPECT_EQ(done.model.valid_data_hash, DatasetDigest(valid));
  EXPECT_GT(done.model.created_unix_seconds, 0);
  EXPECT_THAT(done.model.feature_names, ElementsAre("a", "b"));
  EXPECT_THAT(done.history.eval_at, ElementsAre(1, 3));
  EXPECT_EQ(done.history.best_iteration, 2);
  EXPECT_EQ(done.history.early_stopping_rounds, 4);
  EXPECT_EQ(done.history.trees, 3);  // the tree step's, kept
  EXPECT_EQ(done.history.train_queries, 2);
  EXPECT_EQ(done.history.valid_queries, 2);
}

}  // namespace
}  // namespace plrank
