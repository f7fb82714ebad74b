// plrank-train on click logs: side files beside the data (.weight, .position,
// .propensity), --position_debias and --estimate_propensities, as a user of
// docs/clicks-training.md runs them.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// One line per document line of `data`: `value(i, position in its query)`.
template <typename Fn>
std::string PerDocument(const std::string& data, Fn value) {
  std::istringstream in(data);
  std::string line, previous_qid, out;
  int i = 0, position = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string qid = line.substr(0, line.find(' ', line.find("qid:")));
    position = qid == previous_qid ? position + 1 : 1;
    previous_qid = qid;
    out += value(i++, position) + "\n";
  }
  return out;
}

class ClicksCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.File("data");
    const CommandResult gen = RunCommand(
        {BinPath("plrank-datagen"), "--queries=60", "--mean_docs=12",
         "--features=8", "--seed=3", "--out_prefix=" + prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    text_ = ReadWholeFile(prefix_ + ".train");
  }

  CommandResult Train(const std::string& train, const std::string& model,
                      const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {
        BinPath("plrank-train"), "--train=" + train, "--trees=8",
        "--leaves=5", "--min_data_in_leaf=5", "--model_out=" + model};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  std::string Scores(const std::string& model) {
    const std::string out = model + ".scores";
    const CommandResult eval =
        RunCommand({BinPath("plrank-eval"), "--model=" + model,
                    "--data=" + prefix_ + ".test", "--scores_out=" + out});
    EXPECT_EQ(eval.exit_code, 0) << eval.err;
    return ReadWholeFile(out);
  }

  TempDir dir_;
  std::string prefix_;
  std::string text_;
};

TEST_F(ClicksCliTest, WeightFileBesideTheDataIsReadAndUnitWeightsChangeNothing) {
  const CommandResult plain = Train(prefix_ + ".train", dir_.File("plain.pb"), {});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::string weighted = dir_.File("weighted.txt");
  WriteFile(weighted, text_);
  WriteFile(weighted + ".weight",
            PerDocument(text_, [](int, int) { return std::string("1"); }));
  const CommandResult ones = Train(weighted, dir_.File("ones.pb"), {});
  ASSERT_EQ(ones.exit_code, 0) << ones.err;
  EXPECT_THAT(ones.out, HasSubstr(weighted + ".weight: "));
  EXPECT_EQ(Scores(dir_.File("ones.pb")), Scores(dir_.File("plain.pb")));

  WriteFile(weighted + ".weight", PerDocument(text_, [](int i, int) {
              return std::to_string(i % 3);
            }));
  ASSERT_EQ(Train(weighted, dir_.File("uneven.pb"), {}).exit_code, 0);
  EXPECT_NE(Scores(dir_.File("uneven.pb")), Scores(dir_.File("plain.pb")));

  WriteFile(weighted + ".weight", "1\n2\n");
  const CommandResult bad = Train(weighted, dir_.File("bad.pb"), {});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr(weighted + ".weight:2: 2 weight values, but "
                                             "the data has"));
  WriteFile(weighted + ".weight", "1\nx\n");
  EXPECT_THAT(Train(weighted, dir_.File("bad.pb"), {}).err,
              HasSubstr(weighted + ".weight:2: bad weight 'x'"));
}

TEST_F(ClicksCliTest, GamIpsAndEstimatedPropensities) {
  const std::string clicks = dir_.File("clicks.txt");
  WriteFile(clicks, text_);
  WriteFile(clicks + ".position", PerDocument(text_, [](int, int position) {
              return std::to_string(position);
            }));
  const CommandResult gam =
      Train(clicks, dir_.File("gam.pb"), {"--position_debias=gam"});
  ASSERT_EQ(gam.exit_code, 0) << gam.err;
  EXPECT_THAT(gam.out, HasSubstr("gam: learned position bias b_1..b_"));
  const CommandResult dump = RunCommand(
      {BinPath("plrank-eval"), "--model=" + dir_.File("gam.pb"), "--dump"});
  EXPECT_THAT(dump.out, HasSubstr("position_bias_curve = 0,"));
  EXPECT_THAT(dump.out, HasSubstr("position_debias = gam"));

  const CommandResult ips =
      Train(clicks, dir_.File("ips.pb"),
            {"--position_debias=ips", "--position_propensities=1,0.5,0.25",
             "--max_ips_weight=3"});
  ASSERT_EQ(ips.exit_code, 0) << ips.err;
  EXPECT_THAT(ips.out, HasSubstr("clipped at --max_ips_weight=3"));

  const std::string curve = dir_.File("propensities.txt");
  const CommandResult estimate = RunCommand(
      {BinPath("plrank-train"), "--train=" + clicks,
       "--estimate_propensities=" + curve});
  ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
  EXPECT_THAT(estimate.out, HasSubstr("position propensity shown clicks\n1 1.000000"));
  EXPECT_THAT(ReadWholeFile(curve), HasSubstr("\n1.000000\n"));

  const CommandResult no_positions = Train(
      prefix_ + ".train", dir_.File("x.pb"), {"--position_debias=ips"});
  EXPECT_NE(no_positions.exit_code, 0);
  EXPECT_THAT(no_positions.err, HasSubstr("needs propensities"));
  const CommandResult wrong = Train(clicks, dir_.File("x.pb"),
                                    {"--position_debias=gam", "--objective=mart1"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("is for --objective=plrank or lambdamart"));
}

// plrank-logs join's D.all form: every candidate of each logged ranking,
// unshown ones at position 0 (never clicked), the policy's position
// marginals beside it: ips is policy-aware, regression-EM reads the shown
// rows only, and gam refuses the unshown candidates.
TEST_F(ClicksCliTest, AllCandidatesWithPositionMarginals) {
  std::istringstream in(text_);
  std::string line, previous_qid, all, positions, marginals;
  int position = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string qid = line.substr(0, line.find(' ', line.find("qid:")));
    position = qid == previous_qid ? position + 1 : 1;
    previous_qid = qid;
    const bool shown = position <= 4;
    // Clicks: relevant and shown.
    all += (shown && line[0] != '0' ? "1" : "0") + line.substr(1) + "\n";
    positions += std::to_string(shown ? position : 0) + "\n";
    marginals += shown ? "0.2 0.2 0.2 0.2\n" : "0.01 0.01 0.02 0.02\n";
  }
  const std::string data = dir_.File("clicks.all");
  WriteFile(data, all);
  WriteFile(data + ".position", positions);
  WriteFile(data + ".marginals", marginals);
  const CommandResult ips =
      Train(data, dir_.File("all_ips.pb"),
            {"--position_debias=ips", "--position_propensities=1,0.5,0.33,0.25",
             "--max_ips_weight=100"});
  ASSERT_EQ(ips.exit_code, 0) << ips.err;
  EXPECT_THAT(ips.out, HasSubstr("position marginals of"));
  EXPECT_THAT(ips.out, HasSubstr("ips: policy-aware propensities"));
  // --marginals_file names them elsewhere: the same model.
  const std::string moved = dir_.File("moved.all");
  WriteFile(moved, all);
  WriteFile(moved + ".position", positions);
  WriteFile(dir_.File("policy.marginals"), marginals);
  const CommandResult named = Train(
      moved, dir_.File("named_ips.pb"),
      {"--position_debias=ips", "--position_propensities=1,0.5,0.33,0.25",
       "--max_ips_weight=100", "--marginals_file=" + dir_.File("policy.marginals")});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_THAT(named.out, HasSubstr("ips: policy-aware propensities"));
  EXPECT_EQ(Scores(dir_.File("named_ips.pb")), Scores(dir_.File("all_ips.pb")));
  const CommandResult naive = Train(data, dir_.File("all_naive.pb"), {});
  ASSERT_EQ(naive.exit_code, 0) << naive.err;
  EXPECT_NE(Scores(dir_.File("all_ips.pb")), Scores(dir_.File("all_naive.pb")));
  const CommandResult estimated =
      Train(data, dir_.File("all_est.pb"), {"--position_debias=ips"});
  ASSERT_EQ(estimated.exit_code, 0) << estimated.err;
  EXPECT_THAT(estimated.out, HasSubstr("estimated by regression-EM: 1,"));
  const CommandResult gam =
      Train(data, dir_.File("x.pb"), {"--position_debias=gam"});
  EXPECT_NE(gam.exit_code, 0);
  EXPECT_THAT(gam.err, HasSubstr("needs every training document shown"));
}

}  // namespace
}  // namespace plrank
