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

/// What an engine's launch command should name for `--model` text as the user wrote it
/// (load_model's rules): a HF cache folder models--ORG--NAME as its repo id ORG/NAME (the
/// engines find it in that cache); any other existing directory as is (a snapshot the engines
/// load from disk); an existing config.json's directory; a HF repo id ORG/NAME that is not a path as
/// typed (the user's variant, e.g. -Instruct, is the one to serve); a built-in name (any
/// case, or a repo id resolve_model_name maps) its builtin_model_repo. nullopt when none is
/// known: a chalk-model file, or a built-in model without a repository. Never throws for an
/// unknown text (load_model reports those); returns nullopt.
std::optional<std::string> served_model(const std::string& model_text);

}  // namespace chalk
