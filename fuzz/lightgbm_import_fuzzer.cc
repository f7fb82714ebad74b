// Fuzzes the LightGBM text model importer (core/import/lightgbm_import.h:
// ImportLightgbmModel; plrank-convert's path). Input: one option byte, then
// the model text. The option byte's low bit picks first_feature_column (1,
// LETOR-trained models, or 0), so both column mappings are reached.
// Invariants: no exception escapes (libFuzzer reports an uncaught one as a
// crash); a refusal carries a message naming the input; an imported model
// passes ValidateEnsemble, serializes, parses back, flattens, and scores an
// all-zero and an all-missing row finite (fuzz/accepted_model.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/import/lightgbm_import.h"
#include "fuzz/accepted_model.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  plrank::LightgbmImportOptions options;
  options.first_feature_column = data[0] & 1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  absl::StatusOr<plrank::Ensemble> model =
      plrank::ImportLightgbmModel(text, "fuzz.txt", options);
  if (!model.ok()) {
    PLRANK_FUZZ_CHECK(
        model.status().message().find("fuzz.txt") != std::string_view::npos,
        "an error that does not name the input: " +
            std::string(model.status().message()));
    return 0;
  }
  plrank::fuzz::CheckAcceptedModel(*model, "the LightGBM importer");
  return 0;
}
