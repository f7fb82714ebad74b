#ifndef PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_CONTEXTS_H_
#define PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_CONTEXTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/data/dataset.h"
#include "core/objectives/plackett_luce/options.h"

namespace plrank {

// One query's share of PlContexts. Document indices stored for the query are
// LOCAL (0 = the query's first document).
struct PlQuery {
  uint32_t begin = 0;   // global index of the first document
  uint32_t size = 0;    // n
  uint32_t depth = 0;   // contexts per permutation (effective K, may be 0)
  uint32_t union_size = 0;    // distinct documents chosen by any permutation
  uint64_t choice_begin = 0;  // offset of this query in chosen/weights/union
};

// The ground-truth permutations of a training set, reduced to what the
// Plackett-Luce likelihood needs, with contexts shared across permutations
// stored once.
//
// For permutation p of query q, context j (0-based, j < depth) is the set of
// the query's documents minus chosen(q, p)[0..j-1]; chosen(q, p)[j] is the
// document picked from it. Identical contexts (same level j, same set of
// removed documents — they differ only inside a tie group) get weight
// count/m on their first permutation and 0 on the others, so
// sum_p weights(q, p)[j] == 1 at every level j.
//
// Effective K = min(topk, n, n - 1): the context of the last document is the
// singleton {pi(n)}, whose term s - log(exp(s)) and gradient 1 - p are
// identically 0, so it is dropped. With stop_at_lowest_label K is further
// capped by the number of documents above the query's lowest label; with
// skip_tied_queries all-equal queries get K = 0.
class PlContexts {
 public:
  // Draws options.permutations tie-breaks per query: shuffle with
  // SplitMix64(hash(seed, options.seed, query, permutation)), then order by
  // label descending (stable w.r.t. the shuffle). Parallel and deterministic.
  static absl::StatusOr<PlContexts> Build(const Dataset& data,
                                          const PlackettLuceOptions& options,
                                          uint64_t seed);

  // Uses given ground-truth permutations instead of drawing them:
  // permutations[q][p] is a full order of query q's local indices, which must
  // be sorted by label descending. Every query needs options.permutations.
  static absl::StatusOr<PlContexts> FromPermutations(
      const Dataset& data, const PlackettLuceOptions& options,
      const std::vector<std::vector<std::vector<uint32_t>>>& permutations);

  int32_t num_permutations() const { return num_permutations_; }
  absl::Span<const PlQuery> queries() const { return queries_; }
  const uint32_t* chosen(const PlQuery& q, int32_t p) const {
    return chosen_.data() + q.choice_begin + uint64_t{q.depth} * p;
  }
  const double* weights(const PlQuery& q, int32_t p) const {
    return weights_.data() + q.choice_begin + uint64_t{q.depth} * p;
  }
  // Distinct documents chosen by any permutation of q, first-seen order.
  const uint32_t* union_documents(const PlQuery& q) const {
    return union_.data() + q.choice_begin;
  }

  int64_t total_contexts() const { return total_contexts_; }
  int64_t distinct_contexts() const { return distinct_contexts_; }
  int64_t queries_with_contexts() const { return queries_with_contexts_; }
  uint32_t max_query_size() const { return max_query_size_; }
  uint32_t max_depth() const { return max_depth_; }
  size_t num_documents() const { return num_documents_; }

 private:
  // Sizes the arrays for the given depths (one per query).
  void Allocate(const Dataset& data, absl::Span<const uint32_t> depths,
                int32_t num_permutations);
  // Fills weights, union and statistics of query q once chosen is set.
  void FinishQuery(size_t q, std::vector<uint64_t>& hash_scratch,
                   std::vector<uint8_t>& seen_scratch);
  void Summarize();

  int32_t num_permutations_ = 1;
  std::vector<PlQuery> queries_;
  std::vector<uint32_t> chosen_;
  std::vector<double> weights_;
  std::vector<uint32_t> union_;     // capacity m * depth per query
  std::vector<uint32_t> distinct_;  // distinct contexts per query
  int64_t total_contexts_ = 0;
  int64_t distinct_contexts_ = 0;
  int64_t queries_with_contexts_ = 0;
  uint32_t max_query_size_ = 0;
  uint32_t max_depth_ = 0;
  size_t num_documents_ = 0;
};

// Effective K of one query (see PlContexts) from its labels.
uint32_t PlContextDepth(absl::Span<const int32_t> labels,
                        const PlackettLuceOptions& options);

}  // namespace plrank

#endif  // PLRANK_CORE_OBJECTIVES_PLACKETT_LUCE_CONTEXTS_H_
