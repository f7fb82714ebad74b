#ifndef PLRANK_CORE_DATA_STREAM_OUTPUT_H_
#define PLRANK_CORE_DATA_STREAM_OUTPUT_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace plrank {

// Stream outputs (scores, contributions: plrank-eval --scores_out,
// --contributions_out) may also go to a pipe; the rest of file I/O is
// core/data/file_io.h. "-" and "/dev/stdout" are standard output, whatever
// fd 1 is (a pipe, a terminal, a redirected file); an existing FIFO,
// character device or socket (a named pipe, /dev/null, /dev/fd/N of a
// process substitution) is written as it is, in order, without a
// temporary; anything else goes through WriteFileAtomically.
bool IsStandardOutput(const std::string& path);

// What a CLI checks before its work starts, so an output that cannot be
// written fails in a second rather than after the evaluation: OK for
// standard output, an existing regular file, FIFO, character device or
// socket, and for an absent file in an existing, writable directory.
// Otherwise FAILED_PRECONDITION (a directory, a missing directory, ...)
// naming the path.
absl::Status CheckStreamOutputTarget(const std::string& path);

// Writes `pieces` to a stream output as described above. A write to a
// closed pipe ends the process with SIGPIPE, as for any Unix filter.
absl::Status WriteStreamOutput(const std::string& path,
                               absl::Span<const std::string_view> pieces);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_STREAM_OUTPUT_H_
