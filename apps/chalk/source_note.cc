// The source note a command prints under its table, shortened to the run's matmul format and
// a line or two (short_source_note; declared in deployment_options.h). Split from
// deployment_describe.cc.

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "deployment_options.h"

namespace chalk::cli {

namespace {
/// Byte offsets in `s` where a clause ends at parenthesis depth 0: "; " and ". ", and with
/// `commas` ", " too (the offset of the separator).
std::vector<std::size_t> top_level_clause_ends(const std::string& s, bool commas = false) {
  std::vector<std::size_t> out;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') depth = std::max(0, depth - 1);
    if (depth == 0 && (s[i] == ';' || s[i] == '.' || (commas && s[i] == ',')) && s[i + 1] == ' ') out.push_back(i);
  }
  return out;
}
}  // namespace

std::string short_source_note(const std::string& source, std::string_view precision, std::size_t budget) {
  // 1. The segment for the run's format where the source has one per format ("BF16: ...
  // FP8: ...", review 11a item 2: MI300X's FP8 derivation printed on a bf16 run).
  std::string label(precision);
  std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::vector<std::pair<std::size_t, std::string>> labels;  // offset of the text after "XX: ", the label
  for (const std::size_t end : top_level_clause_ends(source)) {
    for (const char* l : {"BF16", "FP8", "FP4", "INT8"}) {
      const std::string tag = std::string(l) + ": ";
      if (source.compare(end + 2, tag.size(), tag) == 0) labels.emplace_back(end + 2, l);
    }
  }
  for (const char* l : {"BF16", "FP8", "FP4", "INT8"}) {
    const std::string tag = std::string(l) + ": ";
    if (source.compare(0, tag.size(), tag) == 0) labels.insert(labels.begin(), {0, l});
  }
  std::string text = source;
  if (!labels.empty()) {
    std::size_t from = std::string::npos, to = source.size();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i].second == label) {
        from = labels[i].first + label.size() + 2;
        to = i + 1 < labels.size() ? labels[i + 1].first : source.size();
        break;
      }
    }
    // No segment of this format: the text before the first labelled one, when there is any.
    if (from == std::string::npos && labels.front().first > 0) from = 0, to = labels.front().first;
    if (from != std::string::npos) text = source.substr(from, to - from);
    while (!text.empty() && (text.back() == ' ' || text.back() == '.' || text.back() == ';')) text.pop_back();
  }
  // 2. Within it, the comma or semicolon parts that give another format's figure only (H100's
  // "..., FP8 1402.6/1979 = 70.9%" on a bf16 run) are left out.
  if (!label.empty()) {
    const auto names_other = [&](const std::string& part) {
      const std::regex word(R"re(\b(BF16|FP8|FP4|INT8)\b)re");
      bool other = false, own = false;
      for (std::sregex_iterator it(part.begin(), part.end(), word), end; it != end; ++it) (it->str() == label ? own : other) = true;
      return other && !own;
    };
    std::string kept;
    std::size_t from = 0;
    std::vector<std::size_t> ends = top_level_clause_ends(text, true);
    ends.push_back(text.size());
    for (const std::size_t end : ends) {
      const std::string part = text.substr(from, end - from);  // with its leading separator, if any
      if (!names_other(part)) kept += part;
      from = end;
    }
    if (!kept.empty()) {
      if (kept.size() >= 2 && kept[1] == ' ' && (kept[0] == ',' || kept[0] == ';' || kept[0] == '.')) kept.erase(0, 2);
      text = kept;
    }
  }
  // 3. Whole clauses while they fit the budget (the first always), then the pointer to the
  // doc section that holds the derivation, when the source names one.
  const std::regex doc_ref(R"re(docs/[\w./-]+\.md(?: "[^"]*"| '[^']*')?)re");
  std::string pointer;
  for (std::sregex_iterator it(source.begin(), source.end(), doc_ref), end; it != end; ++it) pointer = it->str();
  if (text.size() <= budget) {
    if (!pointer.empty() && text.find(pointer) == std::string::npos && text.size() + pointer.size() + 2 <= budget) text += "; " + pointer;
    return text;
  }
  // The longest run of whole clauses that fits, else of comma-separated parts, else the first part.
  const std::size_t room = (pointer.empty() ? 0 : pointer.size() + 2) + 17;  // "; " + pointer + "; in full: --json"
  std::size_t cut = std::string::npos;
  for (const bool commas : {false, true}) {
    for (const std::size_t end : top_level_clause_ends(text, commas)) {
      if (end + room <= budget) cut = end;
    }
    if (cut != std::string::npos) break;
  }
  if (cut == std::string::npos && !top_level_clause_ends(text, true).empty()) cut = top_level_clause_ends(text, true).front();
  std::string out = cut == std::string::npos ? text : text.substr(0, cut);
  if (!pointer.empty() && out.find(pointer) == std::string::npos) out += "; " + pointer;
  return out + "; in full: --json";
}

}  // namespace chalk::cli
