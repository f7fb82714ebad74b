#include "common/lightgbm_params.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

const std::vector<std::string> kTrainFlags = {
    "trees", "leaves", "learning_rate", "objective", "seed", "lambda_l2",
    "eval_at", "quiet", "log_period", "train", "valid", "model_out",
    "init_model", "bagging_fraction", "num_threads", "lambdamart_sigma"};

TEST(LightGbmParamsTest, SameMeaningIsRenamed) {
  EXPECT_EQ(LightGbmEquivalent("num_leaves", kTrainFlags), "leaves");
  EXPECT_EQ(LightGbmEquivalent("n_estimators", kTrainFlags), "trees");
  EXPECT_EQ(LightGbmEquivalent("input_model", kTrainFlags), "init_model");
  EXPECT_EQ(LightGbmEquivalent("input_model", {"model"}), "model");
  EXPECT_EQ(LightGbmEquivalent("num_leaves", {"model"}), "");
  EXPECT_THAT(*TranslateLightGbmParameter("num_leaves", "15", kTrainFlags),
              ElementsAre(Pair("leaves", "15")));
}

TEST(LightGbmParamsTest, ValuesAreTranslated) {
  EXPECT_THAT(*TranslateLightGbmParameter("objective", "lambdarank", kTrainFlags),
              ElementsAre(Pair("objective", "lambdamart")));
  EXPECT_THAT(*TranslateLightGbmParameter("objective", "rank_xendcg", kTrainFlags),
              ElementsAre(Pair("objective", "xendcg")));
  EXPECT_THAT(*TranslateLightGbmParameter("objective", "plrank", kTrainFlags),
              ElementsAre(Pair("objective", "plrank")));
  EXPECT_THAT(*TranslateLightGbmParameter("verbosity", "-1", kTrainFlags),
              ElementsAre(Pair("quiet", "true")));
  EXPECT_THAT(*TranslateLightGbmParameter("verbose", "2", kTrainFlags),
              ElementsAre(Pair("quiet", "false")));
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"boosting", "gbdt"}, {"lambda_l1", "0"}, {"metric", "ndcg"},
           {"metric", "ndcg,lambdarank"}, {"label_gain", "0,1,3,7,15,31"},
           {"task", "train"}, {"force_col_wise", "true"}}) {
    absl::StatusOr<std::vector<FlagSetting>> settings =
        TranslateLightGbmParameter(name, value, kTrainFlags);
    ASSERT_TRUE(settings.ok()) << name << "=" << value << ": " << settings.status();
    EXPECT_THAT(*settings, IsEmpty()) << name;
  }
}

TEST(LightGbmParamsTest, WhatPlRankCannotDoIsRefusedWithTheReason) {
  for (const auto& [name, value, reason] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"boosting", "dart", "gradient-boosted trees only"},
           {"bagging_seed", "3", "one seed drives every random choice"},
           {"lambda_l1", "0.1", "no L1 regularization"},
           {"metric", "ndcg,map", "NDCG at the eval_at cut-offs only"},
           {"label_gain", "0,1,2", "fixed at 2^l - 1"},
           {"objective", "binary", "trains rankers only"},
           {"valid", "a.txt,b.txt", "one validation file"}}) {
    absl::StatusOr<std::vector<FlagSetting>> settings =
        TranslateLightGbmParameter(name, value, kTrainFlags);
    ASSERT_FALSE(settings.ok()) << name;
    EXPECT_TRUE(absl::IsInvalidArgument(settings.status()));
    EXPECT_THAT(settings.status().message(),
                HasSubstr("LightGBM's " + name + "=" + value +
                          " is not supported: "));
    EXPECT_THAT(settings.status().message(), HasSubstr(reason)) << name;
  }
  EXPECT_TRUE(absl::IsNotFound(
      TranslateLightGbmParameter("no_such_thing", "1", kTrainFlags).status()));
}

TEST(LightGbmParamsTest, HintsNameTheProgramsOwnFlags) {
  EXPECT_EQ(LightGbmHint("num_leaves", kTrainFlags),
            "LightGBM's num_leaves is --leaves here");
  EXPECT_EQ(LightGbmHint("num_leaves", kTrainFlags, ""),
            "LightGBM's num_leaves is 'leaves' here");
  EXPECT_THAT(LightGbmHint("boosting", kTrainFlags),
              HasSubstr("dart, goss and rf are not supported. The loss is "
                        "--objective"));
  EXPECT_THAT(LightGbmHint("bagging_seed", kTrainFlags),
              HasSubstr("one --seed drives every random choice"));
  EXPECT_THAT(LightGbmHint("lambda_l1", kTrainFlags),
              HasSubstr("--lambda_l2 is the L2"));
  EXPECT_THAT(LightGbmHint("metric", kTrainFlags), HasSubstr("--eval_at"));
  EXPECT_THAT(LightGbmHint("verbosity", kTrainFlags), HasSubstr("--quiet"));
  EXPECT_THAT(LightGbmHint("label_gain", kTrainFlags), HasSubstr("2^l - 1"));
  // A program without training flags gets no training hints.
  EXPECT_EQ(LightGbmHint("bagging_seed", {"port", "model_base_path"}), "");
  EXPECT_EQ(LightGbmHint("completely_unknown", kTrainFlags), "");
}

}  // namespace
}  // namespace plrank
