// The clients against real servers on loopback: plrank-client and the
// RankerClient library against plrank-server (serving a model trained by
// plrank-train on plrank-datagen data), plrank-loadgen against plrank-server
// and plrank-echo-server. Every child process runs under a time limit.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"
#include "core/metrics/evaluation.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace plrank {
namespace {

using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::RunBounded;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kCommandTimeoutSeconds = 120;

// A server child process: started, its port read from the "listening on
// HOST:PORT" line of its stdout, stopped with SIGTERM (SIGKILL after 10 s).
// "ndcg@1 0.5\n..." rows of a metrics table (plrank-eval / plrank-client).
std::vector<std::pair<std::string, std::string>> MetricRows(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> rows;
  const std::regex row(R"(^(ndcg@\d+|err|map)\s+(\S+)\s*$)");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::smatch match;
    const std::string copy(line);
    if (std::regex_match(copy, match, row)) rows.emplace_back(match[1], match[2]);
  }
  return rows;
}

bool ValidJsonObject(const std::string& json, google::protobuf::Struct* parsed) {
  return google::protobuf::util::JsonStringToMessage(json, parsed).ok();
}

// ---------------------------------------------------------------------------
// plrank-server with one model "demo", version 1, shared by the suite.

class RealServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_built_ = std::filesystem::exists(BinPath("plrank-server"));
    if (!server_built_) return;
    dir_ = new TempDir;
    data_prefix_ = new std::string(dir_->File("data"));
    const CommandResult gen = RunBounded(
        {BinPath("plrank-datagen"), "--queries=60", "--mean_docs=20",
         "--features=20", "--seed=5", "--out_prefix=" + *data_prefix_});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    model_path_ = new std::string(dir_->File("models/demo/1/model.pb"));
    std::filesystem::create_directories(dir_->File("models/demo/1"));
    const CommandResult train = RunBounded(
        {BinPath("plrank-train"), "--train=" + *data_prefix_ + ".train",
         "--trees=20", "--leaves=7", "--min_data_in_leaf=5", "--quiet",
         "--model_out=" + *model_path_});
    ASSERT_EQ(train.exit_code, 0) << train.err;
    server_ = new ServerProcess({"--model_base_path=" + dir_->File("models"),
                                 "--poll_interval_seconds=1"});
    ASSERT_TRUE(server_->ok()) << server_->Logs();
    // Wait until the model is servable.
    std::unique_ptr<RankerClient> client = *RankerClient::Create(server_->target());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      absl::StatusOr<v1::ModelStatus> status = client->GetModelStatus("demo");
      if (status.ok() && status->default_version() == 1) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "model demo never became available\n" << server_->Logs();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete model_path_;
    delete data_prefix_;
    delete dir_;
    server_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!server_built_) GTEST_SKIP() << "plrank-server is not built";
    ASSERT_NE(server_, nullptr) << "the suite's setup failed (see above)";
    ASSERT_TRUE(server_->ok()) << server_->Logs();
  }

  static std::string TestData() { return *data_prefix_ + ".test"; }
  CommandResult Client(std::vector<std::string> args) {
    args.insert(args.begin(),
                {BinPath("plrank-client"), "--target=" + server_->target()});
    return RunBounded(args);
  }

  static bool server_built_;
  static TempDir* dir_;
  static std::string* data_prefix_;
  static std::string* model_path_;
  static ServerProcess* server_;
};
bool RealServerTest::server_built_ = false;
TempDir* RealServerTest::dir_ = nullptr;
std::string* RealServerTest::data_prefix_ = nullptr;
std::string* RealServerTest::model_path_ = nullptr;
ServerProcess* RealServerTest::server_ = nullptr;

TEST_F(RealServerTest, StatusAndListDescribeTheModel) {
  CommandResult status = Client({"--model=demo", "status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("model demo"));
  EXPECT_THAT(status.out, HasSubstr("version 1  AVAILABLE"));
  EXPECT_THAT(status.out, HasSubstr("20 features"));
  CommandResult list = Client({"list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("demo"));
  EXPECT_THAT(list.out, HasSubstr("1:AVAILABLE"));
  CommandResult reload = Client({"reload"});
  ASSERT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_THAT(reload.out, HasSubstr("reloaded:"));
}

TEST_F(RealServerTest, RankScoresEqualPlrankEvalScores) {
  const std::string client_scores = dir_->File("client_scores.txt");
  const std::string eval_scores = dir_->File("eval_scores.txt");
  CommandResult rank = Client({"--model=demo", "--version=1", "rank",
                               "--data=" + TestData(), "--top=3",
                               "--scores_out=" + client_scores});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_THAT(rank.out, HasSubstr("query "));
  EXPECT_THAT(rank.out, HasSubstr("(demo v1)"));
  CommandResult eval = RunBounded({BinPath("plrank-eval"), "--model=" + *model_path_,
                                   "--data=" + TestData(),
                                   "--scores_out=" + eval_scores});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const std::string ours = ReadWholeFile(client_scores);
  const std::string theirs = ReadWholeFile(eval_scores);
  ASSERT_FALSE(ours.empty());
  if (ours == theirs) return;
  // Not byte-identical: every score must still agree to 1e-9.
  std::vector<std::string> a = absl::StrSplit(ours, '\n', absl::SkipEmpty());
  std::vector<std::string> b = absl::StrSplit(theirs, '\n', absl::SkipEmpty());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    double x = 0, y = 0;
    ASSERT_TRUE(absl::SimpleAtod(a[i], &x) && absl::SimpleAtod(b[i], &y)) << i;
    EXPECT_NEAR(x, y, 1e-9) << "line " << i + 1;
  }
}

TEST_F(RealServerTest, EvaluateMatchesPlrankEval) {
  CommandResult evaluate =
      Client({"--model=demo", "evaluate", "--data=" + TestData()});
  ASSERT_EQ(evaluate.exit_code, 0) << evaluate.err;
  CommandResult eval = RunBounded({BinPath("plrank-eval"), "--model=" + *model_path_,
                                   "--data=" + TestData()});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const auto ours = MetricRows(evaluate.out);
  const auto theirs = MetricRows(eval.out);
  ASSERT_EQ(ours.size(), 6u) << evaluate.out;
  EXPECT_EQ(ours, theirs) << evaluate.out << "\n---\n" << eval.out;
}

// Every --empty_query_ndcg value works through the server and gives
// plrank-eval's numbers; the file has a query with no relevant document, so
// one and zero differ.
TEST_F(RealServerTest, EvaluateEmptyQueryConventionsMatchPlrankEval) {
  const std::string data = dir_->File("with_empty_query.txt");
  std::ofstream(data) << "2 qid:a 1:0.9 2:0.5\n0 qid:a 1:0.1 2:0.2\n"
                      << "1 qid:a 1:0.4 2:0.7\n"
                      << "0 qid:b 1:0.3 2:0.1\n0 qid:b 1:0.8 2:0.9\n";
  std::map<std::string, std::string> map_value;
  for (const std::string convention : {"one", "zero", "skip"}) {
    const std::string flag = "--empty_query_ndcg=" + convention;
    CommandResult evaluate =
        Client({"--model=demo", "evaluate", "--data=" + data, flag});
    ASSERT_EQ(evaluate.exit_code, 0) << convention << ": " << evaluate.err;
    CommandResult eval = RunBounded({BinPath("plrank-eval"),
                                     "--model=" + *model_path_,
                                     "--data=" + data, flag});
    ASSERT_EQ(eval.exit_code, 0) << eval.err;
    const auto ours = MetricRows(evaluate.out);
    ASSERT_EQ(ours.size(), 6u) << evaluate.out;
    EXPECT_EQ(ours, MetricRows(eval.out)) << convention;
    ASSERT_EQ(ours[5].first, "map");
    map_value[convention] = ours[5].second;
  }
  // Query b's AP counts 1, 0, or not at all; query a's is above 0.
  EXPECT_NE(map_value["one"], map_value["zero"]);
  EXPECT_NE(map_value["zero"], map_value["skip"]);
}

TEST_F(RealServerTest, LibraryEvaluateUnaryAndStreamedAgreeWithCore) {
  // Reference: core metrics over plrank-eval's scores of the same file.
  const std::string eval_scores = dir_->File("eval_scores_lib.txt");
  ASSERT_EQ(RunBounded({BinPath("plrank-eval"), "--model=" + *model_path_,
                        "--data=" + TestData(), "--scores_out=" + eval_scores})
                .exit_code,
            0);
  ReadOptions read;
  read.num_features = 20;
  absl::StatusOr<Dataset> data = ReadLetorFile(TestData(), read);
  ASSERT_TRUE(data.ok()) << data.status();
  std::vector<double> scores;
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(eval_scores), '\n', absl::SkipEmpty())) {
    double value = 0;
    ASSERT_TRUE(absl::SimpleAtod(line, &value));
    scores.push_back(value);
  }
  const EvaluationReport expected =
      plrank::Evaluate(*data, scores, DefaultEvalMetrics(), MetricOptions());

  for (const bool streamed : {false, true}) {
    RankerClientOptions options;
    if (streamed) {
      options.evaluate_unary_max_queries = 1;  // forces EvaluateStream
      options.evaluate_message_bytes = 4096;   // several queries per message
    }
    std::unique_ptr<RankerClient> client =
        *RankerClient::Create(server_->target(), options);
    absl::StatusOr<v1::EvaluateResponse> response =
        client->Evaluate({"demo", 0, ""}, *data, {});
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->query_count(), data->num_queries());
    EXPECT_EQ(response->document_count(), data->num_documents());
    ASSERT_EQ(response->metrics_size(), static_cast<int>(expected.specs.size()));
    for (size_t m = 0; m < expected.specs.size(); ++m) {
      EXPECT_EQ(response->metrics(m).name(), expected.specs[m].Name());
      EXPECT_NEAR(response->metrics(m).value(), expected.means[m], 1e-9)
          << expected.specs[m].Name() << (streamed ? " (streamed)" : "");
    }
  }
}

TEST_F(RealServerTest, LibraryRankSortsAndKeepsIds) {
  ReadOptions read;
  read.num_features = 20;
  absl::StatusOr<Dataset> data = ReadLetorFile(TestData(), read);
  ASSERT_TRUE(data.ok()) << data.status();
  std::unique_ptr<RankerClient> client = *RankerClient::Create(server_->target());
  absl::StatusOr<v1::RankResponse> response =
      client->RankQuery({"demo", 0, ""}, *data, 0, /*top_k=*/3);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_version(), 1);
  ASSERT_EQ(response->documents_size(),
            std::min<int>(3, data->query_end(0) - data->query_begin(0)));
  for (int i = 0; i < response->documents_size(); ++i) {
    const v1::ScoredDocument& document = response->documents(i);
    EXPECT_EQ(document.rank(), static_cast<uint32_t>(i + 1));
    EXPECT_EQ(document.id(), std::to_string(document.request_index()));
    if (i > 0) {
      EXPECT_LE(document.score(), response->documents(i - 1).score());
    }
  }
}

TEST_F(RealServerTest, ErrorsKeepTheServersMessageAndFail) {
  std::unique_ptr<RankerClient> client = *RankerClient::Create(server_->target());
  // Wrong width: the server's INVALID_ARGUMENT comes through unchanged.
  absl::StatusOr<v1::RankResponse> wrong_width = client->RankDense(
      {"demo", 0, ""}, "q", std::vector<float>(7, 0.5f), 7);
  EXPECT_EQ(wrong_width.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(wrong_width.status().message().empty());
  absl::StatusOr<v1::ModelStatus> missing = client->GetModelStatus("no_such_model");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  CommandResult unknown_model = Client({"--model=no_such_model", "status"});
  EXPECT_NE(unknown_model.exit_code, 0);
  EXPECT_THAT(unknown_model.err, HasSubstr("NOT_FOUND"));
  CommandResult unknown_version = Client(
      {"--model=demo", "--version=7", "rank", "--data=" + TestData()});
  EXPECT_NE(unknown_version.exit_code, 0);
  EXPECT_THAT(unknown_version.err, HasSubstr("7"));
  CommandResult no_command = Client({"--model=demo"});
  EXPECT_EQ(no_command.exit_code, 2);
  EXPECT_THAT(no_command.err, HasSubstr("missing command"));
  CommandResult bad_command = Client({"--model=demo", "frobnicate"});
  EXPECT_EQ(bad_command.exit_code, 2);
  EXPECT_THAT(bad_command.err, HasSubstr("unknown command 'frobnicate'"));
  CommandResult no_data = Client({"--model=demo", "evaluate"});
  EXPECT_NE(no_data.exit_code, 0);
  EXPECT_THAT(no_data.err, HasSubstr("--data"));
}

// This machine's files fail as local errors, not as the server's answer:
// no "(host:port): CODE" prefix, with or without a reachable server.
TEST_F(RealServerTest, LocalFileErrorsAreNotReportedAsServerErrors) {
  const std::string missing = dir_->File("no_such_data.txt");
  for (const std::string& target : {server_->target(), std::string("127.0.0.1:1")}) {
    for (const char* command : {"rank", "evaluate", "explain", "rank-batch"}) {
      std::vector<std::string> argv = {BinPath("plrank-client"),
                                       "--target=" + target, "--model=demo",
                                       command, "--data=" + missing};
      if (std::string(command) == "explain") {
        argv.push_back("--contributions_out=" + dir_->File("c.txt"));
      }
      const CommandResult result = RunBounded(argv);
      EXPECT_NE(result.exit_code, 0) << command;
      EXPECT_THAT(result.err, HasSubstr(std::string(command) + ": " + missing +
                                        ": cannot open"))
          << command << " " << target;
      EXPECT_THAT(result.err, Not(HasSubstr("(" + target + ")"))) << command;
    }
  }
  // A write that fails locally after a successful RPC is local too.
  const CommandResult unwritable = Client(
      {"--model=demo", "rank", "--data=" + TestData(),
       "--scores_out=" + dir_->File("no_dir/scores.txt")});
  EXPECT_NE(unwritable.exit_code, 0);
  EXPECT_THAT(unwritable.err, HasSubstr("rank: "));
  EXPECT_THAT(unwritable.err, HasSubstr("no_dir/scores.txt"));
  EXPECT_THAT(unwritable.err, Not(HasSubstr("(" + server_->target() + ")")));
}

TEST_F(RealServerTest, LoadgenBoundedRunHasNoErrorsAndWritesJson) {
  const std::string json_path = dir_->File("load.json");
  CommandResult load = RunBounded(
      {BinPath("plrank-loadgen"), "--target=" + server_->target(),
       "--model=demo", "--data=" + TestData(), "--concurrency=4",
       "--requests=200", "--duration_seconds=60", "--json_out=" + json_path});
  ASSERT_EQ(load.exit_code, 0) << load.err << load.out;
  EXPECT_THAT(load.out, HasSubstr("p99.9"));
  google::protobuf::Struct json;
  ASSERT_TRUE(ValidJsonObject(ReadWholeFile(json_path), &json))
      << ReadWholeFile(json_path);
  const auto& fields = json.fields();
  EXPECT_EQ(fields.at("sent").number_value(), 200);
  EXPECT_EQ(fields.at("ok").number_value(), 200);
  EXPECT_EQ(fields.at("errors").number_value(), 0);
  EXPECT_GT(fields.at("qps").number_value(), 0);
  const auto& latency = fields.at("latency_ms").struct_value().fields();
  EXPECT_LE(latency.at("p50").number_value(), latency.at("p99").number_value());
  EXPECT_LE(latency.at("p99").number_value(), latency.at("p99.9").number_value());
}

// Settings that would run unbounded, allocate terabytes for the synthetic
// pool, or (NaN) silently change mode are refused with exit code 2 before any
// request is sent.
TEST_F(RealServerTest, LoadgenRefusesSettingsItCannotHonour) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--synthetic_docs=2000000000",
       "--synthetic_requests x --synthetic_docs x features = 16 x 2000000000 "
       "x "},
      {"--features=2000000000", "feature values, above the limit of 67108864"},
      {"--rate=nan", "--rate must be finite and >= 0"},
      {"--connect_timeout_seconds=nan",
       "--connect_timeout_seconds must be in (0, 3600], got nan"},
  };
  for (const auto& [flag, message] : cases) {
    const CommandResult load = RunBounded(
        {BinPath("plrank-loadgen"), "--target=" + server_->target(),
         "--model=demo", "--requests=5", "--duration_seconds=60", flag});
    EXPECT_EQ(load.exit_code, 2) << flag << ": " << load.err << load.out;
    EXPECT_THAT(load.err, HasSubstr(message)) << flag;
  }
}

// plrank-client --scores_out and plrank-loadgen --json_out go through the
// atomic writer: a target that is not a regular file is refused and kept.
// --scores_out streams into a pipe (as plrank-eval's does); the load
// generator's JSON report is a file and refuses anything else.
TEST_F(RealServerTest, ClientOutputsWritePipesAndReportsRefuseThem) {
  const std::string fifo = dir_->File("outputs.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  std::string piped;
  std::thread reader([&] {
    std::ifstream in(fifo);
    piped.assign(std::istreambuf_iterator<char>(in), {});
  });
  const CommandResult rank = Client({"--model=demo", "rank",
                                     "--data=" + TestData(),
                                     "--scores_out=" + fifo});
  reader.join();
  EXPECT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_FALSE(piped.empty());
  EXPECT_EQ(piped.back(), '\n');
  const CommandResult load = RunBounded(
      {BinPath("plrank-loadgen"), "--target=" + server_->target(),
       "--model=demo", "--data=" + TestData(), "--concurrency=1",
       "--requests=5", "--duration_seconds=60", "--json_out=" + fifo});
  EXPECT_NE(load.exit_code, 0);
  EXPECT_THAT(load.err, HasSubstr(fifo + ": exists and is a FIFO"));
  struct stat info;
  ASSERT_EQ(lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(RealServerTest, TlsWithTheServersCertificate) {
  if (!std::filesystem::exists("/usr/bin/openssl")) GTEST_SKIP() << "no openssl";
  TempDir tls;
  const std::string cert = tls.File("cert.pem");
  const std::string key = tls.File("key.pem");
  // Self-signed for the loopback names; the client trusts it as its root.
  const CommandResult made = RunBounded(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
       "-days", "1", "-subj", "/CN=localhost", "-addext",
       "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert},
      60);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ServerProcess secure(ServerProcess::Command{
      {BinPath("plrank-server"), "--model_base_path=" + dir_->File("models"),
       "--host=127.0.0.1", "--port=0", "--metrics_port=-1",
       "--poll_interval_seconds=0", "--tls_cert_file=" + cert,
       "--tls_key_file=" + key}});
  ASSERT_TRUE(secure.ok()) << secure.Logs();
  CommandResult with_root = RunBounded(
      {BinPath("plrank-client"), "--target=" + secure.target(),
       "--tls_root_cert=" + cert, "list"});
  EXPECT_EQ(with_root.exit_code, 0) << with_root.err;
  EXPECT_THAT(with_root.out, HasSubstr("demo"));
  // Plaintext against a TLS port fails with a clear, non-zero exit.
  CommandResult plaintext = RunBounded(
      {BinPath("plrank-client"), "--target=" + secure.target(),
       "--deadline_seconds=3", "list"});
  EXPECT_NE(plaintext.exit_code, 0);
  EXPECT_THAT(plaintext.err, HasSubstr("list (" + secure.target() + ")"));
}

// ---------------------------------------------------------------------------
// plrank-echo-server: the transport floor; always available with the clients.

class EchoServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.emplace(
        ServerProcess::Command{{BinPath("plrank-echo-server"), "--port=0"}});
    ASSERT_TRUE(server_->ok()) << server_->Logs();
  }
  TempDir dir_;
  std::optional<ServerProcess> server_;
};

TEST_F(EchoServerTest, RankEchoesDocumentsInRequestOrder) {
  std::unique_ptr<RankerClient> client = *RankerClient::Create(server_->target());
  const std::vector<float> rows = {1, 2, 3, 4, 5, 6};
  absl::StatusOr<v1::RankResponse> response =
      client->RankDense({"any", 0, ""}, "q1", rows, 2, /*top_k=*/2);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->query_id(), "q1");
  ASSERT_EQ(response->documents_size(), 2);
  EXPECT_EQ(response->documents(0).id(), "0");
  EXPECT_EQ(response->documents(1).id(), "1");
  EXPECT_EQ(response->documents(1).rank(), 2u);
  // Methods the echo server lacks fail with the gRPC code carried over.
  EXPECT_EQ(client->ListModels().status().code(), absl::StatusCode::kUnimplemented);
}

TEST_F(EchoServerTest, LoadgenClosedAndOpenLoopRunsAreClean) {
  for (const std::string mode : {"--concurrency=8", "--rate=400"}) {
    const std::string json_path = dir_.File("echo.json");
    CommandResult load = RunBounded(
        {BinPath("plrank-loadgen"), "--target=" + server_->target(),
         "--model=echo", "--synthetic_docs=50", "--features=136", mode,
         "--requests=200", "--duration_seconds=30", "--json_out=" + json_path});
    ASSERT_EQ(load.exit_code, 0) << mode << "\n" << load.err << load.out;
    google::protobuf::Struct json;
    ASSERT_TRUE(ValidJsonObject(ReadWholeFile(json_path), &json)) << mode;
    EXPECT_EQ(json.fields().at("ok").number_value(), 200) << mode;
    EXPECT_EQ(json.fields().at("errors").number_value(), 0) << mode;
    EXPECT_EQ(json.fields().at("mode").string_value(),
              mode == "--rate=400" ? "open_loop" : "closed_loop");
  }
}

TEST_F(EchoServerTest, LoadgenStopsAtTheDurationBound) {
  CommandResult load = RunBounded(
      {BinPath("plrank-loadgen"), "--target=" + server_->target(), "--model=echo",
       "--synthetic_docs=10", "--features=8", "--rate=50",
       "--requests=1000000", "--duration_seconds=0.5"},
      30);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  // 50 QPS for half a second: about 25 requests, nowhere near the million.
  const std::regex sent(R"(requests: (\d+) sent)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(load.out, match, sent)) << load.out;
  EXPECT_LE(std::stoi(match[1]), 40);
  EXPECT_GE(std::stoi(match[1]), 10);
}

TEST(LoadgenTargetTest, RefusesNonLoopbackTargets) {
  for (const std::string target :
       {"10.1.2.3:50051", "192.168.0.1:8500", "example.com:443", "0.0.0.0:8500",
        "[2001:db8::1]:8500", "dns:///example.com:443", "unix:/tmp/socket"}) {
    CommandResult load = RunBounded(
        {BinPath("plrank-loadgen"), "--target=" + target, "--model=demo",
         "--features=4", "--requests=10"},
        30);
    EXPECT_NE(load.exit_code, 0) << target;
    EXPECT_THAT(load.err, HasSubstr("loopback")) << target;
  }
}

}  // namespace
}  // namespace plrank
