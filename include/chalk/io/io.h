// Reading models and systems from files and from the built-in catalogs. The only layer
// that knows JSON (DESIGN.md section 2). Every function throws InputError naming the
// file and field on bad input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chalk/hardware/hardware.h"
#include "chalk/model/model.h"

namespace chalk {

/// Builds a ModelSpec from the text of a HuggingFace config.json. Supported model_type
/// values: llama, mistral, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, deepseek_v2,
/// deepseek_v3, kimi_k2, gpt_oss. Unknown keys are ignored (HF configs carry many);
/// a missing required field or an unsupported model_type or quant_method is an error
/// naming it. `where` names the input in messages (a path or a catalog name).
ModelSpec model_from_hf_config(std::string_view json_text, const std::string& name, const std::string& where);

/// Builds a ModelSpec from chalk's native model format ("format": "chalk-model/1"; see
/// docs/file-formats.md) for models without an HF config. Unknown keys are errors.
ModelSpec model_from_native(std::string_view json_text, const std::string& where);

/// A built-in model name (`chalk models`) or a path to an HF config.json or a native
/// model file (told apart by the "format" key).
ModelSpec load_model(const std::string& name_or_path);

/// Builds a SystemSpec from chalk's hardware format ("format": "chalk-hardware/1").
/// Unknown keys are errors.
SystemSpec system_from_json(std::string_view json_text, const std::string& where);

/// A built-in system name (`chalk hardware`) or a path to a hardware file.
SystemSpec load_system(const std::string& name_or_path);

/// Names of the built-in models and systems, sorted.
std::vector<std::string> builtin_model_names();
std::vector<std::string> builtin_system_names();

/// Reads a whole file; throws InputError(path, "cannot read ...") when it cannot.
std::string read_file(const std::string& path);

}  // namespace chalk
