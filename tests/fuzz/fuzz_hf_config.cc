// Fuzzes the HuggingFace config.json reader (and DeepSeek's inference config), then the
// counts every command forms from a model: each must be finite and non-negative.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chalk/base/error.h"
#include "chalk/io/io.h"
#include "chalk/model/model.h"
#include "fuzz_common.h"
#include "fuzz_model_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  chalk::ModelSpec m;
  try {
    m = chalk::model_from_hf_config(text, "fuzz", "fuzz.json");
  } catch (const chalk::InputError&) {
    return 0;
  }
  chalk::fuzz::check_model(m);
  return 0;
}
