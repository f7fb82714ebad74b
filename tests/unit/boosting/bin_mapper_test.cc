#include "core/boosting/bin_mapper.h"

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "core/boosting/binned_dataset.h"
#include "core/boosting/sampling.h"
#include "gtest/gtest.h"
#include "tests/testing/boosting_test_util.h"

namespace plrank {
namespace {

// bin(x) must be the first bin whose upper bound is >= x, checked by a scan.
void ExpectBinsAgreeWithThresholds(const BinMapper& mapper,
                                   const std::vector<float>& values) {
  for (float x : values) {
    const int32_t bin = mapper.BinOf(x);
    if (std::isnan(x)) {
      EXPECT_EQ(bin, mapper.num_bins());
      continue;
    }
    int32_t expected = 0;
    while (!(x <= mapper.upper_bound(expected))) ++expected;
    ASSERT_EQ(bin, expected) << "x=" << x;
    // Hence "bin <= b" is exactly "x <= upper_bound(b)" for every b.
    for (int32_t b = 0; b < mapper.num_bins(); ++b) {
      ASSERT_EQ(bin <= b, x <= mapper.upper_bound(b));
    }
  }
}

TEST(BinMapperTest, FewDistinctValuesGetOneBinEach) {
  const std::vector<float> values = {3, 1, 2, 2, 3, 1, 7, 7, 7, -1};
  const BinMapper mapper = BinMapper::Fit(values, 255);
  ASSERT_TRUE(mapper.is_useful());
  EXPECT_EQ(mapper.num_bins(), 5);
  std::set<int32_t> bins;
  for (float x : {-1.f, 1.f, 2.f, 3.f, 7.f}) bins.insert(mapper.BinOf(x));
  EXPECT_EQ(bins.size(), 5u);
  EXPECT_TRUE(std::isinf(mapper.upper_bound(mapper.num_bins() - 1)));
  // Unseen values between neighbours fall on one side or the other.
  ExpectBinsAgreeWithThresholds(mapper, {-5, -1, 0, 0.5, 1, 1.5, 2.9, 3, 4, 7,
                                         8, std::numeric_limits<float>::infinity(),
                                         -std::numeric_limits<float>::infinity()});
}

TEST(BinMapperTest, QuantileBinsRespectMaxBinAndThresholdContract) {
  SplitMix64 rng(7);
  std::vector<float> values;
  for (int i = 0; i < 20000; ++i) {
    const double u = (rng.Next() >> 11) * 0x1.0p-53;
    values.push_back(i % 3 == 0 ? 0.0f : static_cast<float>(std::exp(u * 10)));
  }
  for (int32_t max_bin : {2, 16, 63, 255}) {
    const BinMapper mapper = BinMapper::Fit(values, max_bin);
    EXPECT_LE(mapper.num_bins(), max_bin);
    EXPECT_GE(mapper.num_bins(), max_bin / 2) << "quantile bins should be used";
    for (int32_t b = 1; b < mapper.num_bins(); ++b) {
      EXPECT_LT(mapper.upper_bound(b - 1), mapper.upper_bound(b));
    }
    ExpectBinsAgreeWithThresholds(mapper, values);
  }
  // Equal-frequency: no non-zero bin much fuller than its share.
  const BinMapper mapper = BinMapper::Fit(values, 64);
  std::vector<int> counts(mapper.num_bins() + 1, 0);
  for (float x : values) ++counts[mapper.BinOf(x)];
  for (int32_t b = 1; b < mapper.num_bins(); ++b) {
    EXPECT_LT(counts[b], 3 * static_cast<int>(values.size()) / 64);
  }
}

TEST(BinMapperTest, MissingValuesGetTheirOwnSlot) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const BinMapper mapper = BinMapper::Fit({1, nan, 2, nan, 3}, 255);
  EXPECT_EQ(mapper.num_bins(), 3);
  EXPECT_EQ(mapper.BinOf(nan), mapper.missing_bin());
  EXPECT_EQ(mapper.missing_bin(), 3);
  // One value plus missing ones can still be split (missing vs present).
  EXPECT_TRUE(BinMapper::Fit({5, nan, 5}, 255).is_useful());
}

TEST(BinMapperTest, ConstantAndAllMissingFeaturesAreUnused) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(BinMapper::Fit({4, 4, 4, 4}, 255).is_useful());
  EXPECT_FALSE(BinMapper::Fit({nan, nan}, 255).is_useful());
  EXPECT_FALSE(BinMapper::Fit({}, 255).is_useful());
}

// Columns are binned by a table lookup; it must agree with BinOf everywhere,
// including narrow ranges (many bins per table cell), signs and infinities.
TEST(BinnedDatasetTest, ColumnBinningAgreesWithBinOf) {
  SplitMix64 rng(5);
  std::vector<float> narrow, mixed;
  const float inf = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 5000; ++i) {
    const double u = (rng.Next() >> 11) * 0x1.0p-53;
    narrow.push_back(static_cast<float>(1000.0 + u * 0.01));
    mixed.push_back(i % 97 == 0   ? -inf
                    : i % 89 == 0 ? inf
                    : i % 83 == 0 ? std::numeric_limits<float>::quiet_NaN()
                                  : static_cast<float>((u - 0.5) * std::exp(u * 20)));
  }
  const Dataset data = testing::MakeDataset({narrow, mixed}, std::vector<int32_t>(5000, 0));
  const BinnedDataset binned = BinnedDataset::Build(data, 255, 2000, 1);
  ASSERT_EQ(binned.num_features(), 2);
  for (int32_t f = 0; f < 2; ++f) {
    EXPECT_GT(binned.mapper(f).num_bins(), 100);  // ~164 floats in the narrow one
    for (size_t i = 0; i < data.num_documents(); ++i) {
      ASSERT_EQ(binned.column(f)[i], binned.mapper(f).BinOf(data.value(i, f)))
          << "feature " << f << " value " << data.value(i, f);
    }
  }
}

TEST(BinnedDatasetTest, DropsConstantFeaturesAndBinsBothLayoutsAlike) {
  Dataset data = testing::RandomDataset(3000, 6, 3);
  // Make feature 4 constant.
  for (size_t i = 0; i < data.num_documents(); ++i) {
    data.features[4 * data.num_documents() + i] = 1.5f;
  }
  const BinnedDataset binned = BinnedDataset::Build(data, 32, 1000, 2);
  ASSERT_EQ(binned.num_features(), 5);
  for (int32_t f = 0; f < binned.num_features(); ++f) {
    EXPECT_NE(binned.original(f), 4);
    for (size_t i = 0; i < data.num_documents(); ++i) {
      const uint8_t bin = binned.mapper(f).BinOf(data.value(i, binned.original(f)));
      ASSERT_EQ(binned.column(f)[i], bin);
      ASSERT_EQ(binned.rows()[i * binned.num_features() + f], bin);
      ASSERT_EQ(binned.bin(i, f), bin);
    }
  }
  const BinnedDataset again = BinnedDataset::BuildWithMappers(data, binned, 1);
  EXPECT_FALSE(again.has_columns());
  for (size_t i = 0; i < data.num_documents(); ++i) {
    for (int32_t f = 0; f < binned.num_features(); ++f) {
      ASSERT_EQ(again.bin(i, f), binned.bin(i, f));
    }
  }
}

}  // namespace
}  // namespace plrank
