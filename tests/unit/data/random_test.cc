// Known answers for every generator stream: bagging, feature subsets, PL
// tie-breaks, XE-NDCG gammas and generated data all depend on them, so a
// change here changes models and data files for a given seed.
#include "core/data/random.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(Random, Mix64AndSplitMix64HashKnownAnswers) {
  EXPECT_EQ(Mix64(12345), 0xf36cf1164265dd51ULL);
  EXPECT_EQ(SplitMix64Hash(12345), 0x22118258a9d111a0ULL);
  EXPECT_EQ(SplitMix64Hash(12345), Mix64(12345 + 0x9e3779b97f4a7c15ULL));
}

TEST(Random, SplitMix64StreamKnownAnswers) {
  SplitMix64 rng(42);
  EXPECT_EQ(rng.Next(), 0xbdd732262feb6e95ULL);
  EXPECT_EQ(rng.Next(), 0x28efe333b266f103ULL);
  EXPECT_EQ(rng.Next(), 0x47526757130f9f52ULL);
}

TEST(Random, BelowUnbiasedKnownAnswers) {
  SplitMix64 rng(7);
  for (uint64_t expected : {389830u, 16788u, 900763u, 582932u, 452443u, 249432u}) {
    EXPECT_EQ(rng.BelowUnbiased(1000003), expected);
  }
}

TEST(Random, BelowModuloKnownAnswers) {
  SplitMix64 rng(7);
  for (uint64_t expected : {291423u, 625217u, 913369u, 465503u, 301666u, 592581u}) {
    EXPECT_EQ(rng.BelowModulo(1000003), expected);
  }
}

TEST(Random, BelowStaysInRange) {
  SplitMix64 rng(3);
  for (uint64_t range : {1ull, 2ull, 3ull, 1000ull, (1ull << 63) + 5}) {
    for (int i = 0; i < 200; ++i) {
      EXPECT_LT(rng.BelowUnbiased(range), range);
      EXPECT_LT(rng.BelowModulo(range), range);
    }
  }
}

TEST(Random, Xoshiro256StreamKnownAnswers) {
  Xoshiro256 rng(5, 3);
  EXPECT_EQ(rng.Next(), 0xcec483dc9a567322ULL);
  EXPECT_EQ(rng.Next(), 0x74b3b0086db37268ULL);
  EXPECT_EQ(rng.Next(), 0xfa0f8307d9810dacULL);
  EXPECT_EQ(rng.Below(97), 66u);
}

}  // namespace
}  // namespace plrank
