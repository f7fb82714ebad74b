#include "core/boosting/bin_sample.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/boosting/binned_dataset.h"
#include "core/data/random.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

Dataset RandomData(size_t queries, uint32_t docs_per_query, int32_t features,
                   uint64_t seed) {
  Dataset data;
  data.num_features = features;
  SplitMix64 rng(seed);
  data.query_offsets.push_back(0);
  for (size_t q = 0; q < queries; ++q) {
    data.query_ids.push_back(absl::StrCat("q", q));
    for (uint32_t d = 0; d < docs_per_query; ++d) data.labels.push_back(d % 3);
    data.query_offsets.push_back(static_cast<uint32_t>(data.labels.size()));
  }
  data.features.resize(data.labels.size() * features);
  for (float& value : data.features) {
    value = static_cast<float>(rng.Next() % 1000) / 7.0f;
  }
  return data;
}

TEST(InBinningSample, TakesEveryDocumentOfASmallSet) {
  for (uint32_t i = 0; i < 100; ++i) {
    EXPECT_TRUE(InBinningSample("q", i, 1000, 1000));
  }
}

TEST(InBinningSample, TakesAboutTheTargetShareDecidedByQueryAndIndexAlone) {
  size_t taken = 0;
  for (int q = 0; q < 2000; ++q) {
    const std::string id = absl::StrCat(q);
    for (uint32_t i = 0; i < 50; ++i) {
      const bool in = InBinningSample(id, i, 100000, 10000);
      taken += in;
      // The same answer whatever else is asked around it.
      EXPECT_EQ(in, InBinningSample(id, i, 100000, 10000));
    }
  }
  EXPECT_NEAR(static_cast<double>(taken), 10000.0, 400.0);
}

TEST(FitBinMappers, SingleProcessOnASmallSetMatchesBinningEveryDocument) {
  // Below the sample size the sample is every document, as BinnedDataset::
  // Build's strided sample is: the same bounds, bit for bit.
  const Dataset data = RandomData(50, 20, 5, 3);
  IdentityReducer identity;
  const std::vector<BinMapper> mappers =
      FitBinMappers(data, 31, kMaxBinningSample, identity, 2);
  const BinnedDataset built = BinnedDataset::Build(data, 31, kMaxBinningSample, 2);
  ASSERT_EQ(mappers.size(), 5u);
  ASSERT_EQ(built.num_features(), 5);
  for (int32_t f = 0; f < 5; ++f) {
    EXPECT_EQ(mappers[f].upper_bounds(), built.mapper(f).upper_bounds());
  }
}

TEST(FitBinMappers, SampledBoundsDoNotDependOnHowTheSetIsSplit) {
  // Two halves with a query index base fit the same mappers as the whole
  // when their sampled values are pooled: sampling depends on (query id,
  // index) only. Simulated here by fitting the whole and the reordered set.
  Dataset data = RandomData(300, 10, 3, 9);
  IdentityReducer identity;
  const std::vector<BinMapper> whole = FitBinMappers(data, 15, 1000, identity, 1);
  // Reverse the query order (documents move with their queries).
  Dataset reversed = data;
  reversed.query_ids.assign(data.query_ids.rbegin(), data.query_ids.rend());
  const size_t n = data.num_documents();
  for (int32_t f = 0; f < 3; ++f) {
    for (size_t q = 0; q < 300; ++q) {
      for (size_t d = 0; d < 10; ++d) {
        reversed.features[f * n + (299 - q) * 10 + d] =
            data.features[f * n + q * 10 + d];
      }
    }
  }
  const std::vector<BinMapper> moved =
      FitBinMappers(reversed, 15, 1000, identity, 1);
  for (int32_t f = 0; f < 3; ++f) {
    EXPECT_EQ(whole[f].upper_bounds(), moved[f].upper_bounds());
  }
}

}  // namespace
}  // namespace plrank
