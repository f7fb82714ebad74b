// A loaded version names its scoring kernel (ModelMetadata::scoring_kernel,
// GetModelStatus's metadata.scoring_kernel): the chooser's by default, the
// one plrank-server --scoring_kernel forces otherwise; a kernel that cannot
// score the model fails the load, saying why.
#include <memory>
#include <string>

#include "core/scoring/scoring_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lifecycle/servable_version.h"
#include "server/wire_status.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ScoringKernelStatusTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::shared_ptr<const ServableVersion>> Load(
      const std::string& kernel) {
    const std::string path =
        plrank::testing::WriteTestModel(dir_.path(), "web", 1);
    return LoadServableVersionFromBytes(
        "web", 1, path, plrank::testing::ReadWholeFile(path), {}, kernel);
  }

  plrank::testing::TempDir dir_;
};

TEST_F(ScoringKernelStatusTest, ChosenKernelIsInTheMetadataAndOnTheWire) {
  auto loaded = Load("auto");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const ModelMetadata& metadata = (*loaded)->metadata();
  EXPECT_EQ(metadata.scoring_kernel, (*loaded)->scorer().kernel_name());
  EXPECT_NE(FindScoringKernel(metadata.scoring_kernel), nullptr);
  EXPECT_THAT(metadata.scoring_kernel_plan, StartsWith(metadata.scoring_kernel));
  const v1::ModelMetadata wire = ToWire(metadata);
  EXPECT_EQ(wire.scoring_kernel(), metadata.scoring_kernel);
  EXPECT_EQ(wire.scoring_kernels(), metadata.scoring_kernel_plan);
}

TEST_F(ScoringKernelStatusTest, ForcedKernelIsTheOneNamed) {
  auto loaded = Load("lockstep_walks");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->metadata().scoring_kernel, "lockstep_walks");
  EXPECT_EQ((*loaded)->metadata().scoring_kernel_plan, "lockstep_walks");
}

TEST_F(ScoringKernelStatusTest, KernelThatCannotScoreFailsTheLoadSayingWhy) {
  auto loaded = Load("no_such_kernel");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("unknown scoring kernel 'no_such_kernel'"));
}

}  // namespace
}  // namespace plrank::server
