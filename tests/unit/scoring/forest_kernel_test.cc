// Every scoring kernel on its own, through the one interface
// (core/scoring/forest_kernel.h), without a ForestScorer around it: given
// any range of documents it takes a prefix, a suffix or all of it, exactly
// the documents its contract says (groups, padded remainders, a single
// last document), adds the reference sums bit for bit to those, and leaves
// every other document's score alone. A kernel this CPU cannot run, or that
// does not take a shape, is skipped with its reason.

#include "core/scoring/forest_kernel.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cpu/cpu_features.h"
#include "core/model/ensemble.h"
#include "core/scoring/doubled_rows.h"
#include "core/scoring/flat_forest.h"
#include "core/scoring/kernel_plan.h"
#include "core/scoring/scoring_kernel.h"
#include "gtest/gtest.h"
#include "tests/testing/random_model.h"

namespace plrank::internal {
namespace {

struct Shape {
  const char* name;
  int32_t iterations;
  int32_t max_leaves;
  int32_t outputs;
};

constexpr Shape kShapes[] = {
    {"leaves_32", 120, 32, 1},
    {"leaves_64", 60, 64, 1},
    {"leaves_255", 25, 255, 1},
    {"three_outputs_32_leaves", 40, 32, 3},
};

constexpr int32_t kFeatures = 9;

// A model with what kernels are built from.
struct Built {
  Ensemble model;
  DoubledRows rows;
  std::vector<std::vector<uint32_t>> split_slots;
  std::shared_ptr<const FlatForest> forest;
  ForestShape shape;

  KernelInputs inputs() const {
    return {model, split_slots, forest, shape, CpuFeatures::Detected()};
  }
};

Built Build(const Shape& s) {
  std::mt19937_64 rng(0xF0 + s.max_leaves + s.outputs);
  Built built;
  built.model = testing::RandomEnsemble(rng, s.iterations, s.max_leaves,
                                        kFeatures, s.outputs);
  built.model.trees[0] = testing::RandomTree(rng, s.max_leaves, kFeatures);
  absl::StatusOr<DoubledRows> rows = DoubledRows::Create(built.model);
  EXPECT_TRUE(rows.ok()) << rows.status();
  built.rows = *rows;
  built.split_slots = built.rows.SplitSlots(built.model);
  absl::StatusOr<FlatForest> forest =
      BuildFlatForest(built.model, built.split_slots, built.rows.num_slots());
  EXPECT_TRUE(forest.ok()) << forest.status();
  built.forest = std::make_shared<const FlatForest>(*std::move(forest));
  built.shape = {s.outputs, static_cast<int32_t>(built.model.trees.size()),
                 s.max_leaves, built.rows.num_slots()};
  return built;
}

// How many documents of `todo` a kernel forced by name leaves, by its
// contract (forest_kernel.h and each kernel's header).
size_t ExpectedLeft(ScoringKernelId id, DocRange todo, size_t capacity,
                    int32_t outputs, bool all_trees) {
  const size_t n = todo.size();
  const auto fits = [&](size_t group) {
    return todo.begin + (n + group - 1) / group * group <= capacity;
  };
  switch (id) {
    case ScoringKernelId::kRapidAvx512:
      return n % 64 >= 36 && fits(64) ? 0 : n % 64;
    case ScoringKernelId::kQuickAvx512:
      if (outputs == 1 && n % 16 >= 4 && fits(16)) return 0;
      return n % 16 % 8;
    case ScoringKernelId::kQuickAvx2:
      return n % 8;
    case ScoringKernelId::kChainedWalks:
      if (n < 5) return n;
      return n % 8 >= 3 ? 0 : n % 8;
    case ScoringKernelId::kLaneChains:  // forced: every document
      return all_trees ? 0 : n;
    case ScoringKernelId::kDenseAvx512Vbmi:
    case ScoringKernelId::kLockstepWalks:
      return 0;
  }
  return n;
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

class ForestKernelTest : public ::testing::TestWithParam<KernelCase> {};

TEST_P(ForestKernelTest, TakesWhatItSaysAndAddsTheReferenceSums) {
  const ScoringKernel& descriptor = *GetParam().kernel;
  const Built built = Build(*GetParam().shape);
  absl::StatusOr<KernelPlan> plan =
      ForcedKernelPlan(built.inputs(), descriptor);
  if (!plan.ok()) GTEST_SKIP() << plan.status().message();
  const ForestKernel& kernel = *plan->front();
  ASSERT_EQ(kernel.id(), descriptor.id);
  const Ensemble& model = built.model;
  const int32_t outputs = model.num_outputs;
  const int32_t all = static_cast<int32_t>(model.trees.size());
  std::mt19937_64 rng(5);
  constexpr size_t kMaxDocs = 200;
  const std::vector<float> rows =
      testing::RowsNearZeroWithInfinities(rng, kMaxDocs, kFeatures);
  // Around every group (8, 16, 64) and padding threshold (3, 4, 36 left).
  for (size_t num_docs : {1,  2,  3,  4,  5,  7,  8,  9,  10,  11,  16, 17,
                          19, 20, 35, 37, 56, 63, 64, 99, 100, 130, 200}) {
    for (size_t begin : {0, 8, 56, 64}) {
      if (begin >= num_docs) continue;
      for (int32_t num_trees : {all, 7 * outputs}) {
        // Capacity as ForestScorer gives it: a multiple of 64 documents.
        const size_t capacity = (num_docs + 63) / 64 * 64;
        // One more group of rows past the capacity, which no kernel may
        // write (padding stays within row_capacity).
        const size_t slots = std::max<size_t>(built.rows.num_slots(), 1);
        constexpr uint32_t kGuard = 0xDEADBEEF;
        std::vector<uint32_t> doubled((capacity + kLanes) * slots, kGuard);
        built.rows.Prepare(rows.data(), num_docs, kFeatures, doubled.data());
        std::vector<double> out(num_docs * outputs);
        for (int32_t k = 0; k < outputs; ++k) {
          for (size_t i = 0; i < num_docs; ++i) {
            out[k * num_docs + i] = model.base_score[k];
          }
        }
        const KernelBatch batch = {doubled.data(), built.rows.num_slots(),
                                   num_docs,       capacity,
                                   out.data(),     num_docs,
                                   num_trees};
        const DocRange todo = {begin, num_docs};
        const DocRange left = kernel.Accumulate(batch, todo);
        const std::string where =
            std::string(descriptor.name) + " on " + GetParam().shape->name +
            ": documents [" + std::to_string(begin) + ", " +
            std::to_string(num_docs) + "), trees " + std::to_string(num_trees);
        for (size_t e = capacity * slots; e < doubled.size(); ++e) {
          ASSERT_EQ(doubled[e], kGuard)
              << where << ": row entry " << e << " written";
        }
        ASSERT_LE(todo.begin, left.begin) << where;
        ASSERT_LE(left.begin, left.end) << where;
        ASSERT_LE(left.end, todo.end) << where;
        // What it took is a prefix or a suffix, so what is left is a range.
        ASSERT_TRUE(left.begin == todo.begin || left.end == todo.end) << where;
        EXPECT_EQ(left.size(), ExpectedLeft(descriptor.id, todo, capacity,
                                            outputs, num_trees == all))
            << where;
        for (int32_t k = 0; k < outputs; ++k) {
          for (size_t i = 0; i < num_docs; ++i) {
            const bool taken =
                i >= todo.begin && !(i >= left.begin && i < left.end);
            const double expected =
                taken ? testing::ReferenceRaw(model, &rows[i * kFeatures], k,
                                              static_cast<size_t>(num_trees))
                      : model.base_score[k];
            const double got = out[k * num_docs + i];
            ASSERT_EQ(std::memcmp(&expected, &got, sizeof(double)), 0)
                << where << ": document " << i
                << (taken ? " (taken)" : " (left)") << " output " << k
                << ": expected " << expected << " got " << got;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKernelEveryShape, ForestKernelTest,
                         ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<KernelCase>& info) {
                           return std::string(info.param.kernel->name) + "_" +
                                  info.param.shape->name;
                         });

// The chooser's plan as kernel objects: by decreasing preference, each
// compatible, and the last takes every document.
TEST(KernelPlanTest, ChooserPlanEndsWithAKernelTakingEverything) {
  for (const Shape& shape : kShapes) {
    const Built built = Build(shape);
    for (bool allow_dense : {true, false}) {
      const KernelPlan plan = ChooseKernels(built.inputs(), allow_dense);
      ASSERT_FALSE(plan.empty());
      for (size_t i = 0; i < plan.size(); ++i) {
        const ScoringKernel& kernel = GetScoringKernel(plan[i]->id());
        EXPECT_EQ(kernel.incompatibility(built.shape, CpuFeatures::Detected()),
                  "")
            << kernel.name << " on " << shape.name;
        if (!allow_dense) {
          EXPECT_NE(plan[i]->id(), ScoringKernelId::kDenseAvx512Vbmi);
        }
        if (i > 0) {
          EXPECT_LT(kernel.preference,
                    GetScoringKernel(plan[i - 1]->id()).preference);
        }
      }
      // The last kernel takes any range it is given.
      std::vector<uint32_t> doubled(
          64 * std::max<size_t>(built.rows.num_slots(), 1));
      std::vector<double> out(13 * shape.outputs, 0.0);
      const KernelBatch batch = {
          doubled.data(),       built.rows.num_slots(), 13, 64, out.data(), 13,
          built.shape.num_trees};
      EXPECT_TRUE(plan.back()->Accumulate(batch, {8, 11}).empty())
          << shape.name;
    }
  }
}

// In the chooser's plan the lane chains take only a single document left
// after whole groups, and only with every tree.
TEST(KernelPlanTest, LaneChainsTakeASingleRemainingDocument) {
  const Built built = Build(kShapes[2]);  // 255 leaves, one output
  const KernelPlan plan = ChooseKernels(built.inputs(), true);
  const ForestKernel* lanes = nullptr;
  for (const auto& kernel : plan) {
    if (kernel->id() == ScoringKernelId::kLaneChains) lanes = kernel.get();
  }
  if (lanes == nullptr) {
    GTEST_SKIP() << "lane_chains "
                 << GetScoringKernel(ScoringKernelId::kLaneChains)
                        .incompatibility(built.shape, CpuFeatures::Detected());
  }
  std::vector<uint32_t> doubled(64 * built.rows.num_slots());
  std::vector<double> out(17, 0.0);
  const int32_t all = built.shape.num_trees;
  const auto run = [&](size_t begin, size_t end, int32_t trees) {
    const KernelBatch batch = {
        doubled.data(), built.rows.num_slots(), end, 64, out.data(), end,
        trees};
    const DocRange left = lanes->Accumulate(batch, {begin, end});
    return std::to_string(left.begin) + "-" + std::to_string(left.end);
  };
  EXPECT_EQ(run(0, 1, all), "0-0");
  EXPECT_EQ(run(0, 9, all), "0-8");
  EXPECT_EQ(run(8, 17, all), "8-16");
  EXPECT_EQ(run(0, 2, all), "0-2");
  EXPECT_EQ(run(0, 10, all), "0-10");
  EXPECT_EQ(run(0, 9, all - 1), "0-9");  // a tree prefix: nothing
}

}  // namespace
}  // namespace plrank::internal
