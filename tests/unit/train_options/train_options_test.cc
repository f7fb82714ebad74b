// TrainJobFromParams: the Python package's params are plrank-train's flags,
// with their defaults and checks, and leave the flags as they found them.
#include "trainer/train_options.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Params = std::vector<std::pair<std::string, std::string>>;

TEST(TrainJobFromParamsTest, DefaultsAreThoseOfPlrankTrain) {
  absl::StatusOr<TrainJob> job = TrainJobFromParams({});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->objective.name, "plrank");
  EXPECT_EQ(job->booster.num_trees, 100);
  EXPECT_EQ(job->booster.num_leaves, 31);
  EXPECT_DOUBLE_EQ(job->booster.learning_rate, 0.1);
  EXPECT_EQ(job->booster.min_data_in_leaf, 20);
  EXPECT_THAT(job->eval_at, ElementsAre(10));
  EXPECT_EQ(job->parameters.at("trees"), "100");
}

TEST(TrainJobFromParamsTest, SetsFlagsForTheCallOnly) {
  absl::StatusOr<TrainJob> job = TrainJobFromParams(
      {{"trees", "7"}, {"eval_at", "1,3"}, {"learning_rate", "0.05"},
       {"nopl_stop_at_lowest_label", "true"}});
  ASSERT_FALSE(job.ok());  // "no" prefixes are command-line syntax only
  job = TrainJobFromParams({{"trees", "7"},
                            {"eval_at", "1,3"},
                            {"learning_rate", "0.05"},
                            {"pl_stop_at_lowest_label", "false"},
                            {"train", "t.txt"}});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->booster.num_trees, 7);
  EXPECT_THAT(job->eval_at, ElementsAre(1, 3));
  EXPECT_DOUBLE_EQ(job->booster.learning_rate, 0.05);
  EXPECT_FALSE(job->objective.pl_stop_at_lowest_label);
  EXPECT_EQ(job->train_path, "t.txt");
  EXPECT_EQ(job->parameters.at("trees"), "7");
  // The next call starts from the defaults again.
  job = TrainJobFromParams({});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->booster.num_trees, 100);
  EXPECT_THAT(job->eval_at, ElementsAre(10));
  EXPECT_TRUE(job->objective.pl_stop_at_lowest_label);
  EXPECT_EQ(job->train_path, "");
}

TEST(TrainJobFromParamsTest, UnknownNamesNameTheNearestFlag) {
  absl::StatusOr<TrainJob> job = TrainJobFromParams({{"learning_rat", "0.1"}});
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(job.status().message(),
            "unknown parameter 'learning_rat'; did you mean 'learning_rate'?");
  job = TrainJobFromParams({{"num_leaves", "15"}});
  EXPECT_EQ(job.status().message(),
            "unknown parameter 'num_leaves': LightGBM's num_leaves is "
            "'leaves' here");
  // absl's own flags are not parameters.
  job = TrainJobFromParams({{"flagfile", "x"}});
  EXPECT_THAT(job.status().message(), HasSubstr("unknown parameter 'flagfile'"));
}

// The command line's checks, in the Python package's words: errors name the
// parameter ("trees"), not the flag ("--trees").
TEST(TrainJobFromParamsTest, ValuesAreCheckedAsOnTheCommandLine) {
  absl::StatusOr<TrainJob> job = TrainJobFromParams({{"trees", "abc"}});
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(job.status().message(), HasSubstr("trees='abc'"));
  job = TrainJobFromParams({{"trees", "0"}});
  EXPECT_EQ(job.status().message(), "trees must be > 0");
  // NaN passes a plain `< 0` test; these are refused before any data is read.
  job = TrainJobFromParams({{"lambda_l2", "nan"}});
  EXPECT_EQ(job.status().message(),
            "lambda_l2 must be finite and >= 0, got nan");
  job = TrainJobFromParams({{"min_sum_hessian_in_leaf", "-1"}});
  EXPECT_EQ(job.status().message(),
            "min_sum_hessian_in_leaf must be finite and >= 0, got -1");
  job = TrainJobFromParams({{"min_gain_to_split", "inf"}});
  EXPECT_EQ(job.status().message(),
            "min_gain_to_split must be finite and >= 0, got inf");
  job = TrainJobFromParams({{"learning_rate", "inf"}});
  EXPECT_EQ(job.status().message(), "learning_rate must be finite and > 0");
  job = TrainJobFromParams({{"num_threads", "100000"}});  // crashed libgomp
  EXPECT_EQ(job.status().message(),
            "num_threads must be in [0, 1024] (0 = all cores), got 100000");
  job = TrainJobFromParams({{"max_bin", "256"}});
  EXPECT_EQ(job.status().message(), "max_bin must be in [2, 255]");
  job = TrainJobFromParams({{"feature_fraction", "1.5"}});
  EXPECT_EQ(job.status().message(), "feature_fraction must be in (0, 1]");
  job = TrainJobFromParams({{"max_depth", "4"}, {"min_gain_to_split", "0.25"}});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->booster.max_depth, 4);
  EXPECT_EQ(job->booster.min_gain_to_split, 0.25);
  EXPECT_EQ(job->parameters.at("max_depth"), "4");
  job = TrainJobFromParams({{"min_split_gain", "1"}});
  EXPECT_EQ(job.status().message(),
            "unknown parameter 'min_split_gain': LightGBM's min_split_gain is "
            "'min_gain_to_split' here");
  job = TrainJobFromParams({{"pl_paper", "true"}, {"pl_topk", "5"}});
  EXPECT_THAT(job.status().message(), HasSubstr("pl_paper fixes pl_topk"));
  job = TrainJobFromParams({{"pl_paper", "true"}});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->objective.pl_ties, "permutation");
}

TEST(TrainJobFromParamsTest, ReportsParamsTheObjectiveIgnores) {
  std::vector<std::string> ignored;
  absl::StatusOr<TrainJob> job = TrainJobFromParams(
      {{"objective", "ca"}, {"leaves", "5"}, {"ca_restarts", "1"}}, &ignored);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_THAT(ignored, ElementsAre("--leaves"));
}

}  // namespace
}  // namespace plrank::cli

namespace plrank::cli {
namespace {

// --split_gain=auto (the default): Newton gain for PLRank, least squares for
// the paper's PLRank and every other objective; the artifact records which.
TEST(TrainJobFromParamsTest, AutoSplitGainIsNewtonForPlrankOnly) {
  struct Case {
    Params params;
    SplitGain expected;
    const char* recorded;
  };
  const Case cases[] = {
      {{}, SplitGain::kNewton, "newton"},
      {{{"pl_paper", "true"}}, SplitGain::kLeastSquares, "ls"},
      {{{"objective", "lambdamart"}}, SplitGain::kLeastSquares, "ls"},
      {{{"objective", "xendcg"}}, SplitGain::kLeastSquares, "ls"},
      {{{"split_gain", "ls"}}, SplitGain::kLeastSquares, "ls"},
      {{{"objective", "mart2"}, {"split_gain", "newton"}}, SplitGain::kNewton,
       "newton"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TrainJob> job = TrainJobFromParams(c.params);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->booster.split_gain, c.expected) << c.recorded;
    EXPECT_EQ(job->parameters.at("split_gain"), c.recorded);
  }
  EXPECT_THAT(std::string(TrainJobFromParams({{"split_gain", "exact"}})
                              .status()
                              .message()),
              HasSubstr("not one of auto, ls, newton"));
}

// --learning_rate not given: PLRank (not the paper's) picks it from the data
// once it is read (core/pipeline/auto_learning_rate.h); given, or for any
// other objective, it is the flag's value.
TEST(TrainJobFromParamsTest, LearningRateIsAutoForPlrankUnlessGiven) {
  struct Case {
    Params params;
    bool auto_rate;
  };
  const Case cases[] = {
      {{}, true},
      {{{"trees", "300"}}, true},
      {{{"learning_rate", "0.1"}}, false},
      {{{"pl_paper", "true"}}, false},
      {{{"objective", "lambdamart"}}, false},
      {{{"objective", "xendcg"}}, false},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TrainJob> job = TrainJobFromParams(c.params);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->auto_learning_rate, c.auto_rate)
        << (c.params.empty() ? "defaults" : c.params[0].first);
  }
}

}  // namespace
}  // namespace plrank::cli
