// Fuzzes the XGBoost model importer (core/import/xgboost_import.h:
// ImportXgboostJsonModel; plrank-convert's path). The whole input is the
// model file: JSON, or UBJSON when its bytes say so (seeds of both).
// Invariants: no exception escapes (libFuzzer reports an uncaught one as a
// crash); an imported model passes ValidateEnsemble, serializes, parses
// back, flattens, and scores an all-zero and an all-missing row finite
// (fuzz/accepted_model.h).

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/import/xgboost_import.h"
#include "fuzz/accepted_model.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<plrank::Ensemble> model =
      plrank::ImportXgboostJsonModel(json);
  if (!model.ok()) {
    PLRANK_FUZZ_CHECK(!model.status().message().empty(),
                      "an error without a message");
    return 0;
  }
  plrank::fuzz::CheckAcceptedModel(*model, "the XGBoost importer");
  return 0;
}
