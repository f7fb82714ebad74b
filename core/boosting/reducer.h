#ifndef PLRANK_CORE_BOOSTING_REDUCER_H_
#define PLRANK_CORE_BOOSTING_REDUCER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace plrank {

// How the boosting engine combines the partial sums of a data-parallel
// (distributed) run. Each rank holds and works on its own shard of whole
// queries (core/pipeline/shard_loading.h) and asks the reducer for the sums
// over all ranks: the root's
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

  // Collective: rank 0 receives every rank's `mine`, in rank order; the
  // other ranks receive an empty vector. (Bin boundaries from the ranks'
  // samples, the check of query ids over shards.)
  virtual std::vector<std::string> Gather(const std::string& mine) = 0;

  // Collective: every rank's `bytes` becomes rank 0's.
  virtual void Broadcast(std::string* bytes) = 0;

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
  std::vector<std::string> Gather(const std::string& mine) override {
    return {mine};
  }
  void Broadcast(std::string* /*bytes*/) override {}
  absl::Status CheckSameOnEveryRank(uint64_t /*digest*/) override {
    return absl::OkStatus();
  }
};

}  // namespace plrank

#endif  // PLRANK_CORE_BOOSTING_REDUCER_H_
