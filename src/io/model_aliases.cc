// The built-in table of names people type for built-in models (data/models/aliases.json).
#include <algorithm>
#include <cctype>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "chalk/io/io.h"
#include "chalk/io/json_util.h"

namespace chalk {

std::vector<ModelAlias> model_aliases_from_json(std::string_view text, const std::string& where,
                                                const std::vector<std::string>& models) {
  const auto j = detail::parse_json(text, where);
  if (!j.is_object()) throw InputError(where, "expected a JSON object with \"format\" and \"aliases\"");
  const detail::Obj top(j, where + ": ");
  top.only({"format", "about", "aliases"});
  if (top.string("format") != "chalk-model-aliases/1") {
    throw InputError(top.field("format"), "expected \"chalk-model-aliases/1\", got '" + excerpt(top.string("format")) + "'");
  }
  const auto& list = top.raw("aliases");
  if (!list.is_array()) throw InputError(top.field("aliases"), "expected a list of {name, model, source} or {name, refuse}");
  std::vector<ModelAlias> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + ": aliases[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw InputError(at, "expected an object {name, model, source} or {name, refuse}");
    const detail::Obj e(list[i], at + ".");
    e.only({"name", "model", "source", "refuse", "repo"});
    ModelAlias a;
    a.name = e.string("name");
    std::string lowered = a.name;
    for (auto& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (a.name.empty() || lowered != a.name) {
      throw InputError(e.field("name"), "expected a non-empty lower-case name, got '" + excerpt(a.name) + "'");
    }
    if (std::find(models.begin(), models.end(), a.name) != models.end()) {
      throw InputError(e.field("name"), "'" + a.name + "' is already a built-in model name; an alias must name something else");
    }
    const bool refuses = e.has("refuse");
    if (refuses == e.has("model")) throw InputError(at, "expected exactly one of \"model\" (with \"source\") and \"refuse\"");
    if (refuses) {
      a.refuse = e.string("refuse");
      if (a.refuse.empty()) throw InputError(e.field("refuse"), "expected the reason, got an empty string");
      if (e.has("repo")) throw InputError(e.field("repo"), "a refused name serves nothing: remove \"repo\"");
    } else {
      a.model = e.string("model");
      a.source = e.string("source");
      if (std::find(models.begin(), models.end(), a.model) == models.end()) {
        throw InputError(e.field("model"), "'" + excerpt(a.model) + "' is not a built-in model");
      }
      if (a.source.empty()) throw InputError(e.field("source"), "expected why the architecture is the same, got an empty string");
      // "repo": the weights the name means when they are not the model's own (a distill of
      // another base): what launch files serve (model_repo.cc served_model).
      if (e.has("repo")) {
        const std::string repo = e.string("repo");
        if (std::count(repo.begin(), repo.end(), '/') != 1 || repo.front() == '/' || repo.back() == '/') {
          throw InputError(e.field("repo"), "expected a HF repo id ORG/NAME, got '" + excerpt(repo) + "'");
        }
      }
    }
    for (const auto& b : out) {
      if (b.name == a.name) throw InputError(e.field("name"), "'" + a.name + "' is listed twice");
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<ModelAlias> builtin_model_aliases() {
  const auto text = detail::embedded_file("models/aliases.json");
  if (!text) return {};
  return model_aliases_from_json(*text, "built-in models/aliases.json", builtin_model_names());
}

}  // namespace chalk
