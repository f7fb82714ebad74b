#ifndef PLRANK_CORE_DATA_FILE_IO_H_
#define PLRANK_CORE_DATA_FILE_IO_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace plrank {

// Reads a whole file in one go: the one whole-file reader of every input
// that is parsed whole (models, configs, certificates, score files, group
// files). Data files, which can be gigabytes, are streamed instead
// (core/data/line_chunk_reader.h). Errors name the path
// and the OS reason. A file (or pipe, or device such as /dev/zero) holding
// more than `max_bytes` is refused with ResourceExhausted before more than
// max_bytes + 1 bytes are buffered, so a small input kind (a config, a PEM)
// can never be made to fill memory.
inline constexpr size_t kUnlimitedFileBytes = ~size_t{0} >> 1;
absl::StatusOr<std::string> ReadWholeFile(
    const std::string& path, size_t max_bytes = kUnlimitedFileBytes);

// OK when `path` does not exist or is a regular file (a symlink counts as
// what it points to). Otherwise FAILED_PRECONDITION naming the path and what
// it is: replacing a device node such as /dev/full, a directory, a FIFO or a
// socket with a regular file is never what a caller meant (run as root, a
// rename over /dev/full would succeed). CLIs call it before long work, so a
// bad target fails in a second, not after training; WriteFileAtomically
// checks again.
absl::Status CheckOutputTarget(const std::string& path);

// The one atomic writer of every output file (models, scores, generated
// data, reports): `path` holds either its old contents or all of the new
// ones, even across a crash or a kill. A temporary file beside it
// (`<path>.tmp.<pid>.<random>`, created exclusively) is written, fsynced and
// renamed over `path`, then the directory is fsynced so the rename survives
// a power loss. The temporary is removed on failure. The writer holds an
// exclusive flock on it until the rename, and first removes the
// temporaries of the same `path` that no live writer holds (left by a
// writer killed with SIGKILL or by a power loss), so a killed run's partial
// bytes last only until the next write of that file. Refuses targets that
// CheckOutputTarget refuses. Errors name the path and the OS reason.
//
// Test hook: with PLRANK_TEST_KILL_DURING_WRITE=N in the environment the
// process SIGKILLs itself after writing min(N, size) bytes of the temporary
// file, the worst moment for a crash (tests/e2e/cli_test.cc).
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents);
// Same for the concatenation of `pieces`, so a large output (a dataset
// cache) is written straight from its arrays without a second copy.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const std::string_view> pieces);

}  // namespace plrank

#endif  // PLRANK_CORE_DATA_FILE_IO_H_
