#ifndef PLRANK_CORE_MODEL_TREE_WALK_STEP_H_
#define PLRANK_CORE_MODEL_TREE_WALK_STEP_H_

// One step of ForestScorer's tree walks, shared by its lockstep and chained
// walks (internal to core/model).

#include <cstdint>
#include <cstring>
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

// One step of a walk held as its current node's 8 bytes (a ForestScorer
// Node read as one word: threshold in bits 0-31, slot in 8-byte units in
// bits 32-47, left child in bits 48-63; the right child follows it). The
// document's value and both children load at once, so the next node is a
// select rather than a load that waits for the compare: on trees that sit
// in L2 a step waits for one load instead of two in a row. `rows` is where
// the node's slot offsets count from for this walk's document. Leaves are
// their own children and no value exceeds their threshold, so a walk on a
// leaf stays there.
//
// With `values`, the value of the node moved to is added to *total inside
// the same asm: left to the compiler, the eight walks' additions get
// vectorised in pairs, which keeps indices live and spills the walks.
template <uint32_t kRowOffset>
inline void StepHeldNode(uint64_t& node, const char* rows, const char* nodes,
                         const double* values = nullptr,
                         double* total = nullptr) {
#if defined(__x86_64__) && defined(__GNUC__)
  uint64_t child;
  uint64_t slot;
#define PLRANK_HELD_STEP                             \
  "movq %[node], %[child]\n\t"                       \
  "shrq $48, %[child]\n\t"                           \
  "movq %[node], %[slot]\n\t"                        \
  "shrq $32, %[slot]\n\t"                            \
  "movzwl %w[slot], %k[slot]\n\t"                    \
  "movl %c[offset](%[rows],%[slot],8), %k[slot]\n\t" \
  "cmpl %k[slot], %k[node]\n\t"                      \
  "movq (%[nodes],%[child],8), %[node]\n\t"          \
  "cmovbq 8(%[nodes],%[child],8), %[node]\n\t"
// What the asm reads, so that no store to it moves across the asm.
#define PLRANK_HELD_STEP_MEMORY                  \
  "m"(*reinterpret_cast<const char(*)[]>(rows)), \
      "m"(*reinterpret_cast<const char(*)[]>(nodes))
  if (values == nullptr) {
    asm(PLRANK_HELD_STEP
        : [node] "+r"(node), [child] "=&r"(child), [slot] "=&r"(slot)
        : [rows] "r"(rows), [nodes] "r"(nodes), [offset] "i"(kRowOffset),
          PLRANK_HELD_STEP_MEMORY
        : "cc");
  } else {
    asm(PLRANK_HELD_STEP
        "adcq $0, %[child]\n\t"
        "addsd (%[values],%[child],8), %[total]"
        : [node] "+r"(node), [total] "+x"(*total), [child] "=&r"(child),
          [slot] "=&r"(slot)
        : [rows] "r"(rows), [nodes] "r"(nodes), [values] "r"(values),
          [offset] "i"(kRowOffset), PLRANK_HELD_STEP_MEMORY,
          "m"(*reinterpret_cast<const char(*)[]>(values))
        : "cc");
  }
#undef PLRANK_HELD_STEP
#undef PLRANK_HELD_STEP_MEMORY
#else
  uint32_t value;
  std::memcpy(&value, rows + ((node >> 32) & 0xffff) * 8 + kRowOffset,
              sizeof(value));
  const uint64_t moved_to =
      (node >> 48) + (static_cast<uint32_t>(node) < value);
  std::memcpy(&node, nodes + moved_to * 8, sizeof(node));
  if (values != nullptr) *total += values[moved_to];
#endif
}

}  // namespace plrank::internal

#endif  // PLRANK_CORE_MODEL_TREE_WALK_STEP_H_
