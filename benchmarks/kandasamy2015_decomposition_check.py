"""Issue 20, kandasamy2015 Fig. 3 diagnosis (docs/reproductions/kandasamy2015-diagnosis.md).

Why some Add-d/M lose to GP-UCB at full scale: targeted checks, seeded as hdbo.experiments.runner.

Usage (OMP_NUM_THREADS=1):
  python benchmarks/kandasamy2015_decomposition_check.py runs [SUMMARY]
      From the committed summary (default docs/reproductions/summaries/kandasamy2015-full.csv.gz):
      per panel and Add-d/M, the final simple regret by the number of true groups the last learned
      decomposition contains and the mean regret of the queries after t = 100.
  python benchmarks/kandasamy2015_decomposition_check.py probe D dp Mp d SEED T1,T2,...
      One run of Add-d (the spec's settings) on (D, dp, Mp); at each listed t: the model's mean and
      summed group standard deviations (standardized units) at the proposal, at the best observed
      point and at 2000 uniform points, and the proposal's true value.
  python benchmarks/kandasamy2015_decomposition_check.py profile D dp Mp d SEED T
      After T evaluations of Add-d: the log marginal likelihood over a grid of bandwidths (scale
      maximized on a grid), and where an 8-iteration DIRECT search over log-bandwidth in
      [1e-5, 5] and log-scale in [0.03, 30] std(y_init) lands (the authors' code's search),
      with that range read as a standard deviation and as a variance.
  python benchmarks/kandasamy2015_decomposition_check.py floor D dp Mp d LOWER SEEDS
      Full runs (T = 510) of Add-d with the bandwidth's lower bound raised to LOWER (the spec
      has 0.05): S_T, R_T/T and the final bandwidth per seed (SEEDS comma-separated).
"""
from __future__ import annotations

import sys
import time
from collections import defaultdict

import numpy as np

from hdbo.experiments.runner import build_method, build_problem
from hdbo.experiments.store import RunConfig
from hdbo.experiments.summary import read_summary

SPEC_PARAMS = {"gp_prior": "none", "maximizer": "direct", "repeats": "perturb"}


def _config(D: int, dp: int, Mp: int, d: int, seed: int, budget: int, extra: dict | None = None) -> RunConfig:
    params = {"d": d, **SPEC_PARAMS, **(extra or {})}
    return RunConfig(experiment="check", problem="additive-trimodal", method="add-gp-ucb", seed=seed,
                     budget=budget, problem_params={"dim": D, "d": dp, "M": Mp}, method_params=params)


def runs_table(path: str) -> None:
    cells: dict[tuple[str, str], list] = defaultdict(list)
    for run in read_summary(path):
        if run.status != "finished" or not run.label.startswith("Add") or not run.diagnostics:
            continue
        k = run.diagnostics.get("true_groups_recovered")
        late = float(np.mean(run.regret[run.t >= 100])) if np.any(run.t >= 100) else float("nan")
        cells[(run.problem_label, run.label)].append((k, float(np.nanmin(run.regret)), late))
    print("| panel | method | runs | S_T by true groups recovered (runs) | mean regret after t = 100 |")
    print("|---|---|---:|---|---:|")
    for (panel, label), rows in sorted(cells.items()):
        by_k: dict[int, list[float]] = defaultdict(list)
        for k, s, _ in rows:
            by_k[-1 if k is None else int(k)].append(s)
        parts = ", ".join(f"{k}: {np.mean(v):.3g} ({len(v)})" for k, v in sorted(by_k.items()))
        print(f"| {panel} | {label} | {len(rows)} | {parts} | {np.mean([r[2] for r in rows]):.0f} |")


def probe(D: int, dp: int, Mp: int, d: int, seed: int, stops: list[int]) -> None:
    cfg = _config(D, dp, Mp, d, seed, max(stops) + 1)
    prob, rng = build_problem(cfg), np.random.default_rng(0)
    m = build_method(cfg, prob)
    U = rng.random((2000, D))
    for t in range(max(stops) + 1):
        x = m.ask()
        if t in stops:
            gp, rb = m.gp_, float(np.sqrt(m.beta_t()))

            def moments(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                mu = sum(gp.posterior_fn(j, standardized=True)(Z[:, g])[0] for j, g in enumerate(m.groups_))
                sd = sum(gp.posterior_fn(j, standardized=True)(Z[:, g])[1] for j, g in enumerate(m.groups_))
                return mu, sd

            ib = int(np.argmax(m.y_all))
            mp_, sp_ = moments(m.to_canonical(np.asarray(x)[None]))
            mb, sb = moments(m.to_canonical(np.asarray(m.X_all)[ib][None]))
            mu_u, sd_u = moments(U)
            hp = m.diagnostics()["hyperparameters"]
            print(f"t = {t}: bandwidth {hp['lengthscale']:.3f}, scale {hp['variance']:.3f}, sqrt(beta) {rb:.2f}, "
                  f"true groups in the decomposition {m.diagnostics()['true_groups_recovered']}")
            print(f"  proposal:        mean {mp_[0]:6.2f}  sum of sd {sp_[0]:5.2f}  true f {prob(x):8.1f}")
            print(f"  best observed:   mean {mb[0]:6.2f}  sum of sd {sb[0]:5.2f}  true f {m.y_all[ib]:8.1f}")
            print(f"  uniform points:  mean (median) {np.median(mu_u):6.2f}  sum of sd (median) {np.median(sd_u):5.2f}")
        m.tell(x, prob(x))


def profile(D: int, dp: int, Mp: int, d: int, seed: int, T: int) -> None:
    from scipy.optimize import direct

    cfg = _config(D, dp, Mp, d, seed, T + 1)
    prob = build_problem(cfg)
    m = build_method(cfg, prob)
    for _ in range(T):
        x = m.ask()
        m.tell(x, prob(x))
    m.ask()  # the refit this step would use
    gp = m.gp_
    th0 = gp.theta.copy()  # log scale, log bandwidth, log noise
    print(f"fitted: bandwidth {np.exp(th0[1]):.3f}, scale {np.exp(th0[0]):.4f}, log ML {gp.log_marginal_likelihood():.2f}")
    print("| bandwidth | log ML (scale maximized) | scale |")
    print("|---:|---:|---:|")
    for h in (0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.8, 2.5, 4.0):
        vals = []
        for lv in np.linspace(-6, 6, 49):
            th = th0.copy()
            th[0], th[1] = lv, np.log(h)
            vals.append((gp.log_marginal_likelihood(th), lv))
        best, lv = max(vals)
        print(f"| {h} | {best:.2f} | {np.exp(lv):.3g} |")
    y = np.asarray(m.y_all)
    s0, sy = float(np.std(y[:10])), float(np.std(y))  # the GP standardizes y by sy

    def neg(t: np.ndarray) -> float:
        th = th0.copy()
        th[1], th[0] = t[0], t[1]
        v = gp.log_marginal_likelihood(th)
        return -v if np.isfinite(v) else 1e25

    for reading, (lo, hi) in (("std", (2 * np.log(0.03 * s0 / sy), 2 * np.log(30 * s0 / sy))),
                              ("variance", (np.log(0.03 * s0 / sy**2), np.log(30 * s0 / sy**2)))):
        res = direct(neg, [(np.log(1e-5), np.log(5.0)), (lo, hi)], maxiter=8)
        print(f"DIRECT (scale range read as a {reading}): bandwidth {np.exp(res.x[0]):.3f}, log ML {-res.fun:.2f}")


def floor(D: int, dp: int, Mp: int, d: int, lower: float, seeds: list[int]) -> None:
    print("| seed | S_T | R_T/T | final bandwidth | seconds |")
    print("|---:|---:|---:|---:|---:|")
    for seed in seeds:
        cfg = _config(D, dp, Mp, d, seed, 510, {"lengthscale_bounds": [lower, 20.0]})
        prob = build_problem(cfg)
        m = build_method(cfg, prob)
        t0, regrets = time.time(), []
        for _ in range(510):
            x = m.ask()
            y = prob(x)
            m.tell(x, y)
            regrets.append(prob.optimum_value - y)
        h = m.diagnostics()["hyperparameters"]["lengthscale"]
        print(f"| {seed} | {min(regrets):.3g} | {np.mean(regrets):.0f} | {h:.2f} | {time.time() - t0:.0f} |", flush=True)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "runs":
        runs_table(args[0] if args else "docs/reproductions/summaries/kandasamy2015-full.csv.gz")
    elif mode == "probe":
        probe(*map(int, args[:5]), [int(s) for s in args[5].split(",")])
    elif mode == "profile":
        profile(*map(int, args[:6]))
    elif mode == "floor":
        floor(*map(int, args[:4]), float(args[4]), [int(s) for s in args[5].split(",")])
    else:
        raise SystemExit(__doc__)
