#include <string>

#include "absl/status/status.h"
#include "core/metrics/ranking_metrics.h"
#include "gtest/gtest.h"

namespace plrank {
namespace {

TEST(MetricSpecTest, ParsesAndRoundTrips) {
  struct Case {
    const char* text;
    MetricSpec::Kind kind;
    int k;
    const char* name;
  };
  for (const Case& c : {Case{"ndcg@10", MetricSpec::Kind::kNdcg, 10, "ndcg@10"},
                        Case{"ndcg", MetricSpec::Kind::kNdcg, 0, "ndcg"},
                        Case{"err", MetricSpec::Kind::kErr, 0, "err"},
                        Case{"err@10", MetricSpec::Kind::kErr, 10, "err@10"},
                        Case{"map", MetricSpec::Kind::kMap, 0, "map"},
                        Case{" NDCG@3 ", MetricSpec::Kind::kNdcg, 3, "ndcg@3"},
                        Case{"map@5", MetricSpec::Kind::kMap, 5, "map@5"}}) {
    absl::StatusOr<MetricSpec> spec = ParseMetricSpec(c.text);
    ASSERT_TRUE(spec.ok()) << c.text << ": " << spec.status();
    EXPECT_EQ(spec->kind, c.kind) << c.text;
    EXPECT_EQ(spec->k, c.k) << c.text;
    EXPECT_EQ(spec->Name(), c.name);
    EXPECT_EQ(*ParseMetricSpec(spec->Name()), *spec);
  }
}

TEST(MetricSpecTest, RejectsBadText) {
  for (const char* text :
       {"", "auc", "ndcg@", "ndcg@0", "ndcg@-1", "ndcg@x", "err@1.5", "ndcg10",
        "map@3@4"}) {
    absl::StatusOr<MetricSpec> spec = ParseMetricSpec(text);
    EXPECT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace plrank
