#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

#include "absl/types/span.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank {
namespace {

// The project does not use exceptions: report domain problems through the
// return value instead of Boost's default throwing policy.
using NoThrowPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::errno_on_error>,
    boost::math::policies::overflow_error<
        boost::math::policies::errno_on_error>,
    boost::math::policies::evaluation_error<
        boost::math::policies::errno_on_error>>;

}  // namespace

double PairedTTestPValue(absl::Span<const double> a,
                         absl::Span<const double> b) {
  const size_t size = std::min(a.size(), b.size());
  std::vector<double> differences;
  differences.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const double difference = a[i] - b[i];
    if (std::isfinite(difference)) differences.push_back(difference);
  }
  const size_t n = differences.size();
  if (n < 2) return 1.0;
  // Checked exactly rather than via the variance, which rounding can leave
  // slightly positive for identical differences.
  if (std::all_of(differences.begin(), differences.end(),
                  [&](double d) { return d == differences[0]; })) {
    return differences[0] == 0.0 ? 1.0 : 0.0;
  }
  double sum = 0.0;
  for (double d : differences) sum += d;
  const double mean = sum / static_cast<double>(n);
  double squares = 0.0;
  for (double d : differences) squares += (d - mean) * (d - mean);
  const double variance = squares / static_cast<double>(n - 1);
  const double t = mean / std::sqrt(variance / static_cast<double>(n));
  if (!std::isfinite(t)) return 0.0;
  const boost::math::students_t_distribution<double, NoThrowPolicy>
      distribution(static_cast<double>(n - 1));
  const double p =
      2.0 * boost::math::cdf(boost::math::complement(distribution, std::fabs(t)));
  return std::clamp(p, 0.0, 1.0);
}

}  // namespace plrank
