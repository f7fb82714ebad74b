#ifndef PLRANK_CORE_IMPORT_LIGHTGBM_TEXT_H_
#define PLRANK_CORE_IMPORT_LIGHTGBM_TEXT_H_

// Internal to the LightGBM import (lightgbm_import.cc, lightgbm_tree.cc):
// the text model's lines and key=value fields, and error messages that name
// the file and line.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace plrank::lightgbm_internal {

struct Line {
  absl::string_view text;
  int number;  // 1-based
};

// One `key=value` line of the header or of a tree block.
struct Field {
  absl::string_view value;
  int line = 0;
};
using Fields = std::map<absl::string_view, Field, std::less<>>;

// The lines of `text` ('\n'-separated, a trailing '\r' dropped), numbered.
std::vector<Line> SplitLines(absl::string_view text);

// Builds errors that start with "<file>:<line>: " (keeps a reference to
// the name, which must outlive it).
class Errors {
 public:
  explicit Errors(const std::string& name) : name_(name) {}

  absl::Status Malformed(int line, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ":", line, ": LightGBM model: ", what));
  }
  absl::Status Unsupported(int line, absl::string_view what) const {
    return absl::UnimplementedError(
        absl::StrCat(name_, ":", line, ": LightGBM model: ", what));
  }

 private:
  const std::string& name_;
};

// Adds `line` as key=value to `fields`; a bare word is a key with an empty
// value (LightGBM writes `average_output` so) when `allow_bare`. A key seen
// twice is an error.
absl::Status AddField(const Line& line, bool allow_bare, const Errors& errors,
                      Fields* fields);

// The field named `key`, or nullptr.
const Field* Find(const Fields& fields, absl::string_view key);

// The field's value as an integer.
absl::StatusOr<int64_t> ParseInt(const Field& field, absl::string_view key,
                                 const Errors& errors);

// The space-separated numbers of `field`, which must hold exactly `count`
// entries (so sizes come from what the file holds, never from a count
// alone). Doubles must be finite unless `allow_infinite` (never NaN);
// integers must fit T.
template <typename T>
absl::Status ParseArray(const Field& field, absl::string_view key,
                        int64_t count, const Errors& errors,
                        std::vector<T>* out, bool allow_infinite = false) {
  const std::vector<absl::string_view> tokens =
      absl::StrSplit(field.value, ' ', absl::SkipEmpty());
  if (static_cast<int64_t>(tokens.size()) != count) {
    return errors.Malformed(
        field.line, absl::StrFormat("%s has %d entries, expected %d", key,
                                    tokens.size(), count));
  }
  out->clear();
  out->reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      double value = 0;
      if (!absl::SimpleAtod(tokens[i], &value) || std::isnan(value) ||
          (!allow_infinite && std::isinf(value))) {
        return errors.Malformed(
            field.line,
            absl::StrFormat("%s entry %d (\"%s\") is not a %snumber", key, i,
                            tokens[i].substr(0, 40),
                            allow_infinite ? "" : "finite "));
      }
      out->push_back(static_cast<T>(value));
    } else {
      int64_t value = 0;
      if (!absl::SimpleAtoi(tokens[i], &value) ||
          value < std::numeric_limits<T>::lowest() ||
          value > std::numeric_limits<T>::max()) {
        return errors.Malformed(
            field.line, absl::StrFormat("%s entry %d (\"%s\") is not an "
                                        "integer in range",
                                        key, i, tokens[i].substr(0, 40)));
      }
      out->push_back(static_cast<T>(value));
    }
  }
  return absl::OkStatus();
}

}  // namespace plrank::lightgbm_internal

#endif  // PLRANK_CORE_IMPORT_LIGHTGBM_TEXT_H_
