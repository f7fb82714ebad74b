#ifndef PLRANK_CLIENTS_CPP_CLIENT_COMMANDS_H_
#define PLRANK_CLIENTS_CPP_CLIENT_COMMANDS_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"

namespace plrank::client {

// Everything one plrank-client command needs, already parsed from flags.
struct CommandSettings {
  ModelRef model;
  std::string data_path;
  // Reader options; num_features 0 = the served model's feature count.
  ReadOptions read_options;
  int32_t top = 5;
  std::string scores_out;
  EvaluateOptions evaluate;
  // explain: where the contributions go, and how many features per
  // document (0 = every feature with a non-zero contribution).
  std::string contributions_out;
  uint32_t top_features = 0;
  // rank-batch: queries per RankBatch call.
  int32_t batch_size = 100;
  // rank / rank_batch: draw each ranking from the model's Plackett-Luce
  // policy (seed + query index when the seed is set).
  std::optional<v1::SamplingSpec> sampling;
};

// Each command prints its human-readable result to `out`; errors are
// returned, never printed. Errors of this machine's files (the data file,
// --scores_out, --contributions_out) carry a marker, so the CLI reports them
// as local errors and not as the server's answer.
absl::Status MarkLocal(absl::Status status);
bool IsLocal(const absl::Status& status);

// Ranks every query of the LETOR file, one Rank call per query; prints each
// query's top documents and optionally writes every score in input order.
absl::Status RunRank(RankerClient& client, const CommandSettings& settings,
                     std::FILE* out);
// The same output as RunRank, with batch_size queries per RankBatch call
// (one round trip for many queries); the first query that failed fails the
// command, as in RunRank.
absl::Status RunRankBatch(RankerClient& client, const CommandSettings& settings,
                          std::FILE* out);
// Explains every query of the LETOR file, one Explain call per query, and
// writes one line per document, in input order, to contributions_out:
//   bias:<bias> <feature>:<contribution> ...
// features numbered as in the LETOR file (1-based), ordered by decreasing
// |contribution|; numbers in shortest round-trip form. Prints one line per
// query and a summary.
absl::Status RunExplain(RankerClient& client, const CommandSettings& settings,
                        std::FILE* out);
// One explanation line (see RunExplain).
std::string FormatExplanationLine(double bias,
                                  const v1::DocumentExplanation& document);
// Evaluates the model on the LETOR file and prints the metrics table
// (same layout as plrank-eval).
absl::Status RunEvaluate(RankerClient& client, const CommandSettings& settings,
                         std::FILE* out);
absl::Status RunStatus(RankerClient& client, const CommandSettings& settings,
                       std::FILE* out);
absl::Status RunList(RankerClient& client, std::FILE* out);
absl::Status RunReload(RankerClient& client, std::FILE* out);

// "AVAILABLE", "FAILED", ... (without the VERSION_STATE_ prefix).
std::string VersionStateName(v1::VersionState state);
// Multi-line description of a model's versions, states and metadata.
std::string FormatModelStatus(const v1::ModelStatus& status);
// The shadow scoring summary of GetModelStatus: a "shadow: ..." line with
// the configuration (and why the shadow is unavailable, if it is), then a
// line per (serving, shadow) version pair.
std::string FormatShadowStatus(const v1::ShadowStatus& shadow);

}  // namespace plrank::client

#endif  // PLRANK_CLIENTS_CPP_CLIENT_COMMANDS_H_
