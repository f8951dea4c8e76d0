// `chalk layouts`' refusal when no layout fits (exit 2), apart from the command's table.
#include "layouts_refuse.h"

#include <algorithm>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/engine/pipeline.h"

namespace chalk::cli {

void refuse_no_layout(const ModelSpec& model, const SystemSpec& system, const DeploymentOptions& base, const std::string& reason, int64_t most,
                      const LayoutQuery& q) {
  std::string fix, field = "--chips";
  try {
    DeploymentOptions engine = base;
    engine.mechanisms.enabled = true;
    const int64_t k = smallest_replica_chips(model, system, engine, std::max<int64_t>(q.context, 1));
    if (k <= q.n_chips && most > 0) {
      field = "--batch";
      fix = fmt::format("these chips hold the weights and one sequence, not batch {}: a smaller --batch, or more chips (-n {})", most, 2 * q.n_chips);
    } else {
      fix = fmt::format("the smallest replica that holds the weights and one sequence is {} chips (-n {})", k, k);
      const int64_t domain = std::max<int64_t>(system.scale_up_domain, 1);
      if (k > domain) {
        fix += fmt::format(", beyond the {}-chip scale-up domain: a pipeline of {} stages keeps each within one (--pp {} of decode, prefill, "
                           "serving sweep and simulate)",
                           domain, (k + domain - 1) / domain, (k + domain - 1) / domain);
      }
    }
  } catch (const InputError&) {
    fix = "no replica of " + system.name + " holds them: use a smaller --weights format";
  }
  throw InputError(field, fmt::format("no layout of {} on {} x {} fits at context {}{} ({}); {}; --all lists every layout with its reason",
                                          model.name, q.n_chips, system.chip.name, q.context, most > 0 ? fmt::format(", batch {}", most) : std::string(),
                                          reason.empty() ? std::string("no candidate layout") : reason, fix));
}

}  // namespace chalk::cli
