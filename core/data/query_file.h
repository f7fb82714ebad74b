#ifndef PLRANK_CORE_DATA_QUERY_FILE_H_
#define PLRANK_CORE_DATA_QUERY_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace plrank {

struct GroupSizes {
  std::string name;              // file name, for messages
  std::vector<uint32_t> sizes;   // documents per query, in file order
  std::vector<int64_t> lines;    // 1-based line of each size
};

// Parses a LightGBM ".query" (group) file: one positive document count per
// line, in the order the documents appear. Blank lines and '#' comments are
// skipped. Errors name `name` and the 1-based line.
absl::StatusOr<GroupSizes> ParseGroupSizes(std::string_view text,
                                           const std::string& name);

// Turns group sizes into query offsets covering exactly `num_documents`
// documents of `data_name`; a mismatch is an error naming the group file.
absl::StatusOr<std::vector<uint32_t>> GroupSizesToOffsets(
    const GroupSizes& groups, uint64_t num_documents,
    const std::string& data_name);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_QUERY_FILE_H_
