#include "core/linear/listmle_objective.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/data/random.h"
#include "core/linear/informative_queries.h"
#include "core/linear/linear_model.h"

namespace plrank {

ListMleObjective::ListMleObjective(const Dataset& data,
                                   const FeatureScaling& scaling, int32_t topk,
                                   double l2, uint64_t seed)
    : data_(data), scaling_(scaling), topk_(topk), l2_(l2) {
  const size_t n = data.num_documents();
  permutation_.assign(n, 0);
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const uint32_t begin = data.query_begin(q);
    const uint32_t end = data.query_end(q);
    if (!QueryHasDistinctLabels(data, q)) continue;
    informative_.push_back(static_cast<uint32_t>(q));
    uint32_t* order = permutation_.data() + begin;
    const uint32_t size = end - begin;
    for (uint32_t i = 0; i < size; ++i) order[i] = begin + i;
    // Shuffle, then a stable sort by label: ties end up in random order.
    Xoshiro256 random(seed, q);
    for (uint32_t i = size; i > 1; --i) {
      std::swap(order[i - 1], order[random.Below(i)]);
    }
    std::stable_sort(order, order + size, [&](uint32_t a, uint32_t b) {
      return data.labels[a] > data.labels[b];
    });
  }
  raw_weights_.assign(data.num_features, 0.0);
  scores_.assign(n, 0.0);
  context_lse_.assign(n, 0.0);
  doc_gradient_.assign(n, 0.0);  // stays 0 in skipped queries
  query_log_likelihood_.assign(informative_.size(), 0.0);
}

double ListMleObjective::Evaluate(absl::Span<const double> v,
                                  absl::Span<double> gradient) {
  const int32_t m = data_.num_features;
  const int64_t n = static_cast<int64_t>(data_.num_documents());
  const bool parallel = n >= kLinearParallelMinDocuments;
  for (int32_t f = 0; f < m; ++f) {
    raw_weights_[f] = scaling_.active[f] ? v[f] / scaling_.stddev[f] : 0.0;
  }

  // Scores: fixed document blocks, features added in order.
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * kBlock;
    const int64_t end = std::min(n, begin + kBlock);
    std::fill(scores_.begin() + begin, scores_.begin() + end, 0.0);
    for (int32_t f = 0; f < m; ++f) {
      const double w = raw_weights_[f];
      if (w == 0.0) continue;
      const float* column = data_.column(f);
      for (int64_t i = begin; i < end; ++i) {
        if (!std::isnan(column[i])) scores_[i] += w * column[i];
      }
    }
  }

  // Per query: log-likelihood and d log p / d s.
  const int64_t queries = static_cast<int64_t>(informative_.size());
#pragma omp parallel for schedule(dynamic, 16) if (parallel)
  for (int64_t j = 0; j < queries; ++j) {
    const uint32_t q = informative_[j];
    const uint32_t begin = data_.query_begin(q);
    const uint32_t size = data_.query_end(q) - begin;
    const uint32_t* order = permutation_.data() + begin;
    double* lse = context_lse_.data() + begin;
    const uint32_t k =
        topk_ <= 0 ? size
                   : std::min<uint32_t>(size, static_cast<uint32_t>(topk_));
    // Backward: log-sum-exp of C_t = {pi(t), ..., pi(n-1)} with a running
    // maximum, so no context sum can underflow or overflow.
    double max_score = -std::numeric_limits<double>::infinity();
    double scaled_sum = 0.0;  // sum over C_t of exp(s - max_score)
    for (uint32_t t = size; t-- > 0;) {
      const double s = scores_[order[t]];
      if (s > max_score) {
        scaled_sum = scaled_sum * std::exp(max_score - s) + 1.0;
        max_score = s;
      } else {
        scaled_sum += std::exp(s - max_score);
      }
      if (t < k) lse[t] = max_score + std::log(scaled_sum);
    }
    double log_likelihood = 0.0;
    for (uint32_t t = 0; t < k; ++t)
      log_likelihood += scores_[order[t]] - lse[t];
    query_log_likelihood_[j] = log_likelihood;
    // Forward: document at position t is in contexts 0..J, J = min(t, k-1);
    // sum_{i<=J} p(d|C_i) = exp(s_d - lse_J) * r_J with
    // r_J = sum_{i<=J} exp(lse_J - lse_i) = r_{J-1} exp(lse_J - lse_{J-1}) + 1
    // (every factor <= 1 since contexts shrink).
    double ratio_sum = 0.0;
    for (uint32_t t = 0; t < size; ++t) {
      const uint32_t last = std::min(t, k - 1);
      if (t < k) {
        ratio_sum =
            t == 0 ? 1.0 : ratio_sum * std::exp(lse[t] - lse[t - 1]) + 1.0;
      }
      const double s = scores_[order[t]];
      doc_gradient_[order[t]] =
          (t < k ? 1.0 : 0.0) - std::exp(s - lse[last]) * ratio_sum;
    }
  }

  double objective = 0.0;
  for (double ll : query_log_likelihood_) objective -= ll;
  for (int32_t f = 0; f < m; ++f) objective += 0.5 * l2_ * v[f] * v[f];

    // dF/dv_f = -sum_i g_i x_if / stddev_f + l2 v_f; one feature per task.
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
  for (int32_t f = 0; f < m; ++f) {
    double dot = 0.0;
    if (scaling_.active[f]) {
      const float* column = data_.column(f);
      for (int64_t i = 0; i < n; ++i) {
        if (!std::isnan(column[i])) dot += doc_gradient_[i] * column[i];
      }
      dot /= scaling_.stddev[f];
    }
    gradient[f] = -dot + l2_ * v[f];
  }
  return objective;
}

}  // namespace plrank
