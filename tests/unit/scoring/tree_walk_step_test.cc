#include "core/scoring/tree_walk_step.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace plrank::internal {
namespace {

// A node word as StepHeldNode reads it (ForestScorer::Node).
uint64_t Word(uint32_t threshold, uint16_t slot, uint16_t child) {
  return uint64_t{threshold} | uint64_t{slot} << 32 | uint64_t{child} << 48;
}

// What one step must do, spelled out: right child exactly when
// threshold < value.
uint64_t ExpectedMove(uint64_t node, const std::vector<uint32_t>& rows,
                      size_t lane) {
  const uint32_t threshold = static_cast<uint32_t>(node);
  const size_t slot = (node >> 32) & 0xffff;
  const uint64_t child = node >> 48;
  // A slot unit is 8 bytes: two lanes' 4-byte values.
  const uint32_t value = rows[slot * 2 + lane];
  return child + (threshold < value ? 1 : 0);
}

// Steps with both instruction sequences (the BMI2 one where the CPU has
// it) and checks the node moved to and the value added.
template <uint32_t kRowOffset>
void ExpectStepsMatch(const std::vector<uint64_t>& nodes,
                      const std::vector<uint32_t>& rows,
                      const std::vector<double>& values) {
  constexpr size_t kLane = kRowOffset / 4;
  const char* node_bytes = reinterpret_cast<const char*>(nodes.data());
  const char* row_bytes = reinterpret_cast<const char*>(rows.data());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const uint64_t moved_to = ExpectedMove(nodes[n], rows, kLane);
    if (moved_to + 1 >= nodes.size()) continue;
    SCOPED_TRACE(testing::Message() << "node " << n << " lane " << kLane);
    for (const bool bmi2 : {false, true}) {
      if (bmi2 && !CpuHasBmi2()) continue;
      uint64_t walk = nodes[n];
      double total = 0.25;
      uint64_t plain = nodes[n];
      // The walks' own dispatch picks the instruction sequence.
      RunHeldWalk(bmi2, [&]<bool kBmi2>() {
        StepHeldNode<kRowOffset, kBmi2>(walk, row_bytes, node_bytes,
                                        values.data(), &total);
        StepHeldNode<kRowOffset, kBmi2>(plain, row_bytes, node_bytes);
      });
      EXPECT_EQ(walk, nodes[moved_to]) << "bmi2 " << bmi2;
      EXPECT_EQ(plain, nodes[moved_to]) << "bmi2 " << bmi2;
      EXPECT_EQ(total, 0.25 + values[moved_to]) << "bmi2 " << bmi2;
    }
  }
}

TEST(StepHeldNodeTest, HandMadeNodesGoRightOnlyWhenTheValueExceeds) {
  // Two lanes' rows of 3 slots: lane 0 = {5, 7, 0}, lane 1 = {6, 7, ~0}.
  const std::vector<uint32_t> rows = {5, 6, 7, 7, 0, 0xffffffffu};
  std::vector<uint64_t> nodes = {
      Word(5, 0, 2),               // lane 0: 5 == 5, left; lane 1: 6 > 5, right
      Word(7, 1, 4),               // 7 == 7 both lanes: left
      Word(6, 1, 4),               // 7 > 6 both lanes: right
      Word(0xfffffffeu, 2, 2),     // lane 1 only: max key > threshold
      Word(kLeafThreshold, 0, 4),  // a leaf: its own child, stays
      Word(kLeafThreshold, 0, 5),
  };
  const std::vector<double> values = {-0.0, -0.0, -0.0, -0.0, 1.5, -2.0};
  EXPECT_EQ(ExpectedMove(nodes[0], rows, 0), 2u);
  EXPECT_EQ(ExpectedMove(nodes[0], rows, 1), 3u);
  EXPECT_EQ(ExpectedMove(nodes[1], rows, 0), 4u);
  EXPECT_EQ(ExpectedMove(nodes[2], rows, 1), 5u);
  EXPECT_EQ(ExpectedMove(nodes[3], rows, 0), 2u);
  EXPECT_EQ(ExpectedMove(nodes[3], rows, 1), 3u);
  EXPECT_EQ(ExpectedMove(nodes[4], rows, 1), 4u);
  ExpectStepsMatch<0>(nodes, rows, values);
  ExpectStepsMatch<4>(nodes, rows, values);
}

TEST(StepHeldNodeTest, RandomNodesMatchTheComparison) {
  std::mt19937 rng(7);
  constexpr size_t kSlots = 300;
  constexpr size_t kNodes = 4000;
  std::vector<uint32_t> rows(kSlots * 2);
  // Few distinct keys, so thresholds often equal the value.
  for (uint32_t& v : rows) v = rng() % 16 == 0 ? rng() : rng() % 8;
  std::vector<uint64_t> nodes(kNodes);
  std::vector<double> values(kNodes);
  for (size_t n = 0; n < kNodes; ++n) {
    const uint32_t threshold = rng() % 4 == 0 ? rng() : rng() % 8;
    nodes[n] = Word(threshold, static_cast<uint16_t>(rng() % kSlots),
                    static_cast<uint16_t>(rng() % (kNodes - 1)));
    values[n] = static_cast<double>(static_cast<int32_t>(rng())) / 7.0;
  }
  ExpectStepsMatch<0>(nodes, rows, values);
  ExpectStepsMatch<4>(nodes, rows, values);
}

}  // namespace
}  // namespace plrank::internal
