// The warning for rows of a table that the replica cannot hold, and the -n that holds each
// (deployment_options.h: unfit_rows_warning, replica_that_holds). Split from
// deployment_options.cc, which parses and resolves the deployment flags.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "deployment_options.h"

namespace chalk::cli {

std::optional<std::string> unfit_rows_warning(const DeploymentArgs& a, const Deployment& d, const std::vector<std::pair<int64_t, int64_t>>& unfit) {
  if (unfit.empty()) return std::nullopt;
  std::vector<std::string> rows;
  for (const auto& [b, s] : unfit) rows.push_back(fmt::format("batch {} at {} tokens", b, s));
  if (rows.size() > 4) rows.erase(rows.begin() + 3, rows.end() - 1), rows.insert(rows.end() - 1, "...");
  return fmt::format("{} {} not fit on {} x {} (KV cache beyond HBM): {} $/Mtok left empty{}", fmt::join(rows, ", "),
                     unfit.size() == 1 ? "does" : "do", d.n_chips, d.system.chip.name, unfit.size() == 1 ? "its" : "their",
                     replica_that_holds(a, d, unfit));
}

std::string replica_that_holds(const DeploymentArgs& a, const Deployment& d, const std::vector<std::pair<int64_t, int64_t>>& unfit) {
  if (unfit.empty()) return {};
  // For each row, the smallest power-of-two multiple of the replica within its scale-up
  // domain that holds it, as a user would retry with -n, each size resolved as the command
  // resolves it (layout search included). Beyond the domain a replica pays scale-out
  // collectives on every step: there the advice is to split the batch over replicas instead.
  // Per row, not for the largest only (review 2 M3: "no replica holds them" when -n 8 held
  // batch 64 and only batch 256 needed splitting).
  std::vector<int64_t> held_by(unfit.size(), 0);
  for (int64_t n = d.n_chips * 2; n <= d.system.scale_up_domain; n *= 2) {
    if (std::all_of(held_by.begin(), held_by.end(), [](int64_t h) { return h > 0; })) break;
    DeploymentArgs more = a;
    more.chips = n;
    try {
      const Deployment bigger = resolve(more, unfit.front().second);
      for (std::size_t k = 0; k < unfit.size(); ++k) {
        if (held_by[k] == 0 && memory_plan(bigger, unfit[k].first, unfit[k].second).fits) held_by[k] = n;
      }
    } catch (const InputError&) {
      // a stated layout that does not divide n: try the next size
    }
  }
  auto names = [&](int64_t n) {
    std::vector<std::string> rows;
    for (std::size_t k = 0; k < unfit.size(); ++k) {
      if (held_by[k] == n) rows.push_back(fmt::format("batch {} at {} tokens", unfit[k].first, unfit[k].second));
    }
    if (rows.size() > 4) rows.erase(rows.begin() + 3, rows.end() - 1), rows.insert(rows.end() - 1, "...");
    return std::pair{fmt::format("{}", fmt::join(rows, ", ")), rows.size() == 1 ? "it" : "them"};
  };
  const char* them = unfit.size() == 1 ? "it" : "them";
  const auto none = fmt::format("no replica within the {}-chip scale-up domain holds", d.system.scale_up_domain);
  if (std::all_of(held_by.begin(), held_by.end(), [&](int64_t h) { return h == held_by.front(); })) {
    if (held_by.front() == 0) return fmt::format("; {} {}: split the batch over replicas", none, them);
    return fmt::format("; -n {} holds {}", held_by.front(), them);
  }
  std::vector<std::string> parts;
  std::vector<int64_t> sizes(held_by.begin(), held_by.end());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (int64_t n : sizes) {
    if (n > 0) parts.push_back(fmt::format("-n {} holds {}", n, names(n).first));
  }
  if (sizes.front() == 0) parts.push_back(fmt::format("{} {}: split the batch over replicas", none, names(0).first));
  return fmt::format("; {}", fmt::join(parts, "; "));
}

}  // namespace chalk::cli
