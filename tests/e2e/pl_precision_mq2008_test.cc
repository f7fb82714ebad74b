// PLRank's derivatives stay precise where boosting really takes the scores:
// sampled top-10 PLRank at learning rate 0.3 x 1000 trees on MQ2008 spreads a
// query's scores by tens of units, where the earlier total-minus-part sums
// got more than 10 % of the hessians wrong.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/data/letor_reader.h"
#include "core/metrics/score_file.h"
#include "core/objectives/plackett_luce.h"
#include "gtest/gtest.h"
#include "tests/testing/pl_reference.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;

TEST(PlPrecisionMq2008, DerivativesOfAHardTrainedModelMatchTheReference) {
  PLRANK_REQUIRE_SHARED_DATA("MQ2008/S1.txt");
  const std::string data_path = ::plrank::testing::SharedDataPath("MQ2008/S1.txt");
  TempDir dir;
  const std::string model = dir.File("model.pb");
  const std::string scores_path = dir.File("scores.txt");
  const auto train = RunCommand(
      {BinPath("plrank-train"), "--train=" + data_path, "--model_out=" + model,
       // The previous default: sampled top-10 stopping at the lowest label,
       // raw Newton steps; it pushes irrelevant documents far down.
       "--pl_ties=permutation", "--pl_topk=10", "--pl_newton_damping=1e-6",
       "--pl_max_leaf_step=100", "--split_gain=ls", "--learning_rate=0.3",
       "--trees=1000",
       "--leaves=31",
       "--min_data_in_leaf=5", "--quiet"});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const auto eval = RunCommand({BinPath("plrank-eval"), "--model=" + model,
                                "--data=" + data_path,
                                "--scores_out=" + scores_path});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;

  absl::StatusOr<Dataset> data = ReadLetorFile(data_path, ReadOptions{});
  ASSERT_TRUE(data.ok()) << data.status();
  absl::StatusOr<std::vector<double>> scores = ReadScoreFile(scores_path);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), data->num_documents());

  // The regime that broke the old sums: scores tens of units apart.
  double widest = 0.0;
  for (size_t q = 0; q < data->num_queries(); ++q) {
    const auto [lo, hi] = std::minmax_element(
        scores->begin() + data->query_begin(q), scores->begin() + data->query_end(q));
    widest = std::max(widest, *hi - *lo);
  }
  EXPECT_GT(widest, 30.0);

  PlackettLuceOptions options;  // K = 10, one sampled tie-break
  options.stop_at_lowest_label = true;
  PlackettLuceObjective objective(options);
  ASSERT_TRUE(objective.Init(*data, 1).ok());
  std::vector<double> first(scores->size()), second(scores->size());
  objective.ComputeDerivatives(*scores, {}, absl::MakeSpan(first),
                               absl::MakeSpan(second));
  const ::plrank::testing::Reference ref =
      ::plrank::testing::BruteDerivatives(objective.contexts(), *scores);
  int wrong_first = 0, wrong_second = 0, tiny_hessians = 0;
  for (size_t d = 0; d < first.size(); ++d) {
    const long double tolerance = 1e-9L * std::fabs(ref.first[d]) +
                                  1e-14L * ref.scale[d] + 1e-300L;
    if (std::fabs(first[d] - ref.first[d]) > tolerance) ++wrong_first;
    if (std::fabs(-second[d] - ref.second[d]) > 1e-9L * ref.second[d] + 1e-300L) {
      ++wrong_second;
    }
    if (ref.second[d] > 0 && ref.second[d] < 1e-6L) ++tiny_hessians;
  }
  EXPECT_EQ(wrong_first, 0);
  EXPECT_EQ(wrong_second, 0);
  // Many documents sit where p(1 - p) is tiny: the cases that used to fail.
  EXPECT_GT(tiny_hessians, static_cast<int>(first.size() / 20));
}

}  // namespace
}  // namespace plrank
