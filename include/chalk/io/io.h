// Reading models and systems from files and from the built-in catalogs. The only layer
// that knows JSON (DESIGN.md section 2). Every function throws InputError naming the
// file and field on bad input.
#pragma once

#include <optional>
#include <cstdint>
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

/// A built-in model name (`chalk models`, any case), a HF repo id resolve_model_name
/// maps to one, a path to an HF config.json or a native model file (told apart by the
/// "format" key), or a directory: a HF snapshot holding config.json, or a HF cache folder
/// models--ORG--NAME whose refs/main names the snapshot (no network). Throws InputError
/// ("--model") naming the nearest built-in names when nothing matches.
ModelSpec load_model(const std::string& name_or_path);

/// The built-in model `text` names, if any: its name in any case; or a HF repo id ORG/NAME
/// (not an existing path) whose NAME, lower-cased, less a "meta-" prefix and variant
/// suffixes (-instruct, -chat, -base, -hf, -fp8, -bf16, -it, -thinking, release tags such
/// as -2507 or -v0.1), is a built-in name: meta-llama/Llama-3.1-70B-Instruct ->
/// llama-3.1-70b, deepseek-ai/DeepSeek-V3 -> deepseek-v3. Those suffixes do not change
/// the architecture config.json describes. At each of those steps (the whole name, NAME,
/// NAME less each suffix) a name in builtin_model_aliases() maps to its model
/// (meta-llama/Llama-3.3-70B-Instruct needs none; deepseek-ai/DeepSeek-R1-Distill-Llama-70B
/// -> llama-3.3-70b), or, for an alias that refuses, throws InputError("--model") with
/// the reason (Mistral-7B-v0.1's sliding window is not the built-in v0.3's). Suffixes of
/// quantized copies (-fp8, -fp8-dynamic, -awq-int4, -fp4, -nvfp4, -gptq, -quantized.w4a16,
/// ...) are variants too: load_model then applies the format the name marks.
std::optional<std::string> resolve_model_name(const std::string& text);

/// A name people type for a built-in model (data/models/aliases.json): `name` lower-cased;
/// either `model`, the built-in model whose architecture it has, with `source` saying so,
/// or `refuse`, why no built-in model describes it (its architecture differs).
struct ModelAlias {
  std::string name;
  std::string model;
  std::string source;
  std::string refuse;
};

/// Parses a chalk-model-aliases/1 table (`where` names it in errors). Throws InputError
/// naming the entry ("<where>: aliases[3].model") when an entry is not an object of known
/// keys, its name is empty, not lower-case, listed twice or already a name in `models`, it
/// has both or neither of model and refuse, or its model is not in `models`.
std::vector<ModelAlias> model_aliases_from_json(std::string_view text, const std::string& where,
                                                const std::vector<std::string>& models);

/// The built-in alias table (data/models/aliases.json), in file order, checked against
/// builtin_model_names().
std::vector<ModelAlias> builtin_model_aliases();

/// The built-in system `text` names, if any: its name in any case, or a common alias
/// (h100 -> h100-sxm, gb200 -> gb200-nvl72, v5e -> tpu-v5e, ...).
std::optional<std::string> resolve_system_name(const std::string& text);

/// The `count` names nearest `text`: those containing it (or contained in it) first, then
/// by edit distance (case-insensitive).
std::vector<std::string> nearest_names(const std::string& text, const std::vector<std::string>& names, std::size_t count);

/// Builds a SystemSpec from chalk's hardware format ("format": "chalk-hardware/1").
/// Unknown keys are errors.
SystemSpec system_from_json(std::string_view json_text, const std::string& where);

/// A built-in system name or alias (`chalk hardware`, any case; resolve_system_name) or a
/// path to a hardware file. Throws InputError ("--hardware") naming the nearest names.
SystemSpec load_system(const std::string& name_or_path);

/// Names of the built-in models and systems, sorted.
std::vector<std::string> builtin_model_names();
std::vector<std::string> builtin_system_names();

/// The largest input file read_file takes by default: 64 MiB (a model config, hardware file,
/// price sheet or measurements CSV is kilobytes; a trace passes its own, larger limit).
inline constexpr std::uintmax_t max_input_file_bytes = 64ull << 20;

/// Reads a whole regular file of at most `max_bytes`. Throws InputError(path, ...) when it
/// does not exist, is a directory, is not a regular file (a FIFO, /dev/zero: never opened,
/// so never a hang) or is larger than `max_bytes` (also when it grows past it while read).
std::string read_file(const std::string& path, std::uintmax_t max_bytes = max_input_file_bytes);

}  // namespace chalk
