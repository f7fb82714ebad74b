#include "trainer/params/train_params.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "absl/flags/marshalling.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/pipeline/linear_trainers.h"

namespace plrank::cli {
namespace {

template <typename T>
constexpr TrainParamType TypeOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return TrainParamType::kBool;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return TrainParamType::kInt32;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return TrainParamType::kUint64;
  } else if constexpr (std::is_same_v<T, double>) {
    return TrainParamType::kDouble;
  } else {
    static_assert(std::is_same_v<T, std::string>, "unsupported type");
    return TrainParamType::kString;
  }
}

std::vector<TrainParam>* BuildTable() {
  auto* table = new std::vector<TrainParam>;
#define PLRANK_TRAIN_PARAM(type, name, default_value, group, range, lightgbm, \
                           ...)                                               \
  table->push_back(TrainParam{#name, TypeOf<type>(), TrainParamGroup::group,  \
                              absl::UnparseFlag(type(default_value)), range,  \
                              lightgbm, std::string(__VA_ARGS__)});
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
  return table;
}

}  // namespace

const std::vector<TrainParam>& TrainParams() {
  static const std::vector<TrainParam>* const table = BuildTable();
  return *table;
}

const TrainParam* FindTrainParam(absl::string_view name) {
  for (const TrainParam& param : TrainParams()) {
    if (param.name == name) return &param;
  }
  return nullptr;
}

const char* TrainParamTypeName(TrainParamType type) {
  switch (type) {
    case TrainParamType::kBool:
      return "bool";
    case TrainParamType::kInt32:
      return "int32";
    case TrainParamType::kUint64:
      return "uint64";
    case TrainParamType::kDouble:
      return "double";
    case TrainParamType::kString:
      return "string";
  }
  return "?";
}

std::string TrainParamFlagHelp(absl::string_view name) {
  const TrainParam* param = FindTrainParam(name);
  if (param == nullptr) return "";
  std::vector<std::string> notes;
  if (!param->range.empty()) notes.push_back(param->range);
  if (!param->lightgbm.empty()) {
    notes.push_back(absl::StrCat("LightGBM ", param->lightgbm));
  }
  if (notes.empty()) return param->help;
  return absl::StrCat(param->help, " [", absl::StrJoin(notes, "; "), "]");
}

absl::Status SetTrainParam(absl::string_view name, absl::string_view text,
                           TrainParamValues* values) {
  std::string error;
#define PLRANK_TRAIN_PARAM(type, param, ...)                              \
  if (name == #param) {                                                   \
    if (!absl::ParseFlag(text, &values->param, &error)) {                 \
      return absl::InvalidArgumentError(                                  \
          absl::StrCat("parameter ", name, "='", text, "': not a valid ", \
                       TrainParamTypeName(TypeOf<type>()),                \
                       error.empty() ? "" : ": ", error));                \
    }                                                                     \
    values->given.emplace(name);                                          \
    return absl::OkStatus();                                              \
  }
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
  return absl::NotFoundError(
      absl::StrCat("'", name, "' is not a training parameter"));
}

std::vector<std::pair<std::string, std::string>> TrainParamTexts(
    const TrainParamValues& values) {
  std::vector<std::pair<std::string, std::string>> texts;
#define PLRANK_TRAIN_PARAM(type, name, ...) \
  texts.emplace_back(#name, absl::UnparseFlag(values.name));
#include "trainer/params/train_params.inc"
#undef PLRANK_TRAIN_PARAM
  return texts;
}

}  // namespace plrank::cli
