// A replica's KV capacity in blocks (simulator.h, kv_blocks_available): what its HBM holds
// beside the weights and the reserve, one block's bytes at a time (memory_plan).
#include <cmath>
#include <cstdint>

#include "chalk/sim/simulator.h"

namespace chalk::sim {

int64_t kv_blocks_available(const Deployment& d, int64_t block_size) {
  const MemoryPlan one = memory_plan(d, 1, block_size);
  if (!one.weights_fit) return 0;
  const double room = (one.hbm_total - one.weights - one.reserve).value();
  const double per_block = one.kv_cache.value();
  if (per_block <= 0) return int64_t{1} << 40;  // no KV (attention-free): never the constraint
  return static_cast<int64_t>(std::floor(room / per_block));
}

}  // namespace chalk::sim
