// plrank-logs: tools over the server's impression logs.
//   plrank-logs join --impressions=DIR --clicks=FILE --output=D
//     [--pooled_grades=G --position_propensities=...]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/program.h"
#include "core/pipeline/click_training.h"
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

ABSL_FLAG(uint32_t, pooled_grades, 0,
          "G > 0: also write D.pooled, the requests of each query id pooled "
          "into one list of its distinct documents, label = round(G min(1, "
          "r)) with r the IPS estimate clicks / exposure of its relevance "
          "(0 without a click); needs --position_propensities");
ABSL_FLAG(std::string, position_propensities, "",
          "--pooled_grades: the examination curve theta_1,theta_2,... in "
          "(0, 1] (positions beyond take the last), e.g. from plrank-train "
          "--estimate_propensities on D");
ABSL_FLAG(std::string, pooled_exposure, "observed",
          "--pooled_grades: observed (a document's exposure = the sum of "
          "theta at the positions it was shown at) | expected (the logging "
          "policy's expected examination, sum_j mu(d, j) theta_j per "
          "request)");
ABSL_FLAG(double, pooled_prior_exposure, 0,
          "--pooled_grades: a >= 0, r = (clicks + a prior) / (exposure + "
          "a), prior = the log's clicks per unit of exposure (shrinks rarely "
          "shown clicked documents toward it)");

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
    options.pooled.grades = absl::GetFlag(FLAGS_pooled_grades);
    options.pooled.prior_exposure = absl::GetFlag(FLAGS_pooled_prior_exposure);
    const std::string exposure = absl::GetFlag(FLAGS_pooled_exposure);
    if (exposure != "observed" && exposure != "expected") {
      return plrank::cli::Fail(absl::InvalidArgumentError(absl::StrCat(
          "--pooled_exposure: '", exposure,
          "' is not one of observed, expected")));
    }
    options.pooled.expected_exposure = exposure == "expected";
    absl::StatusOr<std::vector<double>> curve =
        plrank::ParsePositionPropensities(
            absl::GetFlag(FLAGS_position_propensities));
    if (!curve.ok()) return plrank::cli::Fail(curve.status());
    options.pooled.curve = *std::move(curve);
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
    if (options.pooled.grades > 0) {
      std::printf(
          "wrote %s.pooled: %zu queries, %zu distinct documents, %zu grades "
          "(prior: %g clicks per unit of exposure)\n",
          options.output.c_str(), summary->pooled_queries,
          summary->pooled_documents,
          static_cast<size_t>(options.pooled.grades) + 1,
          summary->pooled_prior);
    }
    return 0;
  });
}
