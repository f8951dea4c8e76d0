// The files `chalk web` serves, all compiled into the binary (cmake/web_app.cmake embeds
// web/app/ and web/openapi.json; the chart libraries come from cmake/serving_web.cmake).
// The server looks paths up here and nowhere else: no request reaches the file system.
#pragma once

#include <string_view>
#include <vector>

namespace chalk::cli::web {

struct WebAsset {
  std::string_view path;          ///< "/index.html", "/vendor/vega.min.js"
  std::string_view content_type;  ///< "text/html; charset=utf-8"
  std::string_view body;
};

/// Every embedded file; empty when the build found no web/ files.
const std::vector<WebAsset>& web_assets();

/// The asset at exactly `path` ("/" is "/index.html"), or nullptr.
const WebAsset* find_asset(std::string_view path);

}  // namespace chalk::cli::web
