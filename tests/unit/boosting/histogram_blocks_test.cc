// The blocked histogram kernels (documents in blocks, features in subgroups,
// float pairs widened to doubles, baseline and AVX2 compilations) against
// references that sum every bin in the kernels' documented order, with
// gradients that are NOT exactly representable partial sums: any change of
// summation order shows up as a difference in the last bits.

#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/boosting/binned_dataset.h"
#include "core/boosting/histogram.h"
#include "core/boosting/sampling.h"
#include "gtest/gtest.h"
#include "tests/testing/boosting_test_util.h"

namespace plrank {
namespace {

// Restores the CPU's kernel choice when a test ends.
struct KernelChoice {
  explicit KernelChoice(bool baseline) { UseBaselineHistogramKernels(baseline); }
  ~KernelChoice() { UseBaselineHistogramKernels(false); }
};

struct Sums {
  const BinnedDataset& binned;
  std::vector<float> gradients, hessians;

  Sums(const BinnedDataset& data, uint64_t seed) : binned(data) {
    SplitMix64 rng(seed);
    auto uniform = [&rng] { return (rng.Next() >> 11) * 0x1.0p-53; };
    // Magnitudes over 2^-30..2^10: double sums of floats that span more
    // than 53 bits round, so a different order gives different bits.
    auto scale = [&rng] {
      return std::ldexp(1.0, static_cast<int>(rng.BelowModulo(41)) - 30);
    };
    for (size_t i = 0; i < data.num_documents(); ++i) {
      gradients.push_back(static_cast<float>((uniform() - 0.5) * scale()));
      hessians.push_back(static_cast<float>((uniform() + 1e-3) * scale()));
    }
  }

  std::vector<float> Pairs(const HistogramLayout& layout,
                           const std::vector<uint32_t>& documents) const {
    std::vector<float> pairs;
    for (uint32_t d : documents) {
      pairs.push_back(gradients[d]);
      pairs.push_back(layout.with_hessians() ? hessians[d] : 1.0f);
    }
    return pairs;
  }

  std::vector<double> Build(const HistogramLayout& layout,
                            const std::vector<uint32_t>& documents,
                            const std::vector<int32_t>& features,
                            int32_t threads) const {
    const std::vector<float> pairs = Pairs(layout, documents);
    std::vector<double> histogram(layout.size(), -7.0);
    HistogramBuilder(layout, binned)
        .Build(documents, pairs.data(), features, histogram.data(), threads);
    return histogram;
  }

  // Every bin summed in document order, or (copies > 1) the j-th document
  // added to partial sum j % copies, the partials then added 0, 1, 2, ...
  std::vector<double> Reference(const HistogramLayout& layout,
                                const std::vector<uint32_t>& documents,
                                const std::vector<int32_t>& features,
                                int copies) const {
    std::vector<double> histogram(layout.size(), -7.0);
    const int s = layout.stride();
    for (int32_t f : features) {
      const size_t slots = layout.num_slots(f);
      std::vector<double> partial(slots * s * copies, 0.0);
      for (size_t j = 0; j < documents.size(); ++j) {
        const uint32_t d = documents[j];
        double* entry = partial.data() + ((j % copies) * slots +
                                          binned.column(f)[d]) * s;
        entry[0] += gradients[d];
        if (s == 2) {
          entry[1] += 1.0;
        } else {
          entry[1] += hessians[d];
          entry[2] += 1.0;
        }
      }
      for (size_t k = 0; k < slots * s; ++k) {
        double sum = partial[k];
        for (int c = 1; c < copies; ++c) sum += partial[c * slots * s + k];
        histogram[layout.offset(f) + k] = sum;
      }
    }
    return histogram;
  }
};

std::vector<uint32_t> Range(uint32_t begin, uint32_t end) {
  std::vector<uint32_t> documents(end - begin);
  std::iota(documents.begin(), documents.end(), begin);
  return documents;
}

std::vector<uint32_t> RandomSubset(size_t n, double share, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<uint32_t> documents;
  for (uint32_t i = 0; i < n; ++i) {
    if ((rng.Next() >> 11) * 0x1.0p-53 < share) documents.push_back(i);
  }
  return documents;
}

std::vector<int32_t> AllFeatures(const BinnedDataset& binned) {
  std::vector<int32_t> features(binned.num_features());
  std::iota(features.begin(), features.end(), 0);
  return features;
}

// The kernels' contract on one data set: contiguous runs of >= 16384
// documents (the column kernel: 4 interleaved copies) and everything else
// (the row kernel: document order), for both layouts, feature lists with and
// without gaps, 1-3 threads and both kernel compilations.
void ExpectReferenceSums(const BinnedDataset& binned, uint64_t seed) {
  const Sums sums(binned, seed);
  const size_t n = binned.num_documents();
  const std::vector<int32_t> all = AllFeatures(binned);
  std::vector<int32_t> gaps;  // as with feature sampling: not consecutive
  for (int32_t f = 0; f < binned.num_features(); f += 2) gaps.push_back(f);
  const std::vector<int32_t>& gaps_const = gaps;
  struct Leaf {
    std::string name;
    std::vector<uint32_t> documents;
    int copies;
  };
  const std::vector<Leaf> leaves = {
      {"all (column kernel, blocks + a partial one)", Range(0, n), 4},
      {"a run from 5, not a multiple of 4", Range(5, n - 2), 4},
      {"a short run (row kernel)", Range(17, 16000), 1},
      {"every 3rd", [&] {
         std::vector<uint32_t> d;
         for (uint32_t i = 1; i < n; i += 3) d.push_back(i);
         return d;
       }(), 1},
      {"random 30%", RandomSubset(n, 0.3, seed + 1), 1},
      {"random 2%", RandomSubset(n, 0.02, seed + 2), 1},
      {"5 documents",
       {3, 9, 400, static_cast<uint32_t>(n / 2), static_cast<uint32_t>(n - 1)},
       1},
  };
  for (bool baseline : {false, true}) {
    const KernelChoice choice(baseline);
    for (bool hessians : {false, true}) {
      const HistogramLayout layout(binned, hessians);
      for (const Leaf& leaf : leaves) {
        for (const std::vector<int32_t>* features : {&all, &gaps_const}) {
          const std::vector<double> expected =
              sums.Reference(layout, leaf.documents, *features, leaf.copies);
          for (int32_t threads : {1, 2, 3}) {
            EXPECT_EQ(sums.Build(layout, leaf.documents, *features, threads),
                      expected)
                << leaf.name << ", baseline kernels " << baseline
                << ", hessians " << hessians << ", features "
                << features->size() << ", threads " << threads;
          }
        }
      }
    }
  }
}

TEST(HistogramBlocksTest, ManyBinsWithMissingValuesMatchTheReference) {
  // 255 bins for the continuous features, 10 for every third, NaNs in every
  // fifth; 40,003 documents: two full column blocks and a partial one, 20
  // row blocks.
  const Dataset data = testing::RandomDataset(40003, 11, 5);
  const BinnedDataset binned = BinnedDataset::Build(data, 255, 200000, 2);
  ASSERT_GE(binned.mapper(0).num_bins(), 200);
  ExpectReferenceSums(binned, 21);
}

TEST(HistogramBlocksTest, FewBinsMatchTheReference) {
  // At most 3 bins per feature: long runs of one bin in every column.
  const Dataset data = testing::RandomDataset(33000, 7, 8);
  const BinnedDataset binned = BinnedDataset::Build(data, 3, 200000, 2);
  ASSERT_LE(binned.mapper(0).num_bins(), 3);
  ExpectReferenceSums(binned, 22);
}

TEST(HistogramBlocksTest, ManyFeaturesSpanSeveralSubgroups) {
  // 150 features: more than one row-kernel subgroup (32 or 64 features) per
  // thread, and more than one column-kernel subgroup of copies.
  const Dataset data = testing::RandomDataset(17000, 150, 9);
  const BinnedDataset binned = BinnedDataset::Build(data, 63, 200000, 2);
  ExpectReferenceSums(binned, 23);
}

TEST(HistogramBlocksTest, HandMadeSums) {
  // Feature 0 takes values 1, 2, 3 and NaN; the sums per bin and the missing
  // slot (the last) are written out by hand.
  const std::vector<std::vector<float>> columns = {
      {1, 2, 3, NAN, 1, 2, NAN, 3, 1}};
  const std::vector<int32_t> labels = {0, 1, 0, 1, 0, 1, 0, 1, 0};
  const Dataset data = testing::MakeDataset(columns, labels, 9);
  const BinnedDataset binned = BinnedDataset::Build(data, 255, 1000, 1);
  ASSERT_EQ(binned.num_features(), 1);
  ASSERT_EQ(binned.mapper(0).num_bins(), 3);
  const std::vector<float> g = {0.5f, -1.0f, 2.0f, 4.0f, 0.25f,
                                8.0f, -2.0f, 1.5f, 0.125f};
  const std::vector<float> h = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f,
                                6.0f, 7.0f, 8.0f, 9.0f};
  const HistogramLayout layout(binned, true);
  ASSERT_EQ(layout.num_slots(0), 4);
  std::vector<uint32_t> documents(9);
  std::iota(documents.begin(), documents.end(), 0u);
  std::vector<float> pairs;
  for (uint32_t d : documents) {
    pairs.push_back(g[d]);
    pairs.push_back(h[d]);
  }
  for (bool baseline : {false, true}) {
    const KernelChoice choice(baseline);
    std::vector<double> histogram(layout.size(), -7.0);
    HistogramBuilder(layout, binned)
        .Build(documents, pairs.data(), {0}, histogram.data(), 1);
    const std::vector<double> expected = {
        0.5 + 0.25 + 0.125, 1 + 5 + 9, 3, 0,  // value 1: documents 0, 4, 8
        -1.0 + 8.0,         2 + 6,     2, 0,  // value 2: 1, 5
        2.0 + 1.5,          3 + 8,     2, 0,  // value 3: 2, 7
        4.0 - 2.0,          4 + 7,     2, 0,  // missing: 3, 6
    };
    EXPECT_EQ(histogram, expected) << "baseline kernels " << baseline;
  }
}

}  // namespace
}  // namespace plrank
