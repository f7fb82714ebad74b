#include "server/lifecycle/version_manager.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/lifecycle/lifecycle_observer.h"
#include "server/lifecycle/model_repository.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TempDir;
using ::plrank::testing::TestEnsembleWithFeatures;
using ::plrank::testing::TestModelScore;
using ::plrank::testing::WriteRawModelFile;
using ::plrank::testing::WriteTestModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

VersionSelector Spec(const std::string& name, int64_t version = 0,
                     const std::string& label = "") {
  return {.name = name, .version = version, .label = label};
}

// Counts the load outcomes and promotion refusals the manager reports, as
// the server's metrics would (the other reports are not checked here).
class RecordingObserver final : public LifecycleObserver {
 public:
  void OnModelLoad(const std::string& model, bool success,
                   double seconds) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++loads_[{model, success}];
  }
  void OnVersionsLoaded(const std::string& model, int64_t count) override {}
  void OnVersionAvailable(const ServableVersion& version) override {}
  void OnVersionUnloaded(const std::string& model, int64_t version) override {}
  void OnVersionReleased(const std::string& model, int64_t version) override {}
  void OnPromotionRefused(const std::string& model,
                          const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++refusals_[{model, reason}];
  }

  int loads(const std::string& model, bool success) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = loads_.find({model, success});
    return it == loads_.end() ? 0 : it->second;
  }
  int refusals(const std::string& model, const std::string& reason) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = refusals_.find({model, reason});
    return it == refusals_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, bool>, int> loads_;
  std::map<std::pair<std::string, std::string>, int> refusals_;
};

std::vector<int64_t> Available(const VersionManager& manager,
                               const std::string& model) {
  std::vector<int64_t> out;
  auto snapshot = manager.snapshot();
  auto it = snapshot->models.find(model);
  if (it == snapshot->models.end()) return out;
  for (const auto& [version, servable] : it->second.available) {
    out.push_back(version);
  }
  return out;
}

const VersionStatus* FindVersion(const ServingSnapshot& snapshot,
                                 const std::string& model, int64_t version) {
  auto it = snapshot.models.find(model);
  if (it == snapshot.models.end()) return nullptr;
  for (const auto& status : it->second.status.versions) {
    if (status.version == version) return &status;
  }
  return nullptr;
}

double ScoreOne(const ServableVersion& version, float x0, float x1) {
  std::vector<float> row = {x0, x1, 0.0f, 0.0f};
  double score = 0;
  version.scorer().Score(row, 1, absl::MakeSpan(&score, 1));
  return score;
}

void WriteConfig(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(ParseVersionDirectoryNameTest, AcceptsOnlyPositiveIntegers) {
  EXPECT_EQ(ParseVersionDirectoryName("1"), 1);
  EXPECT_EQ(ParseVersionDirectoryName("1234"), 1234);
  EXPECT_EQ(ParseVersionDirectoryName("0"), 0);
  EXPECT_EQ(ParseVersionDirectoryName("01"), 0);
  EXPECT_EQ(ParseVersionDirectoryName("-1"), 0);
  EXPECT_EQ(ParseVersionDirectoryName("3.tmp"), 0);
  EXPECT_EQ(ParseVersionDirectoryName("abc"), 0);
  EXPECT_EQ(ParseVersionDirectoryName(""), 0);
  EXPECT_EQ(ParseVersionDirectoryName("99999999999999999999"), 0);
}

TEST(VersionManagerTest, EmptyRepositoryServesNothing) {
  TempDir base;
  VersionManager manager({base.path(), "", nullptr});
  ScanSummary summary = manager.Scan();
  ASSERT_TRUE(summary.status.ok()) << summary.status;
  EXPECT_TRUE(manager.snapshot()->models.empty());
  EXPECT_FALSE(manager.snapshot()->AnyModelAvailable());
  EXPECT_EQ(manager.snapshot()->Resolve(Spec("web")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(VersionManagerTest, MissingBasePathFailsTheScanWithoutChanges) {
  VersionManager manager({"/nonexistent/plrank/models", "", nullptr});
  EXPECT_FALSE(manager.Scan().status.ok());
}

TEST(VersionManagerTest, DefaultPolicyServesLatestTwoAndIgnoresOtherDirs) {
  TempDir base;
  for (int v : {1, 2, 3})
    ASSERT_FALSE(WriteTestModel(base.path(), "web", v).empty());
  ASSERT_FALSE(WriteTestModel(base.path(), "news", 7).empty());
  std::filesystem::create_directories(base.path() + "/web/tmp");
  std::filesystem::create_directories(base.path() + "/web/04");
  std::filesystem::create_directories(base.path() + "/.hidden/1");

  VersionManager manager({base.path(), "", nullptr});
  ScanSummary summary = manager.Scan();
  ASSERT_TRUE(summary.status.ok()) << summary.status;
  EXPECT_EQ(summary.loaded, 3u);
  EXPECT_EQ(summary.failed, 0u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(2, 3));
  EXPECT_THAT(Available(manager, "news"), ElementsAre(7));
  EXPECT_EQ(manager.snapshot()->models.size(), 2u);

  auto latest = manager.snapshot()->Resolve(Spec("web"));
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ((*latest)->version(), 3);
  EXPECT_DOUBLE_EQ(ScoreOne(**latest, 1.0f, 0.25f),
                   TestModelScore(3, 1.0f, 0.25f));
  auto pinned = manager.snapshot()->Resolve(Spec("web", 2));
  ASSERT_TRUE(pinned.ok());
  EXPECT_DOUBLE_EQ(ScoreOne(**pinned, 0.0f, 0.0f), TestModelScore(2, 0, 0));

  const ModelStatus& status = manager.snapshot()->models.at("web").status;
  EXPECT_EQ(status.default_version, 3);
  const VersionStatus* v3 = FindVersion(*manager.snapshot(), "web", 3);
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->state, VersionState::kAvailable);
  EXPECT_EQ(v3->metadata.num_features, 4u);
  EXPECT_EQ(v3->metadata.num_trees, 1u);
  EXPECT_EQ(v3->metadata.objective, "plrank");
  EXPECT_EQ(v3->metadata.checksum.size(), 16u);
  EXPECT_GT(v3->metadata.file_bytes, 0u);
  EXPECT_DOUBLE_EQ(v3->metadata.training_metrics.at("valid ndcg@10"), 0.75);
  // Version 1 was never needed, so it was never loaded.
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 1), nullptr);
  EXPECT_EQ(manager.snapshot()->Resolve(Spec("web", 1)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(manager.snapshot()->Resolve(Spec("web", 9)).status().code(),
            absl::StatusCode::kNotFound);
}

// Issue 39 item 11: directories skipped by their names were never logged.
// ScanRepository lists them (not hidden ones, not files), and the manager
// logs each once, at the first scan that finds it.
TEST(VersionManagerTest, SkippedDirectoriesAreLoggedOnce) {
  TempDir base;
  ASSERT_FALSE(WriteTestModel(base.path(), "web", 1).empty());
  for (const char* dir : {"/web/007", "/web/-1", "/web/1.5", "/web/0x10",
                          "/web/.staging-2", "/bad name", "/.hidden"}) {
    std::filesystem::create_directories(base.path() + dir);
  }
  std::ofstream(base.path() + "/web/notes.txt") << "a file";
  std::ofstream(base.path() + "/README") << "a file";

  std::vector<SkippedDirectory> skipped;
  ASSERT_TRUE(ScanRepository(base.path(), nullptr, &skipped).ok());
  std::vector<std::string> paths;
  for (const SkippedDirectory& entry : skipped) paths.push_back(entry.path);
  EXPECT_THAT(paths, ::testing::UnorderedElementsAre(
                         base.path() + "/bad name", base.path() + "/web/007",
                         base.path() + "/web/-1", base.path() + "/web/1.5",
                         base.path() + "/web/0x10"));

  VersionManager manager({base.path(), "", nullptr});
  const auto count = [](const std::string& log, const std::string& text) {
    size_t n = 0;
    for (size_t at = log.find(text); at != std::string::npos;
         at = log.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  ::testing::internal::CaptureStderr();
  for (int scan = 0; scan < 3; ++scan) ASSERT_TRUE(manager.Scan().status.ok());
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(log, "event=directory_skipped"), 5u) << log;
  EXPECT_EQ(count(log, "path=" + base.path() + "/web/007 "), 1u) << log;
  EXPECT_EQ(count(log, "reason=\"not a version number"), 4u) << log;
  EXPECT_EQ(count(log, "reason=\"not a valid model name"), 1u) << log;
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));

  // Gone and back: logged again, once.
  std::filesystem::remove(base.path() + "/web/007");
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(manager.Scan().status.ok());
  std::filesystem::create_directories(base.path() + "/web/007");
  ASSERT_TRUE(manager.Scan().status.ok());
  ASSERT_TRUE(manager.Scan().status.ok());
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(log, "event=directory_skipped"), 1u) << log;
}

TEST(VersionManagerTest, SwapKeepsRequestsInFlightOnTheirVersion) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  auto held = manager.snapshot()->Resolve(Spec("web"));
  ASSERT_TRUE(held.ok());
  std::weak_ptr<const ServableVersion> watch = *held;

  WriteTestModel(base.path(), "web", 2);
  WriteTestModel(base.path(), "web", 3);
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 2u);
  EXPECT_EQ(summary.unloaded, 1u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(2, 3));
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 1)->state,
            VersionState::kEnd);
  // The retired version still scores for the request holding it...
  EXPECT_DOUBLE_EQ(ScoreOne(**held, 1.0f, 0.0f), TestModelScore(1, 1.0f, 0));
  // ...and is freed when that request lets go.
  held->reset();
  EXPECT_TRUE(watch.expired());
}

TEST(VersionManagerTest, BrokenNewVersionNeverReplacesTheGoodOne) {
  TempDir base;
  const std::string config = base.File("config.txt");
  std::filesystem::create_directories(base.path() + "/repo");
  WriteConfig(config,
              "models { name: 'web' version_policy { latest { num_versions: 1 "
              "} } }");
  const std::string repo = base.path() + "/repo";
  WriteTestModel(repo, "web", 1);
  VersionManager manager({repo, config, nullptr});
  ASSERT_TRUE(manager.Scan().status.ok());
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));

  const std::string broken =
      WriteRawModelFile(repo, "web", 2, "definitely not a model");
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  const VersionStatus* v2 = FindVersion(*manager.snapshot(), "web", 2);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->state, VersionState::kFailed);
  EXPECT_THAT(v2->error, HasSubstr(broken));
  EXPECT_EQ(manager.snapshot()->Resolve(Spec("web", 2)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 1);

  // The same broken file is not retried at every scan.
  summary = manager.Scan();
  EXPECT_EQ(summary.failed, 0u);
  EXPECT_EQ(summary.loaded, 0u);

  // A half-written (truncated) real model fails too.
  auto bytes = SerializeModel(plrank::testing::TestEnsemble(3));
  ASSERT_TRUE(bytes.ok());
  WriteRawModelFile(repo, "web", 3, bytes->substr(0, bytes->size() / 2));
  summary = manager.Scan();
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 3)->state,
            VersionState::kFailed);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));

  // Replacing the broken file with a good one is picked up.
  WriteTestModel(repo, "web", 3);
  summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 1u);
  EXPECT_EQ(summary.unloaded, 1u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(3));
}

TEST(VersionManagerTest, VersionWithoutModelFileIsSkippedUntilItAppears) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  std::filesystem::create_directories(base.path() + "/web/2");
  // What WriteModelFile leaves while writing: a temp file, not model.pb.
  std::ofstream(base.path() + "/web/2/model.pb.tmp.1.abc") << "partial";
  VersionManager manager({base.path(), "", nullptr});
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.failed, 0u);
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 2), nullptr);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));

  WriteTestModel(base.path(), "web", 2);
  summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 1u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 2));
}

TEST(VersionManagerTest, ChangedFileOfAvailableVersionIsNotReloaded) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  WriteTestModel(base.path(), "web", 1, /*tag=*/9);
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 0u);
  auto version = manager.snapshot()->Resolve(Spec("web"));
  ASSERT_TRUE(version.ok());
  EXPECT_DOUBLE_EQ(ScoreOne(**version, 0, 0), TestModelScore(1, 0, 0));
}

TEST(VersionManagerTest, RemovedVersionsAndModelsAreUnloaded) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  WriteTestModel(base.path(), "web", 2);
  WriteTestModel(base.path(), "news", 1);
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  std::filesystem::remove_all(base.path() + "/web/2");
  std::filesystem::remove_all(base.path() + "/news");
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.unloaded, 2u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  EXPECT_EQ(manager.snapshot()->models.count("news"), 0u);
}

TEST(VersionManagerTest, ConfigPoliciesAndLabels) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  for (int v : {1, 2, 3, 4}) WriteTestModel(repo, "web", v);
  for (int v : {1, 2, 3}) WriteTestModel(repo, "all", v);
  for (int v : {1, 2, 3}) WriteTestModel(repo, "pick", v);
  WriteTestModel(repo, "unlisted", 1);
  WriteTestModel(base.path() + "/elsewhere", "x", 5);
  const std::string config = base.File("config.txt");
  WriteConfig(config, R"pb(
    models {
      name: "web"
      version_policy { latest { num_versions: 1 } }
      version_labels { key: "stable" value: 2 }
      version_labels { key: "canary" value: 4 }
      version_labels { key: "ghost" value: 9 }
    }
    models {
      name: "all"
      version_policy { all {} }
    }
    models {
      name: "pick"
      version_policy { specific { versions: [ 1, 3 ] } }
    }
    models { name: "moved" base_path: "../elsewhere/x" }
  )pb");
  VersionManager manager({repo, config, nullptr});
  ScanSummary summary = manager.Scan();
  ASSERT_TRUE(summary.status.ok()) << summary.status;
  // The label keeps version 2 loaded beside the latest.
  EXPECT_THAT(Available(manager, "web"), ElementsAre(2, 4));
  EXPECT_THAT(Available(manager, "all"), ElementsAre(1, 2, 3));
  EXPECT_THAT(Available(manager, "pick"), ElementsAre(1, 3));
  EXPECT_THAT(Available(manager, "moved"), ElementsAre(5));
  EXPECT_EQ(manager.snapshot()->models.count("unlisted"), 0u);

  auto snapshot = manager.snapshot();
  EXPECT_EQ((*snapshot->Resolve(Spec("web", 0, "stable")))->version(), 2);
  EXPECT_EQ((*snapshot->Resolve(Spec("web", 0, "canary")))->version(), 4);
  // A pinned version wins over a label.
  EXPECT_EQ((*snapshot->Resolve(Spec("web", 4, "stable")))->version(), 4);
  EXPECT_EQ(snapshot->Resolve(Spec("web", 0, "nope")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(snapshot->Resolve(Spec("web", 0, "ghost")).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(snapshot->Resolve(Spec("web", -1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(snapshot->Resolve(Spec("")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(FindVersion(*snapshot, "web", 2)->labels, ElementsAre("stable"));

  // Moving the label re-reads the config at the next scan.
  WriteConfig(config, R"pb(
    models {
      name: "web"
      version_policy { latest { num_versions: 1 } }
      version_labels { key: "stable" value: 4 }
    })pb");
  // It drops models: a file cut between two model blocks would look the
  // same, so it takes effect once a second scan reads it unchanged.
  summary = manager.Scan();
  EXPECT_EQ(manager.snapshot()->models.count("all"), 1u);
  summary = manager.Scan();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(4));
  EXPECT_EQ(manager.snapshot()->models.count("all"), 0u);

  // A broken config keeps the previous one in force.
  WriteConfig(config, "models { name: ");
  summary = manager.Scan();
  EXPECT_TRUE(summary.status.ok());
  EXPECT_THAT(Available(manager, "web"), ElementsAre(4));
}

TEST(VersionManagerTest, ShadowLoadsButNeverBecomesTheDefault) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  for (int v : {1, 2, 3}) WriteTestModel(repo, "web", v);
  for (int v : {1, 2}) WriteTestModel(repo, "news", v);
  const std::string config = base.File("config.txt");
  WriteConfig(config, R"pb(
    models {
      name: "web"
      version_policy { specific { versions: 1 } }
      shadow_version: 3
      shadow_fraction: 0.5
    }
    models {
      name: "news"
      version_policy { specific { versions: 1 } }
      version_labels { key: "candidate" value: 2 }
      shadow_label: "candidate"
    }
  )pb");
  VersionManager manager({repo, config, nullptr});
  ASSERT_TRUE(manager.Scan().status.ok());
  auto snapshot = manager.snapshot();
  // Version 3 is newer and compatible, yet 1 stays the default.
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 3));
  const ModelSnapshot& web = snapshot->models.at("web");
  EXPECT_EQ(web.default_version(), 1);
  EXPECT_EQ((*snapshot->Resolve(Spec("web")))->version(), 1);
  EXPECT_EQ((*snapshot->Resolve(Spec("web", 3)))->version(), 3);
  EXPECT_TRUE(web.has_shadow);
  ASSERT_NE(web.shadow, nullptr);
  EXPECT_EQ(web.shadow->version(), 3);
  EXPECT_EQ(web.shadow_fraction, 0.5);
  EXPECT_EQ(web.shadow_error, "");
  // The shadow label does not promote its version, as other labels would.
  const ModelSnapshot& news = snapshot->models.at("news");
  EXPECT_THAT(Available(manager, "news"), ElementsAre(1, 2));
  EXPECT_EQ(news.default_version(), 1);
  ASSERT_NE(news.shadow, nullptr);
  EXPECT_EQ(news.shadow->version(), 2);
  EXPECT_EQ((*snapshot->Resolve(Spec("news", 0, "candidate")))->version(), 2);

  // A shadow that is not on disk: reported, serving unchanged, and the
  // former shadow-only version is unloaded.
  WriteConfig(config, R"pb(
    models {
      name: "web"
      version_policy { specific { versions: 1 } }
      shadow_version: 7
      shadow_fraction: 1
    })pb");
  // It drops "news": applied at the second scan that reads it unchanged.
  ASSERT_TRUE(manager.Scan().status.ok());
  ASSERT_TRUE(manager.Scan().status.ok());
  snapshot = manager.snapshot();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  const ModelSnapshot& missing = snapshot->models.at("web");
  EXPECT_EQ(missing.default_version(), 1);
  EXPECT_EQ(missing.shadow, nullptr);
  EXPECT_THAT(missing.shadow_error,
              HasSubstr("version 7 of model 'web' is not loaded"));

  // A model whose only loadable version is its shadow has no default (and
  // counts as unavailable for health): the shadow is never the default.
  WriteTestModel(repo, "solo", 5);
  WriteConfig(config, R"pb(
    models {
      name: "solo"
      version_policy { specific { versions: 1 } }
      shadow_version: 5
    })pb");
  ASSERT_TRUE(manager.Scan().status.ok());  // drops "web": deferred
  ASSERT_TRUE(manager.Scan().status.ok());
  snapshot = manager.snapshot();
  EXPECT_THAT(Available(manager, "solo"), ElementsAre(5));
  EXPECT_EQ(snapshot->models.at("solo").default_version(), 0);
  EXPECT_FALSE(snapshot->AnyModelAvailable());
  EXPECT_EQ(snapshot->Resolve(Spec("solo")).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ((*snapshot->Resolve(Spec("solo", 5)))->version(), 5);

  // Without shadow settings, a model has no shadow.
  WriteConfig(config, R"pb(models { name: "web" })pb");
  ASSERT_TRUE(manager.Scan().status.ok());  // drops "solo": deferred
  ASSERT_TRUE(manager.Scan().status.ok());
  EXPECT_FALSE(manager.snapshot()->models.at("web").has_shadow);
}

TEST(VersionManagerTest, MovedLabelSwitchesOnlyOnceItsVersionServes) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  for (int v : {1, 2}) WriteTestModel(repo, "web", v);
  const std::string config = base.File("config.txt");
  WriteConfig(config,
              "models { name: 'web' version_policy { latest { num_versions: 1 "
              "} } version_labels { key: 'stable' value: 2 } }");
  VersionManager manager({repo, config, nullptr});
  manager.Scan();
  std::vector<int64_t> stable_seen;
  manager.SetListener([&](const ServingSnapshot& snapshot) {
    auto version = snapshot.Resolve(Spec("web", 0, "stable"));
    stable_seen.push_back(version.ok() ? (*version)->version() : -1);
  });
  WriteConfig(config,
              "models { name: 'web' version_policy { latest { num_versions: 1 "
              "} } version_labels { key: 'stable' value: 1 } }");
  manager.Scan();
  // While version 1 loads, "stable" still serves 2; then it moves to 1.
  EXPECT_THAT(stable_seen, ElementsAre(2, 1));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 2));
}

TEST(VersionManagerTest, ModelWithNoLoadableVersionIsUnavailable) {
  TempDir base;
  WriteRawModelFile(base.path(), "web", 1, "garbage");
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  auto snapshot = manager.snapshot();
  EXPECT_FALSE(snapshot->AnyModelAvailable());
  EXPECT_EQ(snapshot->Resolve(Spec("web")).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(snapshot->models.at("web").status.default_version, 0);
}

TEST(VersionManagerTest, ListenerSeesEveryPublishedSnapshot) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  int calls = 0;
  bool last_available = false;
  manager.SetListener([&](const ServingSnapshot& snapshot) {
    ++calls;
    last_available = snapshot.AnyModelAvailable();
  });
  manager.Scan();
  EXPECT_GE(calls, 2);  // LOADING, then the result
  EXPECT_TRUE(last_available);
}

std::string WriteModelWithFeatures(const std::string& base, int64_t version,
                                   int32_t num_features) {
  const std::string path = WriteTestModel(base, "web", version);
  if (!WriteModelFile(TestEnsembleWithFeatures(version, num_features), path)
           .ok()) {
    return "";
  }
  return path;
}

// Issue 10 item 3: a newer version with another feature count loads but
// does not take the default from the serving one, which stays loaded even
// under latest 1; a label or allow_incompatible_promotion promotes it.
TEST(VersionManagerTest, IncompatibleVersionLoadsButIsNotPromoted) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  const std::string config = base.File("config.txt");
  const std::string policy =
      "models { name: 'web' version_policy { latest { num_versions: 1 } } ";
  WriteConfig(config, policy + "}");
  WriteModelWithFeatures(repo, 1, 4);
  RecordingObserver observer;
  VersionManager manager({repo, config, &observer});
  manager.Scan();
  WriteModelWithFeatures(repo, 2, 5);
  ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 1u);
  EXPECT_EQ(summary.unloaded, 0u);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 2));
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 1);
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web", 2)))->version(), 2);
  EXPECT_EQ(manager.snapshot()->models.at("web").status.default_version, 1);
  const VersionStatus* v2 = FindVersion(*manager.snapshot(), "web", 2);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->state, VersionState::kAvailable);
  EXPECT_THAT(v2->promotion_refused,
              HasSubstr("incompatible with version 1 serving now (it takes 5 "
                        "features per document, the serving version 4)"));
  EXPECT_THAT(v2->promotion_refused, Not(HasSubstr("--num_features")));
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 1)->promotion_refused, "");
  // Counted once per refused version, not per scan.
  manager.Scan();
  EXPECT_EQ(observer.refusals("web", "num_features"), 1);

  // A compatible newer version is promoted over the refused one; the one
  // that served is then released by the policy.
  WriteModelWithFeatures(repo, 3, 4);
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 3);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(3));

  // Another feature count again; then a label pointing at it promotes it.
  WriteModelWithFeatures(repo, 4, 6);
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 3);
  WriteConfig(config, policy + "version_labels { key: 'next' value: 4 } }");
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 4);
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 4)->promotion_refused, "");

  // Or the model config allows incompatible promotions.
  WriteModelWithFeatures(repo, 5, 7);
  WriteConfig(config, policy + "}");
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 4);
  WriteConfig(config, policy + "allow_incompatible_promotion: true }");
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 5);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(5));
  EXPECT_EQ(observer.refusals("web", "num_features"), 3);
}

// At startup nothing serves, so the newest version becomes the default.
TEST(VersionManagerTest, NewestVersionServesWhenNothingServedBefore) {
  TempDir base;
  WriteModelWithFeatures(base.path(), 1, 4);
  WriteModelWithFeatures(base.path(), 2, 5);
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 2);
  // Removing the serving version hands the default to what is left.
  std::filesystem::remove_all(base.path() + "/web/2");
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 1);
}

// Issue 10 item 4: a version copied slowly fails while incomplete; its
// failures are not counted while the file keeps changing, and once newer
// versions fill the policy window its stale FAILED entry goes away when the
// copy completes.
TEST(VersionManagerTest, SlowCopyCountsNoFailureAndLeavesNoStaleError) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  RecordingObserver observer;
  VersionManager manager({base.path(), "", &observer});
  manager.Scan();
  auto bytes = SerializeModel(plrank::testing::TestEnsemble(2));
  ASSERT_TRUE(bytes.ok());
  for (size_t part : {bytes->size() / 3, 2 * bytes->size() / 3}) {
    WriteRawModelFile(base.path(), "web", 2, bytes->substr(0, part));
    EXPECT_EQ(manager.Scan().failed, 1u);
    const VersionStatus* v2 = FindVersion(*manager.snapshot(), "web", 2);
    ASSERT_NE(v2, nullptr);
    EXPECT_EQ(v2->state, VersionState::kFailed);
  }
  // The copy completes: loaded, and no failure was ever counted.
  WriteRawModelFile(base.path(), "web", 2, *bytes);
  EXPECT_EQ(manager.Scan().loaded, 1u);
  EXPECT_EQ(observer.loads("web", false), 0);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 2));

  // Version 3 is being copied while 4 and 5 are published atomically.
  WriteRawModelFile(base.path(), "web", 3, bytes->substr(0, 10));
  manager.Scan();
  WriteTestModel(base.path(), "web", 4);
  WriteTestModel(base.path(), "web", 5);
  WriteRawModelFile(base.path(), "web", 3, bytes->substr(0, 20));  // growing
  manager.Scan();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(4, 5));
  // Its copy completes: outside the window, it is simply not listed (not
  // FAILED with the error of a file that no longer exists).
  WriteRawModelFile(base.path(), "web", 3,
                    *SerializeModel(plrank::testing::TestEnsemble(3)));
  manager.Scan();
  EXPECT_EQ(FindVersion(*manager.snapshot(), "web", 3), nullptr);
  EXPECT_EQ(observer.loads("web", false), 0);
  // Should the window reach it again, it loads.
  std::filesystem::remove_all(base.path() + "/web/5");
  manager.Scan();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(3, 4));
}

// A broken file counts one failure per content: an incomplete one once a
// scan finds it unchanged, an invalid one at once; touching it, or copying
// the same bytes again, neither retries nor counts again.
TEST(VersionManagerTest, LoadFailureCountsOncePerFileContent) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  RecordingObserver observer;
  VersionManager manager({base.path(), "", &observer});
  manager.Scan();
  const std::string path =
      WriteRawModelFile(base.path(), "web", 2, "not a model");
  EXPECT_EQ(manager.Scan().failed, 1u);
  EXPECT_EQ(observer.loads("web", false), 0);  // maybe a copy in progress
  EXPECT_EQ(manager.Scan().failed, 0u);
  EXPECT_EQ(observer.loads("web", false), 1);  // unchanged: a real failure
  manager.Scan();
  EXPECT_EQ(observer.loads("web", false), 1);
  // Same content, new inode and mtime: not retried, not counted again.
  std::filesystem::remove(path);
  WriteRawModelFile(base.path(), "web", 2, "not a model");
  EXPECT_EQ(manager.Scan().failed, 0u);
  EXPECT_EQ(observer.loads("web", false), 1);
  // A complete but invalid model counts at once.
  WriteRawModelFile(base.path(), "web", 2,
                    plrank::testing::ModelBytesDeclaringFeatures(
                        plrank::testing::TestEnsemble(2), 50000000));
  EXPECT_EQ(manager.Scan().failed, 1u);
  EXPECT_EQ(observer.loads("web", false), 2);
  EXPECT_THAT(FindVersion(*manager.snapshot(), "web", 2)->error,
              HasSubstr("above the limit"));
}

}  // namespace
}  // namespace plrank::server

namespace plrank::server {
namespace {

// Issue 39 item 5: a config rewritten in place is empty for a moment; read
// then, it used to remove every model.
TEST(VersionManagerReliabilityTest, EmptyConfigIsAFailedReload) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  WriteTestModel(repo, "web", 1);
  const std::string config = base.File("config.txt");
  WriteConfig(config, "models { name: 'web' }");
  VersionManager manager({repo, config, nullptr});
  ASSERT_TRUE(manager.Scan().status.ok());
  for (const char* empty : {"", "  \n\t\n"}) {
    WriteConfig(config, empty);
    manager.Scan();
    EXPECT_THAT(Available(manager, "web"), ElementsAre(1)) << "'" << empty << "'";
  }
  // "No models" is said with a comment, and (dropping a model) takes effect
  // at the second scan that reads it.
  WriteConfig(config, "# no models\n");
  manager.Scan();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  manager.Scan();
  EXPECT_EQ(manager.snapshot()->models.count("web"), 0u);
}

// A file cut between two model blocks parses; the models it lost stay until
// a second scan reads the same content (a writer would have finished).
TEST(VersionManagerReliabilityTest, ConfigCutBetweenModelBlocksIsNotApplied) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  WriteTestModel(repo, "web", 1);
  WriteTestModel(repo, "news", 1);
  const std::string config = base.File("config.txt");
  const std::string full = "models { name: 'web' }\nmodels { name: 'news' }\n";
  WriteConfig(config, full);
  VersionManager manager({repo, config, nullptr});
  manager.Scan();
  ASSERT_THAT(Available(manager, "news"), ElementsAre(1));
  WriteConfig(config, full.substr(0, full.find('\n') + 1));  // cut
  manager.Scan();
  EXPECT_THAT(Available(manager, "news"), ElementsAre(1));
  WriteConfig(config, full);  // the writer finishes
  manager.Scan();
  manager.Scan();
  EXPECT_THAT(Available(manager, "news"), ElementsAre(1));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
}

// Issue 39 item 6: a label moved to a version not yet on disk stays on its
// previous version (kept loaded) until the new one is available.
TEST(VersionManagerReliabilityTest, LabelWaitsForItsVersionToAppear) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  for (int v : {1, 2}) WriteTestModel(repo, "web", v);
  const std::string config = base.File("config.txt");
  const auto labelled = [](int version) {
    return "models { name: 'web' version_policy { latest { num_versions: 1 "
           "} } version_labels { key: 'stable' value: " +
           std::to_string(version) + " } }";
  };
  WriteConfig(config, labelled(1));
  VersionManager manager({repo, config, nullptr});
  manager.Scan();
  ASSERT_EQ((*manager.snapshot()->Resolve(Spec("web", 0, "stable")))->version(),
            1);
  WriteConfig(config, labelled(3));  // version 3 is not on disk yet
  manager.Scan();
  auto stable = manager.snapshot()->Resolve(Spec("web", 0, "stable"));
  ASSERT_TRUE(stable.ok()) << stable.status();
  EXPECT_EQ((*stable)->version(), 1);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1, 2));
  WriteTestModel(repo, "web", 3);
  manager.Scan();
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web", 0, "stable")))->version(),
            3);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(3));
}

// Issue 39 item 4: the directory holding version 1 replaced by one holding
// only version 2: version 2 loads before version 1 leaves, so no snapshot
// published during the scan lacks a serving version.
TEST(VersionManagerReliabilityTest, ReplacedVersionServesUntilItsSuccessorLoads) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  VersionManager manager({base.path(), "", nullptr});
  manager.Scan();
  std::vector<int64_t> served;  // per published snapshot; -1 = none
  manager.SetListener([&](const ServingSnapshot& snapshot) {
    auto version = snapshot.Resolve(Spec("web"));
    served.push_back(version.ok() ? (*version)->version() : -1);
  });
  const std::string staging = base.path() + "/.staging";
  WriteTestModel(staging, "web", 2);
  std::filesystem::remove_all(base.path() + "/web");
  std::filesystem::rename(staging + "/web", base.path() + "/web");
  const ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 1u);
  EXPECT_EQ(summary.unloaded, 1u);
  ASSERT_FALSE(served.empty());
  EXPECT_THAT(served, Not(::testing::Contains(-1)));
  EXPECT_EQ(served.back(), 2);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(2));
}

// A vanished model (or a model's only version) keeps serving for the grace
// period, and is back to normal when it reappears.
TEST(VersionManagerReliabilityTest, VanishedModelKeepsServingForTheGrace) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  WriteTestModel(base.path(), "news", 1);
  VersionManager manager({base.path(), "", nullptr, absl::Hours(1)});
  manager.Scan();
  std::filesystem::rename(base.path() + "/news", base.path() + "/.news");
  std::filesystem::rename(base.path() + "/web/1", base.path() + "/web/.1");
  manager.Scan();
  EXPECT_THAT(Available(manager, "news"), ElementsAre(1));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  std::filesystem::rename(base.path() + "/.news", base.path() + "/news");
  std::filesystem::rename(base.path() + "/web/.1", base.path() + "/web/1");
  const ScanSummary summary = manager.Scan();
  EXPECT_EQ(summary.loaded, 0u);  // never left
  EXPECT_THAT(Available(manager, "news"), ElementsAre(1));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  // Without a grace period they go at the first scan that misses them.
  VersionManager eager({base.path(), "", nullptr});
  eager.Scan();
  std::filesystem::remove_all(base.path() + "/news");
  eager.Scan();
  EXPECT_EQ(eager.snapshot()->models.count("news"), 0u);
}

}  // namespace
}  // namespace plrank::server

namespace plrank::server {
namespace {

// Issue 39 item 7: a huge (here sparse) model.pb is refused by its size
// before it is read; the serving version is untouched.
TEST(VersionManagerReliabilityTest, OversizedModelFileFailsUnread) {
  TempDir base;
  WriteTestModel(base.path(), "web", 1);
  const std::string path = WriteRawModelFile(base.path(), "web", 2, "x");
  std::filesystem::resize_file(path, uint64_t{64} << 20);  // sparse 64 MiB
  VersionManager manager({base.path(), "", nullptr, absl::ZeroDuration(),
                          /*max_model_file_bytes=*/1 << 20});
  manager.Scan();
  const VersionStatus* status = FindVersion(*manager.snapshot(), "web", 2);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->state, VersionState::kFailed);
  EXPECT_THAT(status->error, HasSubstr("is 67108864 bytes, above the limit of "
                                       "1048576"));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
}

TEST(ReadModelFileBytesTest, RefusesFilesAboveTheProtobufLimitBySize) {
  TempDir base;
  const std::string path = base.File("model.pb");
  std::ofstream(path) << "x";
  std::filesystem::resize_file(path, kMaxModelFileBytes + 1);  // sparse
  const absl::StatusOr<std::string> bytes = ReadModelFileBytes(path);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(bytes.status().message(), HasSubstr("protobuf's message limit"));
}

}  // namespace
}  // namespace plrank::server

namespace plrank::server {
namespace {

// Issue 39 item 10: each loaded version reports the memory it holds, and a
// version that would take the loaded versions past --max_loading_bytes is
// FAILED with the figures while the serving one is untouched.
TEST(VersionManagerReliabilityTest, LoadBudgetRefusesAVersionThatDoesNotFit) {
  TempDir base;
  const std::string first = WriteTestModel(base.path(), "web", 1);
  const uint64_t estimate =
      std::filesystem::file_size(first) * kEstimatedMemoryPerFileByte;
  VersionManager manager({base.path(), "", nullptr, absl::ZeroDuration(),
                          kMaxModelFileBytes,
                          /*max_loading_bytes=*/estimate + 1});
  manager.Scan();
  const VersionStatus* v1 = FindVersion(*manager.snapshot(), "web", 1);
  ASSERT_NE(v1, nullptr);
  ASSERT_EQ(v1->state, VersionState::kAvailable);
  EXPECT_GT(v1->metadata.memory_bytes, 0u);

  WriteTestModel(base.path(), "web", 2);
  manager.Scan();
  const VersionStatus* v2 = FindVersion(*manager.snapshot(), "web", 2);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->state, VersionState::kFailed);
  EXPECT_THAT(v2->error, HasSubstr("above --max_loading_bytes="));
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  EXPECT_EQ((*manager.snapshot()->Resolve(Spec("web")))->version(), 1);
  // Retried at every scan: once version 1 is gone, version 2 fits.
  std::filesystem::remove_all(base.path() + "/web/1");
  manager.Scan();  // version 1 leaves (nothing else serves: grace 0)
  manager.Scan();
  EXPECT_THAT(Available(manager, "web"), ElementsAre(2));
}

}  // namespace
}  // namespace plrank::server

namespace plrank::server {
namespace {

// Issue 39 item 11: many broken versions do not grow status without bound.
TEST(VersionManagerReliabilityTest, FailedVersionsInStatusAreBounded) {
  TempDir base;
  const std::string repo = base.path() + "/repo";
  WriteTestModel(repo, "web", 1);
  for (int v = 2; v <= 40; ++v) WriteRawModelFile(repo, "web", v, "broken");
  const std::string config = base.File("config.txt");
  WriteConfig(config, "models { name: 'web' version_policy { all {} } }");
  VersionManager manager({repo, config, nullptr});
  manager.Scan();
  const ModelStatus& status = manager.snapshot()->models.at("web").status;
  size_t failed = 0;
  for (const VersionStatus& version : status.versions) {
    if (version.state == VersionState::kFailed) {
      ++failed;
      EXPECT_GT(version.version, 40 - static_cast<int64_t>(
                                          kFailedVersionsInStatus));
    }
  }
  EXPECT_EQ(failed, kFailedVersionsInStatus);
  EXPECT_THAT(Available(manager, "web"), ElementsAre(1));
  // Not retried: the next scan fails nothing new.
  EXPECT_EQ(manager.Scan().failed, 0u);
}

}  // namespace
}  // namespace plrank::server
