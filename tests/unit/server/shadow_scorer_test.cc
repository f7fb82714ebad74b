// ShadowScorer without its worker thread (start_worker = false): copies
// wait in the queue until RunQueued(), so the queue bound, the counting and
// the comparisons are tested deterministically.
#include "server/shadow_scoring.h"

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/ranking.h"
#include "tests/testing/eventually.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TempDir;
using ::plrank::testing::TestEnsemble;
using ::plrank::testing::TestEnsembleWithFeatures;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

std::shared_ptr<const ServableVersion> Load(const TempDir& dir,
                                            int64_t version,
                                            const Ensemble& model) {
  const std::string path =
      dir.File("model-" + std::to_string(version) + ".pb");
  EXPECT_TRUE(WriteModelFile(model, path).ok());
  auto loaded = LoadServableVersion("web", version, path);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? *loaded : nullptr;
}

// score = 100 * tag + (x0 > 0.5 ? 1 : -1) + weight * x1.
Ensemble Model(int64_t tag, double x1_weight) {
  Ensemble model = TestEnsemble(tag);
  model.linear_weights[1] = x1_weight;
  return model;
}

// Documents whose x1 grows with their index (x0 = 0).
v1::RankRequest Request(int documents, uint32_t top_k = 0) {
  v1::RankRequest request;
  request.mutable_model_spec()->set_name("web");
  request.set_top_k(top_k);
  for (int i = 0; i < documents; ++i) {
    v1::Document* document = request.add_documents();
    document->set_id(absl::StrCat("d", i));
    for (float value : {0.0f, static_cast<float>(i), 0.0f, 0.0f}) {
      document->mutable_dense()->add_values(value);
    }
  }
  return request;
}

class ShadowScorerTest : public ::testing::Test {
 protected:
  ShadowScorerTest() {
    serving_ = Load(dir_, 1, Model(1, 1.0));
    model_.name = "web";
    model_.has_shadow = true;
    model_.shadow_version = 2;
    model_.shadow_fraction = 1.0;
  }

  // Ranks `request` with the serving version and offers it.
  void Serve(ShadowScorer& scorer, const v1::RankRequest& request) {
    v1::RankResponse response;
    ASSERT_TRUE(RankDocuments(*serving_, request, RequestLimits(),
                              [] { return absl::OkStatus(); }, &response)
                    .ok());
    scorer.Offer(model_, serving_, request, response);
  }

  TempDir dir_;
  std::shared_ptr<const ServableVersion> serving_;
  ModelSnapshot model_;
};

TEST_F(ShadowScorerTest, FullQueueDropsAndCountsWithoutWaiting) {
  model_.shadow = Load(dir_, 2, Model(2, 1.0));
  ShadowScorer scorer({/*queue_capacity=*/2, /*start_worker=*/false}, nullptr);
  for (int i = 0; i < 5; ++i) Serve(scorer, Request(6));
  v1::ShadowStatus status = scorer.Status(model_);
  ASSERT_EQ(status.comparisons_size(), 1);
  EXPECT_EQ(status.comparisons(0).dropped(), 3u);
  EXPECT_EQ(status.comparisons(0).scored(), 0u);

  EXPECT_EQ(scorer.RunQueued(), 2u);
  status = scorer.Status(model_);
  const v1::ShadowComparison& pair = status.comparisons(0);
  EXPECT_EQ(status.shadow_version(), 2);
  EXPECT_EQ(status.error(), "");
  EXPECT_EQ(pair.serving_version(), 1);
  EXPECT_EQ(pair.shadow_version(), 2);
  EXPECT_EQ(pair.scored(), 2u);
  EXPECT_EQ(pair.dropped(), 3u);
  EXPECT_EQ(pair.failed(), 0u);
  // Version 2 differs from 1 by a constant: the same ranking.
  EXPECT_EQ(pair.tau_count(), 2u);
  EXPECT_DOUBLE_EQ(pair.mean_kendall_tau(), 1.0);
  EXPECT_DOUBLE_EQ(pair.top1_agreement(), 1.0);
  EXPECT_DOUBLE_EQ(pair.mean_top10_overlap(), 1.0);
  // The queue has room again.
  Serve(scorer, Request(6));
  EXPECT_EQ(scorer.RunQueued(), 1u);
}

TEST_F(ShadowScorerTest, ReversedModelDisagrees) {
  model_.shadow = Load(dir_, 2, Model(2, -1.0));
  ShadowScorer scorer({16, false}, nullptr);
  Serve(scorer, Request(12));
  // A copy of an answer cut to top_k: the worker rescores the served side.
  Serve(scorer, Request(12, /*top_k=*/3));
  EXPECT_EQ(scorer.RunQueued(), 2u);
  const v1::ShadowComparison pair = scorer.Status(model_).comparisons(0);
  EXPECT_EQ(pair.scored(), 2u);
  EXPECT_THAT(pair.mean_kendall_tau(), DoubleNear(-1.0, 1e-12));
  EXPECT_EQ(pair.top1_agreement(), 0.0);
  // Top 10 of 12 reversed: 8 in common.
  EXPECT_THAT(pair.mean_top10_overlap(), DoubleNear(0.8, 1e-12));
}

TEST_F(ShadowScorerTest, UnresolvedShadowCountsFailedWithTheReason) {
  model_.shadow_error = "version 2 of model 'web' is not loaded";
  ShadowScorer scorer({16, false}, nullptr);
  Serve(scorer, Request(3));
  EXPECT_EQ(scorer.RunQueued(), 0u);
  const v1::ShadowStatus status = scorer.Status(model_);
  EXPECT_EQ(status.shadow_version(), 0);
  EXPECT_THAT(status.error(), HasSubstr("not loaded"));
  ASSERT_EQ(status.comparisons_size(), 1);
  EXPECT_EQ(status.comparisons(0).shadow_version(), 0);
  EXPECT_EQ(status.comparisons(0).failed(), 1u);
  EXPECT_THAT(status.comparisons(0).last_error(), HasSubstr("not loaded"));
}

TEST_F(ShadowScorerTest, DocumentsTheShadowRejectsCountFailed) {
  model_.shadow = Load(dir_, 2, TestEnsembleWithFeatures(2, 6));
  ShadowScorer scorer({16, false}, nullptr);
  Serve(scorer, Request(3));
  EXPECT_EQ(scorer.RunQueued(), 1u);
  const v1::ShadowComparison pair = scorer.Status(model_).comparisons(0);
  EXPECT_EQ(pair.failed(), 1u);
  EXPECT_EQ(pair.scored(), 0u);
  EXPECT_THAT(pair.last_error(), HasSubstr("shadow scoring"));
}

TEST_F(ShadowScorerTest, FractionZeroAndRequestsToTheShadowAreNotSampled) {
  model_.shadow = Load(dir_, 2, Model(2, 1.0));
  ShadowScorer scorer({16, false}, nullptr);
  model_.shadow_fraction = 0.0;
  for (int i = 0; i < 20; ++i) Serve(scorer, Request(3));
  // A request served by the shadow version itself.
  model_.shadow_fraction = 1.0;
  v1::RankResponse response;
  scorer.Offer(model_, model_.shadow, Request(3), response);
  EXPECT_EQ(scorer.RunQueued(), 0u);
  EXPECT_EQ(scorer.Status(model_).comparisons_size(), 0);
}

TEST_F(ShadowScorerTest, FractionSamplesAboutThatShare) {
  model_.shadow = Load(dir_, 2, Model(2, 1.0));
  ShadowScorer scorer({100000, false}, nullptr);
  model_.shadow_fraction = 0.5;
  for (int i = 0; i < 2000; ++i) Serve(scorer, Request(2));
  const size_t sampled = scorer.RunQueued();
  // Binomial(2000, 0.5): mean 1000, sd ~22; 10 sd either side.
  EXPECT_GT(sampled, 780u);
  EXPECT_LT(sampled, 1220u);
}

// With the worker thread: concurrent offers (some dropped, the queue is
// small) all end up scored or dropped. Timing decides which, so only the
// sum is asserted; under TSan this is the race check of the queue.
TEST_F(ShadowScorerTest, ConcurrentOffersWithTheWorkerAreAllAccountedFor) {
  model_.shadow = Load(dir_, 2, Model(2, 1.0));
  ShadowScorer scorer({/*queue_capacity=*/4, /*start_worker=*/true}, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) Serve(scorer, Request(20));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const auto accounted = [&] {
    const v1::ShadowStatus status = scorer.Status(model_);
    if (status.comparisons_size() != 1) return uint64_t{0};
    const v1::ShadowComparison& pair = status.comparisons(0);
    return pair.scored() + pair.dropped() + pair.failed();
  };
  ASSERT_TRUE(plrank::testing::Eventually(
      [&] { return accounted() >= kThreads * kPerThread; }));
  const v1::ShadowComparison pair = scorer.Status(model_).comparisons(0);
  EXPECT_EQ(pair.scored() + pair.dropped(), kThreads * kPerThread);
  EXPECT_EQ(pair.failed(), 0u);
  EXPECT_EQ(pair.tau_count(), pair.scored());
  if (pair.scored() > 0) {
    EXPECT_DOUBLE_EQ(pair.mean_kendall_tau(), 1.0);
  }
}

// Destroying the scorer with copies still queued discards them (and
// releases the versions they hold) without scoring them.
TEST_F(ShadowScorerTest, DestructionDiscardsQueuedCopies) {
  model_.shadow = Load(dir_, 2, Model(2, 1.0));
  std::weak_ptr<const ServableVersion> shadow = model_.shadow;
  {
    ShadowScorer scorer({16, false}, nullptr);
    for (int i = 0; i < 3; ++i) Serve(scorer, Request(4));
    model_.shadow.reset();
    EXPECT_FALSE(shadow.expired());  // the queued copies hold it
  }
  EXPECT_TRUE(shadow.expired());
}

}  // namespace
}  // namespace plrank::server
