// Fuzzes the server's model config reader (server/server_config.h:
// LoadServerConfig: protobuf text format + ValidateServerConfig), the
// version directory name parser, and listing a repository under an
// accepted config.
//
// Input: the config text (read from an in-memory file, as the server reads
// --model_config_file).
// Invariants: an accepted config validates, its model names are valid and
// unique, and ScanRepository over an empty base directory lists exactly its
// models with their labels; ParseVersionDirectoryName(s) > 0 only for the
// canonical decimal text of that number.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz/fuzz_util.h"
#include "server/lifecycle/model_repository.h"
#include "server/lifecycle/server_config.h"

namespace {

std::string EmptyBaseDirectory() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "plrank-fuzz-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

}  // namespace

[[maybe_unused]] static const bool kQuiet = plrank::fuzz::QuietProtobufLogs();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using plrank::server::LoadServerConfig;
  static plrank::fuzz::MemFile* file =
      new plrank::fuzz::MemFile("models.textproto");
  static const std::string* base = new std::string(EmptyBaseDirectory());
  const std::string text(reinterpret_cast<const char*>(data), size);

  const std::string line = text.substr(0, text.find('\n'));
  const int64_t version = plrank::server::ParseVersionDirectoryName(line);
  PLRANK_FUZZ_CHECK(version >= 0, "negative version");
  if (version > 0) {
    PLRANK_FUZZ_CHECK(std::to_string(version) == line,
                      "a non-canonical version name was accepted");
  }

  file->Set(text);
  absl::StatusOr<plrank::v1::ServerConfig> config =
      LoadServerConfig(file->path());
  if (!config.ok()) {
    PLRANK_FUZZ_CHECK(!config.status().message().empty(),
                      "an error without a message");
    return 0;
  }
  PLRANK_FUZZ_CHECK(plrank::server::ValidateServerConfig(*config).ok(),
                    "LoadServerConfig accepted an invalid config");
  // Only the names and policies matter here: per-model base paths would
  // make the scan list arbitrary directories of this machine.
  plrank::v1::ServerConfig local = *config;
  for (plrank::v1::ModelConfig& model : *local.mutable_models()) {
    PLRANK_FUZZ_CHECK(plrank::server::IsValidModelName(model.name()),
                      model.name());
    model.clear_base_path();
  }
  auto listed = plrank::server::ScanRepository(*base, &local);
  PLRANK_FUZZ_CHECK(listed.ok(), listed.status().ToString());
  PLRANK_FUZZ_CHECK(listed->size() == static_cast<size_t>(local.models_size()),
                    "the scan lost or invented a model");
  for (const plrank::server::ModelOnDisk& model : *listed) {
    PLRANK_FUZZ_CHECK(model.versions.empty(), "versions in an empty directory");
  }
  return 0;
}
