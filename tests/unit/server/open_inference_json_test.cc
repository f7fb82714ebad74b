// The Open Inference Protocol's pieces that need no server: the REST JSON
// conversions, the version-string selector and the HTTP status mapping.

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http/http_api.h"
#include "server/http/kserve_json.h"
#include "server/kserve/open_inference.h"

namespace plrank::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(InferRequestFromJsonTest, ReadsNestedAndFlatDataRowMajor) {
  auto request = InferRequestFromJson(
      R"({"id": "r", "inputs": [
            {"name": "features", "datatype": "FP32", "shape": [2, 2],
             "data": [[1, 2.5], [null, -4]]},
            {"name": "query_offsets", "datatype": "INT64", "shape": [2],
             "data": [0, 1]}],
          "outputs": [{"name": "scores"}]})",
      "web", "3");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->model_name(), "web");
  EXPECT_EQ(request->model_version(), "3");
  EXPECT_EQ(request->id(), "r");
  const auto& values = request->inputs(0).contents().fp32_contents();
  ASSERT_EQ(values.size(), 4);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 2.5f);
  EXPECT_TRUE(std::isnan(values[2]));  // null = missing
  EXPECT_EQ(values[3], -4.0f);
  EXPECT_THAT(request->inputs(0).shape(), ElementsAre(2, 2));
  EXPECT_THAT(request->inputs(1).contents().int64_contents(),
              ElementsAre(0, 1));
  EXPECT_EQ(request->outputs(0).name(), "scores");
}

TEST(InferRequestFromJsonTest, RefusesWhatIsNotARequestNamingTheField) {
  struct Case {
    std::string body;
    std::string message;
  };
  const Case cases[] = {
      {"{", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"inputs": 1})", "inputs"},
      {R"({"inputs": [{"datatype": "FP32", "shape": [1], "data": [1]}]})",
       "inputs[0].name"},
      {R"({"inputs": [{"name": "f", "datatype": "FP32", "shape": [1.5],
           "data": [1]}]})",
       "inputs[0].shape"},
      {R"({"inputs": [{"name": "f", "datatype": "FP32", "shape": [1],
           "data": ["x"]}]})",
       "inputs[0].data holds a non-number"},
      {R"({"inputs": [{"name": "f", "datatype": "INT32", "shape": [1],
           "data": [4294967296]}]})",
       "INT32"},
      {R"({"inputs": [{"name": "f", "datatype": "BYTES", "shape": [1],
           "data": ["x"]}]})",
       "not supported"},
      {std::string(40, '[') + std::string(40, ']'), "deeper than 32"},
  };
  for (const Case& c : cases) {
    auto request = InferRequestFromJson(c.body, "web", "");
    ASSERT_FALSE(request.ok()) << c.body;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(request.status().message(), HasSubstr(c.message)) << c.body;
  }
  // Brackets inside strings do not count as nesting.
  EXPECT_TRUE(InferRequestFromJson(
                  R"({"id": ")" + std::string(40, '[') + R"(", "inputs": []})",
                  "web", "")
                  .ok());
}

TEST(InferResponseToJsonTest, WritesTensorsAndNanAsNull) {
  inference::ModelInferResponse response;
  response.set_model_name("web");
  response.set_model_version("2");
  auto* scores = response.add_outputs();
  scores->set_name("scores_fp64");
  scores->set_datatype("FP64");
  scores->add_shape(2);
  scores->mutable_contents()->add_fp64_contents(0.1);
  scores->mutable_contents()->add_fp64_contents(std::nan(""));
  auto* order = response.add_outputs();
  order->set_name("order");
  order->set_datatype("INT64");
  order->add_shape(2);
  order->mutable_contents()->add_int64_contents(1);
  order->mutable_contents()->add_int64_contents(0);
  EXPECT_EQ(InferResponseToJson(response),
            R"({"model_name":"web","model_version":"2","outputs":[)"
            R"({"data":[0.1,null],"datatype":"FP64","name":"scores_fp64","shape":[2]},)"
            R"({"data":[1,0],"datatype":"INT64","name":"order","shape":[2]}]})");
}

TEST(ErrorJsonTest, EscapesAndSurvivesInvalidUtf8) {
  EXPECT_EQ(ErrorJson("a \"b\""), R"({"error":"a \"b\""})");
  EXPECT_THAT(ErrorJson("model '\xff'"), HasSubstr("\"error\""));
}

TEST(InferenceSelectorTest, EmptyDigitsOrLabel) {
  auto latest = InferenceSelector("web", "");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->version, 0);
  EXPECT_EQ(latest->label, "");
  auto pinned = InferenceSelector("web", "12");
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->version, 12);
  auto labelled = InferenceSelector("web", "stable");
  ASSERT_TRUE(labelled.ok());
  EXPECT_EQ(labelled->version, 0);
  EXPECT_EQ(labelled->label, "stable");
  EXPECT_EQ(InferenceSelector("web", "0").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InferenceSelector("web", "99999999999999999999").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InferenceSelector("", "1").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HttpStatusOfTest, FollowsTheGrpcCodes) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
}

}  // namespace
}  // namespace plrank::server
