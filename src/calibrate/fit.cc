// The bounded robust Levenberg-Marquardt fit of `chalk calibrate` (fit.h; the method:
// Levenberg 1944, Marquardt 1963; soft-L1 loss by iteratively reweighted least squares as
// in SciPy's least_squares(loss="soft_l1"), its Jacobian from forward differences).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chalk/base/error.h"
#include "chalk/calibrate/fit.h"

namespace chalk::calibrate {
namespace {

/// Forward-difference step in units of a constant's scale: big enough to step over the
/// simulator's discrete scheduling decisions, small against the scale.
constexpr double kStep = 0.05;
/// A constant moving no prediction by this (log) per scale unit is not determined by the runs.
constexpr double kSensitive = 1e-3;

using Matrix = std::vector<std::vector<double>>;

struct Problem {
  const std::vector<const RunModel*>& runs;
  std::vector<int> free;  ///< indices of Constant fitted
  Values base;            ///< every constant's value; the free ones are overwritten
  double f;               ///< soft-L1 scale

  Values values(const std::vector<double>& x) const {
    Values v = base;
    for (std::size_t k = 0; k < free.size(); ++k) v[free[k]] = x[k] * info(static_cast<Constant>(free[k])).scale;
    return v;
  }
  std::vector<double> r(const std::vector<double>& x) const {
    const Values v = values(x);
    std::vector<double> out;
    for (const auto* m : runs) {
      const auto ri = residuals(*m, v);
      out.insert(out.end(), ri.begin(), ri.end());
    }
    return out;
  }
  double cost(const std::vector<double>& r) const {
    double c = 0;
    for (double ri : r) c += 2 * f * f * (std::sqrt(1 + (ri / f) * (ri / f)) - 1);
    return c;
  }
  std::vector<double> weights(const std::vector<double>& r) const {
    std::vector<double> w;
    for (double ri : r) w.push_back(1 / std::sqrt(1 + (ri / f) * (ri / f)));
    return w;
  }
  double lo(std::size_t k) const { const auto& i = info(static_cast<Constant>(free[k])); return i.lower / i.scale; }
  double hi(std::size_t k) const { const auto& i = info(static_cast<Constant>(free[k])); return i.upper / i.scale; }
  /// J[i][k] = d r_i / d x_k by a forward difference (backward at the upper bound).
  Matrix jacobian(const std::vector<double>& x, const std::vector<double>& r0) const {
    Matrix J(r0.size(), std::vector<double>(free.size(), 0));
    for (std::size_t k = 0; k < free.size(); ++k) {
      std::vector<double> xs = x;
      const double h = x[k] + kStep <= hi(k) ? kStep : -kStep;
      xs[k] += h;
      const auto rs = r(xs);
      for (std::size_t i = 0; i < r0.size(); ++i) J[i][k] = (rs[i] - r0[i]) / h;
    }
    return J;
  }
};

/// Solves A x = b by Gauss-Jordan with partial pivoting; false when A is singular.
bool solve(Matrix A, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t i = c + 1; i < n; ++i) if (std::abs(A[i][c]) > std::abs(A[p][c])) p = i;
    if (std::abs(A[p][c]) < 1e-300) return false;
    std::swap(A[p], A[c]);
    std::swap(b[p], b[c]);
    for (std::size_t i = 0; i < n; ++i) {
      if (i == c) continue;
      const double q = A[i][c] / A[c][c];
      for (std::size_t j = c; j < n; ++j) A[i][j] -= q * A[c][j];
      b[i] -= q * b[c];
    }
  }
  x.resize(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = b[i] / A[i][i];
  return true;
}

/// J^T W J and J^T W r.
void normal(const Matrix& J, const std::vector<double>& w, const std::vector<double>& r, Matrix& A, std::vector<double>& g) {
  const std::size_t p = J.empty() ? 0 : J[0].size();
  A.assign(p, std::vector<double>(p, 0));
  g.assign(p, 0);
  for (std::size_t i = 0; i < J.size(); ++i) {
    for (std::size_t a = 0; a < p; ++a) {
      g[a] += J[i][a] * w[i] * r[i];
      for (std::size_t b = 0; b < p; ++b) A[a][b] += J[i][a] * w[i] * J[i][b];
    }
  }
}

struct LmResult {
  std::vector<double> x;
  int iterations = 0;
};

LmResult levenberg_marquardt(const Problem& pr, std::vector<double> x, int max_iterations) {
  std::vector<double> r = pr.r(x);
  double c = pr.cost(r), lambda = 1e-2;
  int it = 0;
  for (; it < max_iterations; ++it) {
    const Matrix J = pr.jacobian(x, r);
    Matrix A;
    std::vector<double> g;
    normal(J, pr.weights(r), r, A, g);
    bool accepted = false, converged = false;
    for (int tries = 0; tries < 8 && !accepted; ++tries) {
      Matrix D = A;
      for (std::size_t k = 0; k < D.size(); ++k) D[k][k] += lambda * std::max(A[k][k], 1e-12);
      std::vector<double> minus_g(g.size()), step;
      for (std::size_t k = 0; k < g.size(); ++k) minus_g[k] = -g[k];
      if (!solve(D, minus_g, step)) break;
      std::vector<double> xn = x;
      double moved = 0;
      for (std::size_t k = 0; k < xn.size(); ++k) {
        xn[k] = std::clamp(x[k] + step[k], pr.lo(k), pr.hi(k));
        moved = std::max(moved, std::abs(xn[k] - x[k]));
      }
      if (moved < 1e-4) { converged = true; break; }
      const auto rn = pr.r(xn);
      const double cn = pr.cost(rn);
      if (cn < c) {
        converged = (c - cn) < 1e-10 * std::max(c, 1e-30);
        x = xn, r = rn, c = cn, lambda = std::max(lambda / 3, 1e-7), accepted = true;
      } else {
        lambda *= 4;
      }
    }
    if (!accepted || converged) break;
  }
  return {x, it + 1};
}

double run_error(const RunModel& m, const Values& v) {
  const auto r = residuals(m, v);
  double s = 0;
  for (double ri : r) s += std::abs(std::exp(ri) - 1);
  return r.empty() ? 0 : s / static_cast<double>(r.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

FitReport fit(const std::vector<RunModel>& runs, const FitOptions& o) {
  if (o.constants.empty()) {
    throw InputError("--fit", "names no constant; expected some of request_overhead_s, host_s_per_sequence, kernel_floor_s, allreduce_latency_s");
  }
  if (runs.empty()) throw InputError("runs", "none given; expected benchmark result files");
  // One profile per engine on one system: runs of several models or parallel layouts share the
  // engine's constants, but the kernel floor and the all-reduce latency are the chip's and the
  // interconnect's, and the fit starts every run from the first run's defaults.
  for (const auto& m : runs) {
    if (m.d.system.name != runs.front().d.system.name) {
      throw InputError("hardware", fmt::format("{} ran on {}, {} on {}; expected the runs of one system per profile", m.run.source,
                                               m.d.system.name, runs.front().run.source, runs.front().d.system.name));
    }
  }
  FitReport rep;
  const Values start = defaults_of(runs.front());
  std::vector<const RunModel*> all;
  for (const auto& m : runs) all.push_back(&m);
  for (int k = 0; k < kConstants; ++k) {
    FittedConstant c;
    c.id = static_cast<Constant>(k);
    c.name = info(c.id).name;
    c.initial = c.value = start[k];
    if (std::find(o.constants.begin(), o.constants.end(), c.id) == o.constants.end()) c.note = "not asked for (--fit): the engine's default";
    rep.constants.push_back(c);
  }
  // Which asked-for constants the runs are sensitive to, at the defaults.
  Problem probe{all, {}, start, o.loss_scale};
  for (Constant c : o.constants) probe.free.push_back(static_cast<int>(c));
  std::sort(probe.free.begin(), probe.free.end());
  probe.free.erase(std::unique(probe.free.begin(), probe.free.end()), probe.free.end());
  std::vector<double> x0;
  for (int k : probe.free) x0.push_back(start[k] / info(static_cast<Constant>(k)).scale);
  const auto r0 = probe.r(x0);
  rep.residual_count = static_cast<int64_t>(r0.size());
  const Matrix J0 = probe.jacobian(x0, r0);
  Problem pr{all, {}, start, o.loss_scale};
  std::vector<double> x;
  const bool tensor_parallel = std::any_of(runs.begin(), runs.end(), [](const RunModel& m) { return tp_of(m) > 1; });
  for (std::size_t k = 0; k < probe.free.size(); ++k) {
    if (probe.free[k] == static_cast<int>(Constant::allreduce_latency) && !tensor_parallel) {
      rep.constants[probe.free[k]].note = "no run is tensor-parallel (TP > 1): the all-reduce runs between TP ranks only; kept at the default";
      continue;
    }
    double most = 0;
    for (const auto& row : J0) most = std::max(most, std::abs(row[k]));
    if (most < kSensitive) {
      rep.constants[probe.free[k]].note = fmt::format("no run is sensitive to it (a change of {:.3g} s moves no prediction by 0.1 %): kept at the default",
                                                      info(static_cast<Constant>(probe.free[k])).scale);
    } else {
      pr.free.push_back(probe.free[k]);
      x.push_back(x0[k]);
    }
  }
  const std::size_t p = pr.free.size();
  if (p == 0) {
    const bool only_allreduce = probe.free.size() == 1 && probe.free[0] == static_cast<int>(Constant::allreduce_latency) && !tensor_parallel;
    if (only_allreduce) throw InputError("runs", "none is tensor-parallel (TP > 1): allreduce_latency_s cannot be fitted; expected runs at TP > 1");
    throw InputError("runs", "no run is sensitive to any constant asked for; nothing to fit (see the notes with --json)");
  }
  if (runs.size() < p + 1) {
    std::string names;
    for (int k : pr.free) names += std::string(names.empty() ? "" : ", ") + info(static_cast<Constant>(k)).name;
    throw InputError("runs", fmt::format("{} run{} cannot determine {} constant{} ({}): expected at least {} runs (constants + 1); add runs or "
                                         "name fewer with --fit",
                                         runs.size(), runs.size() == 1 ? "" : "s", p, p == 1 ? "" : "s", names, p + 1));
  }
  const LmResult lm = levenberg_marquardt(pr, x, o.max_iterations);
  rep.iterations = lm.iterations;
  const Values best = pr.values(lm.x);
  // Uncertainty: s^2 (J^T W J)^-1 at the optimum.
  const auto r = pr.r(lm.x);
  const auto w = pr.weights(r);
  const Matrix J = pr.jacobian(lm.x, r);
  Matrix A;
  std::vector<double> g;
  normal(J, w, r, A, g);
  double wrr = 0, rr = 0, rr0 = 0;
  for (std::size_t i = 0; i < r.size(); ++i) wrr += w[i] * r[i] * r[i], rr += r[i] * r[i], rr0 += r0[i] * r0[i];
  const double dof = static_cast<double>(r.size()) - static_cast<double>(p);
  for (std::size_t k = 0; k < p; ++k) {
    FittedConstant& c = rep.constants[pr.free[k]];
    c.fitted = true;
    c.value = best[pr.free[k]];
    c.at_bound = lm.x[k] <= pr.lo(k) + 1e-9 || lm.x[k] >= pr.hi(k) - 1e-9;
    std::vector<double> e(p, 0), col;
    e[k] = 1;
    if (dof > 0 && solve(A, e, col) && col[k] >= 0) c.sigma = info(c.id).scale * std::sqrt(wrr / dof * col[k]);
    if (c.at_bound) c.note = "at its bound: the runs push it past the physical range";
  }
  const double m = static_cast<double>(std::max<std::size_t>(r.size(), 1));
  rep.rms_log_before = std::sqrt(rr0 / m);
  rep.rms_log_after = std::sqrt(rr / m);
  std::vector<double> before, after, loo;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunError e;
    e.source = runs[i].run.source;
    e.before = run_error(runs[i], start);
    e.after = run_error(runs[i], best);
    before.push_back(e.before);
    after.push_back(e.after);
    rep.runs.push_back(e);
  }
  if (o.leave_one_out && runs.size() >= p + 2) {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<const RunModel*> others;
      for (std::size_t j = 0; j < runs.size(); ++j) if (j != i) others.push_back(&runs[j]);
      const Problem sub{others, pr.free, start, o.loss_scale};
      const LmResult l = levenberg_marquardt(sub, x, o.max_iterations);
      rep.runs[i].leave_one_out = run_error(runs[i], sub.values(l.x));
      loo.push_back(*rep.runs[i].leave_one_out);
    }
    rep.median_error_loo = median(loo);
  } else if (o.leave_one_out) {
    rep.notes.push_back(fmt::format("leave-one-out needs at least {} runs (constants + 2); not computed", p + 2));
  }
  rep.median_error_before = median(before);
  rep.median_error_after = median(after);
  return rep;
}

}  // namespace chalk::calibrate
