#ifndef PLRANK_TRAINER_DISTRIBUTED_MPI_REDUCER_H_
#define PLRANK_TRAINER_DISTRIBUTED_MPI_REDUCER_H_

// The MPI side of distributed training (built only when CMake finds MPI):
// the one place that includes <mpi.h>. core/ sees it only as a Reducer.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/boosting/reducer.h"

namespace plrank::distributed {

// True when this process was started by an MPI launcher (mpirun, mpiexec,
// srun with PMI): only then is MPI initialised, so a plain `plrank-train`
// never touches MPI.
bool LaunchedByMpi();

// MPI_COMM_WORLD for the life of the object: MPI_Init in Create, MPI_Finalize
// in the destructor. One per process.
class MpiReducer final : public Reducer {
 public:
  static std::unique_ptr<MpiReducer> Create(int* argc, char*** argv);
  ~MpiReducer() override;

  int32_t rank() const override { return rank_; }
  int32_t num_ranks() const override { return size_; }

  // Reduce-scatter (MPI_Alltoallv) and allgather (MPI_Allgatherv) of
  // blocks, each block summed in rank order by its owner: every rank gets
  // the same bits, r0 + r1 + ... per element, and sends about
  // 2 n (P-1) / P doubles.
  void Sum(absl::Span<double> values) override;
  // MPI_Gatherv / MPI_Bcast of bytes (pieces under 2^31 bytes each).
  std::vector<std::string> Gather(const std::string& mine) override;
  void Broadcast(std::string* bytes) override;
  int64_t bytes_sent() const override { return bytes_sent_; }
  // Seconds spent in Sum, waiting for slower ranks included.
  double seconds_in_sum() const { return seconds_in_sum_; }
  int64_t sum_calls() const { return sum_calls_; }

  // Mixes in a digest of this program's binary (/proc/self/exe), so ranks
  // started from different builds are told apart too.
  absl::Status CheckSameOnEveryRank(uint64_t digest) override;

  // Ends the whole job (every rank) with `code`: a rank that failed must not
  // leave the others waiting in a collective.
  [[noreturn]] void Abort(int code);

 private:
  MpiReducer(int rank, int size) : rank_(rank), size_(size) {}
  void SumPiece(absl::Span<double> values);  // values.size() < 2^31

  int32_t rank_;
  int32_t size_;
  std::vector<double> gathered_;  // every rank's copy of this rank's block
  std::vector<double> block_;     // this rank's block, summed
  std::vector<int> counts_, displacements_;
  std::vector<int> receive_counts_, receive_displacements_;
  int64_t bytes_sent_ = 0;
  double seconds_in_sum_ = 0.0;
  int64_t sum_calls_ = 0;
  // Test hook (tests/distributed): PLRANK_DISTRIBUTED_TEST_KILL="R:K" makes
  // rank R send itself SIGKILL at its K-th Sum, to show that a rank dying
  // mid-training fails the whole job. 0 = never.
  int64_t kill_at_call_ = 0;
};

}  // namespace plrank::distributed

#endif  // PLRANK_TRAINER_DISTRIBUTED_MPI_REDUCER_H_
