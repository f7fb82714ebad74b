// plrank-client: talks to a running plrank-server (Ranker gRPC API).
//   plrank-client --target=HOST:PORT --model=NAME [--version=N | --label=L]
//       rank|rank-batch|explain|evaluate|status|list|reload [--data=FILE]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/client_commands.h"
#include "clients/cpp/ranker_client.h"
#include "common/data_flags.h"
#include "common/program.h"

ABSL_FLAG(std::string, target, "", "Server address, HOST:PORT.");
ABSL_FLAG(std::string, model, "",
          "Model name (rank, explain, evaluate, status).");
// absl reserves --version for itself; main() rewrites --version=N (and
// --version N) to this flag so the documented spelling works.
ABSL_FLAG(int64_t, model_version, 0,
          "Pin this model version (0 = not pinned); --version=N also works.");
ABSL_FLAG(std::string, label, "",
          "Use the version with this label (ignored when --version is set).");
ABSL_FLAG(std::string, data, "", "LETOR file (rank, explain, evaluate).");
ABSL_FLAG(int32_t, top, 5, "rank: documents printed per query.");
ABSL_FLAG(std::string, scores_out, "",
          "rank: write one score per input line, in input order.");
ABSL_FLAG(int32_t, batch_size, 100,
          "rank-batch: queries per RankBatch call (one round trip).");
ABSL_FLAG(std::string, contributions_out, "",
          "explain: write one line per input line, in input order: "
          "bias:B feature:contribution ...");
ABSL_FLAG(uint32_t, top_features, 0,
          "explain: keep the K features of largest |contribution| per "
          "document (0 = every non-zero one).");
ABSL_FLAG(std::string, eval_at, "1,3,5,10", "evaluate: NDCG cut-offs.");
ABSL_FLAG(bool, per_query, false, "evaluate: also print per-query metrics.");
ABSL_FLAG(double, sample_temperature, 0,
          "rank, rank-batch: draw each ranking from the model's "
          "Plackett-Luce policy p(d) ~ exp(score / T) at this temperature "
          "(0 = the deterministic ranking)");
ABSL_FLAG(uint64_t, sample_seed, 0,
          "With --sample_temperature: seed of the draws (query q uses seed + "
          "q; 0 = the server picks and prints one)");
ABSL_FLAG(uint32_t, marginal_samples, 0,
          "With --sample_temperature: estimate each shown document's "
          "probability of being shown at its position from this many draws");
ABSL_FLAG(double, deadline_seconds, 30, "Deadline of each call.");
ABSL_FLAG(double, evaluate_deadline_seconds, 600,
          "Deadline of a whole evaluate call.");
ABSL_FLAG(std::string, tls_root_cert, "",
          "PEM root certificates: connect with TLS (default plaintext).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate chain, for servers requiring mTLS.");
ABSL_FLAG(std::string, tls_key, "", "PEM client private key (with --tls_cert).");

namespace {

constexpr char kUsage[] =
    "Client of a running plrank-server.\n"
    "  plrank-client --target=HOST:PORT --model=NAME [--version=N | --label=L] "
    "COMMAND\n"
    "commands:\n"
    "  rank      --data=FILE [--top=5] [--scores_out=F]  rank each query\n"
    "  rank-batch --data=FILE [--batch_size=100] [--top=5] [--scores_out=F]\n"
    "            the same, several queries per RankBatch call\n"
    "  explain   --data=FILE --contributions_out=F [--top_features=K]\n"
    "            feature contributions (TreeSHAP) of every document\n"
    "  evaluate  --data=FILE [--eval_at=1,3,5,10]       NDCG/ERR/MAP table\n"
    "  status    versions, states and metadata of --model\n"
    "  list      every model the server knows\n"
    "  reload    rescan the model repository now";

std::string& ProgramName() {
  static std::string name = "plrank-client";
  return name;
}

int Fail(const absl::Status& status, int exit_code = 1) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName().c_str(),
               std::string(status.message()).c_str());
  return exit_code;
}

// absl flags plus exactly one positional command word.
absl::StatusOr<std::string> ParseCommandLine(int argc, char** argv) {
  std::vector<char*> positional = plrank::ParseProgramFlags(argc, argv, kUsage);
  if (positional.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        positional.size() < 2 ? "missing command"
                              : "expected one command, got several",
        " (one of rank, rank-batch, explain, evaluate, status, list, reload; "
        "see --help)"));
  }
  return std::string(positional[1]);
}

// "--version=N" / "--version N" -> "--model_version=N"; a bare --version
// (absl's "print the version") is left alone.
std::vector<std::string> RewriteVersionFlag(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::vector<std::string> rewritten;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // everything after "--" is positional
      rewritten.insert(rewritten.end(), args.begin() + i, args.end());
      break;
    }
    const bool bare = arg == "--version" || arg == "-version";
    int64_t number = 0;
    if (bare && i + 1 < args.size() && absl::SimpleAtoi(args[i + 1], &number)) {
      rewritten.push_back(absl::StrCat("--model_version=", args[++i]));
    } else if (absl::StartsWith(arg, "--version=") ||
               absl::StartsWith(arg, "-version=")) {
      rewritten.push_back(
          absl::StrCat("--model_version=", arg.substr(arg.find('=') + 1)));
    } else {
      rewritten.push_back(arg);
    }
  }
  return rewritten;
}

absl::StatusOr<std::vector<uint32_t>> ParseCutoffs(const std::string& text) {
  std::vector<uint32_t> cutoffs;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint32_t k = 0;
    if (!absl::SimpleAtoi(part, &k) || k == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--eval_at: '", part, "' is not a positive integer"));
    }
    cutoffs.push_back(k);
  }
  return cutoffs;
}

absl::StatusOr<plrank::client::CommandSettings> SettingsFromFlags(
    bool needs_model) {
  plrank::client::CommandSettings settings;
  settings.model.name = absl::GetFlag(FLAGS_model);
  settings.model.version = absl::GetFlag(FLAGS_model_version);
  settings.model.label = absl::GetFlag(FLAGS_label);
  if (needs_model && settings.model.name.empty()) {
    return absl::InvalidArgumentError("--model=NAME is required");
  }
  if (settings.model.version < 0) {
    return absl::InvalidArgumentError("--version must be a positive integer");
  }
  settings.data_path = absl::GetFlag(FLAGS_data);
  absl::StatusOr<plrank::ReadOptions> read = plrank::cli::ReadOptionsFromFlags();
  if (!read.ok()) return read.status();
  settings.read_options = *read;
  settings.top = absl::GetFlag(FLAGS_top);
  if (settings.top < 0) return absl::InvalidArgumentError("--top must be >= 0");
  settings.scores_out = absl::GetFlag(FLAGS_scores_out);
  settings.contributions_out = absl::GetFlag(FLAGS_contributions_out);
  settings.top_features = absl::GetFlag(FLAGS_top_features);
  settings.batch_size = absl::GetFlag(FLAGS_batch_size);
  if (const double temperature = absl::GetFlag(FLAGS_sample_temperature);
      temperature != 0 || absl::GetFlag(FLAGS_marginal_samples) != 0) {
    plrank::v1::SamplingSpec spec;
    spec.set_temperature(temperature);
    spec.set_seed(absl::GetFlag(FLAGS_sample_seed));
    spec.set_marginal_samples(absl::GetFlag(FLAGS_marginal_samples));
    settings.sampling = spec;
  }
  // A usage error, found before any call (RunRankBatch checks it too).
  if (settings.batch_size <= 0) {
    return absl::InvalidArgumentError("--batch_size must be positive");
  }
  absl::StatusOr<std::vector<uint32_t>> cutoffs =
      ParseCutoffs(absl::GetFlag(FLAGS_eval_at));
  if (!cutoffs.ok()) return cutoffs.status();
  settings.evaluate.ndcg_at = *cutoffs;
  settings.evaluate.per_query = absl::GetFlag(FLAGS_per_query);
  absl::StatusOr<plrank::MetricOptions> metric =
      plrank::cli::MetricOptionsFromFlags();
  if (!metric.ok()) return metric.status();
  settings.evaluate.empty_query = metric->empty_query;
  return settings;
}

int Run(const std::string& command) {
  const bool needs_model = command == "rank" || command == "rank-batch" ||
                           command == "explain" || command == "evaluate" ||
                           command == "status";
  if (!needs_model && command != "list" && command != "reload") {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat(
            "unknown command '", command,
            "' (one of rank, rank-batch, explain, evaluate, status, list, "
            "reload)")),
        2);
  }
  absl::StatusOr<plrank::client::CommandSettings> settings =
      SettingsFromFlags(needs_model);
  if (!settings.ok()) return Fail(settings.status(), 2);
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) {
    return Fail(absl::InvalidArgumentError("--target=HOST:PORT is required"), 2);
  }
  const double deadline = absl::GetFlag(FLAGS_deadline_seconds);
  const double evaluate_deadline = absl::GetFlag(FLAGS_evaluate_deadline_seconds);
  if (!(deadline > 0) || !(evaluate_deadline > 0)) {
    return Fail(absl::InvalidArgumentError("deadlines must be positive"), 2);
  }
  plrank::RankerClientOptions options;
  options.deadline = absl::Seconds(deadline);
  options.evaluate_deadline = absl::Seconds(evaluate_deadline);
  options.tls_root_cert_file = absl::GetFlag(FLAGS_tls_root_cert);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  absl::StatusOr<std::unique_ptr<plrank::RankerClient>> client =
      plrank::RankerClient::Create(target, options);
  if (!client.ok()) return Fail(client.status(), 2);

  absl::Status status;
  if (command == "rank") {
    status = plrank::client::RunRank(**client, *settings, stdout);
  } else if (command == "rank-batch") {
    status = plrank::client::RunRankBatch(**client, *settings, stdout);
  } else if (command == "explain") {
    status = plrank::client::RunExplain(**client, *settings, stdout);
  } else if (command == "evaluate") {
    status = plrank::client::RunEvaluate(**client, *settings, stdout);
  } else if (command == "status") {
    status = plrank::client::RunStatus(**client, *settings, stdout);
  } else if (command == "list") {
    status = plrank::client::RunList(**client, stdout);
  } else {
    status = plrank::client::RunReload(**client, stdout);
  }
  if (!status.ok() && plrank::client::IsLocal(status)) {
    // This machine's file, not the server's answer: the message names it.
    return Fail(absl::Status(status.code(),
                             absl::StrCat(command, ": ", status.message())));
  }
  if (!status.ok()) {
    // Keep the server's message; say which server and what the code means.
    return Fail(absl::Status(
        status.code(),
        absl::StrCat(command, " (", target, "): ",
                     absl::StatusCodeToString(status.code()),
                     status.message().empty() ? "" : ": ", status.message())));
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string program = argv[0];
  if (auto slash = program.rfind('/'); slash != std::string::npos) {
    program = program.substr(slash + 1);
  }
  ProgramName() = program;
  std::vector<std::string> args = RewriteVersionFlag(argc, argv);
  std::vector<char*> arg_pointers;
  for (std::string& arg : args) arg_pointers.push_back(arg.data());
  absl::StatusOr<std::string> command = ParseCommandLine(
      static_cast<int>(arg_pointers.size()), arg_pointers.data());
  if (!command.ok()) return Fail(command.status(), 2);
  return Run(*command);
}
