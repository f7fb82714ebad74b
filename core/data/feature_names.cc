#include "core/data/feature_names.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/data/file_io.h"
#include "core/data/utf8.h"

namespace plrank {
namespace {

// Names are short; a file this large is not a names file.
constexpr size_t kMaxFeatureNamesFileBytes = size_t{64} << 20;

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadFeatureNamesFile(
    const std::string& path, int32_t num_features) {
  absl::StatusOr<std::string> text =
      ReadWholeFile(path, kMaxFeatureNamesFileBytes);
  if (!text.ok()) {
    return absl::Status(
        text.status().code(),
        absl::StrCat("feature names file: ", text.status().message()));
  }
  std::vector<std::string> names(static_cast<size_t>(num_features));
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view name = absl::StripAsciiWhitespace(lines[i]);
    if (name.empty()) continue;
    if (i >= names.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", i + 1, ": names feature ", i + 1,
                       ", but the data has ", num_features, " features"));
    }
    // Model files store names as UTF-8; refusing here, before training,
    // beats a model that cannot be saved after it.
    if (!IsValidUtf8(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", i + 1,
          ": feature name is not valid UTF-8 (model files store text as "
          "UTF-8)"));
    }
    names[i] = std::string(name);
  }
  return names;
}

}  // namespace plrank
