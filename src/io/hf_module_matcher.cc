// Quantization exclusion lists matched against module names (hf_internal.h, ModuleMatcher;
// docs/models.md, "Quantized checkpoints"), in time linear in the name and bounded on any
// pattern (issue 28): literal entries are looked up in a hash set, globs are found by their
// literal prefix in a trie and matched by a two-pointer matcher (O(name x glob), never
// exponential), "re:" entries are compiled by RE2 (automata, no backtracking; Debian's
// libre2-dev) with each pattern at most max_pattern_bytes. The routed experts of one layer
// are counted without forming each expert's name where the entries cannot tell them apart
// (count_experts).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <re2/re2.h>

#include "chalk/base/error.h"
#include "hf_internal.h"

namespace chalk::hf {

namespace {

/// Digit classes as a mask of cuts: bit d (1..9) set starts a new class at digit d. A
/// pattern that cuts the digits into classes matches an expert index E only by the class
/// of each digit of E.
using Cuts = uint16_t;
constexpr Cuts kAllCuts = 0x3FE;

/// The cuts of `text`: each digit d in it separates d from its neighbours (a range [0-4]
/// has its ends as digits); an escape that can spell a digit by code (\x31, \061) cuts all.
Cuts cuts_of(std::string_view text, bool regex) {
  Cuts c = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch >= '0' && ch <= '9') c |= static_cast<Cuts>((1u << (ch - '0')) | (1u << (ch - '0' + 1)));
    if (regex && ch == '\\' && i + 1 < text.size() && (text[i + 1] == 'x' || (text[i + 1] >= '0' && text[i + 1] <= '9'))) c = kAllCuts;
  }
  return static_cast<Cuts>(c & kAllCuts);
}

/// fnmatch's * (any run, dots included) and ? (one character), two pointers with a return
/// to the last star only: O(|p| |s|) at worst, where recursion was exponential.
bool glob_match(std::string_view p, std::string_view s) {
  size_t i = 0, j = 0, star = std::string_view::npos, mark = 0;
  while (j < s.size()) {
    if (i < p.size() && p[i] == '*') {
      star = i++, mark = j;
    } else if (i < p.size() && (p[i] == '?' || p[i] == s[j])) {
      ++i, ++j;
    } else if (star != std::string_view::npos) {
      i = star + 1, j = ++mark;
    } else {
      return false;
    }
  }
  while (i < p.size() && p[i] == '*') ++i;
  return i == p.size();
}

/// The glob matches `name` or a module `name` lies inside (a prefix ending at a dot):
/// "model.layers.*.self_attn" names model.layers.3.self_attn.q_proj (gpt-oss's list).
bool glob_prefix(std::string_view glob, std::string_view name) {
  for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.', dot + 1)) {
    if (glob_match(glob, name.substr(0, dot))) return true;
  }
  return glob_match(glob, name);
}

std::string excerpt(const std::string& s) { return s.size() <= 40 ? s : s.substr(0, 40) + "..."; }

/// The text every match of regular expression `re` starts with: its leading letters,
/// digits, '_' and escaped punctuation ("model\.layers\.5" -> "model.layers.5"), less
/// one a quantifier follows; none when `re` has a '|' anywhere (an alternative may start
/// otherwise).
std::string regex_literal_prefix(std::string_view re) {
  std::string out;
  if (re.find('|') != std::string_view::npos) return out;
  for (size_t i = 0; i < re.size();) {
    const auto c = static_cast<unsigned char>(re[i]);
    size_t next = i + 1;
    char lit = static_cast<char>(c);
    if (c == '\\' && i + 1 < re.size() && std::ispunct(static_cast<unsigned char>(re[i + 1]))) lit = re[i + 1], next = i + 2;
    else if (c >= 128 || !(std::isalnum(c) || c == '_')) break;
    if (next < re.size() && std::strchr("*?+{", re[next]) != nullptr) break;
    out += lit;
    i = next;
  }
  return out;
}

/// Numbers in [0, top] written with one digit of class cls[k] at each position k (the
/// classes as [lo, hi] digit ranges), without a leading zero unless the number is 0.
int64_t count_in_classes(const std::vector<std::pair<int, int>>& cls, const std::string& top) {
  const size_t n = cls.size();
  if (n > top.size()) return 0;
  auto width = [&](size_t k, int below) {  // digits of class k under `below`, no leading 0
    const int lo = std::max(cls[k].first, k == 0 && n > 1 ? 1 : 0), hi = std::min(cls[k].second, below - 1);
    return static_cast<int64_t>(std::max(0, hi - lo + 1));
  };
  auto rest = [&](size_t from) {
    int64_t r = 1;
    for (size_t k = from; k < n; ++k) r *= width(k, 10);
    return r;
  };
  if (n < top.size()) return rest(0);
  int64_t total = 0;
  for (size_t k = 0; k < n; ++k) {
    const int d = top[k] - '0';
    total += width(k, d) * rest(k + 1);
    if (d < cls[k].first || d > cls[k].second || (k == 0 && n > 1 && d == 0)) return total;
  }
  return total + 1;  // top itself
}

}  // namespace

struct ModuleMatcher::Impl {
  struct Glob {
    std::string text;
    Cuts cuts = 0;
    bool any_expert = true;  // no digit, no '?': matches every expert of a layer or none
  };
  /// Globs and regular expressions by their literal prefix (a glob's text before its first
  /// * or ?; regex_literal_prefix): only those whose prefix begins a name are tried on it.
  struct Trie {
    std::unordered_map<uint64_t, uint32_t> edge;  // node << 8 | byte -> child
    std::vector<std::vector<uint32_t>> globs{1}, regexes{1}, children{1};
    int32_t step(uint32_t node, char c) const {
      const auto it = edge.find(uint64_t{node} << 8 | static_cast<unsigned char>(c));
      return it == edge.end() ? -1 : static_cast<int32_t>(it->second);
    }
    uint32_t insert(std::string_view key) {
      uint32_t node = 0;
      for (const char c : key) {
        const int32_t next = step(node, c);
        if (next >= 0) {
          node = static_cast<uint32_t>(next);
          continue;
        }
        const auto fresh = static_cast<uint32_t>(children.size());
        globs.emplace_back(), regexes.emplace_back(), children.emplace_back();
        edge.emplace(uint64_t{node} << 8 | static_cast<unsigned char>(c), fresh);
        children[node].push_back(fresh);
        node = fresh;
      }
      return node;
    }
    /// Calls f(node) for the root and each node on name[0, upto), and with `subtree` for
    /// every node below the last (prefixes that continue past upto).
    template <class F>
    void visit(std::string_view name, size_t upto, bool subtree, F f) const {
      f(0u);
      int32_t node = 0;
      for (size_t i = 0; i < upto; ++i) {
        node = step(static_cast<uint32_t>(node), name[i]);
        if (node < 0) return;
        f(static_cast<uint32_t>(node));
      }
      if (!subtree) return;
      std::vector<uint32_t> stack = children[static_cast<size_t>(node)];
      while (!stack.empty()) {
        const uint32_t n = stack.back();
        stack.pop_back();
        f(n);
        stack.insert(stack.end(), children[n].begin(), children[n].end());
      }
    }
  };
  struct Regex {
    std::unique_ptr<RE2> re;  // entries joined as (?:a)|(?:b)|..., anchored at the start
    Cuts cuts = 0;
  };
  std::unordered_set<std::string> plain;
  std::vector<bool> plain_len;  // some plain entry is this long
  // Plain entries with an expert index as a component, by the text around it
  // ("model.layers.5.mlp.experts." "\n" "") -> the indices.
  std::unordered_map<std::string, std::vector<int64_t>> plain_expert;
  std::vector<Glob> globs;
  Trie trie;
  std::vector<Regex> regexes;

  /// A plain entry is a run of whole components of `name`; the run covering [skip, skip+1)
  /// is not tried when skip is set.
  bool plain_match(std::string_view name, size_t skip = std::string_view::npos) const {
    if (plain.empty()) return false;
    for (size_t i = 0;;) {  // runs [i, end) of whole components
      for (size_t end = i;;) {
        end = std::min(name.find('.', end), name.size());
        if (skip != std::string_view::npos && i <= skip && skip < end) break;
        if (end - i < plain_len.size() && plain_len[end - i] && plain.count(std::string(name.substr(i, end - i)))) return true;
        if (end++ == name.size()) break;
      }
      const size_t dot = name.find('.', i);
      if (dot == std::string_view::npos) return false;
      i = dot + 1;
    }
  }

  bool regex_match(uint32_t r, std::string_view name) const {
    return regexes[r].re->Match(re2::StringPiece(name.data(), name.size()), 0, name.size(), RE2::ANCHOR_START, nullptr, 0);
  }

  void add_glob(const std::string& s) {
    trie.globs[trie.insert(std::string_view(s).substr(0, s.find_first_of("*?")))].push_back(static_cast<uint32_t>(globs.size()));
    globs.push_back({s, cuts_of(s, false), s.find_first_of("0123456789?") == std::string::npos});
  }

  void add_plain(const std::string& s) {
    plain.insert(s);
    if (plain_len.size() <= s.size()) plain_len.resize(s.size() + 1);
    plain_len[s.size()] = true;
    // Each all-digit component may be an expert index: index the entry by the text around it.
    for (size_t i = 0; i < s.size();) {
      size_t end = s.find('.', i);
      if (end == std::string::npos) end = s.size();
      const std::string_view c(s.data() + i, end - i);
      if (!c.empty() && c.size() <= 6 && c.find_first_not_of("0123456789") == std::string_view::npos && (c.size() == 1 || c[0] != '0')) {
        plain_expert[s.substr(0, i) + "\n" + s.substr(end)].push_back(std::stoll(std::string(c)));
      }
      i = end + 1;
    }
  }
};

ModuleMatcher::ModuleMatcher(const std::vector<std::string>& entries, const std::string& field) {
  auto impl = std::make_shared<Impl>();
  RE2::Options one;
  one.set_log_errors(false);
  one.set_max_mem(int64_t{1} << 20);
  struct Pending {
    uint32_t node;  // of the literal prefix in the trie
    std::string text;
    std::unique_ptr<RE2> re;
  };
  std::vector<Pending> pending;  // valid "re:" entries
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& s = entries[i];
    const bool regex = s.rfind("re:", 0) == 0;
    const bool glob = !regex && s.find_first_of("*?") != std::string::npos;
    const std::string where = field + "[" + std::to_string(i) + "]";
    if ((regex || glob) && s.size() > max_pattern_bytes) {
      throw InputError(where, "'" + excerpt(s) + "' is " + std::to_string(s.size()) + " characters; a " +
                                  (regex ? "regular expression" : "glob") + " may have at most " + std::to_string(max_pattern_bytes));
    }
    if (glob) {
      impl->add_glob(s);
    } else if (!regex) {
      impl->add_plain(s);
    } else {
      const std::string text = s.substr(3);
      auto re = std::make_unique<RE2>(text, one);
      if (!re->ok()) {
        const std::string why = re->error_code() == RE2::ErrorPatternTooLarge
                                    ? "compiles to over 1 MiB; expected a smaller pattern"
                                    : re->error().substr(0, std::min<size_t>(re->error().find(':'), 60));
        throw InputError(where, "'" + excerpt(s) + "' is not a valid regular expression (" + why + ")");
      }
      pending.push_back({impl->trie.insert(regex_literal_prefix(text)), text, std::move(re)});
    }
  }
  // The entries of one node joined as (?:a)|(?:b)|... in programs of up to 16 KB of text;
  // one by one where a program fails (too large together, or a group name repeated).
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) { return a.node < b.node; });
  RE2::Options big = one;
  big.set_max_mem(int64_t{8} << 20);
  for (size_t i = 0; i < pending.size();) {
    const uint32_t node = pending[i].node;
    std::string joined;
    Cuts cuts = 0;
    size_t j = i;
    for (; j < pending.size() && pending[j].node == node && (j == i || joined.size() + pending[j].text.size() < 16384); ++j) {
      joined += (j == i ? "(?:" : "|(?:") + pending[j].text + ")";
      cuts |= cuts_of(pending[j].text, true);
    }
    auto re = j == i + 1 ? nullptr : std::make_unique<RE2>(joined, big);
    if (!re || !re->ok()) {
      for (size_t k = i; k < j; ++k) {
        impl->trie.regexes[node].push_back(static_cast<uint32_t>(impl->regexes.size()));
        impl->regexes.push_back({std::move(pending[k].re), cuts_of(pending[k].text, true)});
      }
    } else {
      impl->trie.regexes[node].push_back(static_cast<uint32_t>(impl->regexes.size()));
      impl->regexes.push_back({std::move(re), cuts});
    }
    i = j;
  }
  empty_ = entries.empty();
  impl_ = std::move(impl);
}

bool ModuleMatcher::matches(std::string_view name) const {
  if (empty_) return false;
  const Impl& m = *impl_;
  if (m.plain_match(name)) return true;
  bool hit = false;
  m.trie.visit(name, name.size(), false, [&](uint32_t node) {
    for (const uint32_t g : m.trie.globs[node]) hit = hit || glob_prefix(m.globs[g].text, name);
    for (const uint32_t r : m.trie.regexes[node]) hit = hit || m.regex_match(r, name);
  });
  return hit;
}

int64_t ModuleMatcher::count_experts(std::string_view prefix, std::string_view suffix, int64_t copies, int64_t* names_tried) const {
  if (empty_ || copies <= 0) return 0;
  const Impl& m = *impl_;
  std::string name = std::string(prefix) + "0" + std::string(suffix);
  const size_t at = prefix.size();
  // Entries that cannot tell experts apart: every expert or none.
  if (m.plain_match(name, at)) return copies;
  std::vector<uint32_t> dependent, regexes;  // globs with a digit or '?'; regular expressions
  bool all = false;
  m.trie.visit(name, at, true, [&](uint32_t node) {
    for (const uint32_t g : m.trie.globs[node]) {
      if (!m.globs[g].any_expert) dependent.push_back(g);
      else all = all || glob_prefix(m.globs[g].text, name);
    }
    regexes.insert(regexes.end(), m.trie.regexes[node].begin(), m.trie.regexes[node].end());
  });
  if (all) return copies;
  // Plain entries naming experts: the text around the index is a run of components.
  std::vector<int64_t> exact;
  for (size_t a = 0; a <= at; a = prefix.find('.', a) + 1) {
    for (size_t b = 0; b <= suffix.size(); b = b < suffix.size() ? std::min(suffix.find('.', b + 1), suffix.size()) : b + 1) {
      const auto it = m.plain_expert.find(std::string(prefix.substr(a)) + "\n" + std::string(suffix.substr(0, b)));
      if (it != m.plain_expert.end()) {
        for (const int64_t e : it->second) {
          if (e < copies) exact.push_back(e);
        }
      }
    }
    if (prefix.find('.', a) == std::string_view::npos) break;
  }
  std::sort(exact.begin(), exact.end());
  exact.erase(std::unique(exact.begin(), exact.end()), exact.end());
  if (dependent.empty() && regexes.empty()) return static_cast<int64_t>(exact.size());
  auto with = [&](const std::string& e) {
    name.replace(at, name.size() - at - suffix.size(), e);
    for (const uint32_t g : dependent) {
      if (glob_prefix(m.globs[g].text, name)) return true;
    }
    for (const uint32_t r : regexes) {
      if (m.regex_match(r, name)) return true;
    }
    return false;
  };
  // The digit classes no dependent entry tells apart; each sequence of classes is tried
  // once when there are fewer sequences than experts, else each expert.
  Cuts cuts = 0;
  for (const uint32_t g : dependent) cuts |= m.globs[g].cuts;
  for (const uint32_t r : regexes) cuts |= m.regexes[r].cuts;
  std::vector<std::pair<int, int>> classes;
  for (int d = 0; d < 10; ++d) {
    if (d == 0 || (cuts >> d & 1)) classes.push_back({d, d});
    else classes.back().second = d;
  }
  const std::string top = std::to_string(copies - 1);
  int64_t sequences = 0;
  for (int64_t len = 1, p = 1; len <= static_cast<int64_t>(top.size()) && sequences < copies; ++len) {
    sequences += (p *= static_cast<int64_t>(classes.size()));
  }
  int64_t total = 0;
  if (names_tried != nullptr) *names_tried += std::min(sequences, copies) + static_cast<int64_t>(exact.size());
  if (sequences >= copies) {
    for (int64_t e = 0; e < copies; ++e) total += std::binary_search(exact.begin(), exact.end(), e) || with(std::to_string(e)) ? 1 : 0;
    return total;
  }
  std::vector<size_t> seq;
  std::vector<std::pair<int, int>> cls;
  for (size_t len = 1; len <= top.size(); ++len) {
    seq.assign(len, 0);
    for (;;) {
      cls.clear();
      std::string rep;
      for (size_t k = 0; k < len; ++k) {
        cls.push_back(classes[seq[k]]);
        rep += static_cast<char>('0' + std::max(cls.back().first, k == 0 && len > 1 ? 1 : 0));
      }
      const int64_t n = count_in_classes(cls, top);
      if (n > 0 && with(rep)) total += n;
      size_t k = len;  // next sequence, last position fastest
      while (k > 0 && ++seq[k - 1] == classes.size()) seq[--k] = 0;
      if (k == 0) break;
    }
  }
  for (const int64_t e : exact) total += with(std::to_string(e)) ? 0 : 1;  // named, not already counted
  return total;
}

}  // namespace chalk::hf
