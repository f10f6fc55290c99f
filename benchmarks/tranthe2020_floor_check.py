"""Issue 20, tranthe2020 Figure 1: how low can MS-UCB's simple regret go at all?

MS-UCB (N0 = 1, alpha = 0, d = 5) queries only points whose first D - d coordinates are one of
the z in Z_t, drawn uniformly at random, one per iteration (Algorithm 1, steps 4-6). So whatever
its GP and its acquisition search do, its simple regret after T evaluations is at least

    floor = min( min over z in Z_T of [ min over y of r(A y + B z) ],  min over the initial points of r )

(never above the paper's "Term 1" of the regret, Lemma 4, which is taken at the z closest to z*). For the four functions of
Figure 1 the inner minimum is exact: Ackley, Levy and Hyper-Ellipsoid are minimized over the
free coordinates at the optimum's own coordinates (Levy and Hyper-Ellipsoid are sums of
one-coordinate terms; Ackley's two terms are both smallest at y = 0), checked numerically below;
embedded Camelback is minimized over its free active coordinate by solving the polynomial
stationarity condition.

Usage (OMP_NUM_THREADS=1):
  python benchmarks/tranthe2020_floor_check.py floor [REPS]
      For each panel of Figure 1 (experiments/tranthe2020/fig1_d*.toml, T = 320, so 300 z and
      20 initial points): the distribution of log10 floor over REPS (default 1000) random draws
      of Z_T and of the initial points (Camelback: and of its two active coordinates), and in how
      many draws it lies above each baseline's mean log10 S_T (committed summary); random
      search's median log10 S_T with the same T; a few derived numbers (Camelback's chance of
      two fixed active coordinates, Theorem 1's exponent, Hyper-Ellipsoid's other form).
  python benchmarks/tranthe2020_floor_check.py fig3 [REPS]
      Figure 3 (d in {1, 2, 5, 10}, D = 100, Ackley and Hyper-Ellipsoid): the same floor for each
      d (D - d fixed coordinates), next to our runs' mean log10 S_T per d, and in how many draws
      a larger d has the lower floor (whether "larger d converges faster" can show at T = 320).
  python benchmarks/tranthe2020_floor_check.py runs [STORE]
      For the spec's MS-UCB runs in a local store (default runs/tranthe2020-full.db): S_T, the
      run's own floor over all of its Z_T (rebuilt from its seed with MSUCB.subspaces) and over
      the z it queried, and the gap log10 S_T - log10 floor (what a better GP or acquisition
      search could have gained at most). Asserts that every model-based query lies on one of
      its subspaces (else it counts it as "other") and never below its subspace's floor.
"""
from __future__ import annotations

import json
import math
import sqlite3
import sys

import numpy as np
from scipy.optimize import minimize

from hdbo.experiments.runner import build_method, build_problem
from hdbo.experiments.spec import find_specs, load_spec
from hdbo.experiments.store import RunConfig
from hdbo.experiments.summary import read_summary

SUMMARY = "docs/reproductions/summaries/tranthe2020-full.csv.gz"
STORE = "runs/tranthe2020-full.db"
N_INIT, T, D_FREE = 20, 320, 5
CAMEL_MIN = -1.0316284534898774


def _specs():
    out = {}
    for path in find_specs("tranthe2020"):
        spec = load_spec(path)
        if spec.name.startswith("tranthe2020-fig1-d"):
            out[spec.name] = spec
    return dict(sorted(out.items(), key=lambda kv: int(kv[0].rsplit("d", 1)[1])))


def _problem(spec, p, seed=0):
    cfg = RunConfig(experiment=spec.name, problem=p.name, method="random", seed=seed,
                    budget=spec.budget, problem_params=dict(p.params), method_params={})
    return build_problem(cfg)


# --- Camelback: F(u1, u2) with u1 = 3 x[a0], u2 = 2 x[a1] (checked against the problem below) ---
def _camel(u1, u2):
    return (4 - 2.1 * u1**2 + u1**4 / 3) * u1**2 + u1 * u2 + (-4 + 4 * u2**2) * u2**2


def _real_roots(coeffs):
    """Real roots in [-1e9, 1e9] of the polynomials with rows of coeffs (highest power first)."""
    c = np.asarray(coeffs, dtype=float)
    n, k = c.shape[0], c.shape[1] - 1
    comp = np.zeros((n, k, k))
    comp[:, 0, :] = -c[:, 1:] / c[:, :1]
    comp[:, np.arange(1, k), np.arange(k - 1)] = 1.0
    r = np.linalg.eigvals(comp)
    return np.where(np.abs(r.imag) < 1e-9, r.real, np.nan)


def _camel_min_over_u2(u1):
    """min over u2 in [-2, 2] of F(u1, u2): dF/du2 = 16 u2^3 - 8 u2 + u1."""
    u1 = np.asarray(u1, dtype=float)
    roots = _real_roots(np.column_stack([np.full_like(u1, 16.0), 0 * u1, np.full_like(u1, -8.0), u1]))
    cand = np.column_stack([np.clip(np.nan_to_num(roots, nan=2.0), -2, 2), np.full_like(u1, -2.0), np.full_like(u1, 2.0)])
    return np.min(_camel(u1[:, None], cand), axis=1)


def _camel_min_over_u1(u2):
    """min over u1 in [-3, 3] of F(u1, u2): dF/du1 = 2 u1^5 - 8.4 u1^3 + 8 u1 + u2."""
    u2 = np.asarray(u2, dtype=float)
    z = 0 * u2
    roots = _real_roots(np.column_stack([z + 2.0, z, z - 8.4, z, z + 8.0, u2]))
    cand = np.column_stack([np.clip(np.nan_to_num(roots, nan=3.0), -3, 3), z - 3.0, z + 3.0])
    return np.min(_camel(cand, u2[:, None]), axis=1)


def camel_floor(Z, a0, a1, D):
    """Regret floor of each subspace z (rows of Z, the first D - d coordinates) on Camelback."""
    nz = D - D_FREE
    in_z0, in_z1 = a0 < nz, a1 < nz
    if in_z0 and in_z1:
        F = _camel(3 * Z[:, a0], 2 * Z[:, a1])
    elif in_z0:
        F = _camel_min_over_u2(3 * Z[:, a0])
    elif in_z1:
        F = _camel_min_over_u1(2 * Z[:, a1])
    else:
        F = np.full(len(Z), CAMEL_MIN)
    return F - CAMEL_MIN


def floor_fn(problem, D, d=D_FREE):
    """z rows (n, D - d) -> regret of the best point of each subspace (its d free coordinates last)."""
    if problem.name == "camelback":
        assert d == D_FREE
        a0, a1 = problem.structure["active_dims"]
        return lambda Z: camel_floor(Z, a0, a1, D)
    ystar = np.atleast_2d(problem.optimizer)[0, D - d:]

    def f(Z):
        X = np.hstack([Z, np.broadcast_to(ystar, (len(Z), d))])
        return problem.regret(problem(X))
    return f


def self_check(problem, D, rng, n=5):
    """The inner minimum is exact: L-BFGS-B over y from 10 random starts never beats it."""
    fl = floor_fn(problem, D)
    worst = 0.0
    for _ in range(n):
        z = rng.uniform(-1, 1, D - D_FREE)
        best = np.inf
        for _ in range(10):
            obj = lambda y: float(problem.regret(problem(np.concatenate([z, y]))))
            res = minimize(obj, rng.uniform(-1, 1, D_FREE), method="L-BFGS-B", bounds=[(-1, 1)] * D_FREE)
            best = min(best, res.fun)
        worst = min(worst, best - float(fl(z[None])[0]))
    if problem.name == "camelback":  # the formula is the problem's
        X = rng.uniform(-1, 1, (50, D))
        a0, a1 = problem.structure["active_dims"]
        assert np.allclose(problem.regret(problem(X)), _camel(3 * X[:, a0], 2 * X[:, a1]) - CAMEL_MIN)
    return worst  # < 0 would mean a local search found a point below the "floor"


def summary_means(spec_name):
    runs = [r for r in read_summary(SUMMARY) if r.experiment == spec_name and r.status == "finished"]
    out = {}
    for r in runs:
        out.setdefault((r.problem_label, r.label), []).append(math.log10(max(float(np.nanmin(r.regret)), 1e-300)))
    return out


def _lg(v):
    return math.log10(v) if v > 0 else -math.inf


def cmd_floor(reps=1000):
    print(f"Floor under MS-UCB's S_T (N0 = 1, alpha = 0, d = {D_FREE}, T = {T}: {T - N_INIT} z and {N_INIT} "
          f"initial points), {reps} draws of Z_T and the initial points (Camelback: and of the active pair, as "
          "the run seed draws it); ours: mean log10 S_T over the finished runs of the committed summary (runs).\n")
    print("| panel | log10 floor: median (min to max) | draws with floor 0 | MS-UCB (runs) | random search: "
          "median log10 S_T | " + " | ".join(f"floor > {m}'s mean" for m in BASELINES) + " |")
    print("|---|---|---:|---|---:|" + "---:|" * len(BASELINES))
    for name, spec in _specs().items():
        D = int(name.rsplit("d", 1)[1])
        means = summary_means(name)
        for p in spec.problems:
            rng = np.random.default_rng(20_26_11_27 + D)
            bounds, rand = np.empty(reps), np.empty(reps)
            prob0 = _problem(spec, p, 0)
            worst = self_check(prob0, D, rng, n=2)
            assert worst > -1e-7, (p.label, worst)
            for i in range(reps):
                prob = _problem(spec, p, i) if prob0.name == "camelback" else prob0  # active pair per run
                Z = rng.uniform(-1, 1, (T - N_INIT, D - D_FREE))
                X0 = rng.uniform(-1, 1, (N_INIT, D))
                bounds[i] = min(float(np.min(floor_fn(prob, D)(Z))), float(np.min(prob.regret(prob(X0)))))
                rand[i] = float(np.min(prob.regret(prob(rng.uniform(-1, 1, (T, D))))))
            lb = np.array([_lg(b) for b in bounds])
            fin = lb[np.isfinite(lb)]
            rmed = float(np.median([_lg(r) for r in rand]))

            def mean_of(label):
                v = means.get((p.label, label), [])
                return (float(np.mean(v)), len(v)) if v else (float("nan"), 0)
            ms, n_ms = mean_of("MS-UCB")
            cells = []
            for m in BASELINES:
                v, n = mean_of(m)
                cells.append(f"{int(np.sum(lb > v))} ({v:.3g}, {n})" if n else "-")
            print(f"| {p.label} | {np.median(lb):.3g} ({fin.min():.3g} to {fin.max():.3g}) | {int(np.sum(bounds <= 0))} | "
                  f"{ms:.3g} ({n_ms}) | {rmed:.3g} | " + " | ".join(cells) + " |")
            sys.stdout.flush()
    print("\nCells: draws (of the total) whose floor lies above the method's mean log10 S_T (its mean, runs).")
    print("\nDerived numbers:\n")
    for D in (20, 50, 100):
        both = math.comb(D - D_FREE, 2) / math.comb(D, 2)
        print(f"- D = {D}: Camelback's two active coordinates are both among MS-UCB's {D - D_FREE} fixed ones with "
              f"probability C({D - D_FREE}, 2) / C({D}, 2) = {both:.3f}; Theorem 1's second term with alpha = 0 grows "
              f"like T^(1 - 1/(D - d)) = T^({D - D_FREE - 1}/{D - D_FREE}).")
    for D in (20, 50, 100):  # Hyper-Ellipsoid: the rotated form's weights against the axis-parallel form's
        rng = np.random.default_rng(7)
        k = D - D_FREE
        w_rot = np.arange(D, D - k, -1.0)          # sum_j (D - j + 1) x_j^2: fixed coordinates 1..k weigh D..D-k+1
        w_par = np.arange(1.0, k + 1)              # sum_j j x_j^2 (axis-parallel): they weigh 1..k
        f = []
        for w in (w_rot, w_par):
            fl = [np.min((rng.uniform(-1, 1, (T - N_INIT, k)) * 65.536) ** 2 @ w) for _ in range(200)]
            f.append(float(np.median(np.log10(fl))))
        print(f"- Hyper-Ellipsoid D = {D}, median log10 of the best z's part of the regret (200 draws, initial "
              f"points left out): rotated form (ours, SPEC) {f[0]:.3g}; axis-parallel sum_j j x_j^2 {f[1]:.3g}.")


BASELINES = ("GP-UCB", "DropoutUCB", "LineBO", "SRE", "REMBO", "HeSBO")


def cmd_fig3(reps=1000):
    """Figure 3 (d in {1, 2, 5, 10}, D = 100): the floor for each d, and how far apart the d's are."""
    spec = next(load_spec(p) for p in find_specs("tranthe2020") if load_spec(p).name == "tranthe2020-fig3")
    means = summary_means(spec.name)
    D, ds = 100, (1, 2, 5, 10)
    print(f"Figure 3: floor under MS-UCB's S_T for each subspace dimension d (N0 = 1, alpha = 0, T = {T}: "
          f"{T - N_INIT} z and {N_INIT} initial points, the d free coordinates last), {reps} draws of Z_T and the "
          "initial points per d; ours: mean log10 S_T +- standard error over the finished runs of the committed "
          "summary (runs); P(floor_d' < floor_d): in how many of the draws, paired by draw index, the larger "
          "d' has the lower floor.\n")
    print("| problem | d | log10 floor: median (10-90 %) | the subspaces' part alone: median | draws where the initial "
          "points set the floor | ours: mean log10 S_T (runs) | P(floor of the next larger d is lower) |")
    print("|---|---:|---|---:|---:|---|---:|")
    for p in spec.problems:
        prob = _problem(spec, p, 0)
        lbs, zpart, init_wins = {}, {}, {}
        for d in ds:
            rng = np.random.default_rng(20_26_11_28 + d)
            fl = floor_fn(prob, D, d)
            b, bz = np.empty(reps), np.empty(reps)
            for i in range(reps):
                Z = rng.uniform(-1, 1, (T - N_INIT, D - d))
                X0 = rng.uniform(-1, 1, (N_INIT, D))
                bz[i] = float(np.min(fl(Z)))
                b[i] = min(bz[i], float(np.min(prob.regret(prob(X0)))))
            lbs[d] = np.array([_lg(v) for v in b])
            zpart[d] = float(np.median([_lg(v) for v in bz]))
            init_wins[d] = int(np.sum(b < bz))
        for k, d in enumerate(ds):
            v = means.get((p.label, f"MS-UCB (d={d})"), [])
            ours = f"{np.mean(v):.4g} +- {np.std(v, ddof=1) / math.sqrt(len(v)):.2g} ({len(v)})" if len(v) > 1 else "-"
            nxt = f"{np.mean(lbs[ds[k + 1]] < lbs[d]):.2f}" if k + 1 < len(ds) else ""
            q = np.percentile(lbs[d], [10, 50, 90])
            print(f"| {p.label} | {d} | {q[1]:.4g} ({q[0]:.4g} to {q[2]:.4g}) | {zpart[d]:.4g} | {init_wins[d]} | "
                  f"{ours} | {nxt} |")
            sys.stdout.flush()


def cmd_runs(store=STORE):
    specs = _specs()
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    print("Per run (log10 of regrets): S_T; the run's own floor, over all 300 z of its Z_T (rebuilt from its seed "
          "with MSUCB.subspaces) and its 20 initial points; and the same floor over the z its model-based queries "
          "used. 'other' = model-based queries whose fixed coordinates are none of Z_T (random fallbacks).\n")
    print("| panel | seed | S_T | floor over Z_T | floor over the z it queried | other |")
    print("|---|---:|---:|---:|---:|---:|")
    per_panel = {}
    for name, spec in specs.items():
        D = int(name.rsplit("d", 1)[1])
        [m] = [m for m in spec.methods if m.label == "MS-UCB"]
        for p in spec.problems:
            rows = con.execute("SELECT id, seed, method_params, problem_params FROM runs WHERE experiment = ? AND "
                               "problem_label = ? AND label = 'MS-UCB' AND status = 'finished' ORDER BY seed",
                               (name, p.label)).fetchall()
            for rid, seed, mp, pp in rows:
                if json.loads(mp) != dict(m.params) or json.loads(pp) != dict(p.params):
                    continue  # a run of an older spec
                ev = con.execute("SELECT x, regret FROM evaluations WHERE run_id = ? ORDER BY t", (rid,)).fetchall()
                X = np.array([json.loads(x) for x, _ in ev])
                r = np.array([v for _, v in ev], dtype=float)
                cfg = RunConfig(experiment=name, problem=p.name, method=m.name, seed=seed, budget=spec.budget,
                                problem_params=dict(p.params), method_params=dict(m.params))
                prob = build_problem(cfg)
                method = build_method(cfg, prob)
                ZT = method.subspaces(np.arange(T - N_INIT))
                fl = floor_fn(prob, D)
                zq = X[N_INIT:, : D - D_FREE]
                dist = np.min(np.max(np.abs(zq[:, None, :] - ZT[None, :, :]), axis=2), axis=1)
                on_z = dist < 1e-9
                fq = fl(zq[on_z])
                # no query may lie below the floor of its own subspace
                assert np.all(r[N_INIT:][on_z] >= fq - 1e-9 * np.maximum(1.0, np.abs(fq))), (p.label, seed)
                init = float(np.min(r[:N_INIT]))
                other = float(np.min(r[N_INIT:][~on_z])) if np.any(~on_z) else math.inf
                floor_all = min(float(np.min(fl(ZT))), init, other)
                floor_q = min(float(np.min(fq)), init, other)
                assert np.min(r) >= floor_all - 1e-9 * max(1.0, abs(floor_all))
                vals = (_lg(float(np.min(r))), _lg(floor_all), _lg(floor_q))
                per_panel.setdefault(p.label, []).append(vals)
                print(f"| {p.label} | {seed} | " + " | ".join(f"{v:.3g}" for v in vals) + f" | {int(np.sum(~on_z))} |")
                sys.stdout.flush()
    print("\nPer panel (means over the runs above of the log10 values; gap = log10 S_T - log10 floor over Z_T, "
          "the most a better GP or acquisition search could have gained in that run):\n")
    print("| panel | runs | S_T | floor over Z_T | floor over the z it queried | gap: mean | gap: largest |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, vals in per_panel.items():
        a = np.array(vals)
        gap = a[:, 0] - a[:, 1]
        fin = np.isfinite(gap)
        gm = f"{np.mean(gap[fin]):.3g}" if fin.all() else f"{np.mean(gap[fin]):.3g} (floor 0 in {int((~fin).sum())})"
        print(f"| {label} | {len(vals)} | " + " | ".join(f"{x:.3g}" for x in np.mean(a, axis=0)) +
              f" | {gm} | {np.max(gap[fin]):.3g} |")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "floor"
    if mode == "floor":
        cmd_floor(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    elif mode == "fig3":
        cmd_fig3(int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
    elif mode == "runs":
        cmd_runs(*sys.argv[2:3])
    else:
        raise SystemExit(__doc__)
