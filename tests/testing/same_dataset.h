#ifndef PLRANK_TESTS_TESTING_SAME_DATASET_H_
#define PLRANK_TESTS_TESTING_SAME_DATASET_H_

#include <cstring>
#include <string>

#include "core/data/dataset.h"
#include "gtest/gtest.h"

namespace plrank::testing {

// Every field equal; features compared bitwise, so NaN equals NaN and -0
// differs from 0.
inline void ExpectSameDataset(const Dataset& a, const Dataset& b,
                              const std::string& what = "") {
  EXPECT_EQ(a.num_features, b.num_features) << what;
  EXPECT_EQ(a.labels, b.labels) << what;
  EXPECT_EQ(a.query_offsets, b.query_offsets) << what;
  EXPECT_EQ(a.query_ids, b.query_ids) << what;
  EXPECT_EQ(a.input_line_order, b.input_line_order) << what;
  ASSERT_EQ(a.features.size(), b.features.size()) << what;
  EXPECT_EQ(std::memcmp(a.features.data(), b.features.data(),
                        a.features.size() * sizeof(float)),
            0)
      << what;
}

}  // namespace plrank::testing

#endif  // PLRANK_TESTS_TESTING_SAME_DATASET_H_
