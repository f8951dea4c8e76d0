// Fuzzes the matcher of quantization exclusion lists (src/io/hf_module_matcher.cc): the
// input's lines are the entries ("re:..." regular expressions, globs with * or ?, module
// names), its last line a module name. Beyond no crash and no timeout, each answer is
// checked against a plain reference: literal entries by the dot-boundary substring test,
// globs by a dynamic program, regular expressions by RE2 one entry at a time (the matcher
// joins them), and count_experts against matches() on every expert's name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "chalk/base/error.h"
#include "fuzz_common.h"
#include "hf_internal.h"

namespace {

bool ref_component(std::string_view name, std::string_view what) {
  for (size_t at = name.find(what); at != std::string_view::npos; at = name.find(what, at + 1)) {
    const size_t end = at + what.size();
    if ((at == 0 || name[at - 1] == '.') && (end == name.size() || name[end] == '.')) return true;
  }
  return false;
}

/// fnmatch's * and ? by the textbook table: ok[i][j] = p[0, i) matches s[0, j).
bool ref_glob(std::string_view p, std::string_view s) {
  std::vector<std::vector<char>> ok(p.size() + 1, std::vector<char>(s.size() + 1, 0));
  ok[0][0] = 1;
  for (size_t i = 1; i <= p.size(); ++i) {
    for (size_t j = 0; j <= s.size(); ++j) {
      if (p[i - 1] == '*') ok[i][j] = ok[i - 1][j] || (j > 0 && ok[i][j - 1]);
      else ok[i][j] = j > 0 && ok[i - 1][j - 1] && (p[i - 1] == '?' || p[i - 1] == s[j - 1]);
    }
  }
  return ok[p.size()][s.size()];
}

bool ref_matches(const std::vector<std::string>& entries, std::string_view name) {
  for (const auto& e : entries) {
    if (e.rfind("re:", 0) == 0) {
      RE2::Options o;
      o.set_log_errors(false);
      const RE2 re(e.substr(3), o);
      if (re.ok() && re.Match(re2::StringPiece(name.data(), name.size()), 0, name.size(), RE2::ANCHOR_START, nullptr, 0)) return true;
    } else if (e.find_first_of("*?") != std::string::npos) {
      if (ref_glob(e, name)) return true;
      for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
        if (ref_glob(e, name.substr(0, dot))) return true;
      }
    } else if (ref_component(name, e)) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  for (size_t i = 0;;) {
    const size_t nl = text.find('\n', i);
    lines.push_back(text.substr(i, nl == std::string::npos ? std::string::npos : nl - i));
    if (nl == std::string::npos) break;
    i = nl + 1;
  }
  const std::string name = lines.back();
  lines.pop_back();
  if (lines.size() > 64) return 0;
  std::vector<chalk::hf::ModuleMatcher> m;
  try {
    m.emplace_back(lines, "fuzz");
  } catch (const chalk::InputError&) {
    return 0;
  }
  const auto& matcher = m.front();
  if (name.size() > 512) {  // the references below are O(pattern x name) and more
    matcher.matches(name);
    return 0;
  }
  CHALK_FUZZ_CHECK(matcher.matches(name) == ref_matches(lines, name));
  // Each glob names the text it spells with * as nothing and ? as 'x'; each literal entry
  // of non-empty components names itself.
  for (const auto& e : lines) {
    if (e.rfind("re:", 0) == 0) continue;
    std::string spelt;
    for (const char c : e) {
      if (c != '*') spelt += c == '?' ? 'x' : c;
    }
    const bool whole = !e.empty() && e.front() != '.' && e.back() != '.' && e.find("..") == std::string::npos;
    if (e.find_first_of("*?") != std::string::npos || whole) CHALK_FUZZ_CHECK(spelt.empty() || matcher.matches(spelt));
  }
  // The experts of a layer: the name's text before and after its first run of digits (or
  // a fixed layer), as many experts as the name's length picks, each tried by name.
  std::string prefix = "model.layers.1.mlp.experts.", suffix = ".down_proj";
  const size_t d = name.find_first_of("0123456789");
  if (d != std::string::npos && d > 0 && name[d - 1] == '.') {
    const size_t e = name.find_first_not_of("0123456789", d);
    if (e != std::string::npos && name[e] == '.') prefix = name.substr(0, d), suffix = name.substr(e);
  }
  const int64_t copies = static_cast<int64_t>(name.size() % 7 == 0 ? 1 : (name.size() * 37) % 600);
  int64_t brute = 0;
  for (int64_t e = 0; e < copies; ++e) brute += matcher.matches(prefix + std::to_string(e) + suffix) ? 1 : 0;
  CHALK_FUZZ_CHECK(matcher.count_experts(prefix, suffix, copies) == brute);
  return 0;
}
