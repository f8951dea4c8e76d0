// The simulator's event loop, private to src/sim (simulator.cc); simulate() (simulate.cc)
// wraps it with the engine's mechanisms and the requests' fixed work outside the GPU.
#pragma once

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

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

/// Running::last_token_s of a request whose last token came at the step's start (times
/// are >= 0).
inline constexpr double kTokenAtStepStart = -1.0;

/// A running request's scheduler state, in the running list in admission order, so that a
/// step's passes (schedule, then the tokens out) read the running requests in sequence
/// rather than each one's Live through its index (step_running.cc, step_tokens.cc). While
/// it runs these are its state; its Live keeps its KV blocks (kv) and rank, and gets
/// generated and last_token_s back if it is preempted.
struct Running {
  int64_t kv_tokens = 0;       ///< as Live
  /// KV blocks it holds, its own and cached (Live::kv.held()). Without the prefix cache the
  /// only count of them while it runs: Live::kv.blocks gets it back when the request
  /// finishes or is preempted (step_running.cc, step_tokens.cc).
  int64_t held = 0;
  int64_t prefill_target = 0;  ///< as Live
  int64_t generated = 0;       ///< as Live
  int64_t output = 1;          ///< as Live
  /// As Live, or kTokenAtStepStart: its last token came at the end of the step before the
  /// one being formed (the step's start, StepLoop::t, since the clock runs on from a step's
  /// end while a request runs), set by the scheduler's pass that took that token before
  /// the step's end was known (step_running.cc); that pass writes the time back for every
  /// request it does not take the common token of.
  double last_token_s = 0;
  int32_t id = 0;              ///< its index in the run's requests
  int32_t rank = -1;           ///< as Live
  /// Bulk decodes (StepLoop::bulk, step_bulk.cc): 0 for a request the running pass visits
  /// every step; else it is quiet, a plain decode taking its common token every step
  /// without a visit until step `due` (StepLoop::tick) that crosses a block or brings its
  /// last token, and kv_tokens and generated hold their values minus the step (their
  /// value at step T is the field + T).
  int64_t due = 0;
};

/// The event loop of simulate() (simulator.h), with each request arriving at the
/// scheduler at its arrival_s.
/// A list of trivially copyable values the scheduler refills every step (the step's
/// decodes, chunks and their owners, the running requests). push_back is an inline store
/// into capacity kept from earlier steps: std::vector's push_back stayed an out-of-line
/// call per running request per step, about a sixth of bench_sim's simulate_requests.
template <class T>
class StepList {
 public:
  [[gnu::always_inline]] void push_back(T x) {
    if (n_ == buf_.size()) [[unlikely]] grow();
    buf_[n_++] = x;
  }
  void pop_back() { --n_; }
  void clear() { n_ = 0; }
  /// Keeps the first `n` values (n <= size()).
  void truncate(std::size_t n) { n_ = n; }
  void swap(StepList& o) noexcept {
    buf_.swap(o.buf_);
    std::swap(n_, o.n_);
  }
  /// Room for `more` values past the last without growing: the first free slot, where the
  /// caller writes up to `more` values, then counts them in with added().
  T* room(std::size_t more) {
    if (n_ + more > buf_.size()) buf_.resize(std::max<std::size_t>(16, std::max(n_ + more, 2 * buf_.size())));
    return buf_.data() + n_;
  }
  void added(std::size_t k) { n_ += k; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& back() { return buf_[n_ - 1]; }
  T& operator[](std::size_t i) { return buf_[i]; }
  const T& operator[](std::size_t i) const { return buf_[i]; }
  const T* begin() const { return buf_.data(); }
  const T* end() const { return buf_.data() + n_; }
  operator std::span<const T>() const { return {buf_.data(), n_}; }

 private:
  [[gnu::noinline]] void grow() { buf_.resize(std::max<std::size_t>(16, 2 * buf_.size())); }
  std::vector<T> buf_;
  std::size_t n_ = 0;
};

/// `allow_bulk` false: the running pass visits every running request every step, where bulk
/// decodes would apply (StepLoop::bulk); the same outputs either way (step_bulk_test.cc).
SimRun run_at_scheduler(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, bool allow_bulk = true);

/// Steps between two calls of SimOptions::progress.
inline constexpr int64_t kProgressEvery = 1024;

/// The indices of `requests` in arrival order, ties in input order (a stable sort; none
/// where they already are, as a trace's and a router's parts are).
std::vector<int32_t> arrival_order(std::span<const Request> requests);

/// Makes room in `steps` (a run's step samples, full: size == capacity) for the run's
/// remaining steps, `arrived` of its `n` requests having reached the scheduler: the steps
/// so far extrapolated over all n at the same steps per request, x 1.25, bounded to [2, 8] x
/// the present capacity (at least 32 samples). Only the capacity changes. std::vector's
/// doubling copied every sample at each growth into fresh pages: on bench_traces's day
/// (5.5 M steps a replica) those copies and their page faults were a fifth of the run's
/// CPU time; untouched capacity beyond the last step costs address space, not memory.
void reserve_steps(std::vector<StepSample>& steps, int64_t arrived, int64_t n);

/// Checks a run's options against its traffic; true where it caches prefixes by the traffic's
/// token structure (simulate.cc). Throws InputError naming prefix_hit_rate or kv_blocks.
bool check_sim_options(std::span<const Request> requests, const SimOptions& o, Phase phase);

/// Each request's record in `run` and its scheduler state before the first step; checks each
/// request with check_request (simulate.cc).
std::vector<Live> start_requests(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, SimRun& run);

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
