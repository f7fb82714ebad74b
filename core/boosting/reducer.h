#ifndef PLRANK_CORE_BOOSTING_REDUCER_H_
#define PLRANK_CORE_BOOSTING_REDUCER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace plrank {

// How the boosting engine combines the partial sums of a data-parallel
// (distributed) run. Each rank works on its own share of the queries
// (QueryOwner) and asks the reducer for the sums over all ranks: the root's
// gradient sums, every built histogram and the objective's leaf statistics.
// Every decision (splits, leaf values, early stopping) is then taken from the
// same numbers on every rank, so no MPI call sits in the learner's logic.
//
// Contract for implementations: Sum is collective (every rank calls it the
// same number of times with the same sizes), and every rank receives the
// same bits: the element-wise sum taken in rank order, ((r0 + r1) + r2) ...,
// in double precision, whatever the transport. Single-process training uses
// IdentityReducer, for which Sum changes nothing.
class Reducer {
 public:
  virtual ~Reducer() = default;

  virtual int32_t rank() const = 0;
  virtual int32_t num_ranks() const = 0;

  // values[i] <- sum over ranks r (in rank order) of rank r's values[i].
  virtual void Sum(absl::Span<double> values) = 0;

  // Bytes this rank has sent through Sum so far (for benchmarks).
  virtual int64_t bytes_sent() const { return 0; }

  // Collective, before training: OK on every rank when every rank passes
  // rank 0's `digest` (of its options and data), else the same error on
  // every rank naming the ranks that differ. Implementations may mix in
  // more (e.g. the program binary).
  virtual absl::Status CheckSameOnEveryRank(uint64_t digest) = 0;
};

// Rank 0 of 1: Sum is the identity.
class IdentityReducer final : public Reducer {
 public:
  int32_t rank() const override { return 0; }
  int32_t num_ranks() const override { return 1; }
  void Sum(absl::Span<double> /*values*/) override {}
  absl::Status CheckSameOnEveryRank(uint64_t /*digest*/) override {
    return absl::OkStatus();
  }
};

// The rank that owns query q of num_queries: contiguous blocks of queries,
// as equal in count as can be, so a query never spans ranks (listwise losses
// need whole queries). A rank may own none when ranks outnumber queries.
inline int32_t QueryOwner(size_t q, size_t num_queries, int32_t num_ranks) {
  return static_cast<int32_t>((static_cast<unsigned __int128>(q) * num_ranks) /
                              num_queries);
}

// The first query rank `rank` owns (rank == num_ranks: num_queries), so
// rank r owns [FirstOwnedQuery(n, r, N), FirstOwnedQuery(n, r + 1, N)).
inline size_t FirstOwnedQuery(size_t num_queries, int32_t rank,
                              int32_t num_ranks) {
  // The least q with q * num_ranks / num_queries >= rank.
  return static_cast<size_t>(
      (static_cast<unsigned __int128>(rank) * num_queries + num_ranks - 1) /
      num_ranks);
}

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_REDUCER_H_
