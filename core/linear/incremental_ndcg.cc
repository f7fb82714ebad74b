#include "core/linear/incremental_ndcg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/data/ranking_order.h"
#include "core/linear/informative_queries.h"
#include "core/linear/linear_model.h"

namespace plrank {
namespace {

double Gain(int32_t label) { return std::ldexp(1.0, label) - 1.0; }

float ValueOrZero(float x) { return std::isnan(x) ? 0.0f : x; }

}  // namespace

IncrementalNdcg::IncrementalNdcg(const Dataset& data, int32_t k)
    : data_(data), k_(k) {
  const size_t n = data.num_documents();
  size_t longest = 0;
  std::vector<int32_t> sorted;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    const uint32_t begin = data.query_begin(q);
    const uint32_t end = data.query_end(q);
    if (!QueryHasDistinctLabels(data, q)) continue;
    informative_.push_back(static_cast<uint32_t>(q));
    informative_documents_ += end - begin;
    longest = std::max<size_t>(longest, end - begin);
  }
  const size_t ranks =
      k <= 0 ? longest : std::min<size_t>(longest, static_cast<size_t>(k));
  discount_.resize(ranks);
  for (size_t i = 0; i < ranks; ++i) discount_[i] = 1.0 / std::log2(2.0 + i);
  gain_.resize(n);
  for (size_t i = 0; i < n; ++i) gain_[i] = Gain(data.labels[i]);
  for (uint32_t q : informative_) {
    sorted.assign(data.labels.begin() + data.query_begin(q),
                  data.labels.begin() + data.query_end(q));
    std::sort(sorted.begin(), sorted.end(), std::greater<int32_t>());
    const size_t top = std::min(sorted.size(), ranks);
    double ideal = 0.0;
    for (size_t i = 0; i < top; ++i) ideal += Gain(sorted[i]) * discount_[i];
    inverse_ideal_dcg_.push_back(1.0 / ideal);  // labels not all 0: ideal > 0
  }
  varying_.resize(data.num_features);
  for (int32_t f = 0; f < data.num_features; ++f) {
    const float* column = data.column(f);
    for (uint32_t j = 0; j < informative_.size(); ++j) {
      const uint32_t begin = data.query_begin(informative_[j]);
      const uint32_t end = data.query_end(informative_[j]);
      const float first = ValueOrZero(column[begin]);
      for (uint32_t i = begin + 1; i < end; ++i) {
        if (ValueOrZero(column[i]) != first) {
          varying_[f].push_back(j);
          break;
        }
      }
    }
  }
  scores_.assign(n, 0.0);
  trial_scores_.assign(n, 0.0);
  order_.assign(n, 0);
  current_.assign(informative_.size(), 0.0);
  trial_.assign(informative_.size(), 0.0);
}

double IncrementalNdcg::QueryNdcg(uint32_t j, const double* scores) {
  const uint32_t begin = data_.query_begin(informative_[j]);
  const uint32_t end = data_.query_end(informative_[j]);
  const int32_t* labels = data_.labels.data();
  uint32_t* order = order_.data() + begin;
  const uint32_t size = end - begin;
  for (uint32_t i = 0; i < size; ++i) order[i] = begin + i;
  auto ranks_before = [&](uint32_t a, uint32_t b) {
    return RanksBefore(scores[a], labels[a], a, scores[b], labels[b], b);
  };
  const uint32_t top = std::min<uint32_t>(size, discount_.size());
  std::partial_sort(order, order + top, order + size, ranks_before);
  double dcg = 0.0;
  for (uint32_t i = 0; i < top; ++i) dcg += gain_[order[i]] * discount_[i];
  return dcg * inverse_ideal_dcg_[j];
}

void IncrementalNdcg::Evaluate(absl::Span<const uint32_t> queries,
                               int32_t feature, double step, bool apply,
                               std::vector<double>& values) {
  const int64_t count = static_cast<int64_t>(queries.size());
  const float* column = feature >= 0 ? data_.column(feature) : nullptr;
  double* target = apply ? scores_.data() : trial_scores_.data();
#pragma omp parallel for schedule(static) if (informative_documents_ >= \
                                              kLinearParallelMinDocuments)
  for (int64_t c = 0; c < count; ++c) {
    const uint32_t j = queries[c];
    const uint32_t begin = data_.query_begin(informative_[j]);
    const uint32_t end = data_.query_end(informative_[j]);
    if (column != nullptr) {
      // Trial and Accept use this same expression, so an accepted step
      // reproduces its trial's NDCG bit for bit.
      for (uint32_t i = begin; i < end; ++i) {
        target[i] = scores_[i] + step * ValueOrZero(column[i]);
      }
    }
    values[j] = QueryNdcg(j, column != nullptr ? target : scores_.data());
  }
}

void IncrementalNdcg::Reset(absl::Span<const double> scores) {
  std::copy(scores.begin(), scores.end(), scores_.begin());
  std::vector<uint32_t> all(informative_.size());
  for (uint32_t j = 0; j < all.size(); ++j) all[j] = j;
  Evaluate(all, -1, 0.0, false, current_);
  current_sum_ = 0.0;
  for (double v : current_) current_sum_ += v;
}

double IncrementalNdcg::TrialSum(int32_t feature, double step) {
  trial_ = current_;
  Evaluate(varying_[feature], feature, step, false, trial_);
  double sum = 0.0;
  for (double v : trial_) sum += v;
  return sum;
}

void IncrementalNdcg::Accept(int32_t feature, double step) {
  Evaluate(varying_[feature], feature, step, true, current_);
  current_sum_ = 0.0;
  for (double v : current_) current_sum_ += v;
}

}  // namespace plrank
