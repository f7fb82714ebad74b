#include "core/data/side_files.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/file_io.h"
#include "core/data/letor_tokens.h"
#include "core/data/value_lines.h"

namespace plrank {
namespace {

using letor_internal::SkipSpaces;
using letor_internal::TokenEnd;

const char* KindName(SideKind kind) {
  switch (kind) {
    case SideKind::kWeight:
      return "weight";
    case SideKind::kPosition:
      return "position";
    case SideKind::kPropensity:
      return "propensity";
  }
  return "value";
}

const char* KindRange(SideKind kind) {
  switch (kind) {
    case SideKind::kWeight:
      return "a finite number >= 0";
    case SideKind::kPosition:
      return "an integer position >= 1 (0: not shown)";
    case SideKind::kPropensity:
      return "a number in (0, 1]";
  }
  return "";
}

bool InRange(SideKind kind, double v) {
  switch (kind) {
    case SideKind::kWeight:
      return std::isfinite(v) && v >= 0.0;
    case SideKind::kPosition:
      return v >= 0.0 && v <= 1e9 && v == std::floor(v);
    case SideKind::kPropensity:
      return v > 0.0 && v <= 1.0;
  }
  return false;
}

// Values aligned with the stored documents (input_line_order honoured).
template <typename T>
std::vector<T> InStoredOrder(const Dataset& data,
                             const std::vector<double>& values) {
  std::vector<T> out(data.num_documents());
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t line =
        data.input_line_order.empty() ? i : data.input_line_order[i];
    out[i] = static_cast<T>(values[line]);
  }
  return out;
}

absl::Status Store(const SideValues& parsed, const std::string& name,
                   SideKind kind, bool allow_query_level, Dataset* data) {
  const size_t docs = data->num_documents();
  const size_t queries = data->num_queries();
  const size_t count = parsed.values.size();
  auto line_of = [&](size_t index) -> int64_t {
    if (index < parsed.lines.size()) return parsed.lines[index];
    return parsed.lines.empty() ? 1 : parsed.lines.back();
  };
  if (count != docs) {
    const bool query_level =
        kind == SideKind::kWeight && allow_query_level && count == queries;
    if (!query_level) {
      const std::string expected =
          kind == SideKind::kWeight && allow_query_level
              ? absl::StrFormat("%d (one per document) or %d (one per query)",
                                docs, queries)
              : absl::StrFormat("%d (one per document)", docs);
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: %d %s values, but the data has %s", name,
          line_of(count > docs ? docs : count), count, KindName(kind),
          expected));
    }
    data->query_weights.assign(parsed.values.begin(), parsed.values.end());
    return absl::OkStatus();
  }
  switch (kind) {
    case SideKind::kWeight:
      data->weights = InStoredOrder<float>(*data, parsed.values);
      break;
    case SideKind::kPosition:
      data->positions = InStoredOrder<int32_t>(*data, parsed.values);
      break;
    case SideKind::kPropensity:
      data->propensities = InStoredOrder<float>(*data, parsed.values);
      break;
  }
  return absl::OkStatus();
}

// Rows of input documents, zero-padded to `width`, in stored order.
void StoreMarginals(const std::vector<std::vector<float>>& rows, size_t width,
                    Dataset* data) {
  data->marginal_positions = static_cast<int32_t>(width);
  data->marginals.assign(rows.size() * width, 0.0f);
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t from =
        data->input_line_order.empty() ? i : data->input_line_order[i];
    std::copy(rows[from].begin(), rows[from].end(),
              data->marginals.begin() + i * width);
  }
}

}  // namespace

absl::StatusOr<SideValues> ParseSideValues(std::string_view text,
                                           const std::string& name,
                                           SideKind kind) {
  SideValues result;
  absl::Status status = ForEachLineValue(
      text, name, KindName(kind),
      [&](const char* token, const char* token_end,
          int64_t line) -> absl::Status {
        double value = 0.0;
        auto [ptr, ec] = std::from_chars(token, token_end, value);
        if (ec != std::errc() || ptr != token_end || !InRange(kind, value)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: bad %s '%s'; expected %s", name, line, KindName(kind),
              absl::string_view(token, token_end - token), KindRange(kind)));
        }
        result.values.push_back(value);
        result.lines.push_back(line);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::Status ParseMarginals(std::string_view text, const std::string& name,
                            Dataset* data) {
  std::vector<std::vector<float>> rows;
  size_t width = 0;
  int64_t last_line = 0;
  absl::Status status = ForEachContentLine(
      text, [&](int64_t line, const char* token, const char* line_end) {
        last_line = line;
        if (rows.size() == data->num_documents()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: more lines than the data's %d documents", name, line,
              data->num_documents()));
        }
        std::vector<float>& row = rows.emplace_back();
        double sum = 0.0;
        while (token != line_end) {
          const char* token_end = TokenEnd(token, line_end);
          double value = 0.0;
          auto [ptr, ec] = std::from_chars(token, token_end, value);
          if (ec != std::errc() || ptr != token_end || !(value >= 0.0) ||
              value > 1.0) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "%s:%d: bad marginal '%s'; expected a probability in [0, 1]",
                name, line, std::string_view(token, token_end - token)));
          }
          row.push_back(static_cast<float>(value));
          sum += value;
          token = SkipSpaces(token_end, line_end);
        }
        if (sum > 1.0 + 1e-5) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: the marginals sum to %g; a document is shown at most "
              "once",
              name, line, sum));
        }
        width = std::max(width, row.size());
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  if (rows.size() != data->num_documents()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: %d marginals lines, but the data has %d (one per document)",
        name, last_line, rows.size(), data->num_documents()));
  }
  StoreMarginals(rows, width, data);
  return absl::OkStatus();
}

absl::Status AttachMarginals(const std::vector<std::vector<double>>& rows,
                             const std::string& name, Dataset* data) {
  if (rows.size() != data->num_documents()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d rows, but the data has %d documents (one per document)", name,
        rows.size(), data->num_documents()));
  }
  std::vector<std::vector<float>> stored(rows.size());
  size_t width = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    double sum = 0.0;
    for (size_t j = 0; j < rows[i].size(); ++j) {
      const double value = rows[i][j];
      if (!(value >= 0.0 && value <= 1.0)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s[%d][%d]: bad marginal %g; expected a probability in [0, 1]",
            name, i, j, value));
      }
      sum += value;
      stored[i].push_back(static_cast<float>(value));
    }
    if (sum > 1.0 + 1e-5) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s[%d]: the marginals sum to %g; a document is shown at most once",
          name, i, sum));
    }
    width = std::max(width, rows[i].size());
  }
  StoreMarginals(stored, width, data);
  return absl::OkStatus();
}

std::string FindSideFile(const std::string& data_path,
                         const std::string& given, const std::string& suffix) {
  if (!given.empty()) return given;
  const std::string beside = data_path + suffix;
  std::error_code error;
  return std::filesystem::exists(beside, error) ? beside : "";
}

absl::Status ReadSideFiles(const std::string& data_path,
                           const SideFileOptions& options, Dataset* data,
                           std::vector<std::string>* notes) {
  const struct {
    const std::string& given;
    const char* suffix;
    SideKind kind;
  } files[] = {{options.weight_file, ".weight", SideKind::kWeight},
               {options.position_file, ".position", SideKind::kPosition},
               {options.propensity_file, ".propensity", SideKind::kPropensity}};
  for (const auto& file : files) {
    const std::string path = FindSideFile(data_path, file.given, file.suffix);
    if (path.empty()) continue;
    // A side line is a number and a newline; comments may add some.
    const size_t bound = 256 * (data->num_documents() + 1) + (1 << 16);
    absl::StatusOr<std::string> text = ReadWholeFile(path, bound);
    if (!text.ok()) return text.status();
    absl::StatusOr<SideValues> parsed =
        ParseSideValues(*text, path, file.kind);
    if (!parsed.ok()) return parsed.status();
    if (absl::Status s = Store(*parsed, path, file.kind,
                               /*allow_query_level=*/true, data);
        !s.ok()) {
      return s;
    }
    if (notes != nullptr) {
      const bool query_level =
          file.kind == SideKind::kWeight && !data->query_weights.empty() &&
          data->weights.empty();
      notes->push_back(absl::StrFormat(
          "%s: %d %s%s values for %s", path, parsed->values.size(),
          query_level ? "query " : "", KindName(file.kind), data_path));
    }
  }
  if (const std::string path =
          FindSideFile(data_path, options.marginals_file, ".marginals");
      !path.empty()) {
    // A line holds k numbers of up to ~25 characters.
    const size_t bound = 4096 * (data->num_documents() + 1) + (1 << 16);
    absl::StatusOr<std::string> text = ReadWholeFile(path, bound);
    if (!text.ok()) return text.status();
    if (absl::Status s = ParseMarginals(*text, path, data); !s.ok()) return s;
    if (notes != nullptr) {
      notes->push_back(absl::StrFormat(
          "%s: position marginals of %d documents (positions 1..%d) for %s",
          path, data->num_documents(), data->marginal_positions, data_path));
    }
  }
  return absl::OkStatus();
}

absl::Status AttachSideValues(const std::vector<double>& values,
                              const std::string& name, SideKind kind,
                              bool allow_query_level, Dataset* data) {
  if (values.empty()) return absl::OkStatus();
  SideValues parsed;
  parsed.values = values;
  parsed.lines.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    parsed.lines[i] = static_cast<int64_t>(i) + 1;
    if (!InRange(kind, values[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s[%d]: bad %s %g; expected %s", name, i,
                          KindName(kind), values[i], KindRange(kind)));
    }
  }
  if (values.size() != data->num_documents() &&
      !(allow_query_level && values.size() == data->num_queries())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d values, but the data has %d %s", name, values.size(),
        allow_query_level && kind == SideKind::kWeight
            ? data->num_queries()
            : data->num_documents(),
        allow_query_level && kind == SideKind::kWeight ? "queries"
                                                        : "documents"));
  }
  if (allow_query_level && values.size() == data->num_queries() &&
      values.size() != data->num_documents()) {
    data->query_weights.assign(values.begin(), values.end());
    return absl::OkStatus();
  }
  return Store(parsed, name, kind, /*allow_query_level=*/false, data);
}

double QueryMetricWeight(const Dataset& data, size_t query) {
  double weight = data.query_weights.empty() ? 1.0 : data.query_weights[query];
  if (!data.weights.empty()) {
    const uint32_t begin = data.query_begin(query), end = data.query_end(query);
    double sum = 0.0;
    for (uint32_t i = begin; i < end; ++i) sum += data.weights[i];
    weight *= end > begin ? sum / (end - begin) : 0.0;
  }
  return weight;
}

bool HasQueryMetricWeights(const Dataset& data) {
  if (data.query_weights.empty() && data.weights.empty()) return false;
  for (size_t q = 0; q < data.num_queries(); ++q) {
    if (QueryMetricWeight(data, q) != 1.0) return true;
  }
  return false;
}

}  // namespace plrank
