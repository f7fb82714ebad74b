#include "core/objectives/xendcg.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/random.h"

namespace plrank {
namespace {

// LightGBM divides by max(kEpsilon, sum phi). Non-skipped queries have
// sum phi > 1 (some label >= 1 gives phi >= 2 - gamma > 1), so this only
// documents the guard; it never changes a value.
constexpr double kMinPhiSum = 1e-15;

// Below this complement 1 - rho of the top document (a score gap of ~345) the
// correction terms, which divide by it, would approach overflow; the query
// then gets the first-order gradient only. LightGBM has no such guard and
// yields NaN once 1 - rho rounds to 0 (a gap of ~37).
constexpr double kMinTopComplement = 1e-150;

// Seed of the gamma stream of (iteration, query). Chained bijective mixes with
// distinct odd offsets, so neighbouring iterations and queries get unrelated
// streams and no (seed, iteration, query) coordinate can cancel another.
uint64_t StreamSeed(uint64_t seed, uint64_t iteration, uint64_t query) {
  uint64_t h = Mix64(seed + 0x9E3779B97F4A7C15ULL);
  h = Mix64(h ^ (iteration + 0xD1B54A32D192ED03ULL));
  return Mix64(h ^ (query + 0x8CB92BA72F3D8DD7ULL));
}

// Uniform in [0, 1) with 53 random bits.
double UnitUniform(SplitMix64& rng) {
  return static_cast<double>(rng.Next() >> 11) * 0x1.0p-53;
}

double PowerOfTwo(int32_t label) { return std::ldexp(1.0, label); }

}  // namespace

absl::Status XendcgObjective::InitQueries(const Dataset& train,
                                          uint64_t seed) {
  seed_ = seed;
  iteration_ = 0;
  query_index_base_ = train.query_index_base;
  const size_t num_queries = queries().num_queries();
  skip_.assign(num_queries, 0);
  skipped_queries_ = 0;
  for (size_t q = 0; q < num_queries; ++q) {
    int64_t label_sum = 0;
    for (uint32_t i = queries().begin(q); i < queries().offsets[q + 1]; ++i) {
      label_sum += queries().labels[i];
    }
    if (queries().size(q) <= 1 || label_sum == 0) {
      skip_[q] = 1;
      ++skipped_queries_;
    }
  }
  return absl::OkStatus();
}

void XendcgObjective::DrawPhi(size_t q, uint64_t iteration,
                              absl::Span<double> phi) const {
  const uint32_t n = queries().size(q);
  const int32_t* labels = queries().labels.data() + queries().begin(q);
  SplitMix64 rng(StreamSeed(seed_, iteration, query_index_base_ + q));
  for (uint32_t i = 0; i < n; ++i) {
    phi[i] = PowerOfTwo(labels[i]) - UnitUniform(rng);
  }
}

// LightGBM's approximation, with l1_i = rho_i - phi_i / sum phi:
//   p_i = l1_i / (1 - rho_i),  l2_i = rho_i * sum_{j != i} p_j,
//   q_i = l2_i / (1 - rho_i),  l3_i = rho_i * sum_{j != i} q_j,
//   g_i = l1_i + l2_i + l3_i,  h_i = rho_i (1 - rho_i).
// Same formulas, but evaluated without two cancellations LightGBM suffers
// from when one document holds almost all the probability mass: 1 - rho of
// the top document is the sum of the others' exps rather than 1 minus a
// rounded 1, and for it the sums over j != i are added up directly instead of
// subtracting its huge p (or q) from the total.
void XendcgObjective::QueryGradients(absl::Span<const double> scores,
                                     absl::Span<const double> phi,
                                     absl::Span<double> gradients,
                                     absl::Span<double> hessians,
                                     absl::Span<double> work,
                                     bool corrections) {
  const size_t n = scores.size();
  double* rho = work.data();
  double* aux = work.data() + n;
  double* complement = hessians.data();  // until the last loop

  // Softmax shifted by the maximum; `top` is the first maximal document.
  size_t top = 0;
  for (size_t i = 1; i < n; ++i) {
    if (scores[i] > scores[top]) top = i;
  }
  double total = 0.0;
  double others = 0.0;  // sum of the exps of every document but `top`
  for (size_t i = 0; i < n; ++i) {
    rho[i] = std::exp(scores[i] - scores[top]);
    total += rho[i];
    if (i != top) others += rho[i];
  }
  const double inverse_total = 1.0 / total;
  for (size_t i = 0; i < n; ++i) {
    // For i != top, total - exp_i >= exp_top = 1: no cancellation.
    complement[i] = (i == top ? others : total - rho[i]) * inverse_total;
    rho[i] *= inverse_total;
  }

  double phi_sum = 0.0;
  for (size_t i = 0; i < n; ++i) phi_sum += phi[i];
  const double inverse_phi_sum = 1.0 / std::max(kMinPhiSum, phi_sum);

  // First order.
  for (size_t i = 0; i < n; ++i) {
    gradients[i] = rho[i] - phi[i] * inverse_phi_sum;
  }
  if (corrections && complement[top] >= kMinTopComplement) {
    // Second order.
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      aux[i] = gradients[i] / complement[i];
      sum += aux[i];
    }
    double sum_without_top = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (i != top) sum_without_top += aux[i];
    }
    for (size_t i = 0; i < n; ++i) {
      const double l2 = rho[i] * (i == top ? sum_without_top : sum - aux[i]);
      gradients[i] += l2;
      aux[i] = l2 / complement[i];
    }
    // Third order.
    sum = 0.0;
    sum_without_top = 0.0;
    for (size_t i = 0; i < n; ++i) {
      sum += aux[i];
      if (i != top) sum_without_top += aux[i];
    }
    for (size_t i = 0; i < n; ++i) {
      gradients[i] += rho[i] * (i == top ? sum_without_top : sum - aux[i]);
    }
  }
  for (size_t i = 0; i < n; ++i) hessians[i] = rho[i] * complement[i];
}

void XendcgObjective::ComputeGradients(absl::Span<const double> scores,
                                       absl::Span<const uint8_t> query_in_bag,
                                       absl::Span<float> gradients,
                                       absl::Span<float> hessians) {
  // Set before the parallel loop; the queries only read it.
  drawing_iteration_ = iteration_++;
  QueryObjective::ComputeGradients(scores, query_in_bag, gradients, hessians);
}

void XendcgObjective::QueryDerivatives(size_t q, const double* scores,
                                       double* gradients, double* hessians,
                                       QueryScratch& scratch) const {
  const uint32_t n = queries().size(q);
  if (skip_[q]) {
    std::fill_n(gradients, n, 0.0);
    std::fill_n(hessians, n, 0.0);
    return;
  }
  // Per-thread buffer: it grows at most once (to the largest query), never
  // per query or per document.
  scratch.work.resize(3 * static_cast<size_t>(n));
  const absl::Span<double> phi = absl::MakeSpan(scratch.work).subspan(0, n);
  DrawPhi(q, drawing_iteration_, phi);
  QueryGradients(absl::MakeConstSpan(scores, n), phi,
                 absl::MakeSpan(gradients, n), absl::MakeSpan(hessians, n),
                 absl::MakeSpan(scratch.work).subspan(n));
}

double XendcgObjective::QueryLoss(size_t q, const double* scores,
                                  QueryScratch& /*scratch*/) const {
  if (skip_[q]) return 0.0;
  const uint32_t n = queries().size(q);
  const double* s = scores;
  const int32_t* labels = queries().labels.data() + queries().begin(q);
  const double top = *std::max_element(s, s + n);
  double normalizer = 0.0;
  double phi_sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    normalizer += std::exp(s[i] - top);
    phi_sum += PowerOfTwo(labels[i]) - 0.5;
  }
  const double log_normalizer = top + std::log(normalizer);
  double loss = 0.0;
  for (uint32_t i = 0; i < n; ++i) {
    loss += (PowerOfTwo(labels[i]) - 0.5) * (log_normalizer - s[i]);
  }
  return loss / phi_sum;
}

absl::StatusOr<std::unique_ptr<Objective>> MakeXendcg(
    const ObjectiveOptions& /*options*/) {
  return std::unique_ptr<Objective>(new XendcgObjective());
}

std::vector<std::string> XendcgObjective::Describe() const {
  return {absl::StrFormat(
      "xendcg: XE-NDCG cross entropy to (2^label - gamma) / sum, gamma ~ "
      "U[0,1) per document and iteration; %d of %d queries skipped (<= 1 "
      "document or all labels 0)",
      skipped_queries_, queries().num_queries())};
}

}  // namespace plrank
