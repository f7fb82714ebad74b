#include "trainer/cli/key_value_args.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/lightgbm_params.h"
#include "common/program.h"
#include "core/data/file_io.h"

namespace plrank::cli {
namespace {

bool IsConfigKey(absl::string_view key) {
  return key == "config" || key == "config_file";
}

// Where a flag's value came from: a config file (overridden by the command
// line) or the command line.
struct Setting {
  std::string value;
  std::string origin;
  bool from_config = false;
};

absl::Status AddSettings(const KeyValueArg& arg, bool from_config,
                         const std::vector<std::string>& flag_names,
                         std::map<std::string, Setting>* settings) {
  std::vector<FlagSetting> translated;
  absl::StatusOr<std::vector<FlagSetting>> lightgbm =
      TranslateLightGbmParameter(arg.key, arg.value, flag_names);
  if (lightgbm.ok()) {
    translated = *std::move(lightgbm);
  } else if (!absl::IsNotFound(lightgbm.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(arg.origin, ": ", lightgbm.status().message()));
  } else if (std::find(flag_names.begin(), flag_names.end(), arg.key) !=
             flag_names.end()) {
    translated.emplace_back(arg.key, arg.value);
  } else {
    std::vector<std::string> candidates = flag_names;
    for (std::string& name : KnownLightGbmNames()) {
      candidates.push_back(std::move(name));
    }
    std::string message =
        absl::StrCat(arg.origin, ": unknown parameter '", arg.key, "'");
    if (std::string near = NearestName(arg.key, candidates); !near.empty()) {
      absl::StrAppend(&message, "; did you mean '", near, "'?");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(message, " (see --help and docs/lightgbm-habits.md)"));
  }
  for (auto& [flag, value] : translated) {
    auto [it, inserted] =
        settings->try_emplace(flag, Setting{value, arg.origin, from_config});
    if (inserted) continue;
    Setting& earlier = it->second;
    if (earlier.from_config && !from_config) {
      earlier = Setting{value, arg.origin, from_config};  // the command line wins
      continue;
    }
    if (earlier.value != value) {
      return absl::InvalidArgumentError(absl::StrCat(
          arg.origin, " sets ", flag, "=", value, " but ", earlier.origin,
          " set ", flag, "=", earlier.value, "; give it once"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<KeyValueArg> SplitArgument(const std::string& argument) {
  const size_t equals = argument.find('=');
  if (equals == std::string::npos || equals == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", argument,
        "': plrank-train takes --flag=value, key=value (LightGBM's "
        "parameter names too) and config=FILE (see --help)"));
  }
  return KeyValueArg{argument.substr(0, equals), argument.substr(equals + 1),
                     absl::StrCat("argument '", argument, "'")};
}

}  // namespace

absl::StatusOr<std::vector<KeyValueArg>> ParseConfigText(
    absl::string_view text, const std::string& path) {
  std::vector<KeyValueArg> args;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const std::string origin = absl::StrCat(path, ":", line_number);
    const size_t equals = line.find('=');
    if (equals == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": expected key = value, got '", line.substr(0, 60), "'"));
    }
    const absl::string_view key =
        absl::StripAsciiWhitespace(line.substr(0, equals));
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(equals + 1));
    if (key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": no key before '='"));
    }
    args.push_back({std::string(key), std::string(value), origin});
  }
  return args;
}

absl::StatusOr<std::vector<KeyValueArg>> ReadConfigFile(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, kMaxConfigFileBytes);
  if (!text.ok()) return text.status();
  return ParseConfigText(*text, path);
}

absl::StatusOr<std::vector<std::string>> ApplyKeyValueArgs(
    const std::vector<std::string>& positional,
    const std::vector<std::string>& flag_names,
    const std::function<bool(absl::string_view)>& given_as_flag) {
  std::map<std::string, Setting> settings;
  std::string config_origin;
  for (const std::string& argument : positional) {
    absl::StatusOr<KeyValueArg> arg = SplitArgument(argument);
    if (!arg.ok()) return arg.status();
    if (!IsConfigKey(arg->key)) continue;
    if (!config_origin.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          arg->origin, ": a second config file (", config_origin,
          " came first); give one"));
    }
    config_origin = arg->origin;
    absl::StatusOr<std::vector<KeyValueArg>> config =
        ReadConfigFile(arg->value);
    if (!config.ok()) return config.status();
    for (const KeyValueArg& entry : *config) {
      if (IsConfigKey(entry.key)) {
        return absl::InvalidArgumentError(absl::StrCat(
            entry.origin, ": a config file cannot name another config file"));
      }
      if (absl::Status status =
              AddSettings(entry, /*from_config=*/true, flag_names, &settings);
          !status.ok()) {
        return status;
      }
    }
  }
  for (const std::string& argument : positional) {
    absl::StatusOr<KeyValueArg> arg = SplitArgument(argument);
    if (IsConfigKey(arg->key)) continue;
    if (absl::Status status =
            AddSettings(*arg, /*from_config=*/false, flag_names, &settings);
        !status.ok()) {
      return status;
    }
  }
  std::vector<std::string> applied;
  for (const auto& [name, setting] : settings) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      return absl::InternalError(absl::StrCat("no flag --", name));
    }
    if (given_as_flag(name)) {
      if (setting.from_config) continue;  // --flag overrides the config file
      if (flag->CurrentValue() != setting.value) {
        return absl::InvalidArgumentError(absl::StrCat(
            setting.origin, " sets ", name, "=", setting.value, " but --",
            name, "=", flag->CurrentValue(), " was given too; give it once"));
      }
      continue;
    }
    std::string error;
    if (!flag->ParseFrom(setting.value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(setting.origin, ": ", name, "=", setting.value, ": ",
                       error));
    }
    applied.push_back(name);
  }
  return applied;
}

}  // namespace plrank::cli
