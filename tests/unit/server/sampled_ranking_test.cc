// Rank with a sampling spec (server/sampled_ranking.h through RankDocuments)
// on the test model, whose score is 300 - 1 + x1 for x0 = 0: documents with
// x1 = 1 + ln w have Plackett-Luce weights w at temperature 1.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lifecycle/servable_version.h"
#include "server/ranking.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::testing::HasSubstr;

class SampledRankingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path =
        plrank::testing::WriteTestModel(dir_.path(), "web", 3);
    auto loaded = LoadServableVersion("web", 3, path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    version_ = *loaded;
  }

  // Documents of weights 1, 2, 3.
  static v1::RankRequest WeightedRequest() {
    v1::RankRequest request;
    request.set_query_id("q");
    for (int w = 1; w <= 3; ++w) {
      v1::Document* doc = request.add_documents();
      doc->set_id(absl::StrCat("w", w));
      for (float v : {0.0f, 1.0f + static_cast<float>(std::log(w)), 0.0f,
                      0.0f}) {
        doc->mutable_dense()->add_values(v);
      }
    }
    return request;
  }

  absl::Status Rank(const v1::RankRequest& request, v1::RankResponse* response,
                    std::vector<double>* scores = nullptr) {
    return RankDocuments(*version_, request, RequestLimits(),
                         [] { return absl::OkStatus(); }, response, scores);
  }

  plrank::testing::TempDir dir_;
  std::shared_ptr<const ServableVersion> version_;
};

TEST_F(SampledRankingTest, NoSpecIsTodaysRanking) {
  v1::RankRequest request = WeightedRequest();
  v1::RankResponse plain;
  ASSERT_TRUE(Rank(request, &plain).ok());
  EXPECT_FALSE(plain.sampled());
  EXPECT_EQ(plain.documents(0).id(), "w3");
  EXPECT_EQ(plain.documents(0).pick_probability(), 0.0);
  EXPECT_EQ(plain.log_probability(), 0.0);
  EXPECT_TRUE(plain.request_id().empty());
  // Temperature 0: the same order, every pick certain.
  request.mutable_sampling()->set_temperature(0);
  request.set_request_id("r1");
  v1::RankResponse cold;
  ASSERT_TRUE(Rank(request, &cold).ok());
  EXPECT_FALSE(cold.sampled());
  EXPECT_EQ(cold.request_id(), "r1");
  ASSERT_EQ(cold.documents_size(), plain.documents_size());
  for (int i = 0; i < cold.documents_size(); ++i) {
    EXPECT_EQ(cold.documents(i).request_index(),
              plain.documents(i).request_index());
    EXPECT_EQ(cold.documents(i).pick_probability(), 1.0);
  }
}

TEST_F(SampledRankingTest, DrawReportsHandComputedProbabilities) {
  v1::RankRequest request = WeightedRequest();
  request.mutable_sampling()->set_temperature(1.0);
  request.mutable_sampling()->set_seed(17);
  v1::RankResponse response;
  std::vector<double> scores;
  ASSERT_TRUE(Rank(request, &response, &scores).ok());
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_TRUE(response.sampled());
  EXPECT_EQ(response.sampling_seed(), 17u);
  ASSERT_EQ(response.documents_size(), 3);
  // The pick probability of the document at position j: its weight over
  // the weights not placed above it.
  double remaining = 6.0;
  double log_probability = 0.0;
  for (int j = 0; j < 3; ++j) {
    const v1::ScoredDocument& d = response.documents(j);
    const double w = d.request_index() + 1.0;
    EXPECT_NEAR(d.pick_probability(), w / remaining, 1e-6) << "position " << j;
    EXPECT_EQ(d.rank(), static_cast<uint32_t>(j + 1));
    EXPECT_EQ(d.score(), scores[d.request_index()]);
    log_probability += std::log(w / remaining);
    remaining -= w;
  }
  EXPECT_NEAR(response.log_probability(), log_probability, 1e-6);
  // The same seed draws the same ranking.
  v1::RankResponse again;
  ASSERT_TRUE(Rank(request, &again).ok());
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(again.documents(j).request_index(),
              response.documents(j).request_index());
  }
}

TEST_F(SampledRankingTest, SeedZeroPicksAReturnedSeed) {
  v1::RankRequest request = WeightedRequest();
  request.mutable_sampling()->set_temperature(1.0);
  v1::RankResponse response;
  ASSERT_TRUE(Rank(request, &response).ok());
  ASSERT_NE(response.sampling_seed(), 0u);
  request.mutable_sampling()->set_seed(response.sampling_seed());
  v1::RankResponse replay;
  ASSERT_TRUE(Rank(request, &replay).ok());
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(replay.documents(j).request_index(),
              response.documents(j).request_index());
  }
}

TEST_F(SampledRankingTest, TopKAndMarginals) {
  v1::RankRequest request = WeightedRequest();
  request.set_top_k(3);
  request.mutable_sampling()->set_temperature(1.0);
  request.mutable_sampling()->set_seed(5);
  request.mutable_sampling()->set_top_k(2);
  request.mutable_sampling()->set_marginal_samples(2000);
  v1::RankResponse response;
  ASSERT_TRUE(Rank(request, &response).ok());
  ASSERT_EQ(response.documents_size(), 2);
  // Exact values (enumeration): P(first) = w / 6; P(second) = 0.25, 0.4,
  // 0.35 for weights 1, 2, 3.
  const double second[3] = {0.25, 0.4, 0.35};
  for (const v1::ScoredDocument& d : response.documents()) {
    ASSERT_EQ(d.position_probabilities_size(), 2);
    EXPECT_NEAR(d.position_probabilities(0), (d.request_index() + 1) / 6.0,
                1e-6);
    EXPECT_NEAR(d.position_probabilities(1), second[d.request_index()], 0.02);
  }
}

TEST_F(SampledRankingTest, RefusesBadSpecsNamingTheField) {
  v1::RankRequest request = WeightedRequest();
  v1::RankResponse response;
  request.mutable_sampling()->set_temperature(-1);
  absl::Status status = Rank(request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("sampling.temperature"));
  request.mutable_sampling()->set_temperature(NAN);
  EXPECT_EQ(Rank(request, &response).code(),
            absl::StatusCode::kInvalidArgument);
  request.mutable_sampling()->set_temperature(1);
  request.mutable_sampling()->set_marginal_samples(kMaxMarginalSamples + 1);
  status = Rank(request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("sampling.marginal_samples"));
  request.mutable_sampling()->set_marginal_samples(0);
  request.set_request_id(std::string(kMaxRequestIdBytes + 1, 'x'));
  status = Rank(request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("request_id"));
}

}  // namespace
}  // namespace plrank::server
