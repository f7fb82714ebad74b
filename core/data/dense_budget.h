#ifndef PLRANK_CORE_DATA_DENSE_BUDGET_H_
#define PLRANK_CORE_DATA_DENSE_BUDGET_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace plrank {

// Bytes this process may still allocate: the smallest of MemAvailable
// (/proc/meminfo), the cgroup v2 memory.max headroom and the address-space
// and data rlimits; -1 when none of them can be read.
int64_t AvailableMemoryBytes();

// OK when a dense float matrix of rows x columns fits in `available` bytes
// (-1 = unknown: always OK); otherwise ResourceExhausted naming `name`, the
// sizes and `hint` (e.g. where the widest feature index was seen).
absl::Status CheckDenseMatrixFits(int64_t rows, int64_t columns,
                                  int64_t available, const std::string& name,
                                  const std::string& hint);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_DENSE_BUDGET_H_
