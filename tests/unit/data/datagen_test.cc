#include "core/data/datagen.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/data/letor_writer.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

DatagenOptions SmallOptions() {
  DatagenOptions options;
  options.num_queries = 300;
  options.mean_docs_per_query = 60;
  options.num_features = 136;
  return options;
}

std::string AsText(const Dataset& data) {
  std::string text;
  EXPECT_TRUE(AppendLetorText(data, &text).ok());
  return text;
}

TEST(DatagenTest, SameOptionsGiveIdenticalBytes) {
  DatagenOptions options = SmallOptions();
  options.num_queries = 40;
  const std::string first = AsText(GenerateDataset(options));
  EXPECT_EQ(first, AsText(GenerateDataset(options)));
  options.seed = 2;
  EXPECT_NE(first, AsText(GenerateDataset(options)));
}

TEST(DatagenTest, ShapeMatchesOptions) {
  const DatagenOptions options = SmallOptions();
  const Dataset data = GenerateDataset(options);
  ASSERT_EQ(data.num_queries(), 300u);
  EXPECT_EQ(data.num_features, 136);
  EXPECT_EQ(data.features.size(), 136 * data.num_documents());
  EXPECT_EQ(data.query_ids.front(), "1");
  EXPECT_EQ(data.query_ids.back(), "300");
  std::vector<double> sizes;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    sizes.push_back(data.query_end(q) - data.query_begin(q));
  }
  double mean = 0;
  for (double size : sizes) mean += size;
  mean /= sizes.size();
  double variance = 0;
  for (double size : sizes) variance += (size - mean) * (size - mean);
  variance /= sizes.size();
  EXPECT_NEAR(mean, 60, 6);
  EXPECT_GT(std::sqrt(variance) / mean, 0.4) << "sizes should spread widely";
  EXPECT_GE(*std::min_element(sizes.begin(), sizes.end()), 1);
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), 600);
}

TEST(DatagenTest, LabelSharesAreMslrLike) {
  const Dataset data = GenerateDataset(SmallOptions());
  std::vector<double> share(5, 0);
  for (int32_t label : data.labels) {
    ASSERT_GE(label, 0);
    ASSERT_LE(label, 4);
    share[label] += 1.0 / data.num_documents();
  }
  EXPECT_NEAR(share[0], 0.51, 0.02);
  EXPECT_NEAR(share[1], 0.32, 0.02);
  EXPECT_NEAR(share[2], 0.13, 0.02);
  EXPECT_NEAR(share[3], 0.025, 0.01);
  EXPECT_NEAR(share[4], 0.015, 0.01);
  int without_relevant = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    int32_t best = 0;
    for (size_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      best = std::max(best, data.labels[i]);
    }
    without_relevant += best == 0;
  }
  EXPECT_GT(without_relevant, 0);
  EXPECT_LT(without_relevant, 0.15 * data.num_queries());
}

struct ColumnProfile {
  double zero_share = 0;
  int nan_count = 0;
  bool integral = true;
  bool constant_within_queries = true;
  double label_correlation = 0;
  // Correlation of query-centered values: what ranking within a query sees.
  double within_query_correlation = 0;
};

double WithinQueryCorrelation(const Dataset& data, const float* column) {
  double sum_xx = 0, sum_yy = 0, sum_xy = 0;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    double mean_x = 0, mean_y = 0;
    int present = 0;
    for (size_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      if (std::isnan(column[i])) continue;
      mean_x += column[i], mean_y += data.labels[i], ++present;
    }
    if (present == 0) continue;
    mean_x /= present, mean_y /= present;
    for (size_t i = data.query_begin(q); i < data.query_end(q); ++i) {
      if (std::isnan(column[i])) continue;
      const double x = column[i] - mean_x, y = data.labels[i] - mean_y;
      sum_xx += x * x, sum_yy += y * y, sum_xy += x * y;
    }
  }
  return sum_xx > 0 ? sum_xy / std::sqrt(sum_xx * sum_yy) : 0;
}

ColumnProfile Profile(const Dataset& data, int32_t feature) {
  ColumnProfile profile;
  const float* column = data.column(feature);
  const size_t n = data.num_documents();
  double sum_x = 0, sum_y = 0, sum_xx = 0, sum_yy = 0, sum_xy = 0;
  size_t present = 0;
  for (size_t i = 0; i < n; ++i) {
    const float x = column[i];
    if (std::isnan(x)) {
      ++profile.nan_count;
      continue;
    }
    profile.zero_share += x == 0;
    profile.integral = profile.integral && x == std::floor(x);
    const double y = data.labels[i];
    sum_x += x, sum_y += y, sum_xx += double(x) * x, sum_yy += y * y;
    sum_xy += x * y;
    ++present;
  }
  profile.zero_share /= n;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    for (size_t i = data.query_begin(q) + 1; i < data.query_end(q); ++i) {
      if (column[i] != column[data.query_begin(q)]) {
        profile.constant_within_queries = false;
      }
    }
  }
  const double cov = sum_xy / present - (sum_x / present) * (sum_y / present);
  const double var_x = sum_xx / present - std::pow(sum_x / present, 2);
  const double var_y = sum_yy / present - std::pow(sum_y / present, 2);
  profile.label_correlation =
      var_x > 0 ? cov / std::sqrt(var_x * var_y) : 0;
  profile.within_query_correlation = WithinQueryCorrelation(data, column);
  return profile;
}

TEST(DatagenTest, FeaturesMixTheIntendedKinds) {
  const Dataset data = GenerateDataset(SmallOptions());
  int integral = 0, sparse = 0, with_nan = 0, query_level = 0, informative = 0;
  for (int32_t f = 0; f < data.num_features; ++f) {
    const ColumnProfile profile = Profile(data, f);
    integral += profile.integral && !profile.constant_within_queries;
    sparse += profile.zero_share > 0.4;
    with_nan += profile.nan_count > 0;
    query_level += profile.constant_within_queries;
    informative += std::fabs(profile.label_correlation) > 0.15;
    EXPECT_LT(profile.nan_count, 0.2 * data.num_documents());
  }
  EXPECT_GE(integral, 10);
  EXPECT_GE(sparse, 10);
  EXPECT_GE(with_nan, 1);
  EXPECT_LE(with_nan, 6);
  EXPECT_GE(query_level, 5);
  EXPECT_GE(informative, 5);
  EXPECT_LT(informative, data.num_features / 2) << "most features are weak";
}

TEST(DatagenTest, NoiseWeakensTheSignal) {
  DatagenOptions options = SmallOptions();
  const auto best_correlation = [&](double noise) {
    options.noise = noise;
    const Dataset data = GenerateDataset(options);
    double best = 0;
    for (int32_t f = 0; f < data.num_features; ++f) {
      best = std::max(best,
                      std::fabs(Profile(data, f).within_query_correlation));
    }
    return best;
  };
  EXPECT_GT(best_correlation(0.0), best_correlation(3.0) + 0.05);
}

TEST(DatagenTest, SmallWidthsWork) {
  DatagenOptions options = SmallOptions();
  options.num_queries = 5;
  options.mean_docs_per_query = 3;
  for (int32_t width : {1, 2, 7}) {
    options.num_features = width;
    const Dataset data = GenerateDataset(options);
    EXPECT_EQ(data.num_features, width);
    EXPECT_EQ(data.num_queries(), 5u);
  }
}

TEST(DatagenTest, ValidationRefusesNonsense) {
  EXPECT_TRUE(ValidateDatagenOptions(SmallOptions()).ok());
  const auto refused = [](auto change) {
    DatagenOptions options = SmallOptions();
    change(options);
    return !ValidateDatagenOptions(options).ok() &&
           GenerateDataset(options).num_documents() == 0;
  };
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.num_queries = 0; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.mean_docs_per_query = 0.5; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.num_features = 0; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.noise = -1; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.noise = NAN; }));
  EXPECT_TRUE(refused([](DatagenOptions& o) { o.missing_rate = 1; }));
}

}  // namespace
}  // namespace plrank
