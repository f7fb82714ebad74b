#include "core/objectives/query_objective.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace plrank {

absl::Status QueryObjective::BindQueries(const Dataset& train) {
  absl::StatusOr<QueryLabels> queries = QueryLabels::Build(train);
  if (!queries.ok()) return queries.status();
  queries_ = *std::move(queries);
  return absl::OkStatus();
}

absl::Status QueryObjective::Init(const Dataset& train, uint64_t seed) {
  if (absl::Status status = BindQueries(train); !status.ok()) return status;
  const TrainingWeights& weights = training_weights();
  if (!weights.document.empty() &&
      weights.document.size() != queries_.num_documents()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d document weights for %d training documents",
        weights.document.size(), queries_.num_documents()));
  }
  if (!weights.query.empty() &&
      weights.query.size() != queries_.num_queries()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d query weights for %d training queries",
                        weights.query.size(), queries_.num_queries()));
  }
  if (!weights.document.empty() && !applies_own_weights()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--objective=%s takes query weights only (a .weight file with one "
        "value per query, or group_weight=); per-document weights and "
        "--position_debias=ips need plrank, lambdamart or mart1/mart2/cmart1",
        name()));
  }
  return InitQueries(train, seed);
}

std::unique_ptr<QueryScratch> QueryObjective::NewScratch() const {
  auto scratch = std::make_unique<QueryScratch>();
  const size_t size = queries_.max_query_size;
  scratch->first.reserve(size);
  scratch->second.reserve(size);
  scratch->work.reserve(size);
  scratch->order.reserve(size);
  return scratch;
}

template <typename T>
void QueryObjective::WriteDerivatives(absl::Span<const double> scores,
                                      absl::Span<const uint8_t> query_in_bag,
                                      T* gradients, T* hessians) const {
  const size_t num_documents = queries_.num_documents();
  const size_t outputs = static_cast<size_t>(num_outputs());
  const int64_t num_queries = static_cast<int64_t>(queries_.num_queries());
  const bool scale_queries =
      !applies_own_weights() && !training_weights().query.empty();
#pragma omp parallel
  {
    // The loss's buffers and the query's derivatives in double, grown to the
    // largest query once: no allocation per query or per document.
    const std::unique_ptr<QueryScratch> scratch = NewScratch();
    std::vector<double> first(outputs * queries_.max_query_size);
    std::vector<double> second(outputs * queries_.max_query_size);
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < num_queries; ++q) {
      const uint32_t begin = queries_.begin(q);
      const uint32_t n = queries_.size(q);
      if (!QueryInBag(query_in_bag, q)) {
        for (size_t k = 0; k < outputs; ++k) {
          std::fill_n(gradients + k * num_documents + begin, n, T{0});
          std::fill_n(hessians + k * num_documents + begin, n, T{0});
        }
        continue;
      }
      QueryDerivatives(q, scores.data() + begin, first.data(), second.data(),
                       *scratch);
      if (scale_queries) {
        const double w = training_weights().query[q];
        for (size_t i = 0; i < outputs * n; ++i) {
          first[i] *= w;
          second[i] *= w;
        }
      }
      for (size_t k = 0; k < outputs; ++k) {
        T* g = gradients + k * num_documents + begin;
        T* h = hessians + k * num_documents + begin;
        const double* local_g = first.data() + k * n;
        const double* local_h = second.data() + k * n;
        for (uint32_t i = 0; i < n; ++i) {
          g[i] = static_cast<T>(local_g[i]);
          h[i] = static_cast<T>(local_h[i]);
        }
      }
    }
  }
}

void QueryObjective::ComputeGradients(absl::Span<const double> scores,
                                      absl::Span<const uint8_t> query_in_bag,
                                      absl::Span<float> gradients,
                                      absl::Span<float> hessians) {
  WriteDerivatives(scores, query_in_bag, gradients.data(), hessians.data());
}

void QueryObjective::ComputeDerivativesDouble(
    absl::Span<const double> scores, absl::Span<const uint8_t> query_in_bag,
    absl::Span<double> gradients, absl::Span<double> hessians) const {
  WriteDerivatives(scores, query_in_bag, gradients.data(), hessians.data());
}

double QueryObjective::Loss(absl::Span<const double> scores) const {
  const int64_t num_queries = static_cast<int64_t>(queries_.num_queries());
  std::vector<double> per_query(queries_.num_queries(), 0.0);
  const bool scale_queries =
      !applies_own_weights() && !training_weights().query.empty();
#pragma omp parallel
  {
    const std::unique_ptr<QueryScratch> scratch = NewScratch();
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < num_queries; ++q) {
      per_query[q] = QueryLoss(q, scores.data() + queries_.begin(q), *scratch);
      if (scale_queries) per_query[q] *= training_weights().query[q];
    }
  }
  // Query order, whatever thread computed which query.
  double total = 0.0;
  for (double value : per_query) total += value;
  return total;
}

}  // namespace plrank
