#include "core/boosting/histogram.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/boosting/binned_dataset.h"
#include "core/boosting/sampling.h"
#include "core/boosting/split_finder.h"
#include "gtest/gtest.h"
#include "tests/testing/boosting_test_util.h"

namespace plrank {
namespace {

struct Fixture {
  Dataset data = testing::RandomDataset(20000, 7, 11);
  BinnedDataset binned = BinnedDataset::Build(data, 64, 200000, 2);
  std::vector<float> gradients, hessians;
  std::vector<int32_t> features;
  Fixture() {
    SplitMix64 rng(3);
    // Multiples of 1/8: every partial sum is exact, whatever the order.
    for (size_t i = 0; i < data.num_documents(); ++i) {
      gradients.push_back(static_cast<float>(static_cast<int>(rng.BelowModulo(81)) - 40) / 8);
      hessians.push_back(static_cast<float>(1 + rng.BelowModulo(8)) / 8);
    }
    features.resize(binned.num_features());
    std::iota(features.begin(), features.end(), 0);
  }
  std::vector<double> Build(const HistogramLayout& layout,
                            const std::vector<uint32_t>& documents,
                            int32_t threads) const {
    std::vector<float> pairs;
    for (uint32_t d : documents) {
      pairs.push_back(gradients[d]);
      pairs.push_back(layout.with_hessians() ? hessians[d] : 1.0f);
    }
    std::vector<double> histogram(layout.size(), -1.0);
    HistogramBuilder builder(layout, binned);
    builder.Build(documents, pairs.data(), features, histogram.data(), threads);
    return histogram;
  }
  std::vector<double> Naive(const HistogramLayout& layout,
                            const std::vector<uint32_t>& documents) const {
    std::vector<double> histogram(layout.size(), 0.0);
    const int s = layout.stride();
    for (int32_t f : features) {
      for (uint32_t d : documents) {
        double* entry = histogram.data() + layout.offset(f) + binned.column(f)[d] * s;
        entry[0] += gradients[d];
        if (s == 2) {
          entry[1] += 1.0;
        } else {
          entry[1] += hessians[d];
          entry[2] += 1.0;
          entry[3] = 0.0;
        }
      }
    }
    return histogram;
  }
};

std::vector<uint32_t> EveryKth(size_t n, size_t k, size_t phase) {
  std::vector<uint32_t> documents;
  for (size_t i = phase; i < n; i += k) documents.push_back(static_cast<uint32_t>(i));
  return documents;
}

TEST(HistogramTest, MatchesNaiveSumsForBigAndSmallLeaves) {
  const Fixture fx;
  for (bool hessians : {false, true}) {
    const HistogramLayout layout(fx.binned, hessians);
    for (size_t k : {1, 3, 50}) {  // 20000 docs (copies path) .. 400 docs
      const auto documents = EveryKth(fx.data.num_documents(), k, k / 2);
      for (int32_t threads : {1, 2, 3}) {
        EXPECT_EQ(fx.Build(layout, documents, threads), fx.Naive(layout, documents))
            << "k=" << k << " threads=" << threads << " hessians=" << hessians;
      }
    }
  }
}

TEST(HistogramTest, SubtractionEqualsDirectBuild) {
  const Fixture fx;
  const HistogramLayout layout(fx.binned, true);
  std::vector<uint32_t> all(fx.data.num_documents());
  std::iota(all.begin(), all.end(), 0u);
  std::vector<uint32_t> left, right;
  for (uint32_t d : all) (fx.binned.column(0)[d] < 20 ? left : right).push_back(d);
  ASSERT_FALSE(left.empty());
  ASSERT_FALSE(right.empty());
  std::vector<double> parent = fx.Build(layout, all, 2);
  const std::vector<double> small = fx.Build(layout, left, 2);
  for (int32_t f : fx.features) SubtractFeature(layout, f, small.data(), parent.data());
  EXPECT_EQ(parent, fx.Build(layout, right, 2));
}

// The split finder's answer equals an exhaustive search over naive sums.
TEST(SplitFinderTest, FindsTheExhaustiveBest) {
  const Fixture fx;
  for (bool newton : {false, true}) {
    const HistogramLayout layout(fx.binned, newton);
    const auto documents = EveryKth(fx.data.num_documents(), 7, 1);
    const std::vector<double> histogram = fx.Build(layout, documents, 2);
    SplitRules rules;
    rules.newton = newton;
    rules.lambda_l2 = newton ? 1.0 : 0.0;
    rules.min_data_in_leaf = 30;
    NodeSums node;
    for (uint32_t d : documents) {
      node.gradient += fx.gradients[d];
      node.hessian += newton ? fx.hessians[d] : 1.0;
      node.count += 1;
    }
    auto score = [&](double g, double h) {
      return g * g / (h + (newton ? rules.lambda_l2 : 0.0));
    };
    double best_gain = 0.0;
    int32_t best_feature = -1;
    for (int32_t f : fx.features) {
      const uint8_t missing = fx.binned.mapper(f).missing_bin();
      for (int32_t b = 0; b < fx.binned.mapper(f).num_bins(); ++b) {
        for (bool missing_left : {false, true}) {
          double gl = 0, hl = 0, nl = 0;
          for (uint32_t d : documents) {
            const uint8_t bin = fx.binned.column(f)[d];
            if (bin == missing ? missing_left : bin <= b) {
              gl += fx.gradients[d];
              hl += newton ? fx.hessians[d] : 1.0;
              nl += 1;
            }
          }
          const double nr = node.count - nl;
          if (nl < rules.min_data_in_leaf || nr < rules.min_data_in_leaf) continue;
          const double gain = score(gl, hl) +
                              score(node.gradient - gl, node.hessian - hl) -
                              score(node.gradient, node.hessian);
          if (gain > best_gain + 1e-9) {
            best_gain = gain;
            best_feature = f;
          }
        }
      }
    }
    for (int32_t threads : {1, 2, 4}) {
      const SplitCandidate split = FindBestSplit(layout, fx.binned, histogram.data(),
                                                 node, fx.features, rules, threads);
      ASSERT_TRUE(split.valid());
      EXPECT_EQ(split.feature, best_feature);
      EXPECT_NEAR(split.gain, best_gain, 1e-6 * best_gain);
      EXPECT_EQ(split.left.count + split.right.count, node.count);
      EXPECT_GE(split.left.count, rules.min_data_in_leaf);
      EXPECT_GE(split.right.count, rules.min_data_in_leaf);
    }
  }
}

}  // namespace
}  // namespace plrank
