// The server's Prometheus metrics as the version manager's observer: series
// labelled with a version are dropped once that version is released, so
// reloads do not grow the exposition.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "server/lifecycle/version_manager.h"
#include "server/server_metrics.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/test_models.h"

namespace plrank::server {
namespace {

using ::plrank::testing::TempDir;
using ::plrank::testing::WriteTestModel;

// Value of a counter/gauge series in `metrics`' registry; -1 if absent.
double SeriesValue(const ServerMetrics& metrics, const std::string& name,
                   const std::map<std::string, std::string>& labels) {
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      std::map<std::string, std::string> found;
      for (const auto& label : metric.label) found[label.name] = label.value;
      if (found == labels) {
        return family.type == prometheus::MetricType::Counter
                   ? metric.counter.value
                   : metric.gauge.value;
      }
    }
  }
  return -1;
}

VersionSelector Web() { return {.name = "web", .label = {}}; }

// Issue 10 item 8: after many reloads status lists the serving versions and
// only the last few retired ones; series labelled with a released version
// are dropped from the metrics.
TEST(LifecycleMetricsTest, StatusAndVersionMetricsStayBoundedOverReloads) {
  TempDir base;
  ServerMetrics metrics("test");
  VersionManager manager({base.path(), "", &metrics});
  for (int v = 1; v <= 30; ++v) {
    WriteTestModel(base.path(), "web", v);
    manager.Scan();
    auto version = manager.snapshot()->Resolve(Web());
    ASSERT_TRUE(version.ok());
    metrics.RecordRequest("Rank", "web", (*version)->version_string(), "OK",
                          0.001, 3);
    metrics.RecordScoring("web", (*version)->version_string(), 0.001);
  }
  const ModelStatus& status = manager.snapshot()->models.at("web").status;
  EXPECT_EQ(static_cast<int>(status.versions.size()),
            2 + static_cast<int>(kRetiredVersionsInStatus));
  EXPECT_EQ(status.versions[0].version, 30 - 2 - kRetiredVersionsInStatus + 1);
  const std::map<std::string, std::string> old_request = {
      {"method", "Rank"}, {"model", "web"}, {"version", "5"}, {"code", "OK"}};
  const std::map<std::string, std::string> live_request = {
      {"method", "Rank"}, {"model", "web"}, {"version", "30"}, {"code", "OK"}};
  EXPECT_EQ(SeriesValue(metrics, "plrank_requests_total", old_request), -1);
  EXPECT_EQ(SeriesValue(metrics, "plrank_requests_total", live_request), 1);
  int series = 0;
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name == "plrank_requests_total" ||
        family.name == "plrank_scoring_duration_seconds") {
      series += static_cast<int>(family.metric.size());
    }
  }
  EXPECT_EQ(series, 4);  // versions 29 and 30, one of each
}

// Loads, failures, the loaded-version count and a version's info reach
// their series through the observer interface.
TEST(LifecycleMetricsTest, ObserverCallsReachTheirSeries) {
  TempDir base;
  ServerMetrics metrics("test");
  VersionManager manager({base.path(), "", &metrics});
  WriteTestModel(base.path(), "web", 1);
  plrank::testing::WriteRawModelFile(base.path(), "web", 2, "not a model");
  manager.Scan();
  manager.Scan();  // an incomplete file's failure counts once it stays
  EXPECT_EQ(SeriesValue(metrics, "plrank_model_loads_total",
                        {{"model", "web"}, {"result", "success"}}),
            1);
  EXPECT_EQ(SeriesValue(metrics, "plrank_model_loads_total",
                        {{"model", "web"}, {"result", "failure"}}),
            1);
  EXPECT_EQ(
      SeriesValue(metrics, "plrank_model_versions_loaded", {{"model", "web"}}),
      1);
  EXPECT_EQ(SeriesValue(
                metrics, "plrank_model_version_info",
                {{"model", "web"},
                 {"version", "1"},
                 {"objective", "plrank"},
                 {"checksum",
                  (*manager.snapshot()->Resolve(Web()))->metadata().checksum}}),
            1);
}

}  // namespace
}  // namespace plrank::server
