#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_TIE_GROUPS_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_TIE_GROUPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/objective.h"
#include "core/objectives/plackett_luce/options.h"

namespace plrank {

// One group of equally labelled documents of a query. Groups of a query are
// stored from the highest label down.
struct PlTieGroup {
  uint32_t first = 0;       // offset of its members in PlTieGroups::members
  uint32_t size = 0;        // n_G
  uint32_t terms = 0;       // picks of G inside the top K (0..n_G)
  uint32_t weight_begin = 0;  // offset of its `terms` weights
};

struct PlTieQuery {
  uint32_t begin = 0;  // global index of the first document
  uint32_t size = 0;
  uint32_t group_begin = 0;
  uint32_t num_groups = 0;  // all label groups, the lowest included
  uint32_t num_terms = 0;   // sum of the groups' terms
};

// The tie-group structure the closed-form Plackett-Luce likelihood needs:
// per query, its documents grouped by label (highest first), how many picks
// of each group fall in the top K, and each pick's weight.
//
// Pick k (0-based) of group G sits at ideal position j = (documents labelled
// above G) + k; it is kept when j < topk, and, with stop_at_lowest_label,
// when G is not the query's lowest group (whose picks only choose among
// equally labelled documents). Its weight follows options.weighting.
class PlTieGroups {
 public:
  // `weights` (optional, may be empty): a query's term weights are scaled
  // by its query weight and each group's by the mean document weight of its
  // members; each member's share of the group's numerator (and, under
  // kIndependent, of its own pick) is its weight over that mean.
  static absl::StatusOr<PlTieGroups> Build(
      const Dataset& data, const PlackettLuceOptions& options,
      const TrainingWeights* weights = nullptr);

  absl::Span<const PlTieQuery> queries() const { return queries_; }
  const PlTieGroup* groups(const PlTieQuery& q) const {
    return groups_.data() + q.group_begin;
  }
  // Local document indices of a group's members.
  const uint32_t* members(const PlTieGroup& g) const {
    return members_.data() + g.first;
  }
  const double* weights(const PlTieGroup& g) const {
    return weights_.data() + g.weight_begin;
  }
  // Per training document (global index): its weight over the mean weight
  // of its tie group; null without document weights (every share 1).
  const double* shares(const PlTieQuery& q) const {
    return share_.empty() ? nullptr : share_.data() + q.begin;
  }
  uint32_t max_query_size() const { return max_query_size_; }
  uint32_t max_groups() const { return max_groups_; }
  int64_t total_terms() const { return total_terms_; }
  int64_t queries_with_terms() const { return queries_with_terms_; }

 private:
  std::vector<PlTieQuery> queries_;
  std::vector<PlTieGroup> groups_;
  std::vector<uint32_t> members_;
  std::vector<double> weights_;
  std::vector<double> share_;
  uint32_t max_query_size_ = 0;
  uint32_t max_groups_ = 0;
  int64_t total_terms_ = 0;
  int64_t queries_with_terms_ = 0;
};

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_TIE_GROUPS_H_
