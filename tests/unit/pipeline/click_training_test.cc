// Position debiasing: the jointly learned position bias (gam), the IPS
// weights and the regression-EM propensity estimate.
#include "core/pipeline/click_training.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/boosting/booster.h"
#include "core/data/random.h"
#include "core/objectives/lambdamart.h"
#include "core/objectives/plackett_luce/plackett_luce.h"
#include "core/pipeline/propensity_estimation.h"
#include "core/pipeline/train_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

double Uniform(SplitMix64& rng) {
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
}

// A click log under the position-based model: `queries` sessions of `shown`
// documents, feature 0 = the document's relevance probability plus noise
// (feature 1 pure noise), examination (1/k)^eta, clicks = examined and
// relevant. Positions are a random permutation per session, so position
// and relevance are independent.
Dataset ClickLog(uint64_t seed, int queries, int shown, double eta) {
  SplitMix64 rng(seed);
  Dataset data;
  data.num_features = 2;
  std::vector<float> f0, f1;
  data.query_offsets.push_back(0);
  for (int q = 0; q < queries; ++q) {
    std::vector<int32_t> order(shown);
    for (int i = 0; i < shown; ++i) order[i] = i + 1;
    for (int i = shown - 1; i > 0; --i) {
      std::swap(order[i], order[rng.BelowUnbiased(i + 1)]);
    }
    for (int i = 0; i < shown; ++i) {
      const double relevance = Uniform(rng);
      const double examination = std::pow(1.0 / order[i], eta);
      const bool click =
          Uniform(rng) < examination && Uniform(rng) < relevance;
      data.labels.push_back(click ? 1 : 0);
      data.positions.push_back(order[i]);
      f0.push_back(static_cast<float>(relevance));
      f1.push_back(static_cast<float>(Uniform(rng)));
    }
    data.query_offsets.push_back(static_cast<uint32_t>(data.labels.size()));
    data.query_ids.push_back(std::to_string(q));
  }
  data.features = f0;
  data.features.insert(data.features.end(), f1.begin(), f1.end());
  return data;
}

TEST(PropensityEstimationTest, RegressionEmRecoversTheExaminationCurve) {
  const Dataset log = ClickLog(7, 3000, 6, 1.0);
  absl::StatusOr<PropensityCurve> curve = EstimatePropensities(log);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_EQ(curve->theta.size(), 6u);
  EXPECT_DOUBLE_EQ(curve->theta[0], 1.0);
  for (int k = 1; k < 6; ++k) {
    EXPECT_NEAR(curve->theta[k], 1.0 / (k + 1), 0.06) << "position " << k + 1;
  }
  EXPECT_EQ(curve->shown[0], 3000);
}

TEST(PropensityEstimationTest, NeedsPositions) {
  Dataset log = ClickLog(8, 5, 3, 1.0);
  log.positions.clear();
  EXPECT_THAT(std::string(EstimatePropensities(log).status().message()),
              HasSubstr("display position"));
}

TEST(ClickWeightsTest, IpsWeighsClickedDocumentsByInversePropensity) {
  Dataset log = ClickLog(9, 4, 5, 1.0);
  log.labels = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  log.positions = {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1};
  log.weights.assign(20, 2.0f);
  ClickOptions options;
  options.position_debias = PositionDebias::kIps;
  options.position_propensities = {1.0, 0.5, 0.25};  // 4, 5 take 0.25
  options.max_ips_weight = 3.0;
  ClickWeightsInfo info;
  absl::StatusOr<TrainingWeights> weights = TrainingWeightsFor(log, options, &info);
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_DOUBLE_EQ(weights->document[0], 2.0);       // click at 1
  EXPECT_DOUBLE_EQ(weights->document[1], 2.0);       // no click
  EXPECT_DOUBLE_EQ(weights->document[2], 2.0 * 3);   // 1/0.25 clipped at 3
  EXPECT_DOUBLE_EQ(weights->document[11], 2.0 * 2);  // click at 2
  EXPECT_EQ(info.clipped, 5);  // clicks at positions 3, 5, 3, 4, 5
  // Per-document propensities take precedence.
  log.propensities.assign(20, 0.5f);
  ClickWeightsInfo info2;
  weights = TrainingWeightsFor(log, options, &info2);
  ASSERT_TRUE(weights.ok());
  EXPECT_DOUBLE_EQ(weights->document[2], 4.0);
  EXPECT_TRUE(info2.propensity_curve.empty());
}

// Policy-aware IPS by hand: one logged ranking of 3 candidates, top 2
// shown, mu(d, j) the policy's position marginals, theta = (1, 0.5):
//   rho_1 = 0.6 + 0.3 * 0.5 = 0.75, rho_2 = 0.3 + 0.5 * 0.5 = 0.55,
//   rho_3 = 0.1 + 0.2 * 0.5 = 0.2 (1 / rho_3 = 5, clipped at 4).
// Clicked: d1 and d3. With independent ties the weighted loss is
//   w_1 log(1 + e^{s_2 - s_1}) + w_3 log(1 + e^{s_2 - s_3}),
// and its gradient matches finite differences.
TEST(ClickWeightsTest, PolicyAwareIpsFromPositionMarginalsByHand) {
  Dataset all;
  all.num_features = 1;
  all.labels = {1, 0, 1};
  all.query_offsets = {0, 3};
  all.query_ids = {"r1"};
  all.features = {0.1f, 0.2f, 0.3f};
  all.positions = {1, 0, 2};  // d2 was a candidate not shown
  all.marginal_positions = 2;
  all.marginals = {0.6f, 0.3f, 0.3f, 0.5f, 0.1f, 0.2f};
  all.weights = {1.0f, 1.0f, 2.0f};  // e.g. pooled click counts
  ClickOptions options;
  options.position_debias = PositionDebias::kIps;
  options.position_propensities = {1.0, 0.5};
  options.max_ips_weight = 4.0;
  ClickWeightsInfo info;
  absl::StatusOr<TrainingWeights> weights =
      TrainingWeightsFor(all, options, &info);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const double w1 = 1.0 / (0.6f + 0.3f * 0.5), w3 = 2.0 * 4.0;
  EXPECT_NEAR(weights->document[0], 1.0 / 0.75, 1e-6);
  EXPECT_DOUBLE_EQ(weights->document[0], w1);
  EXPECT_DOUBLE_EQ(weights->document[1], 1.0);  // unclicked: as it was
  EXPECT_DOUBLE_EQ(weights->document[2], w3);
  EXPECT_EQ(info.clipped, 1);

  PlackettLuceOptions pl;
  pl.ties = PlTies::kIndependent;
  pl.topk = 0;
  pl.stop_at_lowest_label = true;
  PlackettLuceObjective objective(pl);
  objective.SetTrainingWeights(*weights);
  ASSERT_TRUE(objective.Init(all, 1).ok());
  const std::vector<double> scores = {0.5, 0.0, -1.0};
  EXPECT_NEAR(objective.Loss(scores),
              w1 * std::log1p(std::exp(-0.5)) + w3 * std::log1p(std::exp(1.0)),
              1e-9);
  std::vector<float> g(3), h(3);
  objective.ComputeGradients(scores, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  for (size_t d = 0; d < 3; ++d) {
    std::vector<double> up = scores, down = scores;
    up[d] += 1e-5;
    down[d] -= 1e-5;
    EXPECT_NEAR(g[d], (objective.Loss(up) - objective.Loss(down)) / 2e-5,
                1e-4)
        << d;
  }

  // A clicked candidate the policy could not show has no propensity.
  all.marginals[4] = all.marginals[5] = 0.0f;
  ClickWeightsInfo again;
  EXPECT_THAT(std::string(
                  TrainingWeightsFor(all, options, &again).status().message()),
              HasSubstr("propensity is 0"));
  // gam needs every document shown.
  ClickOptions gam;
  gam.position_debias = PositionDebias::kGam;
  EXPECT_THAT(
      std::string(TrainingWeightsFor(all, gam, &again).status().message()),
      HasSubstr("needs every training document shown"));
}

// Candidates that were not shown (position 0) leave the estimate unchanged.
TEST(PropensityEstimationTest, UnshownCandidatesAreLeftOut) {
  Dataset log = ClickLog(31, 300, 5, 1.0);
  absl::StatusOr<PropensityCurve> shown = EstimatePropensities(log);
  ASSERT_TRUE(shown.ok()) << shown.status();
  Dataset with_unshown = log;
  with_unshown.positions.push_back(0);  // one more candidate, never shown
  with_unshown.labels.push_back(0);
  with_unshown.query_offsets.back() += 1;
  std::vector<float> features;
  const size_t n = log.num_documents();
  for (int32_t f = 0; f < log.num_features; ++f) {
    features.insert(features.end(), log.features.begin() + f * n,
                    log.features.begin() + (f + 1) * n);
    features.push_back(log.features[f * n]);  // a copy of document 0
  }
  with_unshown.features = features;
  absl::StatusOr<PropensityCurve> estimated = EstimatePropensities(with_unshown);
  ASSERT_TRUE(estimated.ok()) << estimated.status();
  EXPECT_EQ(estimated->shown, shown->shown);
  ASSERT_EQ(estimated->theta.size(), shown->theta.size());
  for (size_t k = 0; k < shown->theta.size(); ++k) {
    EXPECT_NEAR(estimated->theta[k], shown->theta[k], 0.02) << k;
  }
}

TEST(ClickWeightsTest, NothingToWeighIsEmptyAndMissingInputsAreErrors) {
  Dataset log = ClickLog(10, 3, 3, 1.0);
  ClickWeightsInfo info;
  absl::StatusOr<TrainingWeights> none = TrainingWeightsFor(log, {}, &info);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  log.positions.clear();
  ClickOptions ips;
  ips.position_debias = PositionDebias::kIps;
  EXPECT_THAT(std::string(TrainingWeightsFor(log, ips, &info).status().message()),
              HasSubstr("needs propensities"));
  ClickOptions gam;
  gam.position_debias = PositionDebias::kGam;
  EXPECT_THAT(std::string(TrainingWeightsFor(log, gam, &info).status().message()),
              HasSubstr("needs a display position"));
  EXPECT_FALSE(ParsePositionDebias("lightgbm").ok());
}

// The loss the booster's objective sees under gam is L(s + b[pos]): its
// derivative in b_p is the sum of the document gradients shown at p, what
// the Newton step uses.
TEST(PositionBiasTest, BiasDerivativeIsTheSumOfGradientsAtThePosition) {
  const Dataset log = ClickLog(11, 30, 5, 1.0);
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.ties = PlTies::kEfron;
  options.topk = 0;
  options.stop_at_lowest_label = true;
  PlackettLuceObjective objective(options);
  ASSERT_TRUE(objective.Init(log, 1).ok());
  std::vector<double> bias = {0.0, -0.3, -0.5, -0.6, -0.9};
  auto loss = [&](const std::vector<double>& b) {
    std::vector<double> s(log.num_documents());
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = 0.1 * log.value(i, 0) + b[log.positions[i] - 1];
    }
    return objective.Loss(s);
  };
  std::vector<double> s(log.num_documents());
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = 0.1 * log.value(i, 0) + bias[log.positions[i] - 1];
  }
  std::vector<double> g(s.size()), h(s.size());
  objective.ComputeDerivativesDouble(s, {}, absl::MakeSpan(g), absl::MakeSpan(h));
  for (int p = 0; p < 5; ++p) {
    double sum = 0.0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (log.positions[i] == p + 1) sum += g[i];
    }
    std::vector<double> up = bias, down = bias;
    up[p] += 1e-5;
    down[p] -= 1e-5;
    EXPECT_NEAR(sum, (loss(up) - loss(down)) / 2e-5, 1e-6) << p;
  }
}

// PLRank's default tie handling (efron, every context, stop at the lowest).
PlackettLuceOptions DefaultTies() {
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.ties = PlTies::kEfron;
  options.topk = 0;
  options.stop_at_lowest_label = true;
  return options;
}

BoosterConfig SmallBooster(int32_t trees) {
  BoosterConfig config;
  config.num_trees = trees;
  config.num_leaves = 4;
  config.min_data_in_leaf = 20;
  config.learning_rate = 0.2;
  return config;
}

// Clicks driven by position alone: gam puts the signal in the bias (b_1 =
// 0, lower positions below) and the trees learn little.
TEST(PositionBiasTest, GamLearnsADecreasingCurveForBothLosses) {
  Dataset log = ClickLog(12, 400, 5, 1.5);
  for (const char* name : {"plrank", "lambdamart"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Objective> objective;
    if (std::string(name) == "plrank") {
      objective = std::make_unique<PlackettLuceObjective>(DefaultTies());
    } else {
      objective = std::make_unique<LambdaMartObjective>(LambdaMartOptions{});
    }
    ASSERT_TRUE(objective->Init(log, 1).ok());
    const BoosterConfig config = SmallBooster(30);
    PositionBiasConfig bias;
    bias.positions = log.positions;
    BoosterInputs inputs;
    inputs.train = &log;
    inputs.objective = objective.get();
    inputs.position_bias = &bias;
    absl::StatusOr<BoosterResult> result = TrainBooster(config, inputs);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->position_bias.size(), 5u);
    EXPECT_EQ(result->position_bias[0], 0.0);
    for (int p = 1; p < 5; ++p) {
      EXPECT_LT(result->position_bias[p], result->position_bias[p - 1] + 0.05)
          << p;
    }
    EXPECT_LT(result->position_bias[4], -0.5);
  }
}

// A run resumed from its state after iteration 6 (as --resume does from a
// checkpoint) goes on with the bias the first run had learned: trees and
// curve are bit-identical to the uninterrupted run's. Resuming with a bias
// of another size is refused.
TEST(PositionBiasTest, ResumingGoesOnWithTheCheckpointedBias) {
  Dataset log = ClickLog(14, 200, 5, 1.5);
  const PlackettLuceOptions options = DefaultTies();
  const BoosterConfig config = SmallBooster(12);
  PositionBiasConfig bias;
  bias.positions = log.positions;
  auto train = [&](const BoosterResult* resume, BoosterResult* at6) {
    PlackettLuceObjective objective(options);
    EXPECT_TRUE(objective.Init(log, 1).ok());
    BoosterInputs inputs;
    inputs.train = &log;
    inputs.objective = &objective;
    inputs.position_bias = &bias;
    inputs.resume = resume;
    if (at6 != nullptr) {
      inputs.on_state = [at6](const BoosterResult& state) {
        if (state.history.size() == 6) *at6 = state;
      };
    }
    return TrainBooster(config, inputs);
  };
  BoosterResult at6;
  absl::StatusOr<BoosterResult> whole = train(nullptr, &at6);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(at6.history.size(), 6u);
  ASSERT_EQ(at6.position_bias.size(), 5u);
  EXPECT_NE(at6.position_bias, whole->position_bias);  // still learning
  absl::StatusOr<BoosterResult> resumed = train(&at6, nullptr);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->position_bias, whole->position_bias);
  ASSERT_EQ(resumed->trees.size(), whole->trees.size());
  for (size_t t = 0; t < whole->trees.size(); ++t) {
    EXPECT_EQ(resumed->trees[t].leaf_value, whole->trees[t].leaf_value) << t;
  }
  // Without the bias the resumed run would start again from b = 0.
  BoosterResult wrong = at6;
  wrong.position_bias.pop_back();
  absl::StatusOr<BoosterResult> refused = train(&wrong, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("position bias"));
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Side files are read at every load, binary dataset cache or not, and enter
// the data's digest (the artifact's train_data_hash and the checkpoint's
// key): a changed .weight file is never served stale.
TEST(SideFilesDigestTest, AChangedWeightFileChangesTheDigestThroughTheCache) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "side_digest";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path train = dir / "train.txt";
  WriteText(train,
            "1 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n"
            "2 qid:2 1:0.9 2:1\n0 qid:2 1:0.2 2:1\n");
  TrainJob job;
  job.train_path = train.string();
  job.dataset_cache = true;
  auto load = [&job]() {
    absl::StatusOr<TrainData> data =
        LoadTrainData(job, [](const std::string&) {});
    EXPECT_TRUE(data.ok()) << data.status();
    return data.ok() ? std::move(data->train) : Dataset{};
  };
  const std::string bare = DatasetDigest(load());
  WriteText(dir / "train.txt.weight", "1\n1\n1\n1\n");
  const Dataset ones = load();  // from the cache written above
  ASSERT_EQ(ones.weights.size(), 4u);
  EXPECT_NE(DatasetDigest(ones), bare);
  WriteText(dir / "train.txt.weight", "1\n2\n1\n1\n");
  const Dataset changed = load();
  ASSERT_EQ(changed.weights.size(), 4u);
  EXPECT_EQ(changed.weights[1], 2.0f);
  EXPECT_NE(DatasetDigest(changed), DatasetDigest(ones));
  // Each side file changes it, each differently.
  std::filesystem::remove(dir / "train.txt.weight");
  WriteText(dir / "train.txt.position", "1\n2\n1\n2\n");
  const std::string positions = DatasetDigest(load());
  std::filesystem::remove(dir / "train.txt.position");
  WriteText(dir / "train.txt.propensity", "1\n0.5\n1\n0.5\n");
  const std::string propensities = DatasetDigest(load());
  EXPECT_NE(positions, bare);
  EXPECT_NE(propensities, bare);
  EXPECT_NE(positions, propensities);
  std::filesystem::remove(dir / "train.txt.propensity");
  EXPECT_EQ(DatasetDigest(load()), bare);  // without side files: as before
}

TEST(PositionBiasTest, MultiOutputAndBadPositionsAreRefused) {
  Dataset log = ClickLog(13, 3, 3, 1.0);
  PlackettLuceObjective objective(PaperPlackettLuceOptions());
  ASSERT_TRUE(objective.Init(log, 1).ok());
  PositionBiasConfig bias;
  std::vector<int32_t> short_positions = {1, 2};
  bias.positions = short_positions;
  BoosterInputs inputs;
  inputs.train = &log;
  inputs.objective = &objective;
  inputs.position_bias = &bias;
  EXPECT_FALSE(TrainBooster(BoosterConfig{}, inputs).ok());
}

}  // namespace
}  // namespace plrank
