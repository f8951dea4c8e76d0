// KV offload tiers behind a replica's prefix cache (docs/simulator.md 1.8): blocks the HBM
// cache evicts go to host DRAM, and what host DRAM evicts to local SSD, LRU in each tier,
// as vLLM's OffloadingConnector (vllm/v1/kv_offload: a CPU block pool with LRU eviction,
// --kv-offloading-size), LMCache (local CPU, then local disk backends) and Dynamo's KVBM
// (G1 device -> G2 host -> G3 disk) tier them. A prefix that returns is fetched back from
// the highest tier holding it before its prefill computes past it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chalk/hardware/hardware.h"

namespace chalk::sim {

/// The offload tiers of one replica. Capacities in GB (1e9 bytes) for the whole replica,
/// summed over its chips (vLLM's --kv-offloading-size is the total over the TP ranks; vLLM
/// states GiB, chalk GB). Fetch rates in GB/s per chip, one direction; 0 = from the system
/// (kv_offload_rates). All 0: no tiers, the simulator runs exactly as without them.
struct KvOffload {
  double host_gb = 0;
  double ssd_gb = 0;
  double host_gb_per_s = 0;  ///< override of the host tier's fetch rate per chip
  double ssd_gb_per_s = 0;   ///< override of the SSD tier's read rate per chip
  bool enabled() const { return host_gb > 0 || ssd_gb > 0; }
};

/// Parses "host:GB[,ssd:GB][,host-bw:GB/s][,ssd-bw:GB/s]" (any order; each name once;
/// "ssd:GB" alone is allowed). Throws InputError naming `field` for an unknown tier name, a
/// missing ':', a number that is not finite or is negative (a rate must be > 0), or a name
/// given twice. Capacities at most 1e9 GB, rates at most 1e6 GB/s (hardware_limits).
KvOffload parse_kv_offload(std::string_view spec, const std::string& field);

/// "host:64,ssd:1000" (the inverse of parse_kv_offload, rates only when overridden).
std::string describe_kv_offload(const KvOffload& o);

/// The fetch rate per chip of each tier, bytes/s, with where it comes from.
struct KvOffloadRates {
  double host_bytes_per_s = 0, ssd_bytes_per_s = 0;
  std::string host_source, ssd_source;
};

/// Host tier: the override; else the system's first host tier that is not flash (name
/// without "flash", "nvme", "ssd") at min(gb_per_s_per_chip, link_gb_per_s_per_chip when
/// stated) (HGX H100: min(76.8 DDR5 share, 64 PCIe Gen5 x16) = 64 GB/s); else 32 GB/s,
/// PCIe Gen4 x16 (16 GT/s x 16 lanes / 8, PCI-SIG PCIe 4.0), the slowest host link of a
/// current accelerator host. SSD tier: the override; else the system's flash tier's rate
/// (h100-sxm: 7.0 GB/s, Intel D7-P5500 sequential read); else kDefaultSsdGbPerS.
KvOffloadRates kv_offload_rates(const SystemSpec& s, const KvOffload& o);

/// Default SSD read rate per chip, GB/s: one PCIe Gen4 x4 NVMe drive per GPU at its
/// sequential read (Intel D7-P5500 and Samsung PM9A3 datasheets: 7.0 and 6.9 GB/s), the
/// layout of an AWS p5 node (8 x 3.84 TB NVMe per 8 GPUs).
inline constexpr double kDefaultSsdGbPerS = 7.0;
/// Default host link per chip, GB/s: PCIe Gen4 x16, one direction.
inline constexpr double kDefaultHostLinkGbPerS = 32.0;

/// Seconds to fetch `blocks` KV blocks of `bytes_per_block` (the replica's, all chips) over
/// `chips` links of `bytes_per_s_per_chip` each, each chip fetching its own share:
/// blocks x bytes_per_block / (chips x rate). 0 blocks: 0.
double kv_fetch_seconds(int64_t blocks, double bytes_per_block, int64_t chips, double bytes_per_s_per_chip);

/// A step's time when its fetches load layer by layer under its compute, as vLLM's KV
/// connector API does (vllm/distributed/kv_transfer/kv_connector/v1/base.py:
/// start_load_kv before the forward pass, wait_for_layer_load inside each attention layer)
/// and LMCache's layer-wise retrieval: layer l's load (fetch / L) must end before layer l's
/// compute (compute / L); loads run back to back on the link, computes back to back on the
/// chip. The last computation ends at f + (L - 1) max(f, c) + c with f = fetch / L,
/// c = compute / L: max(F, C) (L - 1) / L + (F + C) / L. No fetch: the compute; no compute:
/// the fetch; L = 1: F + C (fetch before the step).
double layerwise_step_seconds(double compute_s, double fetch_s, int64_t layers);

}  // namespace chalk::sim
