// Explain over the real plrank-server on loopback: contributions + bias add
// up to the served score for a model trained by plrank-train, exact values
// for a hand-built model, top_k, every error (the cost limit included) and
// its metrics; plrank-client explain and its --contributions_out format; an
// XGBoost model converted by plrank-convert explains as XGBoost does.

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "clients/cpp/ranker_client.h"
#include "core/data/letor_reader.h"
#include "core/explain/ensemble_explainer.h"
#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "plrank/v1/ranker.grpc.pb.h"
#include "tests/testing/client_context.h"
#include "tests/testing/random_model.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"
#include "tests/testing/xgboost_testdata.h"

namespace plrank {
namespace {

using ::plrank::testing::ClientContextFor;
using ::plrank::testing::BinPath;
using ::plrank::testing::CommandResult;
using ::plrank::testing::HttpGet;
using ::plrank::testing::MetricValue;
using ::plrank::testing::ReadFloatRows;
using ::plrank::testing::ReadWholeFile;
using ::plrank::testing::RunCommand;
using ::plrank::testing::ServerProcess;
using ::plrank::testing::TempDir;
using ::plrank::testing::XgboostTestdataPath;
using ::plrank::testing::RunBounded;
using ::testing::HasSubstr;

// The server's cost limit here, in documents of the trained model: a query
// of the generated data (about 20 documents) fits, 500 documents do not.
constexpr uint64_t kExplainDocumentsAllowed = 100;

class ExplainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const std::string prefix = dir_->File("data");
    const CommandResult gen =
        RunBounded({BinPath("plrank-datagen"), "--queries=30", "--mean_docs=20",
                    "--features=20", "--seed=11", "--out_prefix=" + prefix});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    std::filesystem::create_directories(dir_->File("models/demo/1"));
    const CommandResult train = RunBounded(
        {BinPath("plrank-train"), "--train=" + prefix + ".train", "--trees=20",
         "--leaves=7", "--min_data_in_leaf=5", "--quiet",
         "--model_out=" + dir_->File("models/demo/1/model.pb")});
    ASSERT_EQ(train.exit_code, 0) << train.err;
    absl::StatusOr<Ensemble> trained =
        ReadModelFile(dir_->File("models/demo/1/model.pb"));
    ASSERT_TRUE(trained.ok()) << trained.status();
    absl::StatusOr<EnsembleExplainer> explainer =
        EnsembleExplainer::Create(*trained);
    ASSERT_TRUE(explainer.ok()) << explainer.status();
    max_explain_cost_ =
        kExplainDocumentsAllowed * explainer->cost_per_document();
    // score = 100 + (x0 > 0.5 ? 1 : -1) + x1; leaf counts 10 and 10.
    testing::WriteTestModel(dir_->File("models"), "hand", 1);
    // Three graded outputs under a softmax: not a sum over trees.
    std::mt19937_64 rng(5);
    const Ensemble graded = testing::RandomEnsemble(rng, 3, 4, 4, 3);
    std::filesystem::create_directories(dir_->File("models/graded/1"));
    ASSERT_TRUE(
        WriteModelFile(graded, dir_->File("models/graded/1/model.pb")).ok());
    // An XGBoost 1.7.4 ranker (tests/unit/import/testdata), converted.
    std::filesystem::create_directories(dir_->File("models/xgb/1"));
    const CommandResult convert = RunBounded(
        {BinPath("plrank-convert"),
         "--xgboost_json=" + XgboostTestdataPath("xgb_rank_small.json"),
         "--model_out=" + dir_->File("models/xgb/1/model.pb")});
    ASSERT_EQ(convert.exit_code, 0) << convert.err;

    server_ = new ServerProcess(
        {"--model_base_path=" + dir_->File("models"),
         "--poll_interval_seconds=0",
         "--max_explain_cost=" + std::to_string(max_explain_cost_)});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
    v1::ReloadModelsResponse reloaded;
    grpc::Status status = server_->stub().ReloadModels(
        ClientContextFor(30, false).get(), v1::ReloadModelsRequest(), &reloaded);
    ASSERT_TRUE(status.ok()) << status.error_message();
    client_ = RankerClient::Create(server_->target())->release();
  }
  static void TearDownTestSuite() {
    delete client_;
    delete server_;
    delete dir_;
  }

  static std::string TestData() { return dir_->File("data.test"); }
  static Dataset ReadTestData() {
    ReadOptions options;
    options.num_features = 20;
    absl::StatusOr<Dataset> data = ReadLetorFile(TestData(), options);
    EXPECT_TRUE(data.ok()) << data.status();
    return data.ok() ? *std::move(data) : Dataset();
  }
  static CommandResult Client(std::vector<std::string> args) {
    args.insert(args.begin(),
                {BinPath("plrank-client"), "--target=" + server_->target()});
    return RunBounded(args);
  }

  static TempDir* dir_;
  static ServerProcess* server_;
  static RankerClient* client_;
  static uint64_t max_explain_cost_;
};
uint64_t ExplainTest::max_explain_cost_ = 0;
TempDir* ExplainTest::dir_ = nullptr;
ServerProcess* ExplainTest::server_ = nullptr;
RankerClient* ExplainTest::client_ = nullptr;

const ModelRef kDemo{"demo", 0, ""};

v1::ExplainRequest HandRequest() {
  v1::ExplainRequest request;
  request.mutable_model_spec()->set_name("hand");
  request.set_query_id("q");
  v1::Document* dense = request.add_documents();
  dense->set_id("a");
  for (float v : {1.0f, 0.25f, 7.0f, 0.0f})
    dense->mutable_dense()->add_values(v);
  v1::Document* sparse = request.add_documents();
  sparse->set_id("b");
  sparse->mutable_sparse()->add_indices(1);
  sparse->mutable_sparse()->add_values(-2.0f);
  return request;
}

TEST_F(ExplainTest, HandModelContributionsAreExact) {
  absl::StatusOr<v1::ExplainResponse> response =
      client_->Explain(HandRequest());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_name(), "hand");
  EXPECT_EQ(response->model_version(), 1);
  EXPECT_EQ(response->query_id(), "q");
  // Base 100, the tree's leaves -1 and +1 weigh 10 : 10.
  EXPECT_DOUBLE_EQ(response->bias(), 100.0);
  ASSERT_EQ(response->documents_size(), 2);
  const v1::DocumentExplanation& a = response->documents(0);
  EXPECT_EQ(a.id(), "a");
  EXPECT_EQ(a.request_index(), 0u);
  EXPECT_DOUBLE_EQ(a.score(), testing::TestModelScore(1, 1.0f, 0.25f));
  ASSERT_EQ(a.contributions_size(), 2);  // features 2 and 3 contribute 0
  EXPECT_EQ(a.contributions(0).feature(), 0u);
  EXPECT_DOUBLE_EQ(a.contributions(0).contribution(), 1.0);
  EXPECT_EQ(a.contributions(1).feature(), 1u);
  EXPECT_DOUBLE_EQ(a.contributions(1).contribution(), 0.25);
  const v1::DocumentExplanation& b = response->documents(1);
  EXPECT_EQ(b.request_index(), 1u);
  EXPECT_DOUBLE_EQ(b.score(), testing::TestModelScore(1, 0.0f, -2.0f));
  ASSERT_EQ(b.contributions_size(), 2);  // |-2| before |-1|
  EXPECT_EQ(b.contributions(0).feature(), 1u);
  EXPECT_DOUBLE_EQ(b.contributions(0).contribution(), -2.0);
  EXPECT_EQ(b.contributions(1).feature(), 0u);
  EXPECT_DOUBLE_EQ(b.contributions(1).contribution(), -1.0);
}

// xgb_rank_small_contribs.txt holds XGBoost's own TreeSHAP contributions
// (pred_contribs) of the rows of xgb_rank_small_expected.txt, bias last
// (tests/unit/explain/xgboost_explain_test.cc); the served model must give
// them, and XGBoost's margins as scores.
TEST_F(ExplainTest, ConvertedXgboostModelExplainsAsXgboost) {
  constexpr int kFeatures = 7;
  const std::vector<std::vector<float>> rows =
      ReadFloatRows(XgboostTestdataPath("xgb_rank_small_expected.txt"));
  const std::vector<std::vector<float>> xgboost =
      ReadFloatRows(XgboostTestdataPath("xgb_rank_small_contribs.txt"));
  ASSERT_EQ(rows.size(), xgboost.size());
  ASSERT_GE(rows.size(), 50u);
  v1::ExplainRequest request;
  request.mutable_model_spec()->set_name("xgb");
  request.set_query_id("q");
  for (const std::vector<float>& row : rows) {
    ASSERT_EQ(row.size(), kFeatures + 1u);
    v1::Document* document = request.add_documents();
    for (int f = 0; f < kFeatures; ++f) {
      document->mutable_dense()->add_values(row[f]);
    }
  }
  absl::StatusOr<v1::ExplainResponse> response = client_->Explain(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->documents_size(), static_cast<int>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(xgboost[i].size(), kFeatures + 1u);
    EXPECT_NEAR(response->bias(), xgboost[i][kFeatures], 1e-6);
    const v1::DocumentExplanation& document = response->documents(i);
    EXPECT_NEAR(document.score(), rows[i][kFeatures], 1e-5) << "row " << i;
    std::vector<double> contributions(kFeatures, 0.0);
    for (const auto& contribution : document.contributions()) {
      ASSERT_LT(contribution.feature(), static_cast<uint32_t>(kFeatures));
      contributions[contribution.feature()] = contribution.contribution();
    }
    for (int f = 0; f < kFeatures; ++f) {
      EXPECT_NEAR(contributions[f], xgboost[i][f], 1e-6)
          << "row " << i << " feature " << f;
    }
  }
}

TEST_F(ExplainTest, TrainedModelContributionsSumToTheRankedScore) {
  const Dataset data = ReadTestData();
  ASSERT_GT(data.num_queries(), 2u);
  for (size_t q = 0; q < data.num_queries(); ++q) {
    absl::StatusOr<v1::ExplainResponse> explained =
        client_->ExplainQuery(kDemo, data, q);
    ASSERT_TRUE(explained.ok()) << explained.status();
    absl::StatusOr<v1::RankResponse> ranked =
        client_->RankQuery(kDemo, data, q);
    ASSERT_TRUE(ranked.ok()) << ranked.status();
    ASSERT_EQ(explained->documents_size(), ranked->documents_size());
    std::map<uint32_t, double> served;
    for (const v1::ScoredDocument& d : ranked->documents()) {
      served[d.request_index()] = d.score();
    }
    bool some_nonzero = false;
    for (int i = 0; i < explained->documents_size(); ++i) {
      const v1::DocumentExplanation& document = explained->documents(i);
      EXPECT_EQ(document.request_index(), static_cast<uint32_t>(i));
      // The very score Rank serves, bit for bit.
      EXPECT_EQ(document.score(), served[document.request_index()]);
      double sum = explained->bias();
      double previous = INFINITY;
      for (const v1::FeatureContribution& c : document.contributions()) {
        EXPECT_LT(c.feature(), 20u);
        EXPECT_NE(c.contribution(), 0.0);
        EXPECT_LE(std::fabs(c.contribution()), previous);
        previous = std::fabs(c.contribution());
        sum += c.contribution();
        some_nonzero = true;
      }
      EXPECT_NEAR(sum, document.score(), 1e-9);
    }
    EXPECT_TRUE(some_nonzero);
    // top_k keeps the largest ones, a prefix of the full list.
    absl::StatusOr<v1::ExplainResponse> top =
        client_->ExplainQuery(kDemo, data, q, 2);
    ASSERT_TRUE(top.ok()) << top.status();
    for (int i = 0; i < top->documents_size(); ++i) {
      const auto& full = explained->documents(i).contributions();
      const auto& cut = top->documents(i).contributions();
      ASSERT_EQ(cut.size(), std::min(full.size(), 2));
      for (int k = 0; k < cut.size(); ++k) {
        EXPECT_EQ(cut[k].feature(), full[k].feature());
        EXPECT_EQ(cut[k].contribution(), full[k].contribution());
      }
      EXPECT_EQ(top->documents(i).score(), explained->documents(i).score());
    }
    EXPECT_EQ(top->bias(), explained->bias());
  }
}

// Offline explanations (plrank-eval --contributions_out, and so the Python
// package's Model.explain, which run the same EnsembleExplainer) equal the
// server's Explain bit for bit: column f of a line is the RPC's feature
// f - 1 (the file numbers features from 1, as LETOR files do).
TEST_F(ExplainTest, OfflineContributionsEqualTheServersExplain) {
  const std::string out = dir_->File("contributions.txt");
  const CommandResult eval = RunCommand(
      {BinPath("plrank-eval"), "--model=" + dir_->File("models/demo/1/model.pb"),
       "--data=" + TestData(), "--contributions_out=" + out});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  std::vector<std::vector<double>> offline;
  for (absl::string_view line :
       absl::StrSplit(ReadWholeFile(out), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    std::vector<double>& values = offline.emplace_back();
    for (absl::string_view field : absl::StrSplit(line, ' ')) {
      ASSERT_TRUE(absl::SimpleAtod(field, &values.emplace_back())) << field;
    }
    ASSERT_EQ(values.size(), 21u);
  }
  const Dataset data = ReadTestData();
  ASSERT_EQ(offline.size(), data.num_documents());
  for (size_t q = 0; q < data.num_queries(); ++q) {
    absl::StatusOr<v1::ExplainResponse> explained =
        client_->ExplainQuery(kDemo, data, q);
    ASSERT_TRUE(explained.ok()) << explained.status();
    for (int i = 0; i < explained->documents_size(); ++i) {
      const std::vector<double>& line = offline[data.query_begin(q) + i];
      EXPECT_EQ(line.back(), explained->bias());
      std::vector<double> served(20, 0.0);
      for (const v1::FeatureContribution& c :
           explained->documents(i).contributions()) {
        served[c.feature()] = c.contribution();
      }
      for (size_t f = 0; f < 20; ++f) {
        EXPECT_EQ(line[f], served[f]) << "query " << q << " doc " << i
                                      << " feature " << f + 1;
      }
    }
  }
}

TEST_F(ExplainTest, BadRequestsGetClearStatusesAndTheServerStaysUp) {
  v1::ExplainRequest request = HandRequest();
  request.clear_documents();
  absl::StatusOr<v1::ExplainResponse> response = client_->Explain(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), HasSubstr("no documents"));

  request = HandRequest();
  request.mutable_documents(0)->mutable_dense()->add_values(1.0f);
  response = client_->Explain(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), HasSubstr("5 dense features"));

  request = HandRequest();
  request.mutable_documents(0)->mutable_dense()->set_values(1, INFINITY);
  EXPECT_EQ(client_->Explain(request).status().code(),
            absl::StatusCode::kInvalidArgument);

  request = HandRequest();
  request.mutable_model_spec()->set_name("nope");
  response = client_->Explain(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(response.status().message(), HasSubstr("unknown model 'nope'"));

  request = HandRequest();
  request.mutable_model_spec()->set_version(9);
  EXPECT_EQ(client_->Explain(request).status().code(),
            absl::StatusCode::kNotFound);

  // Several outputs under a softmax: no additive explanation.
  request = HandRequest();
  request.mutable_model_spec()->set_name("graded");
  response = client_->Explain(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(response.status().message(),
              HasSubstr("model graded version 1 cannot be explained"));
  EXPECT_THAT(response.status().message(), HasSubstr("single-output"));

  // The cost limit: 500 documents of the trained model.
  v1::ExplainRequest big;
  big.mutable_model_spec()->set_name("demo");
  for (int i = 0; i < 500; ++i) {
    auto* values = big.add_documents()->mutable_dense()->mutable_values();
    for (int f = 0; f < 20; ++f) values->Add(static_cast<float>(i % 7) * 0.1f);
  }
  response = client_->Explain(big);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(response.status().message(),
              HasSubstr("explaining 500 documents"));
  EXPECT_THAT(response.status().message(),
              HasSubstr("accepts at most " + std::to_string(max_explain_cost_) +
                        " per Explain request, i.e. 100 documents of this "
                        "model"));
  // Split as the message says, it goes through.
  big.mutable_documents()->DeleteSubrange(10, 490);
  EXPECT_TRUE(client_->Explain(big).ok());

  // Still serving.
  EXPECT_TRUE(client_->Explain(HandRequest()).ok());
}

TEST_F(ExplainTest, CountedInRequestMetricsWithItsOwnLatency) {
  ASSERT_TRUE(client_->Explain(HandRequest()).ok());
  v1::ExplainRequest empty = HandRequest();
  empty.clear_documents();
  ASSERT_FALSE(client_->Explain(empty).ok());
  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_GE(MetricValue(metrics,
                        "plrank_requests_total{code=\"OK\",method=\"Explain\","
                        "model=\"hand\",version=\"1\"}")
                .value_or(-1),
            1);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_requests_total{code=\"INVALID_ARGUMENT\","
                        "method=\"Explain\",model=\"hand\",version=\"1\"}")
                .value_or(-1),
            1);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_explain_duration_seconds_count{model=\"hand\"}")
                .value_or(-1),
            1);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_request_duration_seconds_count{method="
                        "\"Explain\",model=\"hand\"}")
                .value_or(-1),
            2);
  EXPECT_GE(MetricValue(metrics,
                        "plrank_documents_per_request_sum{method=\"Explain\","
                        "model=\"hand\"}")
                .value_or(-1),
            2);
  EXPECT_THAT(metrics, HasSubstr("# TYPE plrank_explain_duration_seconds "
                                 "histogram"));
}

// The numbers of one --contributions_out line: bias, then feature ->
// contribution in file order.
struct ParsedLine {
  double bias = NAN;
  std::vector<std::pair<int, double>> contributions;
};

ParsedLine ParseLine(absl::string_view line) {
  ParsedLine parsed;
  std::vector<absl::string_view> tokens =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  EXPECT_FALSE(tokens.empty());
  if (tokens.empty()) return parsed;
  EXPECT_TRUE(absl::ConsumePrefix(&tokens[0], "bias:")) << line;
  EXPECT_TRUE(absl::SimpleAtod(tokens[0], &parsed.bias)) << line;
  for (size_t i = 1; i < tokens.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(tokens[i], absl::MaxSplits(':', 1));
    int feature = 0;
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtoi(kv.first, &feature)) << line;
    EXPECT_TRUE(absl::SimpleAtod(kv.second, &value)) << line;
    parsed.contributions.emplace_back(feature, value);
  }
  return parsed;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST_F(ExplainTest, ClientWritesOneLinePerDocumentInInputOrder) {
  const std::string out = dir_->File("contributions.txt");
  CommandResult explain =
      Client({"--model=demo", "explain", "--data=" + TestData(),
              "--contributions_out=" + out});
  ASSERT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_THAT(explain.out, HasSubstr("documents explained (demo v1)"));
  EXPECT_THAT(explain.out, HasSubstr("wrote "));
  const std::string scores_path = dir_->File("scores.txt");
  CommandResult rank = Client({"--model=demo", "rank", "--data=" + TestData(),
                               "--scores_out=" + scores_path});
  ASSERT_EQ(rank.exit_code, 0) << rank.err;

  const std::vector<std::string> lines = Lines(ReadWholeFile(out));
  const std::vector<std::string> scores = Lines(ReadWholeFile(scores_path));
  const std::vector<std::string> data_lines = Lines(ReadWholeFile(TestData()));
  ASSERT_EQ(lines.size(), data_lines.size());
  ASSERT_EQ(lines.size(), scores.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const ParsedLine parsed = ParseLine(lines[i]);
    double score = 0;
    ASSERT_TRUE(absl::SimpleAtod(scores[i], &score));
    double sum = parsed.bias;
    for (const auto& [feature, value] : parsed.contributions) {
      EXPECT_GE(feature, 1) << "LETOR numbering is 1-based: " << lines[i];
      EXPECT_LE(feature, 20) << lines[i];
      sum += value;
    }
    EXPECT_NEAR(sum, score, 1e-9) << "line " << i << ": " << lines[i];
  }

  // --top_features=3: at most three, and the first three of the full line.
  const std::string top_out = dir_->File("top.txt");
  CommandResult top =
      Client({"--model=demo", "explain", "--data=" + TestData(),
              "--top_features=3", "--contributions_out=" + top_out});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::vector<std::string> top_lines = Lines(ReadWholeFile(top_out));
  ASSERT_EQ(top_lines.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const ParsedLine full = ParseLine(lines[i]);
    const ParsedLine cut = ParseLine(top_lines[i]);
    EXPECT_EQ(cut.bias, full.bias);
    ASSERT_EQ(cut.contributions.size(),
              std::min<size_t>(3, full.contributions.size()));
    for (size_t k = 0; k < cut.contributions.size(); ++k) {
      EXPECT_EQ(cut.contributions[k], full.contributions[k]) << top_lines[i];
    }
  }
}

TEST_F(ExplainTest, ClientReportsMissingOutputAndTheCostLimit) {
  CommandResult no_out =
      Client({"--model=demo", "explain", "--data=" + TestData()});
  EXPECT_NE(no_out.exit_code, 0);
  EXPECT_THAT(no_out.err, HasSubstr("--contributions_out=FILE is required"));

  // One query of 500 documents costs more than the server accepts.
  const std::string big = dir_->File("big.txt");
  {
    std::ofstream file(big);
    for (int i = 0; i < 500; ++i) {
      file << (i % 3) << " qid:7 1:" << (i % 10) * 0.1 << " 2:0.5\n";
    }
  }
  const std::string out = dir_->File("big-contributions.txt");
  CommandResult refused = Client({"--model=demo", "explain", "--data=" + big,
                                  "--contributions_out=" + out});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(refused.err, HasSubstr("query 7: explaining 500 documents"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace plrank
