#ifndef PLRANK_CORE_DATA_FILE_IO_INTERNAL_H_
#define PLRANK_CORE_DATA_FILE_IO_INTERNAL_H_

// Pieces shared by the file readers and writers of core/data; not for use
// elsewhere.

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace plrank::file_io_internal {

// "<path>: <what>" with the OS reason of the current errno (read first, so
// building the message cannot change it).
absl::Status OsError(const std::string& path, std::string_view what);

// "a directory", "a character device", ... for refusal messages.
const char* FileKind(mode_t mode);

// The directory holding `path` ("." for a bare file name).
std::string DirectoryOf(const std::string& path);

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; errors
// name `path`.
absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path);

// FAILED_PRECONDITION "<path>: exists and is <FileKind(mode)>, <why>".
absl::Status RefuseExisting(const std::string& path, mode_t mode,
                            std::string_view why);

}  // namespace plrank::file_io_internal

#endif  // PLRANK_CORE_DATA_FILE_IO_INTERNAL_H_
