#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "core/metrics/ranking_metrics.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(PairedTTestTest, OneDegreeOfFreedomClosedForm) {
  // Differences 1, 3: mean 2, sample variance ((-1)^2 + 1^2) / 1 = 2,
  // standard error sqrt(2 / 2) = 1, t = 2, df = 1. Student t with 1 df is
  // Cauchy: two-tailed p = 1 - (2/pi) atan(|t|) = 0.2951672353008665.
  const double expected = 1 - 2 / std::numbers::pi * std::atan(2.0);
  EXPECT_NEAR(PairedTTestPValue(std::vector<double>{1, 3},
                                std::vector<double>{0, 0}),
              expected, 1e-12);
}

TEST(PairedTTestTest, TwoDegreesOfFreedomClosedForm) {
  // Differences 1, 2, 4 (a - b): mean 7/3, squared deviations
  // 16/9 + 1/9 + 25/9 = 42/9, variance 21/9, standard error sqrt(7/9),
  // t = (7/3) / (sqrt(7)/3) = sqrt(7), df = 2. With 2 df the two-tailed
  // p = 1 - |t| / sqrt(2 + t^2) = 1 - sqrt(7)/3 = 0.11808289631180313.
  const std::vector<double> a = {1.5, 2.5, 4.25};
  const std::vector<double> b = {0.5, 0.5, 0.25};
  const double expected = 1 - std::sqrt(7.0) / 3;
  EXPECT_NEAR(PairedTTestPValue(a, b), expected, 1e-12);
  // Two-tailed: symmetric in a and b.
  EXPECT_NEAR(PairedTTestPValue(b, a), expected, 1e-12);
}

TEST(PairedTTestTest, StudentSleepData) {
  // Cushny & Peebles' sleep data, as in Student (1908) and R's
  // t.test(extra ~ group, data = sleep, paired = TRUE):
  // t = -4.0621, df = 9, p-value = 0.002833.
  const std::vector<double> group1 = {0.7, -1.6, -0.2, -1.2, -0.1,
                                      3.4, 3.7,  0.8,  0.0,  2.0};
  const std::vector<double> group2 = {1.9, 0.8, 1.1, 0.1, -0.1,
                                      4.4, 5.5, 1.6, 4.6, 3.4};
  EXPECT_NEAR(PairedTTestPValue(group1, group2), 0.002833, 5e-7);
}

TEST(PairedTTestTest, EdgeCases) {
  // Fewer than two pairs.
  EXPECT_EQ(PairedTTestPValue(std::vector<double>{}, std::vector<double>{}), 1);
  EXPECT_EQ(PairedTTestPValue(std::vector<double>{1}, std::vector<double>{0}),
            1);
  // Zero variance of the differences.
  EXPECT_EQ(PairedTTestPValue(std::vector<double>{0.3, 0.7, 0.1},
                              std::vector<double>{0.3, 0.7, 0.1}),
            1);
  EXPECT_EQ(PairedTTestPValue(std::vector<double>{1.1, 1.2, 1.3},
                              std::vector<double>{1.0, 1.1, 1.2}) < 1e-6,
            true);
  EXPECT_EQ(PairedTTestPValue(std::vector<double>{2, 3, 4},
                              std::vector<double>{1, 2, 3}),
            0);
  // NaN pairs are dropped: same as the 1-df case above.
  EXPECT_NEAR(PairedTTestPValue(std::vector<double>{1, kNaN, 3, 5},
                                std::vector<double>{0, 0, 0, kNaN}),
              1 - 2 / std::numbers::pi * std::atan(2.0), 1e-12);
}

}  // namespace
}  // namespace plrank
