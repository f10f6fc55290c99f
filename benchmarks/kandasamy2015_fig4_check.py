"""Issue 20, kandasamy2015 Fig. 4 diagnosis (docs/reproductions/kandasamy2015-diagnosis.md).

Targeted runs for the Figure 4 claims that do not hold at full scale, seeded exactly as
``hdbo reproduce`` seeds the spec's runs (``experiments/kandasamy2015/fig4.toml``).

Usage (OMP_NUM_THREADS=1):
  python benchmarks/kandasamy2015_fig4_check.py table [SUMMARY]
      From the committed summary (default docs/reproductions/summaries/kandasamy2015-full.csv.gz):
      per method and panel, S_T and R_T/T (mean +- standard error, finished runs in brackets).
  python benchmarks/kandasamy2015_fig4_check.py variant LABEL PANEL SEEDS [JSON]
      Full runs (the spec's T = 510) of the spec's method LABEL on the panel PANEL (a problem
      label of the spec, e.g. "(96,5,19)"), with the spec's parameters updated by the JSON
      object (e.g. '{"acq_budget": 500}' or '{"repeats": "resample"}'). Prints, per seed
      (SEEDS comma-separated), S_T, R_T/T, the repeated model-based queries and the seconds,
      next to the spec run's S_T from the committed summary when it holds that run.
  python benchmarks/kandasamy2015_fig4_check.py acquisition LABEL PANEL SEED T [FACTORS]
      One run of LABEL (spec parameters) to T evaluations; then the acquisition of the next
      query is maximized with the spec's DIRECT budget times each factor (comma-separated,
      default 0.1,1,10): the best UCB value found (standardized units, for Add-d/M the sum over
      groups), the proposal's true regret and the seconds.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from hdbo.experiments.runner import build_method, build_problem
from hdbo.experiments.spec import find_specs, load_spec
from hdbo.experiments.store import RunConfig
from hdbo.experiments.summary import read_summary

SUMMARY = "docs/reproductions/summaries/kandasamy2015-full.csv.gz"


def _spec():
    [path] = [p for p in find_specs("kandasamy2015") if load_spec(p).name == "kandasamy2015-fig4"]
    return load_spec(path)


def _config(label: str, panel: str, seed: int, extra: dict | None = None, budget: int | None = None) -> RunConfig:
    spec = _spec()
    [m] = [m for m in spec.methods if m.label == label]
    [p] = [p for p in spec.problems if p.label == panel]
    return RunConfig(experiment="check", problem=p.name, method=m.name, seed=seed,
                     budget=budget or spec.budget, problem_params=dict(p.params),
                     method_params={**m.params, **(extra or {})})


def _spec_regrets(label: str, panel: str) -> dict[int, float]:
    try:
        runs = read_summary(SUMMARY)
    except FileNotFoundError:
        return {}
    return {r.seed: float(np.nanmin(r.regret)) for r in runs
            if r.experiment == "kandasamy2015-fig4" and r.label == label and r.problem_label == panel
            and r.status == "finished"}


def _fmt(v: float, digits: int = 3) -> str:
    """Fixed point: whole numbers from 100 on, ``digits`` significant digits below, 0 below 0.005."""
    if not np.isfinite(v):
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return "0" if abs(v) < 0.005 else f"{v:.{digits}g}"


def table(path: str) -> None:
    runs = [r for r in read_summary(path) if r.experiment == "kandasamy2015-fig4" and r.status == "finished"]
    spec = _spec()
    panels = [p.label for p in spec.problems]
    print("| method | " + " | ".join(f"{p} S_T | {p} R_T/T" for p in panels) + " |")
    print("|---|" + "---:|" * (2 * len(panels)))
    for m in spec.methods:
        cells = []
        for p in panels:
            rr = [r for r in runs if r.label == m.label and r.problem_label == p]
            s = np.array([np.nanmin(r.regret) for r in rr])
            a = np.array([np.nanmean(r.regret) for r in rr])

            def se(v: np.ndarray) -> float:
                return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")

            cells += [f"{_fmt(s.mean())} ± {_fmt(se(s), 2)} ({s.size})", f"{_fmt(a.mean())} ± {_fmt(se(a), 2)}"]
        print(f"| {m.label} | " + " | ".join(cells) + " |")


def variant(label: str, panel: str, seeds: list[int], extra: dict) -> None:
    spec_s = _spec_regrets(label, panel)
    print(f"{label} on {panel}, parameters updated by {json.dumps(extra)}")
    print("| seed | S_T | spec run's S_T | R_T/T | repeated queries | seconds |")
    print("|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        cfg = _config(label, panel, seed, extra)
        prob = build_problem(cfg)
        m = build_method(cfg, prob)
        t0, regrets = time.time(), []
        for _ in range(cfg.budget):
            x = m.ask()
            y = prob(x)
            m.tell(x, y)
            regrets.append(prob.optimum_value - y)
        reps = m.diagnostics().get("repeat_queries", "")
        ref = f"{spec_s[seed]:.4g}" if seed in spec_s else "-"
        print(f"| {seed} | {min(regrets):.4g} | {ref} | {np.mean(regrets):.1f} | {reps} | {time.time() - t0:.0f} |",
              flush=True)


def acquisition(label: str, panel: str, seed: int, T: int, factors: list[float]) -> None:
    cfg = _config(label, panel, seed)
    prob = build_problem(cfg)
    m = build_method(cfg, prob)
    for _ in range(T):
        x = m.ask()
        m.tell(x, prob(x))
    base = m.acquisition_budget
    state = m.state_dict()
    print(f"{label} on {panel}, seed {seed}, after {T} evaluations; spec DIRECT budget {base}")
    print("| budget factor | DIRECT evaluations | UCB at the proposal (standardized) | true regret of the proposal | seconds |")
    print("|---:|---:|---:|---:|---:|")
    for k in factors:
        st = dict(state, params={**state["params"], "acq_budget": max(1, int(round(k * base)))})
        clone = type(m).from_state(st)
        t0 = time.time()
        x = clone.ask()
        secs = time.time() - t0
        gp = clone.gp_
        ucb = _ucb(clone, gp, x)
        print(f"| {k:g} | {clone.last_acq_nfev_} | {ucb:.4f} | {prob.optimum_value - prob(x):.4g} | {secs:.1f} |",
              flush=True)


def _ucb(m, gp, x: np.ndarray) -> float:
    """The method's UCB at x in standardized units: the sum over groups of mean + sqrt(beta) sd."""
    rb = np.sqrt(m.beta_t())
    u = m.to_canonical(x[None, :])[0] if hasattr(m, "to_canonical") else x
    total = 0.0
    for j, g in enumerate(m.groups_):
        mu, sd = gp.posterior_fn(j, standardized=True)(u[g][None, :])
        total += float(mu[0] + rb * sd[0])
    return total


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "table":
        table(args[0] if args else SUMMARY)
    elif mode == "variant":
        variant(args[0], args[1], [int(s) for s in args[2].split(",")], json.loads(args[3]) if len(args) > 3 else {})
    elif mode == "acquisition":
        factors = [float(f) for f in args[4].split(",")] if len(args) > 4 else [0.1, 1.0, 10.0]
        acquisition(args[0], args[1], int(args[2]), int(args[3]), factors)
    else:
        raise SystemExit(__doc__)
