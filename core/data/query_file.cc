#include "core/data/query_file.h"

#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/value_lines.h"

namespace plrank {

absl::StatusOr<GroupSizes> ParseGroupSizes(std::string_view text,
                                           const std::string& name) {
  GroupSizes groups;
  groups.name = name;
  absl::Status status = ForEachLineValue(
      text, name, "group size",
      [&](const char* token, const char* token_end,
          int64_t line) -> absl::Status {
        uint32_t size = 0;
        auto [ptr, ec] = std::from_chars(token, token_end, size);
        if (ec != std::errc() || ptr != token_end) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: bad group size '%s'; expected a positive document "
              "count",
              name, line, absl::string_view(token, token_end - token)));
        }
        if (size == 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: group size 0; every query needs at least one document",
              name, line));
        }
        groups.sizes.push_back(size);
        groups.lines.push_back(line);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return groups;
}

absl::StatusOr<std::vector<uint32_t>> GroupSizesToOffsets(
    const GroupSizes& groups, uint64_t num_documents,
    const std::string& data_name) {
  std::vector<uint32_t> offsets;
  offsets.reserve(groups.sizes.size() + 1);
  offsets.push_back(0);
  uint64_t total = 0;
  for (size_t g = 0; g < groups.sizes.size(); ++g) {
    total += groups.sizes[g];
    if (total > num_documents) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: group sizes reach %d, more than the %d documents in %s",
          groups.name, groups.lines[g], total, num_documents, data_name));
    }
    offsets.push_back(static_cast<uint32_t>(total));
  }
  if (total != num_documents) {
    const int64_t last_line = groups.lines.empty() ? 1 : groups.lines.back();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: group sizes sum to %d but %s has %d documents", groups.name,
        last_line, total, data_name, num_documents));
  }
  return offsets;
}

}  // namespace plrank
