#include "core/pipeline/checkpoint.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

using ::testing::HasSubstr;

Checkpoint Example() {
  Checkpoint checkpoint;
  checkpoint.job_digest = 0x1234567890abcdefULL;
  Tree tree;
  tree.split_feature = {3, 1};
  tree.threshold = {0.5f, -1.25f};
  tree.default_left = {1, 0};
  tree.left_child = {1, ~0};
  tree.right_child = {~2, ~1};
  tree.split_gain = {2.0, 0.5};
  tree.leaf_value = {0.1, -0.2, 1e-300};
  tree.leaf_count = {5, 6, 7};
  checkpoint.state.trees = {tree, tree};
  IterationReport report;
  report.iteration = 1;
  report.num_trees = 10;
  report.train_loss = 0.3;
  report.train_metric = std::numeric_limits<double>::quiet_NaN();
  report.valid_metric = 0.7;
  checkpoint.state.history = {report, report};
  checkpoint.state.history[1].iteration = 2;
  checkpoint.state.best_iteration = 2;
  checkpoint.state.best_metric = 0.7;
  checkpoint.state.num_features = 4;
  checkpoint.train_metrics[2] = {0.5, std::numeric_limits<double>::quiet_NaN()};
  checkpoint.valid_metrics[1] = {0.25};
  checkpoint.valid_losses[1] = 3.5;
  return checkpoint;
}

TEST(Checkpoint, RoundTripsBitForBit) {
  const Checkpoint original = Example();
  const std::string bytes = SerializeCheckpoint(original);
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(bytes, "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(SerializeCheckpoint(*parsed), bytes);
  EXPECT_EQ(parsed->job_digest, original.job_digest);
  ASSERT_EQ(parsed->state.trees.size(), 2u);
  EXPECT_EQ(parsed->state.trees[1].leaf_value, original.state.trees[1].leaf_value);
  EXPECT_EQ(parsed->state.trees[0].threshold, original.state.trees[0].threshold);
  EXPECT_TRUE(std::isnan(parsed->state.history[0].train_metric));
  EXPECT_EQ(parsed->state.best_iteration, 2);
  EXPECT_EQ(parsed->valid_losses.at(1), 3.5);
  EXPECT_EQ(parsed->train_metrics.at(2)[0], 0.5);
}

// gam's bias is kept when there is one; a checkpoint without it keeps the
// bytes it had before the bias was part of the state.
TEST(Checkpoint, KeepsThePositionBiasOnlyWhenThereIsOne) {
  Checkpoint with_bias = Example();
  with_bias.state.position_bias = {0.0, -0.25, -0.5};
  const std::string bytes = SerializeCheckpoint(with_bias);
  EXPECT_EQ(bytes.size(), SerializeCheckpoint(Example()).size() +
                              sizeof(uint32_t) + 3 * sizeof(double));
  absl::StatusOr<Checkpoint> parsed = ParseCheckpoint(bytes, "c");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->state.position_bias, with_bias.state.position_bias);
  EXPECT_EQ(SerializeCheckpoint(*parsed), bytes);
  absl::StatusOr<Checkpoint> plain =
      ParseCheckpoint(SerializeCheckpoint(Example()), "c");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->state.position_bias.empty());
}

TEST(Checkpoint, EveryFlippedOrMissingByteIsRefused) {
  const std::string bytes = SerializeCheckpoint(Example());
  for (size_t i = 0; i < bytes.size(); i += 7) {
    std::string damaged = bytes;
    damaged[i] ^= 0x20;
    EXPECT_FALSE(ParseCheckpoint(damaged, "c").ok()) << "byte " << i;
  }
  for (size_t size : {size_t{0}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    absl::StatusOr<Checkpoint> parsed =
        ParseCheckpoint(std::string_view(bytes).substr(0, size), "ck.plrank");
    ASSERT_FALSE(parsed.ok()) << size;
    EXPECT_THAT(parsed.status().message(), HasSubstr("ck.plrank"));
  }
}

TEST(Checkpoint, ATreeWhoseChildLoopsIsRefusedEvenWithAGoodChecksum) {
  Checkpoint checkpoint = Example();
  checkpoint.state.trees[0].left_child[1] = 0;  // back to the root
  absl::StatusOr<Checkpoint> parsed =
      ParseCheckpoint(SerializeCheckpoint(checkpoint), "c");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("malformed"));
}

TEST(Checkpoint, WritesAtomicallyIntoADirectoryItCreates) {
  const std::string dir = ::testing::TempDir() + "/checkpoint_test/nested";
  ASSERT_TRUE(WriteCheckpoint(dir, Example()).ok());
  EXPECT_EQ(CheckpointPath(dir), dir + "/checkpoint.plrank");
}

}  // namespace
}  // namespace plrank
