// The impression log without its writer thread (RunQueued / Flush on the
// test's thread) and with a fake clock, so nothing depends on timing.
#include "server/impression_log.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace plrank::server {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> LogFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ImpressionLogTest : public ::testing::Test {
 protected:
  ImpressionLogOptions Options() {
    ImpressionLogOptions options;
    options.directory = dir_.path();
    options.start_worker = false;
    options.clock = [this] { return now_; };
    return options;
  }

  // A sampled answer: documents "a b", "c" (id with a space), shown c then a.
  static void Query(const std::string& id, v1::RankRequest* request,
                    v1::RankResponse* response) {
    request->set_query_id("q 1");
    request->mutable_sampling()->set_temperature(0.5);
    for (const char* name : {"a b", "c", "d"}) {
      v1::Document* doc = request->add_documents();
      doc->set_id(name);
      doc->mutable_dense()->add_values(1.5f);
      doc->mutable_dense()->add_values(0.0f);
    }
    response->set_model_name("web");
    response->set_model_version(7);
    response->set_request_id(id);
    response->set_sampling_seed(99);
    v1::ScoredDocument* first = response->add_documents();
    first->set_request_index(1);
    first->set_rank(1);
    first->set_pick_probability(0.5);
    v1::ScoredDocument* second = response->add_documents();
    second->set_request_index(0);
    second->set_rank(2);
    second->set_pick_probability(0.25);
  }

  plrank::testing::TempDir dir_;
  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  const std::vector<double> scores_ = {1.0, 2.0, -0.5};
};

TEST_F(ImpressionLogTest, WritesOneLetorLinePerDocumentInAPublishedFile) {
  auto logger = ImpressionLogger::Create(Options(), nullptr);
  ASSERT_TRUE(logger.ok()) << logger.status();
  v1::RankRequest request;
  v1::RankResponse response;
  Query("r=1", &request, &response);
  ASSERT_TRUE((*logger)->Offer(request, response, scores_));
  EXPECT_EQ((*logger)->RunQueued(), 1u);
  EXPECT_TRUE(LogFiles(dir_.path()).empty()) << "not due yet: unpublished";
  (*logger)->Flush();
  const std::vector<std::string> files = LogFiles(dir_.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_THAT(files[0], ::testing::StartsWith("impressions-20231114T"));
  const std::string text = Read(dir_.path() + "/" + files[0]);
  EXPECT_EQ(text,
            "0 qid:r%3D1 1:1.5 2:0 # request_id=r%3D1 query=q%201 doc=a%20b "
            "position=2 score=1 pick=0.25 temperature=0.5 top_k=2 seed=99 "
            "model=web version=7 documents=3 time_us=1700000000000000\n"
            "0 qid:r%3D1 1:1.5 2:0 # request_id=r%3D1 query=q%201 doc=c "
            "position=1 score=2 pick=0.5 temperature=0.5 top_k=2 seed=99 "
            "model=web version=7 documents=3 time_us=1700000000000000\n"
            "0 qid:r%3D1 1:1.5 2:0 # request_id=r%3D1 query=q%201 doc=d "
            "position=0 score=-0.5 pick=0 temperature=0.5 top_k=2 seed=99 "
            "model=web version=7 documents=3 time_us=1700000000000000\n");
  EXPECT_EQ((*logger)->written(), 1u);
  EXPECT_EQ((*logger)->files_published(), 1u);
}

TEST_F(ImpressionLogTest, RotatesBySizeAndAge) {
  ImpressionLogOptions options = Options();
  options.max_file_bytes = 400;  // less than one entry (3 lines)
  options.max_file_age = absl::Seconds(60);
  auto logger = ImpressionLogger::Create(options, nullptr);
  ASSERT_TRUE(logger.ok());
  v1::RankRequest request;
  v1::RankResponse response;
  Query("x", &request, &response);
  for (int i = 0; i < 3; ++i) {
    response.set_request_id(absl::StrCat("r", i));
    ASSERT_TRUE((*logger)->Offer(request, response, scores_));
  }
  (*logger)->RunQueued();
  // Each entry (~500 bytes) fills a file on its own.
  EXPECT_EQ(LogFiles(dir_.path()).size(), 3u);
  // Age: an entry written now is published once 60 s have passed.
  ImpressionLogOptions by_age = Options();
  by_age.max_file_age = absl::Seconds(60);
  plrank::testing::TempDir other;
  by_age.directory = other.path();
  auto aged = ImpressionLogger::Create(by_age, nullptr);
  ASSERT_TRUE(aged.ok());
  ASSERT_TRUE((*aged)->Offer(request, response, scores_));
  (*aged)->RunQueued();
  EXPECT_TRUE(LogFiles(other.path()).empty());
  now_ += absl::Seconds(59);
  (*aged)->RunQueued();
  EXPECT_TRUE(LogFiles(other.path()).empty());
  now_ += absl::Seconds(1);
  (*aged)->RunQueued();
  EXPECT_EQ(LogFiles(other.path()).size(), 1u);
}

TEST_F(ImpressionLogTest, DropsAndCountsWhenTheQueueIsFull) {
  ImpressionLogOptions options = Options();
  options.queue_capacity = 2;
  auto logger = ImpressionLogger::Create(options, nullptr);
  ASSERT_TRUE(logger.ok());
  v1::RankRequest request;
  v1::RankResponse response;
  Query("r", &request, &response);
  EXPECT_TRUE((*logger)->Offer(request, response, scores_));
  EXPECT_TRUE((*logger)->Offer(request, response, scores_));
  EXPECT_FALSE((*logger)->Offer(request, response, scores_));
  EXPECT_EQ((*logger)->dropped_queue_full(), 1u);
  (*logger)->Flush();
  EXPECT_EQ((*logger)->written(), 2u);
}

TEST_F(ImpressionLogTest, AnUnwritableDirectoryDropsAndCountsNeverFails) {
  plrank::testing::TempDir gone;
  ImpressionLogOptions options = Options();
  options.directory = gone.path() + "/log";
  std::filesystem::create_directory(options.directory);
  auto logger = ImpressionLogger::Create(options, nullptr);
  ASSERT_TRUE(logger.ok());
  // The directory disappears under the running server.
  std::filesystem::remove_all(options.directory);
  v1::RankRequest request;
  v1::RankResponse response;
  Query("r", &request, &response);
  EXPECT_TRUE((*logger)->Offer(request, response, scores_));
  (*logger)->Flush();
  EXPECT_EQ((*logger)->dropped_write_failed(), 1u);
  EXPECT_EQ((*logger)->written(), 0u);
}

TEST_F(ImpressionLogTest, FractionSelectsByRequestId) {
  ImpressionLogOptions options = Options();
  options.fraction = 0.5;
  auto logger = ImpressionLogger::Create(options, nullptr);
  ASSERT_TRUE(logger.ok());
  int selected = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string id = absl::StrCat("request-", i);
    const bool chosen = (*logger)->Selected(id);
    EXPECT_EQ(chosen, (*logger)->Selected(id));  // the same decision
    selected += chosen ? 1 : 0;
  }
  EXPECT_GT(selected, 850);
  EXPECT_LT(selected, 1150);
}

TEST_F(ImpressionLogTest, RefusesBadOptions) {
  ImpressionLogOptions options = Options();
  options.directory = dir_.path() + "/missing";
  auto missing = ImpressionLogger::Create(options, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("impression_log_dir"));
  options = Options();
  options.fraction = 1.5;
  EXPECT_FALSE(ImpressionLogger::Create(options, nullptr).ok());
  options = Options();
  options.queue_capacity = 0;
  EXPECT_FALSE(ImpressionLogger::Create(options, nullptr).ok());
}

}  // namespace
}  // namespace plrank::server
