// The simulator's event loop state between a replica's steps and a step's passes over its
// requests, private to src/sim: run_at_scheduler (simulator.cc) drives the steps; the
// running requests' pass is step_running.cc, the waiting requests' admission step_admit.cc,
// the step's tokens out and the finished requests' removal step_tokens.cc
// (docs/simulator.md 1.2).
#pragma once

#include <bit>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "chalk/engine/step_mix.h"
#include "chalk/sim/simulator.h"
#include "chalk/sim/speculation.h"
#include "kv_pool.h"
#include "lora_slots.h"
#include "rank_budget.h"
#include "scheduler.h"

namespace chalk::sim::detail {

/// One replica's scheduler between steps: the requests waiting and running, their KV
/// blocks, the data-parallel ranks' budgets, and the lists a step fills for the engine
/// step (its decodes' contexts and its prefill chunks, with their places in `running`).
/// Built once per run by run_at_scheduler; the members are the loop's own variables, so
/// a step's passes, out of line, read them through `this` (one load) where the lambdas they
/// were read them through a closure (two).
struct StepLoop {
  /// `live`: start_requests' states; `total_blocks` > 0 KV blocks of `block` tokens
  /// (o.policy.block_size); `dp_ranks` >= 1 data-parallel attention ranks. Sets up the
  /// offload tiers (enable_offload) when `caching` and o.kv_offload asks for them.
  StepLoop(const Deployment& d, std::span<const Request> requests, const SimOptions& o, Phase phase, bool caching, AcceptanceDraw accept, LoraSlots lora,
           std::vector<Live> live, int64_t total_blocks, int64_t dp_ranks, SimRun& run);

  /// The running requests' pass: each takes the step's budget in admission order (a chunk
  /// of its prompt while prefilling, else a decode of `verify` tokens), taking the KV
  /// blocks its tokens need and preempting the latest admitted (recompute: vLLM's default)
  /// when the pool is short. Fills decode_ctx (decode_rank), chunks/chunk_owner
  /// (chunk_rank), and decode_owner with the decodes whose tokens emit_tokens must count:
  /// with one token a decode and no prefix cache, a decode's common token (not its first,
  /// not its last, one step after the previous) is taken here (kv_tokens, generated,
  /// folded_steady; last_token_s kTokenAtStepStart) and its place left out, the emit pass
  /// over every decode being about a fifth of bench_traces' production_day. Same tokens,
  /// same order of everything else.
  struct Scheduled {
    int64_t budget, context_sum, prefill_tokens;
    bool preempted;
    int64_t decodes;  ///< the step's decodes (decode_ctx lists them only without `bulk`)
  };
  [[gnu::noinline]] Scheduled schedule_running(int64_t budget);
  /// schedule_running where `bulk` holds: the same budget, blocks, preemptions, chunks and
  /// tokens in the same order, with the quiet requests (Running::due) counted in `quiet`
  /// and `quiet_context_sum` rather than visited; a quiet request is visited (woken) at the
  /// step it is due, when the budget runs out before it, or when it is preempted. The step's
  /// decode contexts are not listed (decode_ctx stays empty: StepMix::decode_count).
  [[gnu::noinline]] Scheduled schedule_bulk(int64_t budget);
  /// After the step's tokens out (emit_tokens), before drop_finished: the quiet requests
  /// took their token (tick + 1), and each request the step ran that will take its next
  /// token as a common one within its blocks joins them (step_bulk.cc).
  void park(double end);
  /// Then the waiting requests, first come first served, while `s` has budget and the running
  /// list room (none after a preemption: vLLM); each joins `running` with a decode (its KV
  /// from an upstream prefill pool) or a chunk of its prompt after its cached prefix. Passes
  /// over a request whose adapter would exceed max_loras (LoraSlots::admits); stops at the
  /// first that does not fit. Updates `s`'s budget, context_sum and prefill_tokens.
  void admit_waiting(Scheduled& s);
  /// The step's tokens at its `end` (it began at `start`): a chunk completing its prompt
  /// yields the first, a decode its kept ones (AcceptanceDraw with drafts). Finishes those
  /// that reach their output (listing their places in `done`). Returns the tokens one step
  /// after their request's previous token (StepSample::steady_tokens).
  [[gnu::noinline]] int32_t emit_tokens(double start, double end);
  /// Takes the requests emit_tokens finished (`done`) out of `running`, the others kept in
  /// order; clears `done`.
  void drop_finished();
  /// Request `i` finished at `when`: its blocks and rank released, counted in `run`.
  void finish(int32_t i, double when);
  /// `r` leaves the running list for the waiting queue's head: its KV released, its prompt
  /// and generated tokens to be computed again (recompute preemption).
  void preempt(const Running& r);

  /// ceil(tokens / block) for tokens >= 0, a shift where the block is a power of two (vLLM's
  /// 16 and the other engines' sizes are): the division was the scheduler's costliest
  /// instruction per running request per step. Same integers either way.
  int64_t blocks_for(int64_t tokens) const { return pow2 ? (tokens + block - 1) >> shift : (tokens + block - 1) / block; }
  /// The owner id of request `i`'s blocks in the prefix cache.
  static uint64_t own(int32_t i) { return static_cast<uint64_t>(i) + 1; }

  const Deployment& d;
  std::span<const Request> requests;
  const SimOptions& o;
  const EnginePolicy& pol;
  Phase phase;
  SimRun& run;
  bool caching;
  /// Speculative decoding: a decode verifies K + 1 tokens and keeps a drawn 1..K+1 of them.
  AcceptanceDraw accept;
  int64_t verify;  ///< tokens a decode pushes
  int64_t block;
  bool pow2;
  int shift;
  /// LoRA slots (lora_slots.h) take their HBM from the KV cache, as vLLM allocates them first.
  LoraSlots lora;
  int64_t total_blocks;
  bool dp;  ///< more than one data-parallel attention rank
  std::vector<Live> live;
  std::deque<int32_t> waiting;
  StepList<Running> running;
  StepList<int32_t> done;  ///< places in `running` of the requests the step finished
  StepList<int64_t> decode_ctx;
  /// The step's decodes and chunks: their places in `running`, and their ranks (read only
  /// under data-parallel attention, so kept only then).
  StepList<int32_t> decode_owner, chunk_owner, decode_rank, chunk_rank;
  StepList<PrefillChunk> chunks;
  /// Data-parallel attention ranks and their shares of the step's budget (rank_budget.h).
  RankBudgets ranks;
  /// The KV blocks, with the prefix cache over them (kv_pool.h).
  KvPool pool;
  /// Offload tiers behind the cache (kv_offload.h): fetches of a step load layer by layer.
  bool offload;
  TierFetch fetch;
  double step_fetch_s = 0;
  /// Tokens one step after their request's previous one that schedule_running took itself
  /// this step (plain decodes: Running::last_token_s); emit_tokens adds the others.
  int32_t folded_steady = 0;
  int64_t finished = 0;
  double t = 0;  ///< the clock: the next step's start (s)
  /// Bulk decodes (step_bulk.cc; docs/simulator.md 5): plain decodes (one token, no prefix
  /// cache) on one rank, no adapters, no pipeline stages, every attention group over the
  /// whole context, so that the engine step reads the decodes through their count and
  /// context sum only (StepMix::decode_count). Set by run_at_scheduler (bulk_decodes).
  bool bulk = false;
  int64_t tick = 0;               ///< steps run: the quiet requests' clock (Running::due)
  int64_t quiet = 0;              ///< quiet running requests (Running::due > 0)
  int64_t quiet_context_sum = 0;  ///< their KV tokens at step `tick`

 private:
  /// Quiet request `R` at step `tick`: its fields back to their values (its last token at
  /// `last_token_s`, kTokenAtStepStart: the step's start), no longer counted in `quiet`.
  void wake(Running& R, double last_token_s);
};

/// Whether a replica's run may use bulk decodes (StepLoop::bulk): `verify` 1, no prefix
/// cache, `dp_ranks` 1 and `pp` 1, no LoRA adapters, and every attention group of `d` without
/// a window or a sparse reach, its KV not sharded by batch.
bool bulk_decodes(const Deployment& d, int64_t verify, bool caching, int64_t dp_ranks, int64_t pp, bool adapters);

}  // namespace chalk::sim::detail
