#include "web_guard.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "web_json.h"

namespace chalk::cli::web {
namespace {

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The host of "host[:port]" or "[v6]:port", lower-cased; empty when malformed.
std::string host_of(const std::string& authority) {
  if (authority.empty()) return "";
  std::string host;
  std::string rest;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return "";
    host = authority.substr(1, close - 1);
    rest = authority.substr(close + 1);
  } else {
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    rest = colon == std::string::npos ? "" : authority.substr(colon);
  }
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() < 2 || rest.size() > 6) return "";
    if (!std::all_of(rest.begin() + 1, rest.end(), [](unsigned char c) { return std::isdigit(c); })) return "";
  }
  return lower_ascii(host);
}

bool is_ipv4_loopback(const std::string& h) {
  // 127.a.b.c with each part 0..255 in plain decimal.
  int parts = 0, value = -1;
  if (h.rfind("127.", 0) != 0) return false;
  for (const char c : h) {
    if (c == '.') {
      if (value < 0) return false;
      ++parts, value = -1;
    } else if (c >= '0' && c <= '9') {
      value = (value < 0 ? 0 : value * 10) + (c - '0');
      if (value > 255) return false;
    } else {
      return false;
    }
  }
  return parts == 3 && value >= 0;
}

std::string quote(const std::string& s) { return "'" + utf8_prefix(s, 80) + "'"; }

}  // namespace

bool is_loopback_authority(const std::string& authority) {
  const std::string h = host_of(authority);
  return h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" || is_ipv4_loopback(h);
}

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::optional<ApiReply> guard_request(const RequestHead& h, bool allow_remote) {
  if (!valid_utf8(h.path)) return api_error(400, "path", "not valid UTF-8 once decoded (a %-escape such as %ff); expected a page or an /api/ path");
  if (h.transfer_encoding && h.content_length) {
    return api_error(400, "Transfer-Encoding", "given with Content-Length; expected one of them (the body's length would be ambiguous)");
  }
  if (!h.repeated.empty()) return api_error(400, h.repeated, "given more than once; expected one (which one counts would be a guess)");
  if (!h.host) return api_error(400, "Host", "missing; expected the server's address, e.g. 127.0.0.1:8080");
  if (!allow_remote && !is_loopback_authority(*h.host)) {
    return api_error(403, "Host", fmt::format("{} is not a loopback name (localhost, 127.0.0.1, [::1]); the server answers other names only "
                                              "under --allow-remote",
                                              quote(*h.host)));
  }
  if (h.origin) {
    const std::string& o = *h.origin;
    const auto scheme = o.find("://");
    const std::string authority = scheme == std::string::npos ? "" : o.substr(scheme + 3);
    const bool same_site = allow_remote ? !authority.empty() && lower_ascii(authority) == lower_ascii(*h.host) : is_loopback_authority(authority);
    if (!same_site) {
      return api_error(403, "Origin", fmt::format("{} is another site; the API answers only its own page ({})", quote(o),
                                                  allow_remote ? "the Origin must be the Host" : "a loopback origin"));
    }
  }
  if (h.method == "POST") {
    const std::string type = lower_ascii(h.content_type.value_or(""));
    const std::string media = type.substr(0, type.find(';'));
    const auto trimmed_end = media.find_last_not_of(" \t");
    if (media.substr(0, trimmed_end == std::string::npos ? 0 : trimmed_end + 1) != "application/json") {
      return api_error(415, "Content-Type", fmt::format("{}; expected application/json", h.content_type ? quote(*h.content_type) : "missing"));
    }
  }
  return std::nullopt;
}

}  // namespace chalk::cli::web
