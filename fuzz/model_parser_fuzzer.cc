// Fuzzes the model artifact reader and validator (core/model/model_io.h:
// ParseModel, which checks version, checksum, parse and ValidateEnsemble)
// and what the server does with an accepted model: flatten it
// (ForestScorer::Create) and score.
//
// Input: one mode byte, then bytes.
//   mode even: the bytes are a whole model file (ModelFile envelope).
//   mode odd:  the bytes are a Model payload; the harness wraps them in a
//              valid envelope (format version 1, correct FNV-1a checksum) so
//              mutations reach the payload parser and the validator instead
//              of dying at the checksum.
// Invariants of an accepted model: it re-serializes and parses back to the
// same bytes; it flattens; an all-zero and an all-missing row score finite
// (the validator bounds every path's leaf sum); the dump does not crash.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/model/checksum.h"
#include "core/model/model_io.h"
#include "fuzz/accepted_model.h"
#include "fuzz/fuzz_util.h"
#include "plrank/v1/model.pb.h"

[[maybe_unused]] static const bool kQuiet = plrank::fuzz::QuietProtobufLogs();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool wrap = (data[0] & 1) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  std::string file_bytes;
  if (wrap) {
    plrank::v1::ModelFile file;
    file.set_format_version(plrank::kModelFormatVersion);
    file.set_payload(std::string(bytes));
    file.set_checksum(plrank::Fnv1a64(bytes));
    file.set_checksum_algorithm(std::string(plrank::kChecksumAlgorithm));
    file_bytes = file.SerializeAsString();
  } else {
    file_bytes.assign(bytes);
  }

  absl::StatusOr<plrank::Ensemble> model =
      plrank::ParseModel(file_bytes, "fuzz.pb");
  if (!model.ok()) {
    PLRANK_FUZZ_CHECK(!model.status().message().empty(),
                      "an error without a message");
    return 0;
  }
  plrank::fuzz::CheckAcceptedModel(*model, "ParseModel");
  (void)plrank::DumpModel(*model);
  return 0;
}
