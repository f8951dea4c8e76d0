// The model an engine serves for what the user typed: a HuggingFace repository id or a local
// directory (data/models/repos.json names the repository of each built-in model).
#pragma once

#include <optional>
#include <string>

namespace chalk {

/// The HuggingFace repository whose weights the built-in model `name` (`chalk models`,
/// exactly) describes, from data/models/repos.json ("deepseek-v3" ->
/// "deepseek-ai/DeepSeek-V3"); nullopt for a model whose sources name no repository (the
/// papers' GPT-3, PaLM, Chinchilla) or a name that is not built in.
std::optional<std::string> builtin_model_repo(const std::string& name);

/// The repository a launch file serves for the built-in model `name`: the instruction-tuned
/// repository of data/models/served.json where builtin_model_repo is the pre-trained base
/// ("llama-3.1-70b" -> "meta-llama/Llama-3.1-70B-Instruct", what hosts serve; review 7 M4),
/// else builtin_model_repo. nullopt as builtin_model_repo.
std::optional<std::string> builtin_served_repo(const std::string& name);

/// An fp8 checkpoint of builtin_served_repo(name) (data/models/served.json "fp8":
/// "nvidia/Llama-3.1-70B-Instruct-FP8"), for engines that read the quantization from the
/// checkpoint (TensorRT-LLM); nullopt when chalk knows none.
std::optional<std::string> builtin_fp8_checkpoint(const std::string& name);

/// What an engine's launch command should name for `--model` text as the user wrote it
/// (load_model's rules): a HF cache folder models--ORG--NAME as its repo id ORG/NAME (the
/// engines find it in that cache); any other existing directory as is (a snapshot the engines
/// load from disk); an existing config.json's directory; a HF repo id ORG/NAME that is not a path as
/// typed (the user's variant, e.g. -Instruct, is the one to serve); an alias of
/// data/models/aliases.json that states a "repo" (other weights of a built-in architecture:
/// deepseek-r1-distill-llama-70b -> deepseek-ai/DeepSeek-R1-Distill-Llama-70B) that repo; a
/// built-in name (any case) its builtin_served_repo. nullopt when none is
/// known: a chalk-model file, or a built-in model without a repository. Never throws for an
/// unknown text (load_model reports those); returns nullopt.
std::optional<std::string> served_model(const std::string& model_text);

/// builtin_fp8_checkpoint of `model_text` when served_model serves a built-in name's
/// builtin_served_repo; nullopt for a path, a repo id as typed (the user's variant) or an
/// alias with its own weights. Never throws.
std::optional<std::string> served_fp8_checkpoint(const std::string& model_text);

/// Whether the engines must run code from the model's repository to load it: its HF
/// config.json carries an `auto_map` (transformers' AutoConfig/AutoModel/AutoTokenizer
/// classes that live in the repo, e.g. Kimi K2's configuration_deepseek.py and
/// tokenization_kimi.py), which vLLM, SGLang and TensorRT-LLM load only under
/// --trust-remote-code / --trust_remote_code (transformers' `trust_remote_code`, docs "Custom
/// models"). Reads the config of `model_text` as served_model resolves it: a config.json path,
/// a directory holding one, or a built-in model (its embedded HF config, data/models/hf/). A
/// chalk-model file, a repo id chalk has no config of, or an unreadable config: false. Never throws.
bool needs_remote_code(const std::string& model_text);

}  // namespace chalk
