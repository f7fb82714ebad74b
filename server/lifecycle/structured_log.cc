#include "server/lifecycle/structured_log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace plrank::server {
namespace {

std::atomic<uint64_t> log_write_failures{0};

bool NeedsQuotes(absl::string_view value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') return true;
  }
  return false;
}

void AppendValue(absl::string_view value, std::string* line) {
  if (!NeedsQuotes(value)) {
    absl::StrAppend(line, value);
    return;
  }
  absl::StrAppend(line, "\"",
                  absl::StrReplaceAll(
                      value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}),
                  "\"");
}

}  // namespace

void LogEvent(absl::string_view level, absl::string_view event,
              std::initializer_list<LogField> fields) {
  std::string line =
      absl::StrCat("ts=",
                   absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " level=", level, " event=", event);
  for (const LogField& field : fields) {
    absl::StrAppend(&line, " ", field.first, "=");
    AppendValue(field.second, &line);
  }
  line.push_back('\n');
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(2, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // nowhere left to report a failing stderr: count it
      log_write_failures.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    written += static_cast<size_t>(n);
  }
}

uint64_t LogWriteFailures() {
  return log_write_failures.load(std::memory_order_relaxed);
}

}  // namespace plrank::server
