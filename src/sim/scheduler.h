// The simulator's event loop, private to src/sim (simulator.cc); simulate() (simulate.cc)
// wraps it with the engine's mechanisms and the requests' fixed work outside the GPU.
#pragma once

#include <span>

#include "chalk/base/error.h"
#include "chalk/sim/simulator.h"
#include "kv_pool.h"

namespace chalk::sim::detail {

/// A request's state while it is in the system.
struct Live {
  int64_t kv_tokens = 0;       ///< tokens whose KV is in the cache
  int64_t generated = 0;       ///< output tokens produced so far
  int64_t prefill_target = 0;  ///< KV tokens to reach before decoding; 0 = decoding
  int64_t output = 1;          ///< tokens this replica produces in all (phase)
  double last_token_s = 0;
  bool started = false;
  bool upstream_prefilled = false;  ///< decode phase, not yet admitted: its KV arrives with it
  int32_t rank = -1;                ///< data-parallel attention rank holding it while admitted
  /// Its KV blocks: its own and, with prefix caching, the cache slots of its first blocks.
  detail::KvHolding kv;
};

/// The event loop of simulate() (simulator.h), with each request arriving at the
/// scheduler at its arrival_s.
SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase);

/// Checks request `i` of a run (simulator.h, simulate): input and output tokens >= 1, an
/// arrival in [0, max_clock_s], a whole prompt within the step budget when chunked prefill
/// is off (not in a decode pool; a request over the model's context is rejected, not an
/// error), prefix segments of >= 1 token. Throws InputError naming "request i" or
/// max_batched_tokens.
void check_request(const Deployment& d, const Request& q, int64_t i, const SimOptions& o, Phase phase);

/// The error for a prompt over the step budget with chunked prefill off, in the words of
/// the engine simulated (field max_batched_tokens).
InputError whole_prompt_over_budget(const EnginePolicy& p, int64_t prompt_tokens);

}  // namespace chalk::sim::detail
