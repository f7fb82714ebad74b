// MetricRecorder (core/pipeline/metric_recorder.h): which iterations compute
// which metrics, and what the history and progress lines get.
#include "core/pipeline/metric_recorder.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/pipeline/ndcg_evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

// One query, labels 2, 1, 0: NDCG is 1 for scores in label order.
Dataset OneQuery() {
  Dataset data;
  data.num_features = 1;
  data.labels = {2, 1, 0};
  data.query_offsets = {0, 3};
  data.query_ids = {"q"};
  data.features = {0.0f, 0.0f, 0.0f};
  return data;
}

NdcgEvaluator Ndcg(const Dataset& data) {
  return NdcgEvaluator(&data, {1, 3}, 1, ScoreTransform::kIdentity,
                       MetricOptions{});
}

const std::vector<double> kPerfect = {3.0, 2.0, 1.0};

TEST(MetricRecorderTest, ComputesOnlyWhenAProgressLineIsDue) {
  const Dataset data = OneQuery();
  MetricRecorder recorder({1, 3}, /*log_period=*/2, /*total=*/5, false);
  Evaluator train = recorder.TrainEvaluator(Ndcg(data));
  std::vector<bool> computed;
  for (int i = 1; i <= 5; ++i) computed.push_back(!std::isnan(train(kPerfect)));
  EXPECT_THAT(computed, ElementsAre(false, true, false, true, true));
  EXPECT_THAT(recorder.At(1, 0.5).train, IsEmpty());
  EXPECT_THAT(recorder.At(2, 0.5).train,
              ElementsAre(Pair("ndcg@1", 1.0), Pair("ndcg@3", 1.0)));
  EXPECT_EQ(recorder.At(2, 0.5).train_loss, 0.5);
}

TEST(MetricRecorderTest, EveryIterationWithHistoryButNoProgressLines) {
  const Dataset data = OneQuery();
  MetricRecorder recorder({1, 3}, /*log_period=*/0, 3, true);
  Evaluator train = recorder.TrainEvaluator(Ndcg(data));
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(train(kPerfect), 1.0);
  EXPECT_FALSE(recorder.LogDue(3));
  EXPECT_THAT(recorder.At(3, 0.0).train, SizeIs(2));
}

TEST(MetricRecorderTest, EarlyStoppingComputesTheFirstValidCutoffEachTime) {
  const Dataset data = OneQuery();
  MetricRecorder recorder({1, 3}, /*log_period=*/10, 10, false);
  Evaluator valid = recorder.ValidEvaluator(Ndcg(data), true, nullptr, nullptr);
  EXPECT_EQ(valid(kPerfect), 1.0);  // iteration 1: first cut-off only
  EXPECT_THAT(recorder.At(1, 0.0).valid, ElementsAre(Pair("ndcg@1", 1.0)));
  EXPECT_TRUE(std::isnan(recorder.ValidLossAt(1)));
}

TEST(MetricRecorderTest, ProgressLineShowsComputedAndMissingValues) {
  const Dataset data = OneQuery();
  MetricRecorder recorder({1, 3}, 1, 10, false);
  Evaluator train = recorder.TrainEvaluator(Ndcg(data));
  train(kPerfect);
  IterationReport report;
  report.iteration = 1;
  report.num_trees = 10;
  report.train_loss = 0.25;
  report.elapsed_seconds = 2.0;
  EXPECT_EQ(recorder.ProgressLine(report),
            "[ 1/10] elapsed 2.0s eta 18.0s loss 0.25 train ndcg@1 1.0000 "
            "ndcg@3 1.0000 valid ndcg@1 - ndcg@3 -");
}

TEST(MetricRecorderTest, ResumeGoesOnCountingFromTheCheckpoint) {
  const Dataset data = OneQuery();
  MetricRecorder recorder({1, 3}, 3, 6, false);
  MetricRecorder::State state;
  state.train[3] = {0.5, 0.75};
  state.valid_loss[3] = 1.5;
  recorder.Resume(3, state);
  Evaluator train = recorder.TrainEvaluator(Ndcg(data));
  EXPECT_TRUE(std::isnan(train(kPerfect)));  // iteration 4
  EXPECT_TRUE(std::isnan(train(kPerfect)));  // 5
  EXPECT_EQ(train(kPerfect), 1.0);           // 6: due
  EXPECT_THAT(recorder.At(3, 0.0).train,
              ElementsAre(Pair("ndcg@1", 0.5), Pair("ndcg@3", 0.75)));
  EXPECT_EQ(recorder.ValidLossAt(3), 1.5);
  EXPECT_THAT(recorder.state().train, SizeIs(2));
}

TEST(NdcgEvaluatorTest, FormatsAndStoresOnlyComputedValues) {
  EXPECT_THAT(NdcgMetricNames({1, 10}), ElementsAre("ndcg@1", "ndcg@10"));
  EXPECT_EQ(FormatMetric(0.5), "0.5000");
  EXPECT_EQ(FormatMetric(std::nan("")), "-");
  const std::vector<double> values = {0.25, std::nan("")};
  EXPECT_EQ(FormatMetrics({"a", "b"}, &values), "a 0.2500 b -");
  EXPECT_EQ(FormatMetrics({"a"}, nullptr), "a -");
  std::map<std::string, double> stored;
  StoreMetrics({"a", "b"}, values, &stored);
  EXPECT_THAT(stored, ElementsAre(Pair("a", 0.25)));
}

TEST(NdcgEvaluatorTest, FirstOnlyLeavesTheOtherCutoffsNan) {
  const Dataset data = OneQuery();
  const std::vector<double> reversed = {1.0, 2.0, 3.0};
  const std::vector<double> all = Ndcg(data)(reversed);
  ASSERT_THAT(all, SizeIs(2));
  // Top-1 is the label-0 document: gain 0.
  EXPECT_EQ(all[0], 0.0);
  EXPECT_GT(all[1], 0.0);
  EXPECT_LT(all[1], 1.0);
  const std::vector<double> first = Ndcg(data)(reversed, true);
  EXPECT_EQ(first[0], 0.0);
  EXPECT_TRUE(std::isnan(first[1]));
}

}  // namespace
}  // namespace plrank
