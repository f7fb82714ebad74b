#include "core/data/query_file.h"

#include <charconv>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/letor_tokens.h"

namespace plrank {

using letor_internal::SkipSpaces;
using letor_internal::TokenEnd;

absl::StatusOr<GroupSizes> ParseGroupSizes(std::string_view text,
                                           const std::string& name) {
  GroupSizes groups;
  groups.name = name;
  const char* p = text.data();
  const char* const end = p + text.size();
  int64_t line = 0;
  while (p < end) {
    ++line;
    const char* newline =
        static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* line_end = newline != nullptr ? newline : end;
    const char* next = newline != nullptr ? newline + 1 : end;
    if (const void* hash = std::memchr(p, '#', line_end - p)) {
      line_end = static_cast<const char*>(hash);
    }
    const char* token = SkipSpaces(p, line_end);
    p = next;
    if (token == line_end) continue;
    const char* token_end = TokenEnd(token, line_end);
    const absl::string_view shown(token, token_end - token);
    uint32_t size = 0;
    auto [ptr, ec] = std::from_chars(token, token_end, size);
    if (ec != std::errc() || ptr != token_end) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: bad group size '%s'; expected a positive document count",
          name, line, shown));
    }
    if (size == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: group size 0; every query needs at least one document",
          name, line));
    }
    if (SkipSpaces(token_end, line_end) != line_end) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: expected one group size per line", name, line));
    }
    groups.sizes.push_back(size);
    groups.lines.push_back(line);
  }
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
