#include "core/scoring/row_keys.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/scoring/order_key.h"
#include "gtest/gtest.h"

namespace plrank::internal {
namespace {

constexpr uint32_t kLowMissing = 0x11111111u;
constexpr uint32_t kHighMissing = 0xeeeeeeeeu;

struct Keys {
  std::vector<uint32_t> low;
  std::vector<uint32_t> high;
};

// KeyGroupScalar over a whole group, with KeyGroupAvx2's signature.
void ScalarGroup(const float* rows, size_t row_stride, const int32_t* features,
                 size_t count, uint32_t low_missing, uint32_t high_missing,
                 uint32_t* low, uint32_t* high) {
  KeyGroupScalar(rows, row_stride, kKeyGroupDocs, features, count, low_missing,
                 high_missing, low, high);
}

template <typename KeyGroup>
Keys WriteKeys(KeyGroup key_group, const std::vector<float>& rows,
               size_t stride, const std::vector<int32_t>& features) {
  // One spare key past the end catches writes beyond count.
  Keys keys{std::vector<uint32_t>((features.size() + 1) * kKeyGroupDocs, 7),
            std::vector<uint32_t>((features.size() + 1) * kKeyGroupDocs, 7)};
  key_group(rows.data(), stride, features.data(), features.size(), kLowMissing,
            kHighMissing, keys.low.data(), keys.high.data());
  return keys;
}

TEST(RowKeysTest, ScalarKeysByHand) {
  // Two features per row, stride 3 (the third column is never read).
  std::vector<float> rows(kKeyGroupDocs * 3, 5.0f);
  rows[0] = 0.0f;
  rows[1] = 1.0f;
  rows[3] = -0.0f;
  rows[4] = -1.0f;
  rows[6] = std::numeric_limits<float>::quiet_NaN();
  rows[7] = std::numeric_limits<float>::infinity();
  const Keys keys = WriteKeys(ScalarGroup, rows, 3, {0, 1});
  // Feature 0 of documents 0, 1, 2; feature 1 of the same.
  EXPECT_EQ(keys.low[0], 0x80000000u);  // +0
  EXPECT_EQ(keys.low[1], 0x80000000u);  // -0 folds into +0
  EXPECT_EQ(keys.low[2], kLowMissing);  // NaN
  EXPECT_EQ(keys.high[2], kHighMissing);
  EXPECT_EQ(keys.low[8], 0xbf800000u);   // 1.0: sign bit flipped
  EXPECT_EQ(keys.low[9], 0x407fffffu);   // -1.0: all bits flipped
  EXPECT_EQ(keys.low[10], 0xff800000u);  // +inf
  EXPECT_EQ(keys.high[9], keys.low[9]);  // only NaN differs
  EXPECT_EQ(keys.low[16], 7u);           // nothing past count
}

TEST(RowKeysTest, ScalarPartialGroupWritesOnlyItsDocuments) {
  constexpr size_t kDocs = 3;
  const std::vector<int32_t> features = {0, 2};
  std::vector<float> rows(kDocs * 4);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
  std::vector<uint32_t> low(features.size() * kKeyGroupDocs, 7);
  std::vector<uint32_t> high(features.size() * kKeyGroupDocs, 7);
  KeyGroupScalar(rows.data(), 4, kDocs, features.data(), features.size(),
                 kLowMissing, kHighMissing, low.data(), high.data());
  for (size_t j = 0; j < features.size(); ++j) {
    for (size_t d = 0; d < kKeyGroupDocs; ++d) {
      const uint32_t expected =
          d < kDocs ? OrderKey(rows[d * 4 + features[j]]) : 7u;
      EXPECT_EQ(low[j * kKeyGroupDocs + d], expected) << j << " " << d;
      EXPECT_EQ(high[j * kKeyGroupDocs + d], expected) << j << " " << d;
    }
  }
}

TEST(RowKeysTest, Avx2MatchesScalar) {
  if (!CpuHasAvx2ForRowKeys()) GTEST_SKIP() << "the CPU lacks AVX2";
  std::mt19937 rng(13);
  const std::vector<float> specials = {
      0.0f,
      -0.0f,
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::denorm_min(),
      -std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::max(),
      std::numeric_limits<float>::lowest()};
  std::normal_distribution<float> normal(0.0f, 10.0f);
  for (size_t count : {0, 1, 7, 8, 9, 16, 23, 136}) {
    // Adjacent features (plain loads), every other one and a random
    // increasing subset (gathers), in rows wider than the last feature.
    std::vector<std::vector<int32_t>> feature_lists(3);
    for (size_t j = 0; j < count; ++j) {
      feature_lists[0].push_back(static_cast<int32_t>(j));
      feature_lists[1].push_back(static_cast<int32_t>(2 * j + 1));
    }
    int32_t next = 0;
    for (size_t j = 0; j < count; ++j) {
      next += 1 + static_cast<int32_t>(rng() % 3);
      feature_lists[2].push_back(next);
    }
    for (const std::vector<int32_t>& features : feature_lists) {
      const size_t stride =
          (features.empty() ? 0 : static_cast<size_t>(features.back())) + 5;
      std::vector<float> rows(kKeyGroupDocs * stride);
      for (float& value : rows) {
        value =
            rng() % 4 == 0 ? specials[rng() % specials.size()] : normal(rng);
      }
      const Keys expected = WriteKeys(ScalarGroup, rows, stride, features);
      const Keys actual = WriteKeys(KeyGroupAvx2, rows, stride, features);
      EXPECT_EQ(actual.low, expected.low) << count << " features";
      EXPECT_EQ(actual.high, expected.high) << count << " features";
    }
  }
}

}  // namespace
}  // namespace plrank::internal
