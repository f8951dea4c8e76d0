// Drafters' published acceptance (data/drafters/acceptance.csv): the tokens a step keeps
// for a measurement row that names its drafter and draft length but not the acceptance.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "chalk/base/error.h"
#include "chalk/io/embedded.h"
#include "measurement_row.h"

namespace chalk::detail {
namespace {

std::vector<DrafterAcceptance> read_drafters() {
  const EmbeddedTable table = read_embedded_table("drafters/acceptance.csv");
  const std::string& where = table.where;
  const auto& records = table.records;
  const auto& header = records.front().second;
  auto column = [&](const std::string& name) { return table.column(name); };
  const std::size_t c_drafter = column("drafter"), c_family = column("family"), c_model = column("model"), c_k = column("draft_tokens"),
                    c_kept = column("accepted_tokens"), c_src = column("source");
  std::vector<DrafterAcceptance> out;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto& line = records[i].first;
    const auto& f = records[i].second;
    const std::string at = std::string(where) + ": line " + std::to_string(line);
    if (f.size() != header.size()) throw InputError(at, "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    DrafterAcceptance d;
    d.drafter = trim_cell(f[c_drafter]);
    d.family = trim_cell(f[c_family]);
    d.model = trim_cell(f[c_model]);
    d.source = trim_cell(f[c_src]);
    const std::string k = trim_cell(f[c_k]), kept = trim_cell(f[c_kept]);
    char* end = nullptr;
    const long long kv = std::strtoll(k.c_str(), &end, 10);
    if (k.empty() || end != k.c_str() + k.size() || kv < 1) throw InputError(at + ": draft_tokens", "expected a whole number of at least 1, got '" + k + "'");
    d.draft_tokens = kv;
    d.accepted_tokens = std::strtod(kept.c_str(), &end);
    if (kept.empty() || end != kept.c_str() + kept.size() || !(d.accepted_tokens > 1) || d.accepted_tokens > static_cast<double>(kv + 1)) {
      throw InputError(at + ": accepted_tokens", "expected more than 1 and at most draft_tokens + 1 = " + std::to_string(kv + 1) + ", got '" + kept + "'");
    }
    if (d.drafter.empty() || d.family.empty()) throw InputError(at, "empty drafter or family; every row needs both");
    if (d.source.empty()) throw InputError(at + ": source", "empty; every figure needs its source");
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

const std::vector<DrafterAcceptance>& builtin_drafters() {
  static const std::vector<DrafterAcceptance> all = read_drafters();
  return all;
}

void check_drafter(const std::string& drafter, const std::optional<int64_t>& draft_tokens, const std::string& field) {
  if (drafter.empty()) return;
  std::vector<std::string> names{"mtp"};
  for (const auto& d : builtin_drafters()) {
    if (std::find(names.begin(), names.end(), d.drafter) == names.end()) names.push_back(d.drafter);
  }
  if (std::find(names.begin(), names.end(), drafter) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InputError(field, "'" + drafter + "' is not one of " + list + " (mtp: the model's own MTP module; the others: data/drafters/acceptance.csv)");
  }
  if (!draft_tokens || *draft_tokens < 1) {
    throw InputError(field, "drafter " + drafter + " needs draft_tokens, the tokens it drafts per step (at least 1)");
  }
}

double per_draft_acceptance(int64_t k, double kept) {
  // (1 - a^(k+1)) / (1 - a) = 1 + a + ... + a^k rises from 1 (a = 0) to k + 1 (a = 1):
  // bisection finds the a that gives `kept`.
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    const double a = (lo + hi) / 2;
    double sum = 0, term = 1;
    for (int64_t j = 0; j <= k; ++j) sum += term, term *= a;
    (sum < kept ? lo : hi) = a;
  }
  return (lo + hi) / 2;
}

const DrafterAcceptance* find_drafter_row(const std::string& drafter, const std::string& family, const std::string& model, int64_t k) {
  const DrafterAcceptance* best = nullptr;
  auto better = [&](const DrafterAcceptance& d) {
    if (!best) return true;
    const int64_t dd = std::llabs(d.draft_tokens - k), db = std::llabs(best->draft_tokens - k);
    if (dd != db) return dd < db;
    return d.model == model && best->model != model;  // at equal distance, the row's own model
  };
  for (const auto& d : builtin_drafters()) {
    if (d.drafter == drafter && d.family == family && better(d)) best = &d;
  }
  return best;
}

}  // namespace chalk::detail
