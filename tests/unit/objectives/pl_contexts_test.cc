#include "core/objectives/plackett_luce/contexts.h"

#include <omp.h>

#include <algorithm>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/pl_test_util.h"

namespace plrank {
namespace {

using testing::MakeDataset;
using testing::RandomDataset;

PlackettLuceOptions Options(int topk, int permutations) {
  PlackettLuceOptions options = PaperPlackettLuceOptions();
  options.topk = topk;
  options.permutations = permutations;
  return options;
}

// The paper's tie example: labels (4, 0, 4, 4) = documents a, b, c, d and
// two ground-truth permutations. K = min(10, n) = 4, so a permutation has the
// contexts C1 = {a,b,c,d} (shared by both), C2, C3 and C4 = {b}. C4 is the
// singleton of the last document: its term s_b - log e^{s_b} is identically 0
// (as is its gradient 1 - p), so it is dropped and 3 contexts per
// permutation remain (6 in all). C1 is always shared, and C2 / C3 are shared
// iff the removed prefix is the same SET. The paper's "4 distinct contexts"
// is the case of two different tie-breaks that differ by one swap of
// adjacent tied documents, e.g. (a c d b) and (c a d b): C1 shared, C2 =
// {b,c,d} vs {a,b,d}, C3 = {b,d} shared -> 4 distinct of 6. (Counting the
// trivial C4 too would give 5 of 8: the claim only holds without it.)
TEST(PlContextsTest, PaperTieExampleHasFourDistinctContexts) {
  const Dataset data = MakeDataset({{4, 0, 4, 4}});
  const uint32_t a = 0, b = 1, c = 2, d = 3;
  absl::StatusOr<PlContexts> contexts = PlContexts::FromPermutations(
      data, Options(10, 2), {{{a, c, d, b}, {c, a, d, b}}});
  ASSERT_TRUE(contexts.ok()) << contexts.status();
  EXPECT_EQ(contexts->queries()[0].depth, 3u);
  EXPECT_EQ(contexts->total_contexts(), 6);
  EXPECT_EQ(contexts->distinct_contexts(), 4);
  const PlQuery& query = contexts->queries()[0];
  // C1 and C3 live on the first permutation with multiplicity 2.
  EXPECT_EQ(contexts->weights(query, 0)[0], 1.0);
  EXPECT_EQ(contexts->weights(query, 1)[0], 0.0);
  EXPECT_EQ(contexts->weights(query, 0)[1], 0.5);
  EXPECT_EQ(contexts->weights(query, 1)[1], 0.5);
  EXPECT_EQ(contexts->weights(query, 0)[2], 1.0);
  EXPECT_EQ(contexts->weights(query, 1)[2], 0.0);
}

TEST(PlContextsTest, TieExampleOtherConfigurations) {
  const Dataset data = MakeDataset({{4, 0, 4, 4}});
  const uint32_t a = 0, b = 1, c = 2, d = 3;
  struct Case {
    std::vector<uint32_t> first, second;
    int64_t distinct;
  };
  const std::vector<Case> cases = {
      {{a, c, d, b}, {a, c, d, b}, 3},  // identical tie-breaks
      {{a, c, d, b}, {a, d, c, b}, 4},  // C3 differs: {d,b} vs {c,b}
      {{a, c, d, b}, {d, c, a, b}, 5},  // C2 and C3 differ
  };
  for (const Case& test_case : cases) {
    absl::StatusOr<PlContexts> contexts = PlContexts::FromPermutations(
        data, Options(10, 2), {{test_case.first, test_case.second}});
    ASSERT_TRUE(contexts.ok()) << contexts.status();
    EXPECT_EQ(contexts->distinct_contexts(), test_case.distinct);
  }
}

TEST(PlContextsTest, RejectsPermutationNotSortedByLabel) {
  const Dataset data = MakeDataset({{4, 0, 4, 4}});
  EXPECT_FALSE(PlContexts::FromPermutations(data, Options(10, 1),
                                            {{{0, 1, 2, 3}}})
                   .ok());
  EXPECT_FALSE(
      PlContexts::FromPermutations(data, Options(10, 1), {{{0, 2, 3}}}).ok());
  EXPECT_FALSE(PlContexts::FromPermutations(data, Options(10, 1),
                                            {{{0, 0, 3, 1}}})
                   .ok());
}

TEST(PlContextsTest, DepthRules) {
  PlackettLuceOptions options = Options(10, 1);
  const std::vector<int32_t> labels = {2, 0, 1, 0, 0};
  EXPECT_EQ(PlContextDepth(labels, options), 4u);  // K > n: n - 1
  options.topk = 2;
  EXPECT_EQ(PlContextDepth(labels, options), 2u);
  options.topk = 10;
  options.stop_at_lowest_label = true;  // two documents above label 0
  EXPECT_EQ(PlContextDepth(labels, options), 2u);
  EXPECT_EQ(PlContextDepth(std::vector<int32_t>{1}, options), 0u);
  const std::vector<int32_t> tied = {1, 1, 1};
  EXPECT_EQ(PlContextDepth(tied, options), 0u);
  options.stop_at_lowest_label = false;
  EXPECT_EQ(PlContextDepth(tied, options), 2u);
  options.skip_tied_queries = true;
  EXPECT_EQ(PlContextDepth(tied, options), 0u);
  EXPECT_EQ(PlContextDepth(labels, options), 4u);
}

// Checks every drawn permutation is label-sorted and that distinct counts and
// weights match a brute-force comparison of the removed sets.
void CheckAgainstBruteForce(const Dataset& data, const PlContexts& contexts) {
  int64_t distinct = 0;
  const int32_t m = contexts.num_permutations();
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const PlQuery& query = contexts.queries()[q];
    for (int32_t p = 0; p < m; ++p) {
      const uint32_t* order = contexts.chosen(query, p);
      std::set<uint32_t> unique(order, order + query.depth);
      ASSERT_EQ(unique.size(), query.depth);
      for (uint32_t j = 0; j < query.depth; ++j) {
        // Every chosen document has the largest label among those left.
        int32_t best = -1;
        for (uint32_t d = 0; d < query.size; ++d) {
          if (std::find(order, order + j, d) == order + j) {
            best = std::max(best, data.labels[query.begin + d]);
          }
        }
        ASSERT_EQ(data.labels[query.begin + order[j]], best);
      }
    }
    for (uint32_t j = 0; j < query.depth; ++j) {
      std::vector<std::vector<uint32_t>> removed(m);
      for (int32_t p = 0; p < m; ++p) {
        const uint32_t* order = contexts.chosen(query, p);
        removed[p].assign(order, order + j);
        std::sort(removed[p].begin(), removed[p].end());
      }
      double level_sum = 0.0;
      for (int32_t p = 0; p < m; ++p) {
        const int first = static_cast<int>(
            std::find(removed.begin(), removed.end(), removed[p]) -
            removed.begin());
        const double expected =
            first == p ? static_cast<double>(std::count(
                             removed.begin(), removed.end(), removed[p])) /
                             m
                       : 0.0;
        if (first == p) ++distinct;
        EXPECT_DOUBLE_EQ(contexts.weights(query, p)[j], expected);
        level_sum += contexts.weights(query, p)[j];
      }
      EXPECT_NEAR(level_sum, 1.0, 1e-12);
    }
  }
  EXPECT_EQ(contexts.distinct_contexts(), distinct);
}

TEST(PlContextsTest, RandomTieBreaksMatchBruteForce) {
  const Dataset data = RandomDataset(7, 60, 1, 25, 2);
  for (int m : {1, 3, 6}) {
    for (int k : {1, 3, 10, 40}) {
      absl::StatusOr<PlContexts> contexts =
          PlContexts::Build(data, Options(k, m), 11);
      ASSERT_TRUE(contexts.ok());
      CheckAgainstBruteForce(data, *contexts);
      if (m == 1) {
        EXPECT_EQ(contexts->distinct_contexts(), contexts->total_contexts());
      } else if (k >= 3) {
        // Ties in the top-K make some contexts differ, but C1 is shared.
        EXPECT_LT(contexts->distinct_contexts(), contexts->total_contexts());
        EXPECT_GT(contexts->distinct_contexts(),
                  contexts->total_contexts() / m);
      }
    }
  }
}

TEST(PlContextsTest, ReproducibleAndThreadIndependent) {
  const Dataset data = RandomDataset(3, 500, 1, 40, 3);
  const PlackettLuceOptions options = Options(10, 3);
  omp_set_num_threads(1);
  const PlContexts one = *PlContexts::Build(data, options, 5);
  omp_set_num_threads(4);
  const PlContexts four = *PlContexts::Build(data, options, 5);
  const PlContexts other_seed = *PlContexts::Build(data, options, 6);
  bool any_difference = false;
  for (const PlQuery& query : one.queries()) {
    for (int p = 0; p < 3; ++p) {
      for (uint32_t j = 0; j < query.depth; ++j) {
        ASSERT_EQ(one.chosen(query, p)[j], four.chosen(query, p)[j]);
        ASSERT_EQ(one.weights(query, p)[j], four.weights(query, p)[j]);
        any_difference |=
            one.chosen(query, p)[j] != other_seed.chosen(query, p)[j];
      }
    }
  }
  EXPECT_TRUE(any_difference) << "the seed must change the tie-breaks";
  // The tie-break is uniform: over many queries each of two tied documents
  // comes first about half the time.
  const Dataset pairs = MakeDataset(
      std::vector<std::vector<int32_t>>(2000, std::vector<int32_t>{1, 1}));
  const PlContexts drawn = *PlContexts::Build(pairs, Options(10, 1), 9);
  int first_is_zero = 0;
  for (const PlQuery& query : drawn.queries()) {
    first_is_zero += drawn.chosen(query, 0)[0] == 0;
  }
  EXPECT_NEAR(first_is_zero, 1000, 150);
}

}  // namespace
}  // namespace plrank
