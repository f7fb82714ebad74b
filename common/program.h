#ifndef PLRANK_COMMON_PROGRAM_H_
#define PLRANK_COMMON_PROGRAM_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/lightgbm_params.h"  // LightGbmEquivalent, LightGbmHint

namespace plrank {

// The PLRank version, CMake's PROJECT_VERSION (e.g. "0.1.0"): the one
// version string of every binary (--version, the server's startup log and
// build-info metric).
absl::string_view PlrankVersion();

// The one version line every PLRank program prints for --version:
//   "plrank-server 0.1.0 (Release build, commit 0de5ba3c1a2b)"
// (", commit ..." only when the build was made from a git checkout).
std::string ProgramVersionLine(absl::string_view program);

// "plrank-train" from "/path/to/plrank-train".
std::string ProgramShortName(const char* argv0);

// The flag of `candidates` nearest to `name` by edit distance, if it is near
// enough to be a plausible typo; empty otherwise.
std::string NearestName(absl::string_view name,
                        const std::vector<std::string>& candidates);

// Parses absl flags the way every PLRank program does:
//  - --help / --helpshort list every flag the program defines, whichever
//    source file of the project defines it (absl alone would only list
//    flags of a file named after the binary);
//  - --help (and the rest of absl's usage flags) exits 0, not absl's 1;
//  - --version prints ProgramVersionLine();
//  - --flagfile=F (absl's) is described in the usage text;
//  - an unknown flag is one message naming the nearest known flag, or the
//    PLRank flag for a LightGBM parameter name, or why PLRank has none
//    (LightGbmHint), and exit status 2.
// Returns the positional arguments, argv[0] first.
std::vector<char*> ParseProgramFlags(int argc, char** argv,
                                     absl::string_view usage);

}  // namespace plrank

#endif  // PLRANK_COMMON_PROGRAM_H_
