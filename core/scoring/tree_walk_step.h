#ifndef PLRANK_CORE_SCORING_TREE_WALK_STEP_H_
#define PLRANK_CORE_SCORING_TREE_WALK_STEP_H_

// One step of ForestScorer's tree walks, shared by its lockstep and chained
// walks (internal to core/scoring).

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/cpu/cpu_features.h"

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

// Keeps `x` a scalar in a register: the compiler otherwise pairs the sums
// of several walks into vectors and shuffles them at every step.
inline void KeepScalar(double& x) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm("" : "+x"(x));
#else
  (void)x;
#endif
}

// Whether the CPU has BMI1 and BMI2 (bextr, shrx: field extraction in one
// instruction each, without copies), which StepHeldNode<..., true> needs.
inline bool CpuHasBmi2() {
  const CpuFeatures& cpu = CpuFeatures::Detected();
  return cpu.bmi && cpu.bmi2;
}

// Runs `walk`, a lambda templated on <bool kBmi2> that steps with
// StepHeldNode<..., kBmi2>, with kBmi2 = `bmi2` (CpuHasBmi2(), asked once
// per walk rather than per step).
template <typename Walk>
inline void RunHeldWalk(bool bmi2, const Walk& walk) {
  if (bmi2) {
    walk.template operator()<true>();
  } else {
    walk.template operator()<false>();
  }
}

// The memory an asm statement reads from `data` on, as an "m" operand, so
// no store to it moves across the asm: an array of unknown size (GCC's
// documented idiom; a "memory" clobber would do too, but then GCC keeps
// the walks in memory). Clang takes no unsized array, and a larger type
// trips UBSan's object-size check, so there the asm also clobbers memory.
#if defined(__clang__)
inline const char& AsmRead(const void* data) {
  return *static_cast<const char*>(data);
}
#define PLRANK_ASM_CLOBBERS "cc", "memory"
#else
inline const char (&AsmRead(const void* data))[] {
  return *static_cast<const char(*)[]>(data);
}
#define PLRANK_ASM_CLOBBERS "cc"
#endif

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
// kBmi2 (only where CpuHasBmi2()) takes 7 instructions per step instead of
// 10 (300 x 255 at batch 1000: 1.95 -> 1.80 us/doc with shrx and rorx +
// movzwl; bextr for the slot then 1.37 -> 1.30; bench/results/scorer.md).
template <uint32_t kRowOffset, bool kBmi2>
inline void StepHeldNode(uint64_t& node, const char* rows, const char* nodes,
                         const double* values = nullptr,
                         double* total = nullptr) {
#if defined(__x86_64__) && defined(__GNUC__)
  uint64_t child;
  uint64_t slot;
  // The fields: child = node >> 48, slot = (node >> 32) & 0xffff (bextr's
  // control: 16 bits from bit 32).
  constexpr uint64_t kSlotField = (16 << 8) | 32;
#define PLRANK_HELD_FIELDS_BMI2           \
  "shrxq %[shift], %[node], %[child]\n\t" \
  "bextrq %[field], %[node], %[slot]\n\t"
#define PLRANK_HELD_FIELDS     \
  "movq %[node], %[child]\n\t" \
  "shrq $48, %[child]\n\t"     \
  "movq %[node], %[slot]\n\t"  \
  "shrq $32, %[slot]\n\t"      \
  "movzwl %w[slot], %k[slot]\n\t"
  // threshold - value sets the carry exactly when threshold < value, and
  // then the right child is taken.
#define PLRANK_HELD_MOVE                             \
  "cmpl %c[offset](%[rows],%[slot],8), %k[node]\n\t" \
  "movq (%[nodes],%[child],8), %[node]\n\t"          \
  "cmovbq 8(%[nodes],%[child],8), %[node]\n\t"
#define PLRANK_HELD_ADD   \
  "adcq $0, %[child]\n\t" \
  "addsd (%[values],%[child],8), %[total]"
#define PLRANK_HELD_INPUTS                                        \
  [rows] "r"(rows), [nodes] "r"(nodes), [offset] "i"(kRowOffset), \
      "m"(AsmRead(rows)), "m"(AsmRead(nodes))
  if (values == nullptr) {
    if constexpr (kBmi2) {
      asm(PLRANK_HELD_FIELDS_BMI2 PLRANK_HELD_MOVE
          : [node] "+r"(node), [child] "=&r"(child), [slot] "=&r"(slot)
          : PLRANK_HELD_INPUTS, [shift] "r"(uint64_t{48}),
            [field] "r"(kSlotField)
          : PLRANK_ASM_CLOBBERS);
    } else {
      asm(PLRANK_HELD_FIELDS PLRANK_HELD_MOVE
          : [node] "+r"(node), [child] "=&r"(child), [slot] "=&r"(slot)
          : PLRANK_HELD_INPUTS
          : PLRANK_ASM_CLOBBERS);
    }
  } else {
    if constexpr (kBmi2) {
      asm(PLRANK_HELD_FIELDS_BMI2 PLRANK_HELD_MOVE PLRANK_HELD_ADD
          : [node] "+r"(node), [total] "+x"(*total), [child] "=&r"(child),
            [slot] "=&r"(slot)
          : PLRANK_HELD_INPUTS, [values] "r"(values), "m"(AsmRead(values)),
            [shift] "r"(uint64_t{48}), [field] "r"(kSlotField)
          : PLRANK_ASM_CLOBBERS);
    } else {
      asm(PLRANK_HELD_FIELDS PLRANK_HELD_MOVE PLRANK_HELD_ADD
          : [node] "+r"(node), [total] "+x"(*total), [child] "=&r"(child),
            [slot] "=&r"(slot)
          : PLRANK_HELD_INPUTS, [values] "r"(values), "m"(AsmRead(values))
          : PLRANK_ASM_CLOBBERS);
    }
  }
#undef PLRANK_HELD_FIELDS_BMI2
#undef PLRANK_HELD_FIELDS
#undef PLRANK_HELD_MOVE
#undef PLRANK_HELD_ADD
#undef PLRANK_HELD_INPUTS
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
#undef PLRANK_ASM_CLOBBERS

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_TREE_WALK_STEP_H_
