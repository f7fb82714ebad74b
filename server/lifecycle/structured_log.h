#ifndef PLRANK_SERVER_LIFECYCLE_STRUCTURED_LOG_H_
#define PLRANK_SERVER_LIFECYCLE_STRUCTURED_LOG_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace plrank::server {

// One key=value field of a log line; values are quoted when they contain
// spaces, quotes or '='.
using LogField = std::pair<absl::string_view, std::string>;

// Writes one line to stderr:
//   ts=2024-05-01T12:00:00.123Z level=info event=version_loaded model=web ...
// Lines are written with a single write() so concurrent lines never
// interleave, and are machine-parsable (logfmt).
// A line that cannot be written (stderr closed, a pipe whose reader left:
// the server ignores SIGPIPE) is dropped and counted, never fatal.
void LogEvent(absl::string_view level, absl::string_view event,
              std::initializer_list<LogField> fields);

// Log lines dropped because stderr refused them, since the process started
// (plrank_log_write_failures_total).
uint64_t LogWriteFailures();

}  // namespace plrank::server

#endif  // PLRANK_SERVER_LIFECYCLE_STRUCTURED_LOG_H_
