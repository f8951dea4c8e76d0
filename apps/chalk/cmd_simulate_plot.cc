// `chalk simulate --plot FILE`: the run's JSON inside web/simulate.html with vega-lite
// inlined (cmake/serving_web.cmake embeds both), one self-contained page.
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chalk/base/error.h"
#include "table.h"

#ifdef CHALK_SERVING_WEB
namespace chalk::cli::web {
extern const char* const kVegaJs;
extern const char* const kVegaLiteJs;
extern const char* const kVegaEmbedJs;
extern const char* const kSimulateTemplate;
extern const char* const kLibraryVersions;
}  // namespace chalk::cli::web
#endif

namespace chalk::cli {
namespace {
[[maybe_unused]] std::string simulate_replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
  return s;
}
}  // namespace

void write_simulate_plot(const std::string& path, const nlohmann::json& data) {
#ifdef CHALK_SERVING_WEB
  const std::string json = simulate_replace_all(data.dump(), "</", "<\\/");
  std::string html = simulate_replace_all(web::kSimulateTemplate, "/*CHALK_LIBRARY_VERSIONS*/", web::kLibraryVersions);
  html = simulate_replace_all(html, "\"__CHALK_CHART_DATA__\"", json);
  const std::string marks[] = {"/*CHALK_VEGA_JS*/", "/*CHALK_VEGA_LITE_JS*/", "/*CHALK_VEGA_EMBED_JS*/"};
  const char* libs[] = {web::kVegaJs, web::kVegaLiteJs, web::kVegaEmbedJs};
  std::string out;
  size_t from = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t at = html.find(marks[i], from);
    if (at == std::string::npos) throw std::runtime_error("web/simulate.html lacks the library placeholders in order");
    out += html.substr(from, at - from) + libs[i];
    from = at + marks[i].size();
  }
  out += html.substr(from);
  write_file(path, out, "--plot");
#else
  (void)data;
  throw InputError("--plot", "this chalk was built without the plotting library: run `npm ci` in web/ and rebuild (the data is "
                             "available with --json); cannot write '" + path + "'");
#endif
}

}  // namespace chalk::cli
