#include "clients/cpp/client_commands.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "clients/cpp/dataset_documents.h"
#include "core/data/file_io.h"
#include "core/data/stream_output.h"
#include "core/metrics/score_file.h"

namespace plrank::client {

constexpr char kLocalErrorPayload[] = "plrank.client/local";

absl::Status MarkLocal(absl::Status status) {
  if (!status.ok()) status.SetPayload(kLocalErrorPayload, absl::Cord("1"));
  return status;
}

bool IsLocal(const absl::Status& status) {
  return status.GetPayload(kLocalErrorPayload).has_value();
}

namespace {

// Reads the data file at the served model's width, so that a file with more
// features than the model is rejected with its file and line.
absl::StatusOr<Dataset> ReadDataForModel(RankerClient& client,
                                         const CommandSettings& settings) {
  if (settings.data_path.empty()) {
    return absl::InvalidArgumentError("--data=FILE (a LETOR file) is required");
  }
  // A missing or unreadable local file fails before any RPC, as a local
  // error, whether or not the server is reachable.
  if (std::FILE* probe = std::fopen(settings.data_path.c_str(), "rb")) {
    std::fclose(probe);
  } else {
    return MarkLocal(absl::ErrnoToStatus(
        errno, absl::StrCat(settings.data_path, ": cannot open")));
  }
  ReadOptions options = settings.read_options;
  if (options.num_features == 0) {
    // GetModelMetadata is answered to every caller (GetModelStatus, an admin
    // RPC, is not), so ranking from another host needs no flag.
    absl::StatusOr<v1::GetModelMetadataResponse> metadata =
        client.GetModelMetadata(settings.model);
    if (!metadata.ok()) return metadata.status();
    options.num_features = static_cast<int32_t>(metadata->num_features());
    if (options.num_features <= 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the server reports no feature count for model ",
          settings.model.name, " version ", metadata->model_version(),
          "; pass --num_features"));
    }
    // The width came from the server, not from a flag: say so in errors.
    options.num_features_origin =
        absl::StrCat("the feature count of model ", settings.model.name,
                     " version ", metadata->model_version(), " on the server");
  }
  ReadStats stats;
  absl::StatusOr<Dataset> data =
      ReadLetorFile(settings.data_path, options, &stats);
  if (!data.ok()) return MarkLocal(data.status());
  if (const std::string note = DuplicateFeaturesNote(settings.data_path, stats);
      !note.empty()) {
    std::fprintf(stderr, "plrank-client: %s\n", note.c_str());
  }
  if (data->num_documents() == 0) {
    return MarkLocal(absl::InvalidArgumentError(
        absl::StrCat(settings.data_path, ": the file has no documents")));
  }
  return data;
}

std::string ModelLabel(const std::string& name, int64_t version) {
  return absl::StrCat(name, " v", version);
}

// Shortest text that reads back as the same double (as --scores_out).
void AppendNumber(double value, std::string* text) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  text->append(buffer, static_cast<size_t>(end - buffer));
}

}  // namespace

std::string VersionStateName(v1::VersionState state) {
  std::string name = v1::VersionState_Name(state);
  constexpr absl::string_view kPrefix = "VERSION_STATE_";
  if (absl::StartsWith(name, kPrefix)) name = name.substr(kPrefix.size());
  return name.empty() ? absl::StrCat("STATE_", static_cast<int>(state)) : name;
}

std::string FormatModelStatus(const v1::ModelStatus& status) {
  std::string text = absl::StrFormat(
      "model %s: %d version(s), default version %s\n", status.name(),
      status.versions_size(),
      status.default_version() > 0 ? absl::StrCat(status.default_version())
                                   : std::string("none"));
  for (const v1::VersionStatus& version : status.versions()) {
    absl::StrAppendFormat(&text, "  version %d  %s", version.version(),
                          VersionStateName(version.state()));
    if (version.labels_size() > 0) {
      absl::StrAppend(&text, "  labels: ", absl::StrJoin(version.labels(), ","));
    }
    if (version.loaded_unix_seconds() > 0) {
      absl::StrAppend(&text, "  loaded ",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                       absl::FromUnixSeconds(
                                           version.loaded_unix_seconds()),
                                       absl::UTCTimeZone()));
    }
    absl::StrAppend(&text, "\n");
    if (!version.error().empty()) {
      absl::StrAppend(&text, "    error: ", version.error(), "\n");
    }
    if (!version.promotion_refused().empty()) {
      absl::StrAppend(&text, "    ", version.promotion_refused(), "\n");
    }
    if (!version.has_metadata()) continue;
    const v1::ModelMetadata& meta = version.metadata();
    absl::StrAppendFormat(
        &text, "    objective %s, %d trees, %d features, %d output(s)%s\n",
        meta.objective().empty() ? "?" : meta.objective(), meta.num_trees(),
        meta.num_features(), meta.num_outputs(),
        meta.has_linear_weights() ? ", linear weights" : "");
    if (meta.created_unix_seconds() > 0) {
      absl::StrAppend(&text, "    created ",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                       absl::FromUnixSeconds(
                                           meta.created_unix_seconds()),
                                       absl::UTCTimeZone()),
                      "\n");
    }
    if (!meta.checksum().empty() || meta.file_bytes() > 0) {
      absl::StrAppendFormat(&text, "    checksum %s, %d bytes\n",
                            meta.checksum().empty() ? "-" : meta.checksum(),
                            meta.file_bytes());
    }
    // The map's order is unspecified; sort for stable output.
    std::map<std::string, double> metrics(meta.training_metrics().begin(),
                                          meta.training_metrics().end());
    for (const auto& [name, value] : metrics) {
      absl::StrAppendFormat(&text, "    %s = %.6f\n", name, value);
    }
  }
  return text;
}

namespace {

// Prints one ranked query (its top --top documents) and, with
// --scores_out, stores its scores by document.
absl::Status ReportRankedQuery(const Dataset& data, size_t q,
                               const CommandSettings& settings,
                               const absl::StatusOr<v1::RankResponse>& response,
                               std::vector<double>* scores, std::FILE* out) {
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat("query ", data.query_ids[q], ": ",
                                     response.status().message()));
  }
  const uint32_t begin = data.query_begin(q);
  const uint32_t count = data.query_end(q) - begin;
  if (!settings.scores_out.empty()) {
    if (response->documents_size() != static_cast<int>(count)) {
      return absl::InternalError(absl::StrCat(
          "query ", data.query_ids[q], ": the server returned ",
          response->documents_size(), " of ", count, " documents"));
    }
    for (const v1::ScoredDocument& document : response->documents()) {
      if (document.request_index() >= count) {
        return absl::InternalError(
            absl::StrCat("query ", data.query_ids[q], ": request_index ",
                         document.request_index(), " out of range"));
      }
      (*scores)[begin + document.request_index()] = document.score();
    }
  }
  absl::FPrintF(out, "query %s: %d documents (%s)\n", data.query_ids[q], count,
                ModelLabel(response->model_name(), response->model_version()));
  if (settings.sampling.has_value()) {
    absl::FPrintF(out, "  sampled %s: log-probability %.6f, seed %d%s%s\n",
                  response->sampled() ? "yes" : "no (temperature 0)",
                  response->log_probability(), response->sampling_seed(),
                  response->request_id().empty() ? "" : ", request id ",
                  response->request_id());
  }
  const int shown = std::min(settings.top, response->documents_size());
  for (int i = 0; i < shown; ++i) {
    const v1::ScoredDocument& document = response->documents(i);
    const uint32_t index =
        begin + std::min(document.request_index(), count - 1);
    absl::FPrintF(out, "  %3d  id %-8s score %12.6f  label %d",
                  document.rank(), document.id(), document.score(),
                  data.labels[index]);
    if (settings.sampling.has_value()) {
      absl::FPrintF(out, "  pick %.6f", document.pick_probability());
      if (document.position_probabilities_size() >= static_cast<int>(
              document.rank()) && document.rank() > 0) {
        absl::FPrintF(out, "  shown-here %.6f",
                      document.position_probabilities(document.rank() - 1));
      }
    }
    absl::FPrintF(out, "\n");
  }
  return absl::OkStatus();
}

using RankResponses = std::vector<absl::StatusOr<v1::RankResponse>>;
// Answers queries [begin, end) of the data with top_k.
using RankQueriesFn = absl::FunctionRef<absl::StatusOr<RankResponses>(
    const Dataset& data, size_t begin, size_t end, uint32_t top_k)>;

// RunRank and RunRankBatch: reads the file, ranks its queries `batch` at a
// time with `rank_queries`, prints and writes the result.
absl::Status RankFile(RankerClient& client, const CommandSettings& settings,
                      size_t batch, RankQueriesFn rank_queries,
                      std::FILE* out) {
  // An output that cannot be written fails now, in plrank-eval's words,
  // not after every query was ranked.
  if (!settings.scores_out.empty()) {
    if (absl::Status status = CheckStreamOutputTarget(settings.scores_out);
        !status.ok()) {
      return MarkLocal(status);
    }
  }
  absl::StatusOr<Dataset> data = ReadDataForModel(client, settings);
  if (!data.ok()) return data.status();
  const bool want_scores = !settings.scores_out.empty();
  // Scores of every document are needed only for --scores_out.
  const uint32_t top_k = want_scores ? 0 : static_cast<uint32_t>(settings.top);
  std::vector<double> scores(want_scores ? data->num_documents() : 0);
  const absl::Time start = absl::Now();
  for (size_t begin = 0; begin < data->num_queries(); begin += batch) {
    const size_t end = std::min(begin + batch, data->num_queries());
    absl::StatusOr<RankResponses> responses =
        rank_queries(*data, begin, end, top_k);
    if (!responses.ok()) return responses.status();
    for (size_t q = begin; q < end; ++q) {
      if (absl::Status status = ReportRankedQuery(
              *data, q, settings, (*responses)[q - begin], &scores, out);
          !status.ok()) {
        return status;
      }
    }
  }
  absl::FPrintF(out, "ranked %d queries, %d documents in %.3f s\n",
                data->num_queries(), data->num_documents(),
                absl::ToDoubleSeconds(absl::Now() - start));
  if (want_scores) {
    if (absl::Status status =
            WriteScoresInInputOrder(*data, scores, settings.scores_out);
        !status.ok()) {
      return MarkLocal(status);
    }
    absl::FPrintF(out, "wrote %d scores to %s\n", scores.size(),
                  settings.scores_out);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRank(RankerClient& client, const CommandSettings& settings,
                     std::FILE* out) {
  auto rank_one = [&client, &settings](
                      const Dataset& data, size_t begin, size_t /*end*/,
                      uint32_t top_k) -> absl::StatusOr<RankResponses> {
    RankResponses responses;
    responses.push_back(client.RankQuery(
        settings.model, data, begin, top_k,
        settings.sampling ? &*settings.sampling : nullptr));
    return responses;
  };
  return RankFile(client, settings, 1, rank_one, out);
}

absl::Status RunRankBatch(RankerClient& client, const CommandSettings& settings,
                          std::FILE* out) {
  if (settings.batch_size <= 0) {
    return absl::InvalidArgumentError("--batch_size must be positive");
  }
  auto rank_batch = [&client, &settings](const Dataset& data, size_t begin,
                                         size_t end, uint32_t top_k) {
    return client.RankQueries(
        settings.model, data, begin, end, top_k,
        settings.sampling ? &*settings.sampling : nullptr);
  };
  return RankFile(client, settings, static_cast<size_t>(settings.batch_size),
                  rank_batch, out);
}

std::string FormatExplanationLine(double bias,
                                  const v1::DocumentExplanation& document) {
  std::string line = "bias:";
  AppendNumber(bias, &line);
  for (const v1::FeatureContribution& contribution : document.contributions()) {
    absl::StrAppend(&line, " ", uint64_t{contribution.feature()} + 1, ":");
    AppendNumber(contribution.contribution(), &line);
  }
  return line;
}

absl::Status RunExplain(RankerClient& client, const CommandSettings& settings,
                        std::FILE* out) {
  if (settings.contributions_out.empty()) {
    return absl::InvalidArgumentError(
        "--contributions_out=FILE is required (one line per document)");
  }
  absl::StatusOr<Dataset> data = ReadDataForModel(client, settings);
  if (!data.ok()) return data.status();
  std::vector<std::string> lines(data->num_documents());
  const absl::Time start = absl::Now();
  for (size_t q = 0; q < data->num_queries(); ++q) {
    absl::StatusOr<v1::ExplainResponse> response =
        client.ExplainQuery(settings.model, *data, q, settings.top_features);
    if (!response.ok()) {
      return absl::Status(response.status().code(),
                          absl::StrCat("query ", data->query_ids[q], ": ",
                                       response.status().message()));
    }
    const uint32_t begin = data->query_begin(q);
    const uint32_t count = data->query_end(q) - begin;
    if (response->documents_size() != static_cast<int>(count)) {
      return absl::InternalError(absl::StrCat(
          "query ", data->query_ids[q], ": the server explained ",
          response->documents_size(), " of ", count, " documents"));
    }
    for (const v1::DocumentExplanation& document : response->documents()) {
      if (document.request_index() >= count) {
        return absl::InternalError(
            absl::StrCat("query ", data->query_ids[q], ": request_index ",
                         document.request_index(), " out of range"));
      }
      lines[InputLineOfDocument(*data, begin + document.request_index())] =
          FormatExplanationLine(response->bias(), document);
    }
    absl::FPrintF(out, "query %s: %d documents explained (%s), bias %.6f\n",
                  data->query_ids[q], count,
                  ModelLabel(response->model_name(), response->model_version()),
                  response->bias());
  }
  absl::FPrintF(out, "explained %d queries, %d documents in %.3f s\n",
                data->num_queries(), data->num_documents(),
                absl::ToDoubleSeconds(absl::Now() - start));
  std::string text;
  for (const std::string& line : lines) absl::StrAppend(&text, line, "\n");
  if (absl::Status status =
          WriteFileAtomically(settings.contributions_out, text);
      !status.ok()) {
    return MarkLocal(status);
  }
  absl::FPrintF(out, "wrote %d explanations to %s\n", lines.size(),
                settings.contributions_out);
  return absl::OkStatus();
}

absl::Status RunEvaluate(RankerClient& client, const CommandSettings& settings,
                         std::FILE* out) {
  absl::StatusOr<Dataset> data = ReadDataForModel(client, settings);
  if (!data.ok()) return data.status();
  absl::StatusOr<v1::EvaluateResponse> response =
      client.Evaluate(settings.model, *data, settings.evaluate);
  if (!response.ok()) return response.status();
  absl::FPrintF(out, "%s: %d queries, %d documents (%s)\n", settings.data_path,
                response->query_count(), response->document_count(),
                ModelLabel(response->model_name(), response->model_version()));
  absl::FPrintF(out, "%-10s %10s\n", "metric", "value");
  for (const v1::MetricValue& metric : response->metrics()) {
    absl::FPrintF(out, "%-10s %10.6f\n", metric.name(), metric.value());
  }
  for (const v1::QueryMetrics& query : response->per_query()) {
    std::vector<std::string> values;
    for (const v1::MetricValue& metric : query.metrics()) {
      values.push_back(absl::StrFormat("%s=%.6f", metric.name(), metric.value()));
    }
    absl::FPrintF(out, "query %s: %s\n", query.query_id(),
                  absl::StrJoin(values, " "));
  }
  return absl::OkStatus();
}

std::string FormatShadowStatus(const v1::ShadowStatus& shadow) {
  std::string text = "shadow: ";
  if (!shadow.configured_label().empty()) {
    absl::StrAppend(&text, "label ", shadow.configured_label());
    if (shadow.shadow_version() > 0) {
      absl::StrAppend(&text, " (version ", shadow.shadow_version(), ")");
    }
  } else {
    absl::StrAppend(&text, "version ", shadow.configured_version());
  }
  absl::StrAppendFormat(&text, ", fraction %g", shadow.fraction());
  if (!shadow.error().empty()) {
    absl::StrAppend(&text, "; unavailable: ", shadow.error());
  }
  absl::StrAppend(&text, "\n");
  for (const v1::ShadowComparison& pair : shadow.comparisons()) {
    absl::StrAppendFormat(
        &text, "  serving %d -> shadow %s: %d scored, %d dropped, %d failed",
        pair.serving_version(),
        pair.shadow_version() > 0 ? absl::StrCat(pair.shadow_version())
                                  : std::string("none"),
        pair.scored(), pair.dropped(), pair.failed());
    if (pair.scored() > 0) {
      absl::StrAppendFormat(&text,
                            "; mean tau %.4f over %d, top-1 agreement %.4f, "
                            "mean top-10 overlap %.4f",
                            pair.mean_kendall_tau(), pair.tau_count(),
                            pair.top1_agreement(), pair.mean_top10_overlap());
    }
    absl::StrAppend(&text, "\n");
    if (!pair.last_error().empty()) {
      absl::StrAppend(&text, "    last error: ", pair.last_error(), "\n");
    }
  }
  return text;
}

absl::Status RunStatus(RankerClient& client, const CommandSettings& settings,
                       std::FILE* out) {
  absl::StatusOr<v1::GetModelStatusResponse> response =
      client.GetFullModelStatus(settings.model.name);
  if (!response.ok()) return response.status();
  std::fputs(FormatModelStatus(response->status()).c_str(), out);
  if (response->has_shadow()) {
    std::fputs(FormatShadowStatus(response->shadow()).c_str(), out);
  }
  return absl::OkStatus();
}

absl::Status RunList(RankerClient& client, std::FILE* out) {
  absl::StatusOr<std::vector<v1::ModelStatus>> models = client.ListModels();
  if (!models.ok()) return models.status();
  absl::FPrintF(out, "%d model(s)\n", models->size());
  for (const v1::ModelStatus& model : *models) {
    std::vector<std::string> versions;
    for (const v1::VersionStatus& version : model.versions()) {
      versions.push_back(absl::StrCat(version.version(), ":",
                                      VersionStateName(version.state())));
    }
    absl::FPrintF(out, "%-20s default %-6s versions %s\n", model.name(),
                  model.default_version() > 0
                      ? absl::StrCat(model.default_version())
                      : std::string("none"),
                  versions.empty() ? "-" : absl::StrJoin(versions, " "));
  }
  return absl::OkStatus();
}

absl::Status RunReload(RankerClient& client, std::FILE* out) {
  absl::StatusOr<v1::ReloadModelsResponse> response = client.ReloadModels();
  if (!response.ok()) return response.status();
  absl::FPrintF(out, "reloaded: %d loaded, %d failed, %d unloaded\n",
                response->loaded(), response->failed(), response->unloaded());
  for (const v1::ModelStatus& model : response->models()) {
    std::fputs(FormatModelStatus(model).c_str(), out);
  }
  return absl::OkStatus();
}

}  // namespace plrank::client
