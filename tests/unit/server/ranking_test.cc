#include "server/ranking.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lifecycle/servable_version.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TestModelScore;
using ::testing::HasSubstr;

class RankingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path =
        plrank::testing::WriteTestModel(dir_.path(), "web", 3);
    auto loaded = LoadServableVersion("web", 3, path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    version_ = *loaded;
  }

  static void AddDense(v1::RankRequest* request, const std::string& id,
                       std::vector<float> values) {
    v1::Document* doc = request->add_documents();
    doc->set_id(id);
    for (float v : values) doc->mutable_dense()->add_values(v);
  }

  absl::Status Rank(const v1::RankRequest& request, v1::RankResponse* response,
                    RequestLimits limits = {}) {
    return RankDocuments(*version_, request, limits,
                         [] { return absl::OkStatus(); }, response);
  }

  plrank::testing::TempDir dir_;
  std::shared_ptr<const ServableVersion> version_;
};

TEST_F(RankingTest, SortsByScoreAndBreaksTiesByRequestOrder) {
  v1::RankRequest request;
  request.set_query_id("q1");
  AddDense(&request, "low", {0.0f, 0.0f, 0, 0});
  AddDense(&request, "tie_a", {1.0f, 0.5f, 0, 0});
  AddDense(&request, "high", {1.0f, 2.0f, 0, 0});
  AddDense(&request, "tie_b", {1.0f, 0.5f, 9, 9});
  v1::Document* sparse = request.add_documents();
  sparse->set_id("sparse");
  sparse->mutable_sparse()->add_indices(0);
  sparse->mutable_sparse()->add_values(0.9f);
  sparse->mutable_sparse()->add_indices(1);
  sparse->mutable_sparse()->add_values(0.75f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  AddDense(&request, "missing", {nan, nan, nan, nan});

  v1::RankResponse response;
  ASSERT_TRUE(Rank(request, &response).ok());
  EXPECT_EQ(response.model_name(), "web");
  EXPECT_EQ(response.model_version(), 3);
  EXPECT_EQ(response.query_id(), "q1");
  ASSERT_EQ(response.documents_size(), 6);
  const std::vector<std::string> expected = {"high", "sparse", "tie_a",
                                             "tie_b", "low", "missing"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(response.documents(i).id(), expected[i]) << i;
    EXPECT_EQ(response.documents(i).rank(), static_cast<uint32_t>(i + 1));
  }
  EXPECT_DOUBLE_EQ(response.documents(0).score(), TestModelScore(3, 1, 2));
  EXPECT_EQ(response.documents(0).request_index(), 2u);
  EXPECT_DOUBLE_EQ(response.documents(1).score(),
                   TestModelScore(3, 0.9f, 0.75f));
  // NaN x0 goes left, NaN x1 counts 0.
  EXPECT_DOUBLE_EQ(response.documents(5).score(), TestModelScore(3, 0, 0));
}

TEST_F(RankingTest, TopKKeepsTheBest) {
  v1::RankRequest request;
  for (int i = 0; i < 50; ++i) {
    AddDense(&request, std::to_string(i), {1.0f, static_cast<float>(i), 0, 0});
  }
  request.set_top_k(3);
  v1::RankResponse response;
  ASSERT_TRUE(Rank(request, &response).ok());
  ASSERT_EQ(response.documents_size(), 3);
  EXPECT_EQ(response.documents(0).id(), "49");
  EXPECT_EQ(response.documents(2).id(), "47");
  request.set_top_k(500);
  response.Clear();
  ASSERT_TRUE(Rank(request, &response).ok());
  EXPECT_EQ(response.documents_size(), 50);
}

TEST_F(RankingTest, RejectsBadRequestsWithTheRightCode) {
  v1::RankResponse response;
  v1::RankRequest empty;
  EXPECT_EQ(Rank(empty, &response).code(), absl::StatusCode::kInvalidArgument);

  v1::RankRequest too_many;
  for (int i = 0; i < 5; ++i) AddDense(&too_many, "d", {0, 0, 0, 0});
  RequestLimits limits;
  limits.max_documents_per_request = 4;
  EXPECT_EQ(Rank(too_many, &response, limits).code(),
            absl::StatusCode::kResourceExhausted);

  auto expect_invalid = [&](v1::RankRequest request, const std::string& what) {
    absl::Status status = Rank(request, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_THAT(status.message(), HasSubstr(what));
  };
  v1::RankRequest wrong_count;
  AddDense(&wrong_count, "ok", {0, 0, 0, 0});
  AddDense(&wrong_count, "short", {0, 0, 0});
  expect_invalid(wrong_count, "document 1 (id 'short'): 3 dense features");

  v1::RankRequest infinite;
  AddDense(&infinite, "inf", {0, std::numeric_limits<float>::infinity(), 0, 0});
  expect_invalid(infinite, "infinite");

  v1::RankRequest no_features;
  no_features.add_documents()->set_id("bare");
  expect_invalid(no_features, "no features");

  v1::RankRequest unordered;
  auto* sparse = unordered.add_documents()->mutable_sparse();
  sparse->add_indices(2);
  sparse->add_values(1);
  sparse->add_indices(1);
  sparse->add_values(1);
  expect_invalid(unordered, "strictly increasing");

  v1::RankRequest out_of_range;
  sparse = out_of_range.add_documents()->mutable_sparse();
  sparse->add_indices(4);
  sparse->add_values(1);
  expect_invalid(out_of_range, "out of range");

  v1::RankRequest mismatched;
  sparse = mismatched.add_documents()->mutable_sparse();
  sparse->add_indices(0);
  expect_invalid(mismatched, "1 sparse indices but 0 values");
}

TEST_F(RankingTest, InterruptStopsScoring) {
  v1::RankRequest request;
  AddDense(&request, "d", {0, 0, 0, 0});
  v1::RankResponse response;
  absl::Status status = RankDocuments(
      *version_, request, {},
      [] { return absl::DeadlineExceededError("late"); }, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace plrank::server
