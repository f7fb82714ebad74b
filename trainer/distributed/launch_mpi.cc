// Launch (launch.h) of a build with MPI: an MPI rank when started by an MPI
// launcher, else single-process (a plain plrank-train never touches MPI).
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "trainer/distributed/launch.h"
#include "trainer/distributed/mpi_reducer.h"

namespace plrank::distributed {
namespace {

class MpiLaunch final : public Launch {
 public:
  explicit MpiLaunch(std::unique_ptr<MpiReducer> mpi) : mpi_(std::move(mpi)) {}

  Reducer* reducer() override { return mpi_.get(); }

  std::string RunStats(int32_t iterations) const override {
    if (mpi_ == nullptr || mpi_->num_ranks() <= 1) return "";
    // Rank 0's: every rank sends the same amount; the reduce seconds
    // include waiting for slower ranks.
    return absl::StrFormat(
        "distributed_bytes_sent_per_iteration=%.0f\n"
        "distributed_reduce_seconds=%.3f\n",
        iterations > 0 ? static_cast<double>(mpi_->bytes_sent()) / iterations
                       : 0.0,
        mpi_->seconds_in_sum());
  }

  void EndIfFailed(int code) override {
    if (code != 0 && mpi_ != nullptr && mpi_->num_ranks() > 1) {
      mpi_->Abort(code);
    }
  }

 private:
  std::unique_ptr<MpiReducer> mpi_;  // null: not under an MPI launcher
};

}  // namespace

std::unique_ptr<Launch> Launch::Start(int* argc, char*** argv) {
  std::unique_ptr<MpiReducer> mpi;
  if (LaunchedByMpi()) mpi = MpiReducer::Create(argc, argv);
  return std::make_unique<MpiLaunch>(std::move(mpi));
}

std::string LaunchUsage() {
  return "Distributed (data-parallel by query, tree objectives only; the "
         "linear rankers ca and listmle train single-process):\n"
         "  mpirun -np N plrank-train --train=F ... (each rank reads only its "
         "share: its byte range of F, cut at query starts, or its own file "
         "when F holds {rank}, e.g. --train=part-{rank}-of-{ranks}.txt; rank "
         "0 writes the model and checkpoints)";
}

}  // namespace plrank::distributed
