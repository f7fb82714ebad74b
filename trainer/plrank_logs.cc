// plrank-logs: tools over the server's impression logs.
//   plrank-logs join --impressions=DIR --clicks=FILE --output=D
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/program.h"
#include "trainer/cli/cli_common.h"
#include "trainer/logs/impression_join.h"

ABSL_FLAG(std::string, impressions, "",
          "Directory of plrank-server --impression_log_dir files");
ABSL_FLAG(std::string, clicks, "",
          "Clicks: one 'request_id document_id' per line ('#' comments)");
ABSL_FLAG(std::string, output, "",
          "Training file D (LETOR, label = click, qid per logged request); "
          "also writes D.position, D.propensity and, for plrank-eval "
          "--logged, D.all, D.all.position, D.all.marginals");
ABSL_FLAG(uint32_t, marginal_samples, 1000,
          "Draws per sampled request for its position marginals (the "
          "propensities)");

int main(int argc, char** argv) {
  const std::vector<char*> args = plrank::ParseProgramFlags(
      argc, argv,
      "Joins impression logs with clicks into training files.\n"
      "  plrank-logs join --impressions=DIR --clicks=FILE --output=D");
  plrank::cli::SetProgramName("plrank-logs");
  if (args.size() != 2 || std::string(args[1]) != "join") {
    std::fprintf(stderr,
                 "plrank-logs: error: expected the command 'join' (see "
                 "--help)\n");
    return 2;
  }
  return plrank::cli::RunOrFailOnOutOfMemory([] {
    plrank::logs::JoinOptions options;
    options.impressions_dir = absl::GetFlag(FLAGS_impressions);
    options.clicks_file = absl::GetFlag(FLAGS_clicks);
    options.output = absl::GetFlag(FLAGS_output);
    options.marginal_samples = absl::GetFlag(FLAGS_marginal_samples);
    if (options.impressions_dir.empty() || options.clicks_file.empty() ||
        options.output.empty()) {
      return plrank::cli::Fail(absl::InvalidArgumentError(
          "--impressions, --clicks and --output are required"));
    }
    absl::StatusOr<plrank::logs::JoinSummary> summary =
        plrank::logs::JoinImpressions(options);
    if (!summary.ok()) return plrank::cli::Fail(summary.status());
    std::printf(
        "joined %zu files: %zu requests, %zu shown of %zu candidate "
        "documents, %zu clicks (%zu unmatched), %zu duplicate requests "
        "skipped\nwrote %s (+ .position .propensity .all .all.position "
        ".all.marginals)\n",
        summary->files, summary->requests, summary->shown_documents,
        summary->candidate_documents, summary->clicks,
        summary->unmatched_clicks, summary->duplicate_requests,
        options.output.c_str());
    return 0;
  });
}
