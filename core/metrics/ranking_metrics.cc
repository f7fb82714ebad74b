#include "core/metrics/ranking_metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/data/ranking_order.h"

namespace plrank {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Buffers reused across calls so that evaluating many queries allocates only
// until the buffers reach the largest query size.
struct Scratch {
  std::vector<uint32_t> order;
  std::vector<int32_t> sorted_labels;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

size_t Cutoff(int32_t k, size_t n) {
  return (k <= 0 || static_cast<size_t>(k) >= n) ? n : static_cast<size_t>(k);
}

double Gain(int32_t label) { return std::ldexp(1.0, label) - 1.0; }

double Discount(size_t rank0) { return 1.0 / std::log2(2.0 + rank0); }

bool HasRelevant(absl::Span<const int32_t> labels) {
  for (int32_t label : labels) {
    if (label > 0) return true;
  }
  return false;
}

double EmptyValue(EmptyQueryNdcg empty) {
  switch (empty) {
    case EmptyQueryNdcg::kOne:
      return 1.0;
    case EmptyQueryNdcg::kZero:
      return 0.0;
    case EmptyQueryNdcg::kSkip:
      return kNaN;
  }
  return kNaN;
}

// Fills scratch.order with the first `top` documents of the ranking (the
// full order when top == n); see the header for the tie rules.
absl::Span<const uint32_t> RankTop(absl::Span<const double> scores,
                                   absl::Span<const int32_t> labels,
                                   size_t top, Scratch& scratch) {
  assert(scores.size() == labels.size());
  const size_t n = labels.size();
  std::vector<uint32_t>& order = scratch.order;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  auto ranks_before = [&](uint32_t a, uint32_t b) {
    return RanksBefore(scores[a], labels[a], a, scores[b], labels[b], b);
  };
  if (top < n) {
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      ranks_before);
  } else {
    std::sort(order.begin(), order.end(), ranks_before);
  }
  return absl::MakeConstSpan(order.data(), top);
}

double IdealDcg(absl::Span<const int32_t> labels, size_t top,
                Scratch& scratch) {
  std::vector<int32_t>& sorted = scratch.sorted_labels;
  sorted.assign(labels.begin(), labels.end());
  if (top < sorted.size()) {
    std::partial_sort(sorted.begin(), sorted.begin() + top, sorted.end(),
                      std::greater<int32_t>());
  } else {
    std::sort(sorted.begin(), sorted.end(), std::greater<int32_t>());
  }
  double dcg = 0.0;
  for (size_t i = 0; i < top; ++i) dcg += Gain(sorted[i]) * Discount(i);
  return dcg;
}

}  // namespace

double NdcgAtK(absl::Span<const double> scores, absl::Span<const int32_t> labels,
               int32_t k, EmptyQueryNdcg empty, bool* counted) {
  if (counted != nullptr) *counted = true;
  if (!HasRelevant(labels)) {
    if (counted != nullptr) *counted = empty != EmptyQueryNdcg::kSkip;
    return EmptyValue(empty);
  }
  Scratch& scratch = ThreadScratch();
  const size_t top = Cutoff(k, labels.size());
  const double ideal = IdealDcg(labels, top, scratch);
  const absl::Span<const uint32_t> ranked = RankTop(scores, labels, top, scratch);
  double dcg = 0.0;
  for (size_t i = 0; i < top; ++i) dcg += Gain(labels[ranked[i]]) * Discount(i);
  return dcg / ideal;
}

double ErrAtK(absl::Span<const double> scores, absl::Span<const int32_t> labels,
              int32_t k, int32_t max_grade) {
  if (!HasRelevant(labels)) return 0.0;
  if (max_grade <= 0) {
    max_grade = *std::max_element(labels.begin(), labels.end());
  }
  const double scale = std::ldexp(1.0, -max_grade);
  Scratch& scratch = ThreadScratch();
  const size_t top = Cutoff(k, labels.size());
  const absl::Span<const uint32_t> ranked = RankTop(scores, labels, top, scratch);
  double err = 0.0;
  double not_stopped = 1.0;  // prod_{j<i} (1 - R_j)
  for (size_t i = 0; i < top; ++i) {
    const int32_t grade = std::min(labels[ranked[i]], max_grade);
    const double stop = Gain(grade) * scale;
    err += not_stopped * stop / static_cast<double>(i + 1);
    not_stopped *= 1.0 - stop;
  }
  return err;
}

double AveragePrecisionAtK(absl::Span<const double> scores,
                           absl::Span<const int32_t> labels, int32_t k,
                           EmptyQueryNdcg empty) {
  size_t num_relevant = 0;
  for (int32_t label : labels) num_relevant += label > 0 ? 1 : 0;
  if (num_relevant == 0) return EmptyValue(empty);
  Scratch& scratch = ThreadScratch();
  const size_t top = Cutoff(k, labels.size());
  const absl::Span<const uint32_t> ranked = RankTop(scores, labels, top, scratch);
  double precision_sum = 0.0;
  size_t hits = 0;
  for (size_t i = 0; i < top; ++i) {
    if (labels[ranked[i]] <= 0) continue;
    ++hits;
    precision_sum += static_cast<double>(hits) / static_cast<double>(i + 1);
  }
  return precision_sum / static_cast<double>(std::min(num_relevant, top));
}

double AveragePrecision(absl::Span<const double> scores,
                        absl::Span<const int32_t> labels,
                        EmptyQueryNdcg empty) {
  return AveragePrecisionAtK(scores, labels, 0, empty);
}

std::vector<double> PerQueryMetric(const Dataset& data,
                                   absl::Span<const double> scores,
                                   const MetricSpec& spec,
                                   const MetricOptions& options) {
  const size_t num_queries = data.num_queries();
  std::vector<double> values(num_queries, kNaN);
  if (scores.size() != data.num_documents()) return values;
  const int32_t max_grade =
      options.max_grade > 0 ? options.max_grade : data.max_label();
  const int64_t n = static_cast<int64_t>(num_queries);
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic, 64)
#endif
  for (int64_t q = 0; q < n; ++q) {
    const size_t begin = data.query_begin(q);
    const size_t size = data.query_end(q) - begin;
    const absl::Span<const double> query_scores = scores.subspan(begin, size);
    const absl::Span<const int32_t> query_labels =
        absl::MakeConstSpan(data.labels).subspan(begin, size);
    double value = kNaN;
    switch (spec.kind) {
      case MetricSpec::Kind::kNdcg:
        value = NdcgAtK(query_scores, query_labels, spec.k, options.empty_query);
        break;
      case MetricSpec::Kind::kErr:
        // Skipped queries are left out of every metric, so that all metrics
        // of a report average over the same queries.
        value = (options.empty_query == EmptyQueryNdcg::kSkip &&
                 !HasRelevant(query_labels))
                    ? kNaN
                    : ErrAtK(query_scores, query_labels, spec.k,
                             std::max(max_grade, 1));
        break;
      case MetricSpec::Kind::kMap:
        value = AveragePrecisionAtK(query_scores, query_labels, spec.k,
                                    options.empty_query);
        break;
    }
    values[q] = value;
  }
  return values;
}

double MeanIgnoringNan(absl::Span<const double> values) {
  double sum = 0.0;
  size_t count = 0;
  for (double value : values) {
    if (std::isnan(value)) continue;
    sum += value;
    ++count;
  }
  return count == 0 ? kNaN : sum / static_cast<double>(count);
}

}  // namespace plrank
