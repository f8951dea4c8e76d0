// A step's tokens out, and the requests it finished out of the running list (step_loop.h).
#include <algorithm>

#include "step_loop.h"

namespace chalk::sim::detail {

void StepLoop::finish(int32_t i, double when) {
  auto& rec = run.requests[i];
  rec.finish_s = when;
  pool.release(live[i].kv);
  ranks.drop(live[i].rank);
  ++finished;
  run.end_s = std::max(run.end_s, when);
}

// Out of line (step_loop.h), its invariants as locals: through `this` each was loaded again
// after every store. The running list does not move while the tokens go out.
int32_t StepLoop::emit_tokens(double start, double end) {
  int32_t steady = folded_steady;  // the common tokens schedule_running took (plain decodes)
  const int64_t q = verify;
  const bool cache = caching;
  Running* const rs = running.empty() ? nullptr : &running[0];
  auto emit = [&](Running& R, int64_t tokens) {  // `tokens` arrive together: one gap
    R.generated += tokens;
    if (R.generated == 1) {
      run.requests[R.id].first_token_s = end;
    } else if (R.last_token_s == start) {
      ++steady;
    } else {
      run.long_token_gaps_s.push_back(end - R.last_token_s);
    }
    R.last_token_s = end;
    if (R.generated >= R.output) {
      if (!cache) live[R.id].kv.blocks = R.held;  // kept in the running list only (schedule_running)
      finish(R.id, end);
      done.push_back(static_cast<int32_t>(&R - rs));
    }
  };
  // The whole blocks a request's computed tokens completed join the cache.
  const auto commit = [&](const Running& R) { pool.commit(live[R.id].kv, requests[R.id], own(R.id), R.kv_tokens, block); };
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    Running& R = rs[chunk_owner[k]];
    R.kv_tokens += chunks[k].tokens;
    if (cache) commit(R);
    if (R.kv_tokens >= R.prefill_target) {
      R.prefill_target = 0;
      emit(R, 1);
    }
  }
  if (q == 1 && !cache) {
    // Plain decodes (no drafts, no prefix cache): schedule_running took the common token
    // (not a first one, one step after the last, not the last) and left those out of
    // decode_owner, except a decode-pool request admitted this step; the others go through
    // emit, out of line, so that this loop's counters stay in registers.
    const auto emit_rare = [&](Running& R, int64_t tokens) __attribute__((noinline)) { emit(R, tokens); };
    for (const int32_t p : decode_owner) {
      Running& R = rs[p];
      const int64_t kept = std::min<int64_t>(1, R.output - R.generated);
      R.kv_tokens += kept;
      const int64_t generated = R.generated + kept;
      if (generated != 1 && generated < R.output && R.last_token_s == start) [[likely]] {
        R.generated = generated;
        ++steady;
        R.last_token_s = end;
      } else {
        emit_rare(R, kept);
      }
    }
    return steady;
  }
  for (const int32_t p : decode_owner) {
    Running& R = rs[p];
    const int64_t drawn = q > 1 ? accept.draw() : 1;  // no drafts: one token, no draw
    if (q > 1) {
      ++run.verify_steps;
      run.verify_tokens_kept += drawn;
    }
    const int64_t kept = std::min(drawn, R.output - R.generated);
    R.kv_tokens += kept;
    if (cache) commit(R);  // the whole blocks the kept tokens completed join the cache
    emit(R, kept);
  }
  return steady;
}

// A step finishes a few of its ~100 requests: the runs between the finished places move
// down (copying the whole list each time was a fifth of bench_sim's simulate_requests).
void StepLoop::drop_finished() {
  int32_t* const gone = &done[0];
  std::sort(gone, gone + done.size());
  Running* const rs = &running[0];
  std::size_t kept = static_cast<std::size_t>(gone[0]);
  for (std::size_t j = 0; j < done.size(); ++j) {
    const std::size_t from = static_cast<std::size_t>(gone[j]) + 1, to = j + 1 < done.size() ? static_cast<std::size_t>(gone[j + 1]) : running.size();
    std::copy(rs + from, rs + to, rs + kept);
    kept += to - from;
  }
  running.truncate(kept);
  done.clear();
}

}  // namespace chalk::sim::detail
