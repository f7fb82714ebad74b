// The per-query base: what every loss gets from it without writing it.
// Out-of-bag queries get zero gradients and hessians (for every output),
// in-bag queries get exactly what the loss's QueryDerivatives computes,
// the loss is the sum of the per-query losses in query order, and nothing
// depends on the thread count.

#include "core/objectives/query_objective.h"

#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/objectives/registry.h"
#include "gmock/gmock.h"
#include "tests/testing/pl_test_util.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::plrank::testing::MakeDataset;

// A loss whose derivatives name their query and document, so that the test
// sees where the base put them: g = 1 + q + i / 100 per output k (times
// k + 1), h = 2 g; loss of query q = q + 1.
class TaggingObjective : public QueryObjective {
 public:
  explicit TaggingObjective(int32_t outputs) : outputs_(outputs) {}
  std::string name() const override { return "tagging"; }
  int32_t num_outputs() const override { return outputs_; }
  void QueryDerivatives(size_t q, const double* /*scores*/, double* gradients,
                        double* hessians,
                        QueryScratch& /*scratch*/) const override {
    const uint32_t n = queries().size(q);
    for (int32_t k = 0; k < outputs_; ++k) {
      for (uint32_t i = 0; i < n; ++i) {
        gradients[k * n + i] = (k + 1) * (1.0 + q + i / 100.0);
        hessians[k * n + i] = 2.0 * gradients[k * n + i];
      }
    }
  }
  double QueryLoss(size_t q, const double* /*scores*/,
                   QueryScratch& /*scratch*/) const override {
    return q + 1.0;
  }
  int32_t init_calls() const { return init_calls_; }

 protected:
  absl::Status InitQueries(const Dataset& /*train*/,
                           uint64_t /*seed*/) override {
    ++init_calls_;
    return absl::OkStatus();
  }

 private:
  int32_t outputs_;
  int32_t init_calls_ = 0;
};

TEST(QueryObjectiveTest, OutOfBagQueriesGetZerosForEveryOutput) {
  const Dataset data = MakeDataset({{0, 1, 2}, {1, 0}, {2, 2, 0, 1}});
  for (int32_t outputs : {1, 3}) {
    TaggingObjective objective(outputs);
    ASSERT_TRUE(objective.Init(data, 1).ok());
    EXPECT_EQ(objective.init_calls(), 1);
    const size_t n = data.num_documents();
    const std::vector<double> scores(outputs * n, 0.5);
    // Stale values must be overwritten, also with zeros.
    std::vector<float> gradients(outputs * n, 7.0f),
        hessians(outputs * n, 7.0f);
    const std::vector<uint8_t> in_bag = {1, 0, 1};
    objective.ComputeGradients(scores, in_bag, absl::MakeSpan(gradients),
                               absl::MakeSpan(hessians));
    for (int32_t k = 0; k < outputs; ++k) {
      for (size_t q = 0; q < data.num_queries(); ++q) {
        for (uint32_t d = data.query_offsets[q]; d < data.query_offsets[q + 1];
             ++d) {
          const uint32_t i = d - data.query_offsets[q];
          const float expected =
              in_bag[q] ? static_cast<float>((k + 1) * (1.0 + q + i / 100.0))
                        : 0.0f;
          EXPECT_EQ(gradients[k * n + d], expected)
              << "output " << k << " query " << q << " document " << i;
          EXPECT_EQ(hessians[k * n + d], 2.0f * expected);
        }
      }
    }
    // Empty flags: every query is in.
    objective.ComputeGradients(scores, {}, absl::MakeSpan(gradients),
                               absl::MakeSpan(hessians));
    EXPECT_EQ(gradients[data.query_offsets[1]], 2.0f);
    EXPECT_DOUBLE_EQ(objective.Loss(scores), 1.0 + 2.0 + 3.0);
  }
}

TEST(QueryObjectiveTest, RejectsLabelsAboveTheProjectLimit) {
  TaggingObjective objective(1);
  const absl::Status status =
      objective.Init(MakeDataset({{0, kMaxLabel + 1}}), 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr(std::to_string(kMaxLabel)));
  EXPECT_EQ(objective.init_calls(), 0);
  EXPECT_TRUE(objective.Init(MakeDataset({{0, kMaxLabel}}), 1).ok());
}

// Every registered per-query loss, through the base: out-of-bag queries are
// zero whatever the scores, in-bag ones equal a full-bag run, and one thread
// gives the same bits as four.
TEST(QueryObjectiveTest, EveryRegisteredLossZeroesOutOfBagQueries) {
  const Dataset data = MakeDataset(
      {{0, 1, 2, 1}, {2, 0, 1}, {1, 1, 0, 2, 0}, {0, 2}, {1, 0, 0}});
  const std::vector<uint8_t> in_bag = {1, 0, 1, 0, 1};
  for (const std::string& name : TreeObjectives()) {
    ObjectiveOptions options;
    options.name = name;
    absl::StatusOr<std::unique_ptr<Objective>> made = MakeObjective(options);
    ASSERT_TRUE(made.ok()) << name;
    auto* objective = dynamic_cast<QueryObjective*>(made->get());
    ASSERT_NE(objective, nullptr) << name << " is not a QueryObjective";
    ASSERT_TRUE(objective->Init(data, 3).ok()) << name;
    const size_t size = objective->num_outputs() * data.num_documents();
    std::vector<double> scores(size);
    for (size_t i = 0; i < size; ++i) scores[i] = 0.3 * ((i * 7) % 5) - 0.4;
    std::vector<double> bag_g(size, 9.0), bag_h(size, 9.0);
    std::vector<double> all_g(size), all_h(size);
    objective->ComputeDerivativesDouble(scores, in_bag, absl::MakeSpan(bag_g),
                                        absl::MakeSpan(bag_h));
    objective->ComputeDerivativesDouble(scores, {}, absl::MakeSpan(all_g),
                                        absl::MakeSpan(all_h));
    const size_t n = data.num_documents();
    for (size_t at = 0; at < size; ++at) {
      const size_t d = at % n;
      size_t q = 0;
      while (data.query_offsets[q + 1] <= d) ++q;
      if (in_bag[q]) {
        EXPECT_EQ(bag_g[at], all_g[at]) << name << " document " << d;
        EXPECT_EQ(bag_h[at], all_h[at]) << name << " document " << d;
      } else {
        EXPECT_EQ(bag_g[at], 0.0) << name << " document " << d;
        EXPECT_EQ(bag_h[at], 0.0) << name << " document " << d;
      }
    }
    // Double precision, so that XE-NDCG keeps its gammas (ComputeGradients
    // would draw the next iteration's).
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    std::vector<double> one_g(size), one_h(size);
    objective->ComputeDerivativesDouble(scores, in_bag, absl::MakeSpan(one_g),
                                        absl::MakeSpan(one_h));
    const double one_loss = objective->Loss(scores);
    omp_set_num_threads(4);
    std::vector<double> four_g(size), four_h(size);
    objective->ComputeDerivativesDouble(scores, in_bag, absl::MakeSpan(four_g),
                                        absl::MakeSpan(four_h));
    const double four_loss = objective->Loss(scores);
    omp_set_num_threads(threads);
    EXPECT_EQ(one_g, four_g) << name;
    EXPECT_EQ(one_h, four_h) << name;
    EXPECT_EQ(one_loss, four_loss) << name;
  }
}

}  // namespace
}  // namespace plrank
