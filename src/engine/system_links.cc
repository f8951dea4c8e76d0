// A system's links for the engine step, built once per thread (system_links.h).
#include "system_links.h"

#include <optional>

namespace chalk::detail {

const SystemLinks& system_links(const SystemSpec& sys) {
  // Every field scale_up_link and scale_out_link read (collective.cc), so a hit returns the
  // links a fresh build would.
  struct Key {
    bool tpu = false;
    double up = -1, out = -1;
    std::optional<ScaleUpTopology> topology;
    double efficiency = -1, latency = -1;  // the system's collective line (-1: no latency stated)
    double small = -1;                     // its small-message all-reduce floor (-1: none stated)
    bool operator==(const Key&) const = default;
  };
  thread_local Key key;
  thread_local SystemLinks links;
  const Key now{is_tpu(sys),
                sys.scale_up_bandwidth_per_direction.value(),
                sys.scale_out_bandwidth_per_direction.value(),
                sys.scale_up_topology,
                sys.collective_efficiency,
                sys.collective_latency ? sys.collective_latency->value() : -1.0,
                sys.small_all_reduce ? sys.small_all_reduce->value() : -1.0};
  if (!(now == key)) {
    links.up = scale_up_link(sys);
    links.has_out = now.out > 0;
    links.out = links.has_out ? scale_out_link(sys) : LinkModel{};
    key = now;
  }
  return links;
}

}  // namespace chalk::detail
