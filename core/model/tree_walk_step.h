#ifndef PLRANK_CORE_MODEL_TREE_WALK_STEP_H_
#define PLRANK_CORE_MODEL_TREE_WALK_STEP_H_

// One step of ForestScorer's tree walks, shared by its lockstep and chained
// walks (internal to core/model).

#include <cstdint>
#include <limits>

namespace plrank::internal {

// A leaf's threshold: no value key exceeds it (keys of real values are at
// most OrderKey(+inf)), so a walk that reached a leaf stays there.
inline constexpr uint32_t kLeafThreshold = std::numeric_limits<uint32_t>::max();

// child + (threshold < value) as a compare and an add-with-carry: the
// shortest dependency chain from a loaded value to the next node.
inline uint64_t NextNode(uint64_t child, uint32_t threshold, uint32_t value) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm("cmpl %[value], %[threshold]\n\t"
      "adcq $0, %[child]"
      : [child] "+r"(child)
      : [value] "r"(value), [threshold] "rm"(threshold)
      : "cc");
  return child;
#else
  return child + static_cast<uint64_t>(threshold < value);
#endif
}

}  // namespace plrank::internal

#endif  // PLRANK_CORE_MODEL_TREE_WALK_STEP_H_
