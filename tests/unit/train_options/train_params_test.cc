// The parameter table (trainer/params/train_params.inc) is what
// plrank-train's flags, the Python package's params and the artifact's
// records are made of.
#include "trainer/params/train_params.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/lightgbm_params.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/train_options.h"

ABSL_DECLARE_FLAG(int32_t, trees);

namespace plrank::cli {
namespace {

using ::testing::HasSubstr;

TEST(TrainParamsTest, EveryParameterIsAFlagOfItsTypeDefaultAndHelp) {
#define PLRANK_TRAIN_PARAM(type, name, ...)                               \
  {                                                                       \
    SCOPED_TRACE(#name);                                                  \
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(#name); \
    ASSERT_NE(flag, nullptr);                                             \
    EXPECT_TRUE(flag->IsOfType<type>());                                  \
    const TrainParam* param = FindTrainParam(#name);                      \
    ASSERT_NE(param, nullptr);                                            \
    EXPECT_EQ(flag->DefaultValue(), param->default_value);                \
    EXPECT_EQ(flag->Help(), TrainParamFlagHelp(#name));                   \
    EXPECT_THAT(flag->Help(), HasSubstr(param->help));                    \
  }
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
  EXPECT_EQ(TrainParams().size(), TrainFlagNames().size());
}

TEST(TrainParamsTest, SharedTypesAreTheTables) {
  static_assert(std::is_same_v<train_param_type::seed, uint64_t>);
  static_assert(std::is_same_v<train_param_type::trees, int32_t>);
  static_assert(std::is_same_v<train_param_type::learning_rate, double>);
  EXPECT_EQ(FindTrainParam("seed")->type, TrainParamType::kUint64);
  EXPECT_STREQ(TrainParamTypeName(FindTrainParam("seed")->type), "uint64");
}

// The LightGBM column is what common/lightgbm_params.h translates: the same
// name, or one it renames to the parameter.
TEST(TrainParamsTest, LightGbmNamesTranslateToTheParameter) {
  const std::vector<std::string> names = TrainFlagNames();
  for (const TrainParam& param : TrainParams()) {
    if (param.lightgbm.empty() || param.lightgbm == param.name) continue;
    EXPECT_EQ(LightGbmEquivalent(param.lightgbm, names), param.name)
        << param.lightgbm;
  }
  EXPECT_EQ(TrainParamFlagHelp("leaves"),
            "Leaves per tree (leaf-wise growth). [>= 2; LightGBM num_leaves]");
  EXPECT_EQ(TrainParamFlagHelp("resume"), FindTrainParam("resume")->help);
}

TEST(TrainParamsTest, SetTrainParamParsesTheFlagSyntaxAndMarksItGiven) {
  TrainParamValues values;
  EXPECT_EQ(values.trees, 100);
  EXPECT_FALSE(values.WasGiven("trees"));
  ASSERT_TRUE(SetTrainParam("learning_rate", "0.10", &values).ok());
  ASSERT_TRUE(SetTrainParam("pl_paper", "true", &values).ok());
  ASSERT_TRUE(SetTrainParam("seed", "18446744073709551615", &values).ok());
  EXPECT_DOUBLE_EQ(values.learning_rate, 0.1);
  EXPECT_TRUE(values.pl_paper);
  EXPECT_EQ(values.seed, 18446744073709551615ull);
  EXPECT_TRUE(values.WasGiven("learning_rate"));
  const absl::Status bad = SetTrainParam("trees", "many", &values);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(),
              HasSubstr("parameter trees='many': not a valid int32"));
  EXPECT_EQ(SetTrainParam("seed", "-1", &values).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SetTrainParam("no_such", "1", &values).code(),
            absl::StatusCode::kNotFound);
  // The recorded texts are canonical, as the flags print them.
  for (const auto& [name, text] : TrainParamTexts(values)) {
    if (name == "learning_rate") EXPECT_EQ(text, "0.1");
    if (name == "min_sum_hessian_in_leaf") EXPECT_EQ(text, "0.001");
  }
}

// The Python package's jobs are built without the process-global flags:
// they stay as they are, and concurrent calls do not see each other's
// params.
TEST(TrainParamsTest, ParamsNeverTouchTheFlags) {
  std::vector<int32_t> trees(8, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([i, &trees] {
      for (int repeat = 0; repeat < 50; ++repeat) {
        absl::StatusOr<TrainJob> job =
            TrainJobFromParams({{"trees", std::to_string(i + 1)}});
        if (!job.ok() || job->booster.num_trees != i + 1) return;
      }
      trees[i] = i + 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(trees[i], i + 1);
  EXPECT_EQ(absl::GetFlag(FLAGS_trees), 100);
}

// --pl_paper trains with the paper's settings, and the artifact says so.
TEST(TrainParamsTest, PaperPresetIsWhatTheArtifactRecords) {
  absl::StatusOr<TrainJob> job = TrainJobFromParams({{"pl_paper", "true"}});
  ASSERT_TRUE(job.ok()) << job.status();
  const auto& recorded = job->parameters;
  EXPECT_EQ(recorded.at("pl_paper"), "true");
  EXPECT_EQ(recorded.at("pl_topk"), "10");
  EXPECT_EQ(recorded.at("pl_ties"), "permutation");
  EXPECT_EQ(recorded.at("pl_weighting"), "uniform");
  EXPECT_EQ(recorded.at("pl_stop_at_lowest_label"), "false");
  EXPECT_EQ(recorded.at("pl_newton_damping"), "1e-06");
  EXPECT_EQ(recorded.at("pl_max_leaf_step"), "100");
  EXPECT_EQ(recorded.at("split_gain"), "ls");
  EXPECT_EQ(job->objective.pl_max_leaf_step, 100.0);
  // Without the preset the records are the values.
  job = TrainJobFromParams({});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->parameters.at("pl_max_leaf_step"), "0.6");
  EXPECT_EQ(job->parameters.at("pl_ties"), "efron");
  // Checkpoint parameters are never recorded, clicks ones only when set.
  EXPECT_EQ(job->parameters.count("checkpoint_every"), 0u);
  EXPECT_EQ(job->parameters.count("position_debias"), 0u);
  job = TrainJobFromParams({{"position_debias", "ips"}});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->parameters.at("position_debias"), "ips");
}

}  // namespace
}  // namespace plrank::cli

namespace plrank::cli {
namespace {

// docs/cli.md holds the table as markdown between two markers; this test
// fails when it drifts from train_params.inc, printing the block to paste
// (or, with PLRANK_UPDATE_DOCS=1, writing it).
std::string MarkdownTable() {
  std::string text =
      "| parameter | type | default | range | LightGBM |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const TrainParam& param : TrainParams()) {
    const std::string default_value =
        param.default_value.empty() ? "" : "`" + param.default_value + "`";
    const std::string lightgbm =
        param.lightgbm.empty() ? "" : "`" + param.lightgbm + "`";
    std::string range = param.range;
    absl::StrReplaceAll({{"|", "\\|"}}, &range);
    absl::StrAppend(&text, "| `--", param.name, "` | ",
                    TrainParamTypeName(param.type), " | ", default_value,
                    " | ", range, " | ", lightgbm, " |\n");
  }
  return text;
}

TEST(TrainParamsTest, TheManualListsTheTable) {
  const std::filesystem::path source =
      std::filesystem::path(__FILE__).parent_path() / "../../../docs/cli.md";
  std::ifstream in(source);
  ASSERT_TRUE(in.good()) << source;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string doc = buffer.str();
  const std::string begin = "<!-- train-params:begin -->\n";
  const std::string end = "<!-- train-params:end -->";
  const size_t from = doc.find(begin);
  const size_t to = doc.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  const std::string listed = doc.substr(from + begin.size(),
                                        to - from - begin.size());
  const std::string expected = MarkdownTable();
  if (listed != expected && std::getenv("PLRANK_UPDATE_DOCS") != nullptr) {
    doc.replace(from + begin.size(), to - from - begin.size(), expected);
    std::ofstream(source) << doc;
    return;
  }
  EXPECT_EQ(listed, expected)
      << "docs/cli.md's parameter table is not train_params.inc's; rerun "
         "with PLRANK_UPDATE_DOCS=1 to rewrite it";
}

}  // namespace
}  // namespace plrank::cli
