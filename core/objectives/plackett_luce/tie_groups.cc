#include "core/objectives/plackett_luce/tie_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/status.h"

namespace plrank {
namespace {

double TermWeight(PlWeighting weighting, int32_t label, uint32_t position,
                  uint32_t below) {
  const double gain = std::exp2(static_cast<double>(label)) - 1.0;
  const double discount = 1.0 / std::log2(static_cast<double>(position) + 2.0);
  switch (weighting) {
    case PlWeighting::kUniform:
      return 1.0;
    case PlWeighting::kGain:
      return gain;
    case PlWeighting::kPosition:
      return discount;
    case PlWeighting::kGainPosition:
      return gain * discount;
    case PlWeighting::kPairs:
      return below;
    case PlWeighting::kSqrtPairs:
      return std::sqrt(static_cast<double>(below));
  }
  return 1.0;
}

}  // namespace

absl::StatusOr<PlTieGroups> PlTieGroups::Build(
    const Dataset& data, const PlackettLuceOptions& options,
    const TrainingWeights* weights) {
  if (absl::Status s = ValidatePlackettLuceOptions(options); !s.ok()) return s;
  PlTieGroups result;
  const size_t num_queries = data.num_queries();
  result.queries_.resize(num_queries);
  result.members_.resize(data.num_documents());
  const bool document_weights =
      weights != nullptr && !weights->document.empty();
  const bool query_weights = weights != nullptr && !weights->query.empty();
  if (document_weights) result.share_.assign(data.num_documents(), 1.0);
  std::vector<uint32_t> order;
  for (size_t q = 0; q < num_queries; ++q) {
    PlTieQuery& query = result.queries_[q];
    query.begin = data.query_begin(q);
    query.size = data.query_end(q) - query.begin;
    query.group_begin = static_cast<uint32_t>(result.groups_.size());
    result.max_query_size_ = std::max(result.max_query_size_, query.size);
    const int32_t* labels = data.labels.data() + query.begin;
    order.resize(query.size);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return labels[a] > labels[b];
    });
    std::copy(order.begin(), order.end(),
              result.members_.begin() + query.begin);
    uint32_t start = 0;
    while (start < query.size) {
      uint32_t end = start + 1;
      while (end < query.size && labels[order[end]] == labels[order[start]]) {
        ++end;
      }
      PlTieGroup group;
      group.first = query.begin + start;
      group.size = end - start;
      group.weight_begin = static_cast<uint32_t>(result.weights_.size());
      const bool lowest = end == query.size;
      const bool tied_query = lowest && start == 0;
      if (!(lowest && options.stop_at_lowest_label) &&
          !(tied_query && options.skip_tied_queries) &&
          // A lone lowest document is chosen from itself alone: no term.
          !(lowest && group.size == 1)) {
        const uint32_t topk = options.topk == 0
                                  ? query.size
                                  : static_cast<uint32_t>(options.topk);
        group.terms = start >= topk ? 0 : std::min(group.size, topk - start);
      }
      double scale = query_weights ? weights->query[q] : 1.0;
      if (document_weights) {
        double sum = 0.0;
        for (uint32_t k = start; k < end; ++k) {
          sum += weights->document[query.begin + order[k]];
        }
        const double mean = sum / group.size;
        for (uint32_t k = start; k < end; ++k) {
          const uint32_t d = query.begin + order[k];
          result.share_[d] = mean > 0.0 ? weights->document[d] / mean : 0.0;
        }
        scale *= mean;
      }
      for (uint32_t k = 0; k < group.terms; ++k) {
        const double w = TermWeight(options.weighting, labels[order[start]],
                                    start + k, query.size - end);
        result.weights_.push_back(query_weights || document_weights ? w * scale
                                                                    : w);
      }
      query.num_terms += group.terms;
      result.groups_.push_back(group);
      ++query.num_groups;
      start = end;
    }
    if (options.normalize_queries && query.num_terms > 0) {
      const size_t begin = result.groups_[query.group_begin].weight_begin;
      double total = 0.0;
      for (size_t k = begin; k < result.weights_.size(); ++k) {
        total += result.weights_[k];
      }
      if (total > 0.0) {
        for (size_t k = begin; k < result.weights_.size(); ++k) {
          result.weights_[k] /= total;
        }
      }
    }
    result.max_groups_ = std::max(result.max_groups_, query.num_groups);
    result.total_terms_ += query.num_terms;
    if (query.num_terms > 0) ++result.queries_with_terms_;
  }
  return result;
}

}  // namespace plrank
