#ifndef PLRANK_CORE_DATA_VALUE_LINES_H_
#define PLRANK_CORE_DATA_VALUE_LINES_H_

// The line reader of the one-value-per-line files beside a data file
// (group sizes: core/data/query_file.h; weights, positions, propensities:
// core/data/side_files.h).

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "core/data/letor_tokens.h"

namespace plrank {

// Calls `visit(line, first, line_end)` for each line of `text` with
// content: `line` 1-based, [first, line_end) from its first non-space
// character to the line's end or its '#' (a comment). Lines end at '\n';
// blank lines are skipped. Returns the first error `visit` returns.
template <typename Visit>
absl::Status ForEachContentLine(std::string_view text, Visit visit) {
  using letor_internal::SkipSpaces;
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
    if (absl::Status status = visit(line, token, line_end); !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

// Calls `on_value(begin, end, line)` for the one token of each line of
// `text` that has one (lines as ForEachContentLine reads them). The first
// error returned by `on_value` is returned; a line holding more than one
// token is then "<name>:<line>: expected one <what> per line".
template <typename OnValue>
absl::Status ForEachLineValue(std::string_view text, const std::string& name,
                              std::string_view what, OnValue on_value) {
  using letor_internal::SkipSpaces;
  using letor_internal::TokenEnd;
  return ForEachContentLine(
      text,
      [&](int64_t line, const char* token,
          const char* line_end) -> absl::Status {
        const char* token_end = TokenEnd(token, line_end);
        if (absl::Status status = on_value(token, token_end, line);
            !status.ok()) {
          return status;
        }
        if (SkipSpaces(token_end, line_end) != line_end) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s:%d: expected one %s per line", name, line,
                              absl::string_view(what.data(), what.size())));
        }
        return absl::OkStatus();
      });
}

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_VALUE_LINES_H_
