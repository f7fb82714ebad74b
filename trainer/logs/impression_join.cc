#include "trainer/logs/impression_join.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/data/file_io.h"
#include "core/data/line_chunk_reader.h"
#include "core/data/random.h"
#include "core/policy/plackett_luce_sampler.h"

namespace plrank::logs {
namespace {

// Smallest propensity written: a shown document's estimated marginal is > 0
// by construction, but may underflow for extreme scores.
constexpr double kMinPropensity = 1e-12;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// One logged document line.
struct LoggedLine {
  std::string features;    // the LETOR feature tokens, verbatim
  std::string request_id;  // escaped, as logged
  std::string doc;         // escaped
  std::string query;       // escaped; empty when the request had none
  uint32_t position = 0;
  double score = 0;
  double temperature = 0;
  uint32_t top_k = 0;
  uint64_t seed = 0;
  uint32_t documents = 0;
};

absl::Status ParseLine(absl::string_view line, const std::string& where,
                       LoggedLine& out) {
  const size_t hash = line.find(" # ");
  if (hash == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not an impression line (no ' # ' comment)"));
  }
  absl::string_view data = line.substr(0, hash);
  // "<label> qid:<id> features..."
  const size_t label_end = data.find(' ');
  const size_t qid_end = label_end == absl::string_view::npos
                             ? absl::string_view::npos
                             : data.find(' ', label_end + 1);
  out.features = qid_end == absl::string_view::npos
                     ? std::string()
                     : std::string(data.substr(qid_end + 1));
  out.request_id.clear();
  out.query.clear();
  bool has_position = false, has_score = false, has_documents = false;
  for (absl::string_view field :
       absl::StrSplit(line.substr(hash + 3), ' ', absl::SkipEmpty())) {
    const size_t eq = field.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = field.substr(0, eq);
    const absl::string_view value = field.substr(eq + 1);
    bool ok = true;
    if (key == "request_id") {
      out.request_id = std::string(value);
    } else if (key == "doc") {
      out.doc = std::string(value);
    } else if (key == "query") {
      out.query = std::string(value);
    } else if (key == "position") {
      ok = absl::SimpleAtoi(value, &out.position);
      has_position = true;
    } else if (key == "score") {
      ok = absl::SimpleAtod(value, &out.score);
      has_score = true;
    } else if (key == "temperature") {
      ok = absl::SimpleAtod(value, &out.temperature);
    } else if (key == "top_k") {
      ok = absl::SimpleAtoi(value, &out.top_k);
    } else if (key == "seed") {
      ok = absl::SimpleAtoi(value, &out.seed);
    } else if (key == "documents") {
      ok = absl::SimpleAtoi(value, &out.documents);
      has_documents = true;
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": bad value of ", key, ": '", value, "'"));
    }
  }
  if (out.request_id.empty() || !has_position || !has_score ||
      !has_documents || out.documents == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where,
        ": an impression line needs request_id, position, score and "
        "documents"));
  }
  return absl::OkStatus();
}

struct Outputs {
  std::string data, position, propensity;
  std::string all, all_position, all_marginals;
};

void AppendDouble(std::string& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

absl::Status EmitRequest(const std::vector<LoggedLine>& lines,
                         const absl::flat_hash_set<std::string>& clicks,
                         size_t samples, size_t qid, const std::string& where,
                         Outputs& out, PooledLabels* pooled,
                         JoinSummary& summary) {
  const LoggedLine& first = lines.front();
  const size_t n = lines.size();
  if (n != first.documents) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": request ", first.request_id, " has ", n,
        " document lines but says documents=", first.documents,
        " (a truncated or mixed file)"));
  }
  size_t k = 0;
  for (const LoggedLine& line : lines) {
    if (line.position > n) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": position ", line.position, " of request ",
                       first.request_id, " beyond its ", n, " documents"));
    }
    k += line.position != 0 ? 1 : 0;
  }
  if (k == 0) return absl::OkStatus();
  // mu(d, j): the logging policy's probability of showing d at j.
  std::vector<double> marginals(k * n, 0.0);
  if (first.temperature > 0) {
    std::vector<double> scores(n);
    for (size_t d = 0; d < n; ++d) scores[d] = lines[d].score;
    absl::StatusOr<PlackettLucePolicy> policy =
        PlackettLucePolicy::Create(scores, {first.temperature, k});
    if (!policy.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": request ", first.request_id, ": ",
          policy.status().message()));
    }
    marginals = policy->EstimateMarginals(samples, SplitMix64Hash(first.seed));
  } else {
    for (size_t d = 0; d < n; ++d) {
      if (lines[d].position != 0) {
        marginals[(lines[d].position - 1) * n + d] = 1.0;
      }
    }
  }
  ++summary.requests;
  summary.candidate_documents += n;
  if (pooled != nullptr) {
    pooled->BeginRequest(first.query.empty() ? first.request_id : first.query);
  }
  for (size_t d = 0; d < n; ++d) {
    const LoggedLine& line = lines[d];
    const bool clicked =
        line.position != 0 &&
        clicks.contains(absl::StrCat(UnescapeLogToken(line.request_id), "\t",
                                     UnescapeLogToken(line.doc)));
    summary.clicks += clicked ? 1 : 0;
    if (pooled != nullptr) {
      pooled->Add(line.doc, line.features, line.position, &marginals[d], k, n,
                  clicked);
    }
    const std::string row =
        absl::StrCat(clicked ? "1" : "0", " qid:", qid,
                     line.features.empty() ? "" : " ", line.features,
                     " # request_id=", line.request_id, " doc=", line.doc,
                     " position=", line.position, "\n");
    out.all += row;
    absl::StrAppend(&out.all_position, line.position, "\n");
    for (size_t j = 0; j < k; ++j) {
      if (j > 0) out.all_marginals += ' ';
      AppendDouble(out.all_marginals, marginals[j * n + d]);
    }
    out.all_marginals += '\n';
    if (line.position == 0) continue;
    ++summary.shown_documents;
    out.data += row;
    absl::StrAppend(&out.position, line.position, "\n");
    AppendDouble(out.propensity,
                 std::clamp(marginals[(line.position - 1) * n + d],
                            kMinPropensity, 1.0));
    out.propensity += '\n';
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::flat_hash_set<std::string>> ReadClicks(
    const std::string& path) {
  absl::StatusOr<LineChunkReader> reader = LineChunkReader::Open(path);
  if (!reader.ok()) return reader.status();
  absl::flat_hash_set<std::string> clicks;
  int64_t line_number = 0;
  while (true) {
    absl::StatusOr<std::string_view> chunk = reader->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) break;
    for (absl::string_view line : absl::StrSplit(absl::string_view(chunk->data(), chunk->size()), '\n')) {
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const size_t start = line.find_first_not_of(" \t");
      if (start == absl::string_view::npos || line[start] == '#') continue;
      std::vector<absl::string_view> tokens =
          absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
      if (tokens.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", line_number,
            ": expected 'request_id document_id', got ", tokens.size(),
            " fields"));
      }
      clicks.insert(absl::StrCat(tokens[0], "\t", tokens[1]));
    }
  }
  return clicks;
}

}  // namespace

std::string UnescapeLogToken(absl::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '%' && i + 2 < token.size() + 0 &&
        HexValue(token[i + 1]) >= 0 && HexValue(token[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(token[i + 1]) * 16 +
                                      HexValue(token[i + 2])));
      i += 2;
    } else {
      out.push_back(token[i]);
    }
  }
  return out;
}

absl::StatusOr<JoinSummary> JoinImpressions(const JoinOptions& options) {
  if (options.marginal_samples == 0) {
    return absl::InvalidArgumentError("--marginal_samples must be >= 1");
  }
  std::error_code error;
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(options.impressions_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("impressions-", 0) == 0 && name.size() > 4 &&
        name.compare(name.size() - 4, 4, ".log") == 0) {
      files.push_back(entry.path().string());
    }
  }
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--impressions=", options.impressions_dir,
                     ": cannot list the directory: ", error.message()));
  }
  const bool pool = options.pooled.grades > 0;
  if (pool) {
    if (absl::Status status = ValidatePooledLabelOptions(options.pooled);
        !status.ok()) {
      return status;
    }
  }
  std::sort(files.begin(), files.end());
  absl::StatusOr<absl::flat_hash_set<std::string>> clicks =
      ReadClicks(options.clicks_file);
  if (!clicks.ok()) return clicks.status();
  for (const std::string& target :
       {options.output, options.output + ".position",
        options.output + ".propensity", options.output + ".all",
        options.output + ".all.position", options.output + ".all.marginals"}) {
    if (absl::Status status = CheckOutputTarget(target); !status.ok()) {
      return status;
    }
  }
  if (pool) {
    if (absl::Status status = CheckOutputTarget(options.output + ".pooled");
        !status.ok()) {
      return status;
    }
  }
  PooledLabels pooled(options.pooled);

  JoinSummary summary;
  summary.files = files.size();
  Outputs out;
  absl::flat_hash_set<std::string> seen_requests;
  size_t qid = 0;
  for (const std::string& path : files) {
    absl::StatusOr<LineChunkReader> reader = LineChunkReader::Open(path);
    if (!reader.ok()) return reader.status();
    std::vector<LoggedLine> request;
    std::string request_where;
    int64_t line_number = 0;
    auto flush = [&]() -> absl::Status {
      if (request.empty()) return absl::OkStatus();
      absl::Status status = absl::OkStatus();
      if (!seen_requests.insert(request.front().request_id).second) {
        ++summary.duplicate_requests;
      } else {
        const size_t before = summary.requests;
        status = EmitRequest(request, *clicks, options.marginal_samples,
                             qid + 1, request_where, out,
                             pool ? &pooled : nullptr, summary);
        if (summary.requests > before) ++qid;
      }
      request.clear();
      return status;
    };
    while (true) {
      absl::StatusOr<std::string_view> chunk = reader->Next();
      if (!chunk.ok()) return chunk.status();
      if (chunk->empty()) break;
      for (absl::string_view line : absl::StrSplit(absl::string_view(chunk->data(), chunk->size()), '\n')) {
        ++line_number;
        if (line.empty()) continue;
        const std::string where = absl::StrCat(path, ":", line_number);
        LoggedLine parsed;
        if (absl::Status status = ParseLine(line, where, parsed);
            !status.ok()) {
          return status;
        }
        if (!request.empty() &&
            request.front().request_id != parsed.request_id) {
          if (absl::Status status = flush(); !status.ok()) return status;
        }
        if (request.empty()) request_where = where;
        request.push_back(std::move(parsed));
      }
    }
    if (absl::Status status = flush(); !status.ok()) return status;
  }
  // Clicks that matched nothing shown: counted, not an error (a click log
  // usually covers more traffic than the sampled impressions).
  summary.unmatched_clicks = clicks->size() - summary.clicks;
  const std::pair<std::string, const std::string*> writes[] = {
      {options.output, &out.data},
      {options.output + ".position", &out.position},
      {options.output + ".propensity", &out.propensity},
      {options.output + ".all", &out.all},
      {options.output + ".all.position", &out.all_position},
      {options.output + ".all.marginals", &out.all_marginals}};
  for (const auto& [path, contents] : writes) {
    if (absl::Status status = WriteFileAtomically(path, *contents);
        !status.ok()) {
      return status;
    }
  }
  if (pool) {
    if (absl::Status status =
            WriteFileAtomically(options.output + ".pooled", pooled.Letor());
        !status.ok()) {
      return status;
    }
    summary.pooled_queries = pooled.queries();
    summary.pooled_documents = pooled.documents();
    summary.pooled_prior = pooled.prior();
  }
  return summary;
}

}  // namespace plrank::logs
