// Wrapping prose to the terminal (wrap.h).
#include "wrap.h"

#include <cstddef>
#include <vector>

namespace chalk::cli {
namespace {

/// Display columns of UTF-8 text: its code points (no continuation bytes).
int columns_of(const std::string& s, std::size_t from = 0, std::size_t to = std::string::npos) {
  int n = 0;
  for (std::size_t i = from; i < s.size() && i < to; ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  return n;
}

/// Byte offsets where runs of two or more spaces end, after the first non-space.
std::vector<std::size_t> gaps(const std::string& s) {
  std::vector<std::size_t> out;
  std::size_t i = s.find_first_not_of(' ');
  while (i != std::string::npos && i < s.size()) {
    const std::size_t sp = s.find("  ", i);
    if (sp == std::string::npos) break;
    const std::size_t end = s.find_first_not_of(' ', sp);
    if (end == std::string::npos) break;
    out.push_back(end);
    i = end;
  }
  return out;
}

}  // namespace

std::string wrap_line(const std::string& line, int width) {
  if (width < 20 || columns_of(line) <= width) return line;
  const std::vector<std::size_t> g = gaps(line);
  if (g.size() >= 3) return line;  // a table row: print_table fits those
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) return line;
  // "label       text": continue under the text (two gaps, "  ID     status     reason":
  // under the last column's); a line from the margin (a title) continues two in; an indented
  // line is an item of a list whose own items sit two further in, so it continues four in,
  // never where a sibling or a child starts (review L6: validate's "  POPE-1 (...): ..."
  // continued at column 2, "    note: ..." at 4, each read as the next item).
  std::size_t indent = !g.empty() && columns_of(line, 0, g.back()) <= width / 2 ? static_cast<std::size_t>(columns_of(line, 0, g.back()))
                       : lead > 0                                               ? lead + 4
                                                                                : 2;
  std::string out, current = line.substr(0, lead);
  int current_cols = static_cast<int>(lead);
  bool first_word = true;
  std::size_t i = lead;
  const std::string pad(indent, ' ');
  while (i < line.size()) {
    // The next word with the spaces before it (a label's gap stays as written).
    std::size_t start = i;
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t word = i;
    while (i < line.size() && line[i] != ' ') ++i;
    const std::string spaces = line.substr(start, word - start), text = line.substr(word, i - word);
    if (text.empty()) break;
    const int add = columns_of(spaces) + columns_of(text);
    if (!first_word && current_cols + add > width) {
      out += current + '\n';
      current = pad + text;
      current_cols = static_cast<int>(indent) + columns_of(text);
    } else {
      current += spaces + text;
      current_cols += add;
    }
    first_word = false;
  }
  return out + current;
}

std::string wrap_words(const std::string& text, int width) {
  if (width < 20) return text;
  std::string out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t nl = text.find('\n', begin);
    const std::string segment = text.substr(begin, nl == std::string::npos ? std::string::npos : nl - begin);
    // Units to place: words, with a word that starts with '-' glued to the one before it.
    std::vector<std::string> units;
    std::size_t i = 0;
    while (i < segment.size()) {
      std::size_t j = segment.find(' ', i);
      if (j == std::string::npos) j = segment.size();
      const std::string word = segment.substr(i, j - i);
      if (!word.empty()) {
        if (word[0] == '-' && !units.empty()) {
          units.back() += ' ' + word;
        } else {
          units.push_back(word);
        }
      }
      i = j + 1;
    }
    std::string line;
    int cols = 0;
    for (const std::string& u : units) {
      const int add = columns_of(u);
      if (!line.empty() && cols + 1 + add > width) {
        out += line + '\n';
        line.clear();
        cols = 0;
      }
      if (!line.empty()) {
        line += ' ';
        ++cols;
      }
      line += u;
      cols += add;
    }
    out += line;
    if (nl == std::string::npos) break;
    out += '\n';
    begin = nl + 1;
  }
  return out;
}

WrapOutput::WrapOutput(std::ostream& out, int width) : out_(out), buf_(out.rdbuf(), width), saved_(out.rdbuf()) { out_.rdbuf(&buf_); }

WrapOutput::~WrapOutput() {
  buf_.flush_partial();
  out_.rdbuf(saved_);
}

WrapOutput::Buf::int_type WrapOutput::Buf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  if (c == '\n') {
    const std::string wrapped = wrap_line(line_, width_) + '\n';
    line_.clear();
    if (dest_->sputn(wrapped.data(), static_cast<std::streamsize>(wrapped.size())) != static_cast<std::streamsize>(wrapped.size())) {
      return traits_type::eof();
    }
    return c;
  }
  line_.push_back(static_cast<char>(c));
  return c;
}

int WrapOutput::Buf::sync() { return dest_->pubsync(); }

void WrapOutput::Buf::flush_partial() {
  if (!line_.empty()) {
    const std::string wrapped = wrap_line(line_, width_);
    dest_->sputn(wrapped.data(), static_cast<std::streamsize>(wrapped.size()));
    line_.clear();
  }
  dest_->pubsync();
}

}  // namespace chalk::cli
