// End to end over the real programs: build MQ2008 Fold1, train PLRank with
// plrank-train, score the test part with plrank-eval, and check the model
// beats ranking by the single best feature (chosen on the training part).
#include <cmath>
#include <string>
#include <vector>

#include "core/data/letor_reader.h"
#include "core/metrics/ranking_metrics.h"
#include "core/metrics/score_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

double MeanNdcg10(const Dataset& data, const std::vector<double>& scores) {
  return MeanIgnoringNan(PerQueryMetric(
      data, scores, {MetricSpec::Kind::kNdcg, 10}, MetricOptions{}));
}

// The feature whose raw value (either sign) ranks `data` best.
std::pair<int32_t, double> BestSingleFeature(const Dataset& data) {
  std::pair<int32_t, double> best{-1, -1.0};
  std::vector<double> scores(data.num_documents());
  for (int32_t f = 0; f < data.num_features; ++f) {
    for (double sign : {1.0, -1.0}) {
      for (size_t i = 0; i < scores.size(); ++i) {
        const float v = data.value(i, f);
        scores[i] = std::isnan(v) ? 0.0 : sign * v;
      }
      const double ndcg = MeanNdcg10(data, scores);
      if (ndcg > best.second) best = {sign > 0 ? f : ~f, ndcg};
    }
  }
  return best;
}

TEST(Mq2008EndToEnd, PlRankBeatsTheBestSingleFeature) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  TempDir dir;
  const auto folds = RunCommand(
      {"/bin/bash", ::plrank::testing::SharedDataPath("make-folds.sh"), dir.path()});
  ASSERT_EQ(folds.exit_code, 0) << folds.err;
  const std::string fold = dir.path() + "/Fold1";
  const std::string model = dir.File("model.pb");

  const auto train = RunCommand(
      {BinPath("plrank-train"), "--train=" + fold + "/train.txt",
       "--valid=" + fold + "/vali.txt", "--trees=100", "--leaves=31",
       "--learning_rate=0.1", "--num_threads=2", "--model_out=" + model});
  ASSERT_EQ(train.exit_code, 0) << train.out << train.err;
  EXPECT_THAT(train.out, HasSubstr("train_seconds="));
  EXPECT_THAT(train.out, HasSubstr("valid ndcg@10"));

  const std::string scores_path = dir.File("test.scores");
  const auto eval = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                                "--data=" + fold + "/test.txt",
                                "--scores_out=" + scores_path});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_THAT(eval.out, HasSubstr("ndcg@10"));
  EXPECT_THAT(eval.out, HasSubstr("err"));
  EXPECT_THAT(eval.out, HasSubstr("map"));

  absl::StatusOr<Dataset> train_data =
      ReadLetorFile(fold + "/train.txt", ReadOptions{});
  absl::StatusOr<Dataset> test_data =
      ReadLetorFile(fold + "/test.txt", ReadOptions{});
  ASSERT_TRUE(train_data.ok()) << train_data.status();
  ASSERT_TRUE(test_data.ok()) << test_data.status();
  absl::StatusOr<std::vector<double>> scores = ReadScoreFile(scores_path);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), test_data->num_documents());

  const auto [feature, train_ndcg] = BestSingleFeature(*train_data);
  ASSERT_NE(feature, -1);
  std::vector<double> feature_scores(test_data->num_documents());
  const int32_t f = feature >= 0 ? feature : ~feature;
  const double sign = feature >= 0 ? 1.0 : -1.0;
  for (size_t i = 0; i < feature_scores.size(); ++i) {
    const float v = test_data->value(i, f);
    feature_scores[i] = std::isnan(v) ? 0.0 : sign * v;
  }
  const double baseline = MeanNdcg10(*test_data, feature_scores);
  const double model_ndcg = MeanNdcg10(*test_data, *scores);
  RecordProperty("plrank_test_ndcg10", std::to_string(model_ndcg));
  RecordProperty("best_feature_test_ndcg10", std::to_string(baseline));
  std::printf("Fold1 test NDCG@10: PLRank %.4f, best single feature (#%d) %.4f\n",
              model_ndcg, f + 1, baseline);
  EXPECT_GT(model_ndcg, baseline);
}

}  // namespace
}  // namespace plrank
