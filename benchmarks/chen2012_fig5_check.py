"""Issue 20, chen2012 Figure 5(b, c) on the GP sample: why HDS+GP-UCB's phase 2 stays at random level.

In the full-scale runs (experiments/chen2012/fig5_joint.toml, D = 4, d = 2, T = 200) the
like-for-like baseline "GP-UCB (paper model)" (the known model on all 4 coordinates) runs at a
lower mean regret than HDS+GP-UCB's second phase (the same known model and beta_t on the 2
selected coordinates). The reading tested here: with the paper's large beta_t, GP-UCB explores
where the posterior standard deviation is largest. On all 4 coordinates it can take that
standard deviation from the two inactive ones (far from the data there) while putting the two
active ones where the posterior mean is high, so it exploits the active coordinates for free;
on the 2 selected coordinates it can only explore by moving them away from the data.

Runs are seeded exactly as ``hdbo reproduce`` seeds the spec's runs (same problem, method seed
and noise stream). For each method's queries after its first phase (HDS: its selection;
GP-UCB (paper model): its 8 initial finite differences) it prints the mean regret, and for
the queries whose two active coordinates lie within b = 0.1 (max-norm) of an earlier query's,
their share and mean regret, and the median max-norm distance of their inactive coordinates
from that earlier query (4-D method only); and, for comparison, the chance that a uniform point
would be such a revisit (the share of the active square within b of the queries so far).

Usage: OMP_NUM_THREADS=1 python benchmarks/chen2012_fig5_check.py [SEEDS]   (default 10)
"""
from __future__ import annotations

import sys

import numpy as np

from hdbo.experiments.runner import build_method, build_problem, noise_generator
from hdbo.experiments.spec import find_specs, load_spec
from hdbo.experiments.store import RunConfig
from hdbo.experiments.summary import read_summary

B = 0.1  # the GP sample's bandwidth
SUMMARY = "docs/reproductions/summaries/chen2012-full.csv.gz"


def _spec():
    [path] = [p for p in find_specs("chen2012") if load_spec(p).name == "chen2012-fig5-joint"]
    return load_spec(path)


def run(label: str, seed: int):
    spec = _spec()
    [m] = [m for m in spec.methods if m.label == label]
    [p] = [p for p in spec.problems if p.label == "GP sample"]
    cfg = RunConfig(experiment=spec.name, problem=p.name, method=m.name, seed=seed, budget=spec.budget,
                    problem_params=dict(p.params), method_params=dict(m.params))
    prob = build_problem(cfg)
    method = build_method(cfg, prob)
    rng = noise_generator(seed)
    X, r = [], []
    for _ in range(cfg.budget):
        x = method.ask()
        y, f = prob.evaluate(x, rng)
        method.tell(x, y)
        X.append(np.asarray(x, dtype=float))
        r.append(float(prob.regret(f)))
    diag = method.diagnostics()
    first = int(diag.get("selection_evaluations") or 0)
    return np.array(X), np.array(r), first, list(prob.structure["active_dims"])


def main(seeds: int) -> None:
    try:
        committed = {(r.label, r.seed): r.regret for r in read_summary(SUMMARY)
                     if r.experiment == "chen2012-fig5-joint" and r.problem_label == "GP sample"}
    except FileNotFoundError:
        committed = {}
    print("| method | seed | same run as the summary's | phase-2 queries | mean regret | revisits (active "
          "within b of an earlier query) | their mean regret | others' mean regret | median inactive distance "
          "of revisits |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    agg: dict[str, list[tuple[float, float, float, float]]] = {}
    for label in ("HDS+GP-UCB", "GP-UCB (paper model)"):
        for seed in range(seeds):
            X, r, first, active = run(label, seed)
            first = first if label == "HDS+GP-UCB" else 2 * X.shape[1]
            inactive = [j for j in range(X.shape[1]) if j not in active]
            rev, dist, chance = [], [], []
            probe = np.random.default_rng(seed).uniform(-1, 1, (400, len(active)))
            for t in range(first, len(X)):
                near = np.max(np.abs(probe[:, None, :] - X[:t][None, :, active]), axis=2).min(axis=1) <= B
                chance.append(near.mean())  # share of the active square within b of the data so far
                da = np.max(np.abs(X[:t][:, active] - X[t, active]), axis=1)
                k = int(np.argmin(da))
                rev.append(da[k] <= B)
                if da[k] <= B and inactive:
                    dist.append(float(np.max(np.abs(X[k, inactive] - X[t, inactive]))))
            rev = np.array(rev)
            r2 = r[first:]
            mr = float(np.mean(r2))
            rr = float(np.mean(r2[rev])) if rev.any() else float("nan")
            ro = float(np.mean(r2[~rev])) if (~rev).any() else float("nan")
            md = f"{np.median(dist):.2f}" if dist else "fixed"
            agg.setdefault(label, []).append((mr, float(rev.mean()), rr, ro, float(np.mean(chance))))
            ref = committed.get((label, seed))
            same = "-" if ref is None else ("yes" if np.allclose(r, ref, rtol=1e-6, atol=1e-9) else "NO")
            print(f"| {label} | {seed} | {same} | {len(r2)} | {mr:.2f} | {rev.mean():.0%} | {rr:.2f} | {ro:.2f} | "
                  f"{md} |", flush=True)
    print("\nMeans over seeds:\n")
    print("| method | mean regret after phase 1 | revisits | a uniform point's chance of one | their mean regret | "
          "others' mean regret |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, v in agg.items():
        a = np.array(v)
        print(f"| {label} | {np.mean(a[:, 0]):.2f} | {np.mean(a[:, 1]):.0%} | {np.mean(a[:, 4]):.0%} | "
              f"{np.nanmean(a[:, 2]):.2f} | {np.nanmean(a[:, 3]):.2f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
