#include "common/program.h"

#include "common/lightgbm_params.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#ifndef PLRANK_VERSION
#define PLRANK_VERSION "dev"
#endif
#ifndef PLRANK_BUILD_TYPE
#define PLRANK_BUILD_TYPE ""
#endif
#ifndef PLRANK_SOURCE_DIR
#define PLRANK_SOURCE_DIR ""
#endif

namespace plrank {
namespace build_info {
extern const char kGitCommit[];  // generated: common/write_build_info.cmake
}  // namespace build_info

namespace {

// Flags of the program itself: defined in the project's sources, not in
// absl's own (--help, --flagfile, ...).
bool IsProjectFlagFile(absl::string_view file) {
  constexpr absl::string_view kSourceDir = PLRANK_SOURCE_DIR;
  if (!kSourceDir.empty() && absl::StartsWith(file, kSourceDir)) return true;
  return !absl::StrContains(file, "absl/") && !absl::StartsWith(file, "/usr/");
}

std::string NormalizeFilename(absl::string_view file) {
  constexpr absl::string_view kSourceDir = PLRANK_SOURCE_DIR;
  if (!kSourceDir.empty() && absl::StartsWith(file, kSourceDir)) {
    file.remove_prefix(kSourceDir.size());
  }
  return std::string(file);
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The names --help lists for this program (its own flags), plus --help and
// --version.
std::vector<std::string> ProgramFlagNames() {
  std::vector<std::string> names = {"help", "helpfull", "version"};
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsProjectFlagFile(flag->Filename())) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string UnknownFlagMessage(absl::string_view name) {
  const std::vector<std::string> known = ProgramFlagNames();
  if (std::string hint = LightGbmHint(name, known); !hint.empty()) {
    return absl::StrCat("unknown flag --", name, ": ", hint, " (see --help)");
  }
  if (std::string near = NearestName(name, known); !near.empty()) {
    return absl::StrCat("unknown flag --", name, "; did you mean --", near,
                        "? (see --help)");
  }
  return absl::StrCat("unknown flag --", name, " (see --help)");
}

// absl's --help family is handled by its parser, not registered as flags.
bool IsUsageFlag(absl::string_view name) {
  for (absl::string_view usage :
       {"help", "helpfull", "helpshort", "helppackage", "version",
        "only_check_args", "helpon", "helpmatch"}) {
    if (name == usage) return true;
  }
  return false;
}

// absl's parser rejects unknown flags too, without a hint; this runs first
// and gives one. Follows absl's syntax: -flag or --flag, =value or the next
// argument as the value of a non-boolean flag, --noflag for booleans, "--"
// ends the flags.
void RejectUnknownFlags(const std::string& program, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (absl::StartsWith(argv[i], "--undefok")) return;  // absl decides
  }
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") return;
    if (arg.size() < 2 || arg[0] != '-') continue;  // positional
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t equals = arg.find('=');
    const absl::string_view name = arg.substr(0, equals);
    if (name.empty() || IsUsageFlag(name)) continue;
    if (const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name)) {
      if (equals == absl::string_view::npos && !flag->IsOfType<bool>()) {
        ++i;  // --flag value
      }
      continue;
    }
    if (absl::StartsWith(name, "no")) {
      const absl::CommandLineFlag* flag =
          absl::FindCommandLineFlag(name.substr(2));
      if (flag != nullptr && flag->IsOfType<bool>()) continue;
    }
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(),
                 UnknownFlagMessage(name).c_str());
    std::exit(2);
  }
}

}  // namespace

absl::string_view PlrankVersion() { return PLRANK_VERSION; }

std::string ProgramVersionLine(absl::string_view program) {
  std::string line = absl::StrCat(program, " ", PlrankVersion(), " (");
  const absl::string_view build_type = PLRANK_BUILD_TYPE;
  absl::StrAppend(&line, build_type.empty() ? "unknown" : build_type,
                  " build");
  if (build_info::kGitCommit[0] != '\0') {
    absl::StrAppend(&line, ", commit ", build_info::kGitCommit);
  }
  absl::StrAppend(&line, ")");
  return line;
}

std::string ProgramShortName(const char* argv0) {
  absl::string_view name = argv0 == nullptr ? "plrank" : argv0;
  if (const size_t slash = name.rfind('/'); slash != absl::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  return std::string(name);
}

std::string NearestName(absl::string_view name,
                        const std::vector<std::string>& candidates) {
  // A typo is a few edits away: 1 for short names, up to 3 for long ones.
  const size_t allowed = std::min<size_t>(3, 1 + name.size() / 5);
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(name, candidate);
    if (distance < best_distance ||
        (distance == best_distance && !best.empty() && candidate < best)) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best_distance <= allowed ? best : "";
}

std::vector<char*> ParseProgramFlags(int argc, char** argv,
                                     absl::string_view usage) {
  const std::string program = ProgramShortName(argc > 0 ? argv[0] : nullptr);
  absl::SetProgramUsageMessage(absl::StrCat(
      usage,
      "\n\nEvery flag can also come from a file: --flagfile=F reads one "
      "--flag=value per line (lines starting with # are comments); several "
      "--flagfile flags may be given, and flags after them override theirs."));
  absl::FlagsUsageConfig config;
  config.contains_help_flags = IsProjectFlagFile;
  config.contains_helpshort_flags = IsProjectFlagFile;
  config.normalize_filename = NormalizeFilename;
  config.version_string = [program] {
    return ProgramVersionLine(program) + "\n";
  };
  absl::SetFlagsUsageConfig(config);
  RejectUnknownFlags(program, argc, argv);
  // absl exits 1 after --help; asking for help is not an error, so the
  // usage flags are handled here and --help exits 0 (--version and
  // --only_check_args exit 0 in absl too).
  std::vector<char*> positional = absl::flags_internal::ParseCommandLineImpl(
      argc, argv, absl::flags_internal::ArgvListAction::kRemoveParsedArgs,
      absl::flags_internal::UsageFlagsAction::kIgnoreUsage,
      absl::flags_internal::OnUndefinedFlag::kAbortIfUndefined);
  const int usage_exit = absl::flags_internal::HandleUsageFlags(
      std::cout, absl::ProgramUsageMessage());
  if (usage_exit != -1) {
    std::cout.flush();
    std::exit(0);
  }
  return positional;
}

}  // namespace plrank
