#include "core/import/lightgbm_text.h"

#include <string>
#include <vector>

#include "absl/strings/strip.h"

namespace plrank::lightgbm_internal {

std::vector<Line> SplitLines(absl::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back({absl::StripSuffix(line, "\r"), ++number});
  }
  return lines;
}

absl::Status AddField(const Line& line, bool allow_bare, const Errors& errors,
                      Fields* fields) {
  const size_t equals = line.text.find('=');
  if (equals == absl::string_view::npos && !allow_bare) {
    return errors.Malformed(line.number,
                            absl::StrCat("expected key=value, got \"",
                                         line.text.substr(0, 60), "\""));
  }
  const absl::string_view key = line.text.substr(0, equals);
  const absl::string_view value = equals == absl::string_view::npos
                                      ? absl::string_view()
                                      : line.text.substr(equals + 1);
  auto [it, inserted] = fields->emplace(key, Field{value, line.number});
  if (!inserted) {
    return errors.Malformed(
        line.number, absl::StrCat("\"", key, "\" appears twice (first on line ",
                                  it->second.line, ")"));
  }
  return absl::OkStatus();
}

const Field* Find(const Fields& fields, absl::string_view key) {
  auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

absl::StatusOr<int64_t> ParseInt(const Field& field, absl::string_view key,
                                 const Errors& errors) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(field.value, &value)) {
    return errors.Malformed(field.line,
                            absl::StrCat(key, "=", field.value.substr(0, 40),
                                         " is not an integer"));
  }
  return value;
}

}  // namespace plrank::lightgbm_internal
