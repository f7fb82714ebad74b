// plrank-logs join --pooled_grades on a hand-written impression log: the
// requests of each query id pooled into D.pooled with IPS relevance labels
// (docs/clicks-serving.md, "Pooled IPS relevance labels"), then trained on.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::TempDir;
using ::testing::HasSubstr;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// One impression line of a temperature-0 request (marginals exactly 0/1).
std::string Line(const std::string& request, const std::string& query,
                 const std::string& doc, int position, double feature,
                 int documents) {
  return "0 qid:" + request + " 1:" + std::to_string(feature) + " 2:" +
         std::to_string(1.0 - feature) + " # request_id=" + request +
         " query=" + query + " doc=" + doc +
         " position=" + std::to_string(position) + " score=" +
         std::to_string(feature) + " pick=1 temperature=0 top_k=2 seed=0 "
         "model=m version=1 documents=" + std::to_string(documents) +
         " time_us=1\n";
}

// Query q, three requests of candidates a, b, c (two shown), query p one
// request of d, e; curve theta = 1, 0.5. Observed exposure and clicks:
//   a: positions 1, 2, 1 -> 2.5, clicked in r1, r2 -> r = 0.8  -> 8 of 10
//   b: 2, 1, -           -> 1.5, clicked in r2     -> 0.667    -> 7
//   c: -, -, 2           -> 0.5, clicked in r3     -> 2, cap 1 -> 10
//   d, e: shown, never clicked                               -> 0
TEST(LogsPooledTest, JoinWritesIpsRelevanceGradesAndTrainsOnThem) {
  TempDir dir;
  const std::string log_dir = dir.File("log");
  std::filesystem::create_directories(log_dir);
  WriteFile(log_dir + "/impressions-20261202T000000.000000Z-000001.log",
            Line("r1", "q", "a", 1, 0.9, 3) + Line("r1", "q", "b", 2, 0.5, 3) +
                Line("r1", "q", "c", 0, 0.2, 3) +
                Line("r2", "q", "a", 2, 0.9, 3) + Line("r2", "q", "b", 1, 0.5, 3) +
                Line("r2", "q", "c", 0, 0.2, 3) +
                Line("r3", "q", "a", 1, 0.9, 3) + Line("r3", "q", "b", 0, 0.5, 3) +
                Line("r3", "q", "c", 2, 0.25, 3) +
                Line("r4", "p", "d", 1, 0.4, 2) + Line("r4", "p", "e", 2, 0.6, 2));
  const std::string clicks = dir.File("clicks.txt");
  WriteFile(clicks, "r1 a\nr2 b\nr2 a\nr3 c\n");
  const std::string out = dir.File("D");
  const std::vector<std::string> join = {
      BinPath("plrank-logs"), "join", "--impressions=" + log_dir,
      "--clicks=" + clicks, "--output=" + out};

  std::vector<std::string> pooled = join;
  pooled.push_back("--pooled_grades=10");
  pooled.push_back("--position_propensities=1,0.5");
  const CommandResult joined = RunCommand(pooled);
  ASSERT_EQ(joined.exit_code, 0) << joined.err;
  EXPECT_THAT(joined.out, HasSubstr("wrote " + out + ".pooled: 2 queries, 5 "
                                    "distinct documents, 11 grades"));
  std::vector<std::string> labels;
  std::istringstream lines(ReadWholeFile(out + ".pooled"));
  for (std::string line; std::getline(lines, line);) {
    labels.push_back(line.substr(0, line.find(" # ")));
  }
  // Features of a document: the last request's (c: 0.25 from r3).
  EXPECT_THAT(labels,
              ::testing::ElementsAre(
                  "8 qid:1 1:0.900000 2:0.100000", "7 qid:1 1:0.500000 2:0.500000",
                  "10 qid:1 1:0.250000 2:0.750000", "0 qid:2 1:0.400000 2:0.600000",
                  "0 qid:2 1:0.600000 2:0.400000"));
  EXPECT_THAT(ReadWholeFile(out + ".pooled"),
              HasSubstr("# query=q doc=a clicks=2 exposure=2.5 requests=3\n"));

  const CommandResult train = RunCommand(
      {BinPath("plrank-train"), "--train=" + out + ".pooled", "--trees=3",
       "--leaves=2", "--min_data_in_leaf=1", "--model_out=" + dir.File("m.pb")});
  EXPECT_EQ(train.exit_code, 0) << train.err;

  std::vector<std::string> no_curve = join;
  no_curve.push_back("--pooled_grades=4");
  const CommandResult refused = RunCommand(no_curve);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("--pooled_grades needs --position_propensities"));
}

}  // namespace
}  // namespace plrank
