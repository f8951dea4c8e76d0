#include "web_assets.h"

#include <cstring>

namespace chalk::cli::web {

// cmake/web_app_embed.cmake: the page and the API description.
struct EmbeddedWebFile {
  std::string_view path, content_type, body;
};
extern const EmbeddedWebFile kWebAppFiles[];
extern const std::size_t kWebAppFileCount;

#ifdef CHALK_SERVING_WEB
// cmake/serving_web_embed.cmake: the chart libraries.
extern const char* const kVegaJs;
extern const char* const kVegaLiteJs;
extern const char* const kVegaEmbedJs;
#endif

const std::vector<WebAsset>& web_assets() {
  static const std::vector<WebAsset> all = [] {
    std::vector<WebAsset> v;
    for (std::size_t i = 0; i < kWebAppFileCount; ++i) v.push_back({kWebAppFiles[i].path, kWebAppFiles[i].content_type, kWebAppFiles[i].body});
#ifdef CHALK_SERVING_WEB
    // The chart libraries go out uncompressed: cpp-httplib 0.11 (Debian 12) compresses
    // text/* and the bare "application/javascript" with brotli at quality 11 on every
    // request, 1.2 s for vega.min.js's 800 KB on an idle core (0.02 s with gzip, 0 s
    // without) on a page served to 127.0.0.1, where compression saves nothing. With a
    // charset parameter, application/javascript (RFC 9239's other JavaScript type) is not
    // in its list.
    const char* js = "application/javascript; charset=utf-8";
    v.push_back({"/vendor/vega.min.js", js, kVegaJs});
    v.push_back({"/vendor/vega-lite.min.js", js, kVegaLiteJs});
    v.push_back({"/vendor/vega-embed.min.js", js, kVegaEmbedJs});
#endif
    return v;
  }();
  return all;
}

const WebAsset* find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const auto& a : web_assets()) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

}  // namespace chalk::cli::web
