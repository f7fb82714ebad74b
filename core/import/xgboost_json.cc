#include "core/import/xgboost_json.h"

#include <cstddef>
#include <exception>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace plrank {
namespace {

using Dom = nlohmann::detail::json_sax_dom_parser<XgboostJson>;

// Containers inside containers: XGBoost models nest about 7 deep.
constexpr int kMaxDepth = 64;

// nlohmann's DOM builder behind a budget of values (see the header): past
// it, or on a container claiming more elements than the budget, the parse
// stops as on a syntax error.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(XgboostJson& root, size_t max_values)
      : dom_(root, /*allow_exceptions_=*/false), budget_(max_values) {}

  bool over_budget() const { return over_budget_; }
  bool too_deep() const { return too_deep_; }

  bool null() { return Spend() && dom_.null(); }
  bool boolean(bool value) { return Spend() && dom_.boolean(value); }
  bool number_integer(XgboostJson::number_integer_t value) {
    return Spend() && dom_.number_integer(value);
  }
  bool number_unsigned(XgboostJson::number_unsigned_t value) {
    return Spend() && dom_.number_unsigned(value);
  }
  bool number_float(XgboostJson::number_float_t value,
                    const XgboostJson::string_t& text) {
    return Spend() && dom_.number_float(value, text);
  }
  bool string(XgboostJson::string_t& value) {
    return Spend() && dom_.string(value);
  }
  bool binary(XgboostJson::binary_t& value) {
    return Spend() && dom_.binary(value);
  }
  bool start_object(size_t elements) {
    return Spend() && Claim(elements) && Enter() && dom_.start_object(elements);
  }
  bool key(XgboostJson::string_t& value) { return dom_.key(value); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(size_t elements) {
    return Spend() && Claim(elements) && Enter() && dom_.start_array(elements);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception& error) {
    return dom_.parse_error(position, token, error);
  }

 private:
  bool Spend() {
    if (budget_ == 0) {
      over_budget_ = true;
      return false;
    }
    --budget_;
    return true;
  }
  // A declared element count (npos: none) beyond what the input can hold.
  bool Claim(size_t elements) {
    if (elements != static_cast<size_t>(-1) && elements > budget_) {
      over_budget_ = true;
      return false;
    }
    return true;
  }

  // nlohmann's UBJSON reader recurses once per level: a file of a few KB
  // of '[' would overflow the stack.
  bool Enter() {
    if (++depth_ > kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  Dom dom_;
  size_t budget_;
  int depth_ = 0;
  bool over_budget_ = false;
  bool too_deep_ = false;
};

bool LooksLikeUbjson(const std::string& bytes) {
  if (bytes.size() < 2 || bytes[0] != '{') return false;
  switch (bytes[1]) {
    case 'i':
    case 'U':
    case 'I':
    case 'l':
    case 'L':  // a key's length type
    case '$':
    case '#':  // typed / counted
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<XgboostJson> ParseXgboostDocument(const std::string& bytes) {
  const bool ubjson = LooksLikeUbjson(bytes);
  XgboostJson root;
  BoundedDomBuilder builder(root, bytes.size() + 1);
  bool parsed = false;
  try {
    parsed = XgboostJson::sax_parse(bytes, &builder,
                                    ubjson ? XgboostJson::input_format_t::ubjson
                                           : XgboostJson::input_format_t::json,
                                    /*strict=*/true);
  } catch (const std::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(
        ubjson ? "not valid UBJSON: " : "not valid JSON: ", error.what()));
  }
  if (!parsed || root.is_discarded()) {
    if (builder.too_deep()) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a valid model: containers nest deeper than ",
                       kMaxDepth, " levels"));
    }
    if (builder.over_budget()) {
      return absl::InvalidArgumentError(
          "not a valid model: it claims more values than its bytes hold");
    }
    return absl::InvalidArgumentError(
        ubjson ? "not valid UBJSON (save_model(\"m.ubj\") output)"
               : "not valid JSON (XGBoost's binary format of before 1.6 is "
                 "not supported; save the model with a .json or .ubj name)");
  }
  return root;
}

}  // namespace plrank
