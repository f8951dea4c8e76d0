// The one error type of chalk's library (DESIGN.md section 3, "Errors").
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace chalk {

/// `text` as it may be quoted in an error: at most `max` bytes (default 60) of it, followed
/// by "... (N bytes)" when longer, with control characters (newlines, NUL) shown as '?', so an
/// error that quotes its input stays one short line whatever the input (issue 28: a 100 MB
/// header once gave a 100 MB error line).
inline std::string excerpt(std::string_view text, std::size_t max = 60) {
  std::string out;
  const std::size_t n = text.size() < max ? text.size() : max;
  out.reserve(n + 24);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
  }
  if (text.size() > max) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

namespace detail {
/// The longest error chalk prints: a message past it keeps its head and tail (the field and
/// what was expected) around a note of the bytes left out.
inline constexpr std::size_t max_error_bytes = 1024;

/// `s` on one line (control characters as '?') and at most max_error_bytes long.
inline std::string bounded_line(std::string_view s) {
  std::string out;
  if (s.size() <= max_error_bytes) {
    out.assign(s);
  } else {
    const std::size_t head = 700, tail = 200;
    out.assign(s.substr(0, head));
    out += " ... (" + std::to_string(s.size() - head - tail) + " bytes left out) ... ";
    out.append(s.substr(s.size() - tail));
  }
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}
}  // namespace detail

/// Bad input: a missing file, malformed JSON, a missing or unknown field, a value out of
/// range, an unknown name. `field()` is the path of the offending field ("config.json:
/// hidden_size", "--batch"); `what()` is "<field>: <message>", one line, naming the value
/// and what was expected. Front ends print it once (CLI: "chalk: error: ...", exit 2).
/// Both are bounded (detail::bounded_line): at most 1,024 bytes, control characters shown
/// as '?', whatever input the message quotes.
/// A valid but infeasible setup (does not fit in HBM) is never an InputError: it is a
/// value in the report.
class InputError : public std::runtime_error {
 public:
  InputError(std::string field, const std::string& message)
      : std::runtime_error(detail::bounded_line(field + ": " + message)), field_(detail::bounded_line(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace chalk
