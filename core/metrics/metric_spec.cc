#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/metrics/ranking_metrics.h"

namespace plrank {

std::string MetricSpec::Name() const {
  std::string name;
  switch (kind) {
    case Kind::kNdcg:
      name = "ndcg";
      break;
    case Kind::kErr:
      name = "err";
      break;
    case Kind::kMap:
      name = "map";
      break;
  }
  if (k > 0) absl::StrAppend(&name, "@", k);
  return name;
}

absl::StatusOr<MetricSpec> ParseMetricSpec(std::string_view std_text) {
  // Debian's Abseil is built with its own string_view type.
  const absl::string_view text(std_text.data(), std_text.size());
  const std::string spec_text =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  const absl::string_view spec_view = spec_text;
  const size_t at = spec_view.find('@');
  const absl::string_view kind_text = spec_view.substr(0, at);
  MetricSpec spec;
  if (kind_text == "ndcg") {
    spec.kind = MetricSpec::Kind::kNdcg;
  } else if (kind_text == "err") {
    spec.kind = MetricSpec::Kind::kErr;
  } else if (kind_text == "map") {
    spec.kind = MetricSpec::Kind::kMap;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown metric '", text,
                     "' (expected ndcg, err or map, optionally @k)"));
  }
  if (at != absl::string_view::npos) {
    const absl::string_view k_text = spec_view.substr(at + 1);
    int32_t k = 0;
    if (!absl::SimpleAtoi(k_text, &k) || k < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad cutoff in metric '", text, "': k must be an integer >= 1"));
    }
    spec.k = k;
  }
  return spec;
}

}  // namespace plrank
