// Every scoring kernel forced by name (ForestScorer::Options::kernel) on
// every model shape, bit for bit against the reference walk. A kernel this
// CPU cannot run, or that does not take a shape, is skipped with the
// kernel's own reason, so a runner without AVX-512 says which kernels it
// did not test instead of passing silently. Also: the chooser's plan, the
// errors for unknown and incompatible kernels, and CPU features detected
// once.

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/model/ensemble.h"
#include "core/cpu/cpu_features.h"
#include "core/scoring/forest_scorer.h"
#include "core/scoring/scoring_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

// The model shapes the kernels differ on: tree size around each kernel's
// limit (32, 64 leaves), outputs, zero-as-missing slots, single leaves.
struct Shape {
  const char* name;
  int32_t iterations;
  int32_t max_leaves;
  int32_t outputs;
  bool zero_as_missing;
  bool single_leaves;  // every tree a single leaf (no slots)
};

constexpr Shape kShapes[] = {
    {"stumps_8_leaves", 120, 8, 1, false, false},
    {"leaves_32", 150, 32, 1, false, false},
    {"leaves_32_zero_as_missing", 150, 32, 1, true, false},
    {"leaves_64", 90, 64, 1, false, false},
    {"leaves_255", 40, 255, 1, false, false},
    {"three_outputs_32_leaves", 60, 32, 3, false, false},
    {"single_leaf_trees", 30, 1, 1, false, true},
};

Ensemble MakeModel(const Shape& shape) {
  std::mt19937_64 rng(0x5C0 + shape.max_leaves * 7 + shape.outputs);
  const int32_t features = 9;
  Ensemble model = testing::RandomEnsemble(rng, shape.iterations,
                                           shape.max_leaves, features,
                                           shape.outputs);
  if (!shape.single_leaves) {
    // The largest tree at the shape's limit.
    model.trees[0] = testing::RandomTree(rng, shape.max_leaves, features);
  }
  if (shape.zero_as_missing) testing::AddZeroAsMissing(rng, 0.3, &model);
  return model;
}

struct KernelCase {
  const ScoringKernel* kernel;
  const Shape* shape;
};

std::vector<KernelCase> AllCases() {
  std::vector<KernelCase> cases;
  for (const ScoringKernel& kernel : ScoringKernels()) {
    for (const Shape& shape : kShapes) cases.push_back({&kernel, &shape});
  }
  return cases;
}

class ScoringKernelTest : public ::testing::TestWithParam<KernelCase> {};

// Batches around every kernel's group (8, 16, 64 documents), padded
// remainders, the 512-document block, and tree prefixes.
TEST_P(ScoringKernelTest, ForcedByNameMatchesReference) {
  const ScoringKernel& kernel = *GetParam().kernel;
  const Shape& shape = *GetParam().shape;
  const Ensemble model = MakeModel(shape);
  ForestScorer::Options options;
  options.kernel = std::string(kernel.name);
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model, options);
  if (!scorer.ok()) {
    // Only the kernel's stated reasons may refuse a model.
    ASSERT_EQ(scorer.status().code(), absl::StatusCode::kFailedPrecondition)
        << scorer.status();
    GTEST_SKIP() << scorer.status().message();
  }
  ASSERT_EQ(scorer->kernel_name(), kernel.name);
  EXPECT_EQ(kernel.incompatibility(scorer->shape(), CpuFeatures::Detected()),
            "");
  std::mt19937_64 rng(77);
  const int32_t features = model.num_features;
  const size_t max_docs = ForestScorer::kBlockDocs + 70;
  const std::vector<float> rows =
      testing::RowsNearZeroWithInfinities(rng, max_docs, features);
  const int32_t outputs = model.num_outputs;
  const int32_t all = static_cast<int32_t>(model.trees.size());
  for (size_t docs : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{7},
                      size_t{8}, size_t{9}, size_t{13}, size_t{16},
                      size_t{21}, size_t{36}, size_t{50}, size_t{64},
                      size_t{65}, size_t{100}, size_t{129}, max_docs}) {
    for (int32_t requested : {0, 7 * outputs, all - outputs}) {
      std::vector<double> raw(docs * outputs);
      scorer->RawScores(absl::MakeConstSpan(rows).subspan(0, docs * features),
                        docs, absl::MakeSpan(raw), requested);
      const size_t used = requested > 0 && requested < all
                              ? static_cast<size_t>(requested)
                              : model.trees.size();
      for (int32_t k = 0; k < outputs; ++k) {
        for (size_t i = 0; i < docs; ++i) {
          const double expected =
              testing::ReferenceRaw(model, &rows[i * features], k, used);
          const double got = raw[k * docs + i];
          ASSERT_EQ(std::memcmp(&expected, &got, sizeof(double)), 0)
              << kernel.name << " on " << shape.name << ": batch " << docs
              << " doc " << i << " output " << k << " trees " << used
              << ": expected " << expected << " got " << got;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryKernelEveryShape, ScoringKernelTest, ::testing::ValuesIn(AllCases()),
    [](const ::testing::TestParamInfo<KernelCase>& info) {
      return std::string(info.param.kernel->name) + "_" +
             info.param.shape->name;
    });

TEST(ScoringKernelChooserTest, PlanStartsWithTheChosenKernelAndEndsWalking) {
  for (const Shape& shape : kShapes) {
    const Ensemble model = MakeModel(shape);
    absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
    ASSERT_TRUE(scorer.ok()) << scorer.status();
    const std::vector<ScoringKernelId>& plan = scorer->kernel_plan();
    ASSERT_FALSE(plan.empty());
    EXPECT_EQ(scorer->kernel_name(), GetScoringKernel(plan[0]).name);
    // By decreasing preference, each kernel compatible.
    for (size_t i = 0; i < plan.size(); ++i) {
      const ScoringKernel& kernel = GetScoringKernel(plan[i]);
      EXPECT_EQ(kernel.incompatibility(scorer->shape(), CpuFeatures::Detected()),
                "")
          << kernel.name << " on " << shape.name;
      if (i > 0) {
        EXPECT_LT(kernel.preference, GetScoringKernel(plan[i - 1]).preference);
      }
    }
    // Something takes every document: DenseScorer, or the lockstep walks.
    EXPECT_TRUE(plan.back() == ScoringKernelId::kLockstepWalks ||
                plan.back() == ScoringKernelId::kDenseAvx512Vbmi)
        << scorer->kernel_plan_name();
    // The plan's name lists it.
    EXPECT_THAT(scorer->kernel_plan_name(),
                HasSubstr(std::string(scorer->kernel_name())));
  }
}

TEST(ScoringKernelChooserTest, QuickScorerChosenForSmallTreesWithAvx2) {
  const Ensemble model = MakeModel(kShapes[1]);  // 32 leaves, one output
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  const CpuFeatures& cpu = CpuFeatures::Detected();
  if (cpu.avx512f && cpu.avx512bw && cpu.avx512bitalg) {
    EXPECT_EQ(scorer->kernel_name(), "rapid_avx512");
  } else if (cpu.avx512f && cpu.avx512bw && cpu.avx512vbmi) {
    EXPECT_EQ(scorer->kernel_name(), "dense_avx512_vbmi");
  } else if (cpu.avx2 && cpu.avx512f && cpu.avx512cd) {
    EXPECT_EQ(scorer->kernel_name(), "quick_avx512");
  } else if (cpu.avx2) {
    EXPECT_EQ(scorer->kernel_name(), "quick_avx2");
    EXPECT_EQ(scorer->kernel_plan_name(),
              "quick_avx2+lane_chains+lockstep_walks");
  } else {
    EXPECT_EQ(scorer->kernel_name(), "lane_chains");
  }
}

TEST(ScoringKernelChooserTest, LargeTreesWithoutAvx512ChainTheirWalks) {
  const CpuFeatures& cpu = CpuFeatures::Detected();
  if (cpu.avx512f) GTEST_SKIP() << "this CPU has AVX-512 (other plans)";
  const Ensemble model = MakeModel(kShapes[4]);  // 255 leaves
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_EQ(scorer->kernel_plan_name(),
            "chained_walks+lane_chains+lockstep_walks");
}

TEST(ScoringKernelChooserTest, AutoIsTheDefault) {
  const Ensemble model = MakeModel(kShapes[0]);
  absl::StatusOr<ForestScorer> by_default = ForestScorer::Create(model);
  ForestScorer::Options options;
  options.kernel = "auto";
  absl::StatusOr<ForestScorer> automatic = ForestScorer::Create(model, options);
  ASSERT_TRUE(by_default.ok() && automatic.ok());
  EXPECT_EQ(by_default->kernel_plan_name(), automatic->kernel_plan_name());
}

TEST(ScoringKernelChooserTest, UnknownKernelListsTheKnownOnes) {
  const Ensemble model = MakeModel(kShapes[0]);
  ForestScorer::Options options;
  options.kernel = "quickscorer";
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model, options);
  ASSERT_FALSE(scorer.ok());
  EXPECT_EQ(scorer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scorer.status().message(),
              HasSubstr("unknown scoring kernel 'quickscorer'"));
  EXPECT_THAT(scorer.status().message(),
              HasSubstr("auto, rapid_avx512, dense_avx512_vbmi"));
}

TEST(ScoringKernelChooserTest, IncompatibleKernelSaysWhy) {
  // 255-leaf trees: no QuickScorer, whatever the CPU.
  const Ensemble model = MakeModel(kShapes[4]);
  ForestScorer::Options options;
  options.kernel = "quick_avx2";
  absl::StatusOr<ForestScorer> scorer = ForestScorer::Create(model, options);
  ASSERT_FALSE(scorer.ok());
  EXPECT_EQ(scorer.status().code(), absl::StatusCode::kFailedPrecondition);
  if (CpuFeatures::Detected().avx2) {
    EXPECT_THAT(scorer.status().message(),
                HasSubstr("quick_avx2 takes trees of at most 32 leaves; this "
                          "model's largest has 255"));
  }
  // Multi-output: no chained walks.
  options.kernel = "chained_walks";
  scorer = ForestScorer::Create(MakeModel(kShapes[5]), options);
  ASSERT_FALSE(scorer.ok());
  EXPECT_THAT(scorer.status().message(),
              HasSubstr("chained_walks takes single-output models; this one "
                        "has 3 outputs"));
}

TEST(ScoringKernelRegistryTest, NamesAreUniqueAndFindable) {
  std::vector<std::string> names;
  int previous = 1 << 30;
  for (const ScoringKernel& kernel : ScoringKernels()) {
    EXPECT_EQ(FindScoringKernel(kernel.name), &kernel);
    EXPECT_EQ(&GetScoringKernel(kernel.id), &kernel);
    EXPECT_LT(kernel.preference, previous) << kernel.name;
    previous = kernel.preference;
    EXPECT_FALSE(kernel.summary.empty());
    names.emplace_back(kernel.name);
  }
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(FindScoringKernel("auto"), nullptr);
  // Lockstep walks take every model on every CPU.
  ForestShape shape;
  shape.num_outputs = 9;
  shape.max_leaves = 4096;
  EXPECT_EQ(GetScoringKernel(ScoringKernelId::kLockstepWalks)
                .incompatibility(shape, CpuFeatures()),
            "");
}

TEST(ScoringKernelRegistryTest, CpuRequirementsNameTheMissingFeatures) {
  ForestShape shape;
  shape.num_trees = 10;
  shape.max_leaves = 16;
  shape.num_slots = 4;
  const CpuFeatures none;
  EXPECT_EQ(GetScoringKernel(ScoringKernelId::kRapidAvx512)
                .incompatibility(shape, none),
            "needs AVX-512 F, BW and BITALG; this CPU lacks avx512f, "
            "avx512bw, avx512bitalg");
  CpuFeatures almost;
  almost.avx2 = almost.avx512f = almost.avx512bw = true;
  EXPECT_EQ(GetScoringKernel(ScoringKernelId::kDenseAvx512Vbmi)
                .incompatibility(shape, almost),
            "needs AVX-512 F, BW and VBMI; this CPU lacks avx512vbmi");
  EXPECT_EQ(GetScoringKernel(ScoringKernelId::kQuickAvx2)
                .incompatibility(shape, almost),
            "");
  EXPECT_EQ(GetScoringKernel(ScoringKernelId::kQuickAvx512)
                .incompatibility(shape, almost),
            "needs AVX2 and AVX-512 F and CD; this CPU lacks avx512cd");
}

TEST(CpuFeaturesTest, DetectedOnceAndNamed) {
  EXPECT_EQ(&CpuFeatures::Detected(), &CpuFeatures::Detected());
  CpuFeatures cpu;
  EXPECT_EQ(cpu.ToString(), "none of avx2, bmi, avx512");
  cpu.avx2 = cpu.bmi2 = true;
  EXPECT_EQ(cpu.ToString(), "avx2 bmi2");
#if defined(__x86_64__) && defined(__GNUC__)
  EXPECT_EQ(CpuFeatures::Detected().avx2,
            static_cast<bool>(__builtin_cpu_supports("avx2")));
#endif
}

}  // namespace
}  // namespace plrank
