#include "server/evaluation_accumulator.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lifecycle/servable_version.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TestModelScore;

class EvaluationAccumulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = LoadServableVersion(
        "web", 1, plrank::testing::WriteTestModel(dir_.path(), "web", 1));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    version_ = *loaded;
  }

  // Documents whose x1 values are `x1`; their scores are ordered like x1.
  static void AddQuery(v1::EvaluateRequest* request, const std::string& id,
                       const std::vector<float>& x1,
                       const std::vector<int32_t>& labels) {
    v1::LabelledQuery* query = request->add_queries();
    query->set_query_id(id);
    for (float v : x1) {
      auto* dense = query->add_documents()->mutable_dense();
      for (float f : {0.0f, v, 0.0f, 0.0f}) dense->add_values(f);
    }
    for (int32_t l : labels) query->add_labels(l);
  }

  absl::StatusOr<v1::EvaluateResponse> Run(const v1::EvaluateRequest& request,
                                           RequestLimits limits = {}) {
    auto accumulator = EvaluationAccumulator::Create(request, limits);
    if (!accumulator.ok()) return accumulator.status();
    absl::Status status = accumulator->AddQueries(
        *version_, request, [] { return absl::OkStatus(); });
    if (!status.ok()) return status;
    v1::EvaluateResponse response;
    status = accumulator->Finish(*version_, &response);
    if (!status.ok()) return status;
    return response;
  }

  static double Metric(const v1::EvaluateResponse& response,
                       const std::string& name) {
    for (const auto& m : response.metrics()) {
      if (m.name() == name) return m.value();
    }
    return -1;
  }

  plrank::testing::TempDir dir_;
  std::shared_ptr<const ServableVersion> version_;
};

TEST_F(EvaluationAccumulatorTest, MatchesCoreMetrics) {
  v1::EvaluateRequest request;
  AddQuery(&request, "perfect", {3, 2, 1}, {2, 1, 0});
  AddQuery(&request, "reversed", {1, 2, 3}, {2, 1, 0});
  AddQuery(&request, "empty", {1, 2}, {0, 0});
  request.add_ndcg_at(2);
  request.set_per_query(true);
  auto response = Run(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->query_count(), 3u);
  EXPECT_EQ(response->document_count(), 8u);
  ASSERT_EQ(response->metrics_size(), 3);  // ndcg@2, err, map
  // ndcg@2 of the reversed query, computed with the core function.
  const std::vector<double> reversed_scores = {TestModelScore(1, 0, 1),
                                               TestModelScore(1, 0, 2),
                                               TestModelScore(1, 0, 3)};
  const std::vector<int32_t> labels = {2, 1, 0};
  const double reversed =
      NdcgAtK(reversed_scores, labels, 2, EmptyQueryNdcg::kOne);
  EXPECT_LT(reversed, 1.0);
  EXPECT_NEAR(Metric(*response, "ndcg@2"), (1.0 + reversed + 1.0) / 3, 1e-12);
  ASSERT_EQ(response->per_query_size(), 3);
  EXPECT_EQ(response->per_query(1).query_id(), "reversed");
  EXPECT_NEAR(response->per_query(1).metrics(0).value(), reversed, 1e-12);

  request.set_skip_empty_queries(true);
  response = Run(request);
  ASSERT_TRUE(response.ok());
  EXPECT_NEAR(Metric(*response, "ndcg@2"), (1.0 + reversed) / 2, 1e-12);
  // Every metric leaves the empty query out (ERR too, under kSkip).
  EXPECT_EQ(response->per_query(2).metrics_size(), 0);
}

// empty_query_ndcg: ZERO counts an empty query 0, SKIP leaves it out, and
// the response says which convention was applied.
TEST_F(EvaluationAccumulatorTest, EmptyQueryConventions) {
  v1::EvaluateRequest request;
  request.add_ndcg_at(2);
  AddQuery(&request, "good", {3, 2, 1}, {2, 1, 0});
  AddQuery(&request, "empty", {1, 2}, {0, 0});
  auto response = Run(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->empty_query_ndcg(), v1::EMPTY_QUERY_NDCG_ONE);
  EXPECT_NEAR(Metric(*response, "ndcg@2"), 1.0, 1e-12);

  request.set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_ZERO);
  response = Run(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->empty_query_ndcg(), v1::EMPTY_QUERY_NDCG_ZERO);
  EXPECT_NEAR(Metric(*response, "ndcg@2"), 0.5, 1e-12);
  EXPECT_NEAR(Metric(*response, "map"), 0.5, 1e-12);

  request.set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_SKIP);
  response = Run(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->empty_query_ndcg(), v1::EMPTY_QUERY_NDCG_SKIP);
  EXPECT_EQ(response->query_count(), 2u);
  EXPECT_NEAR(Metric(*response, "ndcg@2"), 1.0, 1e-12);

  // skip_empty_queries contradicting it, or an unknown value: refused.
  request.set_skip_empty_queries(true);
  request.set_empty_query_ndcg(v1::EMPTY_QUERY_NDCG_ZERO);
  EXPECT_EQ(Run(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_skip_empty_queries(false);
  request.set_empty_query_ndcg(static_cast<v1::EmptyQueryNdcg>(9));
  EXPECT_EQ(Run(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(EvaluationAccumulatorTest, DefaultCutoffs) {
  v1::EvaluateRequest request;
  AddQuery(&request, "q", {1, 2}, {1, 0});
  auto response = Run(request);
  ASSERT_TRUE(response.ok());
  std::vector<std::string> names;
  for (const auto& m : response->metrics()) names.push_back(m.name());
  EXPECT_THAT(names, ::testing::ElementsAre("ndcg@1", "ndcg@3", "ndcg@5",
                                            "ndcg@10", "err", "map"));
}

TEST_F(EvaluationAccumulatorTest, RejectsBadQueries) {
  v1::EvaluateRequest no_queries;
  EXPECT_EQ(Run(no_queries).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::EvaluateRequest mismatch;
  AddQuery(&mismatch, "q", {1, 2}, {1});
  EXPECT_EQ(Run(mismatch).status().code(), absl::StatusCode::kInvalidArgument);
  v1::EvaluateRequest negative;
  AddQuery(&negative, "q", {1, 2}, {1, -1});
  EXPECT_EQ(Run(negative).status().code(), absl::StatusCode::kInvalidArgument);
  // Labels above the reader's 31 (found by fuzz_evaluate_request: label
  // 2147483647 made every NDCG NaN).
  for (int32_t label : {32, 1024, 2147483647}) {
    v1::EvaluateRequest huge;
    AddQuery(&huge, "q", {1, 2}, {1, label});
    const absl::Status status = Run(huge).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << label;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("outside 0..31"));
  }
  v1::EvaluateRequest top_label;
  AddQuery(&top_label, "q", {1, 2}, {31, 0});
  EXPECT_TRUE(Run(top_label).ok());
  v1::EvaluateRequest empty_query;
  AddQuery(&empty_query, "q", {}, {});
  EXPECT_EQ(Run(empty_query).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::EvaluateRequest bad_k;
  AddQuery(&bad_k, "q", {1}, {1});
  bad_k.add_ndcg_at(0);
  EXPECT_EQ(Run(bad_k).status().code(), absl::StatusCode::kInvalidArgument);

  v1::EvaluateRequest big;
  AddQuery(&big, "q1", {1, 2, 3}, {1, 0, 0});
  AddQuery(&big, "q2", {1, 2, 3}, {1, 0, 0});
  RequestLimits limits;
  limits.max_queries_per_request = 1;
  EXPECT_EQ(Run(big, limits).status().code(),
            absl::StatusCode::kResourceExhausted);
  limits = {};
  limits.max_documents_per_request = 2;
  EXPECT_EQ(Run(big, limits).status().code(),
            absl::StatusCode::kResourceExhausted);
  limits = {};
  limits.max_evaluate_documents = 5;
  EXPECT_EQ(Run(big, limits).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace plrank::server
