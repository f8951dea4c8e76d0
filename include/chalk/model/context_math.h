// Internal: how many tokens a query attends to, with sliding windows.
#pragma once

#include <algorithm>
#include <cstdint>

namespace chalk::detail {

/// Tokens attended at `context` by a layer with `window` (0 = the whole context).
inline double attended(int64_t context, int64_t window) {
  return static_cast<double>(window > 0 ? std::min(context, window) : context);
}

/// sum over c = prefix+1 .. prefix+n of min(c, window) (window 0 = unbounded): the
/// tokens attended by n causal queries after a cached prefix.
inline double causal_attended_sum(int64_t prefix, int64_t n, int64_t window) {
  const double a = static_cast<double>(prefix), p = static_cast<double>(n);
  if (window <= 0 || prefix + n <= window) return p * a + p * (p + 1) / 2;
  const double n1 = static_cast<double>(std::max<int64_t>(0, window - prefix));
  return n1 * a + n1 * (n1 + 1) / 2 + (p - n1) * static_cast<double>(window);
}

}  // namespace chalk::detail
