// Launch (launch.h) of a build without MPI: always single-process.
#include <memory>
#include <string>

#include "trainer/distributed/launch.h"

namespace plrank::distributed {
namespace {

class LocalLaunch final : public Launch {
 public:
  Reducer* reducer() override { return nullptr; }
  std::string RunStats(int32_t) const override { return ""; }
  void EndIfFailed(int) override {}
};

}  // namespace

std::unique_ptr<Launch> Launch::Start(int*, char***) {
  return std::make_unique<LocalLaunch>();
}

std::string LaunchUsage() {
  return "Single-process only: this build has no MPI (docs/distributed.md)";
}

}  // namespace plrank::distributed
