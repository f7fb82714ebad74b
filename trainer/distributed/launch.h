#ifndef PLRANK_TRAINER_DISTRIBUTED_LAUNCH_H_
#define PLRANK_TRAINER_DISTRIBUTED_LAUNCH_H_

// How plrank-train runs: one process, or one rank of an MPI job. The build
// picks the implementation (launch_mpi.cc when CMake finds MPI, else
// launch_local.cc), so the program itself has no MPI conditionals.

#include <cstdint>
#include <memory>
#include <string>

#include "core/boosting/reducer.h"

namespace plrank::distributed {

class Launch {
 public:
  // Under an MPI launcher (mpirun, mpiexec, srun with PMI) in a build with
  // MPI: MPI initialised, before the flags are parsed as MPI_Init may edit
  // argv. Otherwise single-process. One per process; MPI_Finalize when it
  // is destroyed.
  static std::unique_ptr<Launch> Start(int* argc, char*** argv);
  virtual ~Launch() = default;

  // What the trainer reduces over; null when single-process.
  virtual Reducer* reducer() = 0;

  // Lines rank 0 prints after a run of `iterations` ("key=value\n" each,
  // for benchmarks): the bytes sent and seconds spent reducing; empty when
  // single-process.
  virtual std::string RunStats(int32_t iterations) const = 0;

  // Called with the program's exit code: a failed rank (code != 0) of a job
  // of several ranks ends every rank, so none waits forever in a collective
  // and rank 0 never writes a model. Returns (single process, or success).
  virtual void EndIfFailed(int code) = 0;
};

// The --help paragraph on distributed training this build offers.
std::string LaunchUsage();

}  // namespace plrank::distributed

#endif  // PLRANK_TRAINER_DISTRIBUTED_LAUNCH_H_
