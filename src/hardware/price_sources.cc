// Price sources of the catalog's systems (include/chalk/hardware/price_sources.h).
#include "chalk/hardware/price_sources.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace chalk {

std::string price_source_key(const std::string& price_source) {
  const size_t close = price_source.rfind(']');
  if (close != std::string::npos && price_source.find_first_not_of(" .", close + 1) == std::string::npos) {
    const size_t open = price_source.rfind('[', close);
    if (open != std::string::npos) return price_source.substr(open, close - open + 1);
  }
  size_t end = price_source.size();
  for (const char* stop : {",", " (", ": "}) end = std::min(end, price_source.find(stop));
  std::string head = price_source.substr(0, end);
  size_t words = 0, i = 0;
  for (; i < head.size(); ++i) {
    if (head[i] == ' ' && ++words == 3) break;
  }
  return head.substr(0, i);
}

std::string mixed_price_sources_warning(const std::vector<SystemSpec>& systems) {
  std::map<std::string, std::vector<std::string>> by_source;  // key -> "name $x.xx"
  std::vector<std::string> order;                              // sources in the systems' order
  for (const auto& s : systems) {
    if (!s.price_per_chip) continue;
    const std::string key = price_source_key(s.price_source);
    if (!by_source.count(key)) order.push_back(key);
    by_source[key].push_back(fmt::format("{} ${:.2f}", s.name, s.price_per_chip->value() * 3600.0));
  }
  if (order.size() < 2) return "";
  std::string each;
  for (const auto& key : order) {
    std::string chips;
    for (const auto& c : by_source[key]) chips += (chips.empty() ? "" : ", ") + c;
    each += fmt::format("{}{} {}", each.empty() ? "" : "; ", key.empty() ? "(no source)" : key, chips);
  }
  return fmt::format("chip prices per hour come from {} sources, so a choice between chips carries their spread as well as the "
                     "chips' ({}); a hardware file with your own prices (-H FILE) compares like with like",
                     order.size(), each);
}

}  // namespace chalk
