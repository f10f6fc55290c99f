"""Issue 20, kandasamy2015 Fig. 4 diagnosis (docs/reproductions/kandasamy2015-diagnosis.md).

Targeted runs for the Figure 4 claims that do not hold at full scale, seeded exactly as
``hdbo reproduce`` seeds the spec's runs (``experiments/kandasamy2015/fig4.toml``).

Usage (OMP_NUM_THREADS=1):
  python benchmarks/kandasamy2015_fig4_check.py table [SUMMARY]
      From the committed summary (default docs/reproductions/summaries/kandasamy2015-full.csv.gz):
      per method and panel, S_T and R_T/T (mean +- standard error, finished runs in brackets).
  python benchmarks/kandasamy2015_fig4_check.py variant LABEL PANEL SEEDS [JSON [BUDGET]]
      Full runs (the spec's T = 510, or BUDGET evaluations, then with S_t also printed at
      t = 510 and 760 where below BUDGET) of the spec's method LABEL on the panel PANEL (a problem
      label of the spec, e.g. "(96,5,19)"), with the spec's parameters updated by the JSON
      object (e.g. '{"acq_budget": 500}' or '{"repeats": "resample"}'). Prints, per seed
      (SEEDS comma-separated), S_T, R_T/T, the repeated model-based queries and the seconds,
      next to the spec run's S_T from the committed summary when it holds that run.
  python benchmarks/kandasamy2015_fig4_check.py acquisition LABEL PANEL SEED T [FACTORS]
      One run of LABEL (spec parameters) to T evaluations; then the acquisition of the next
      query is maximized with the spec's DIRECT budget times each factor (comma-separated,
      default 0.1,1,10): the best UCB value found (standardized units, for Add-d/M the sum over
      groups), the proposal's true regret and the seconds.
  python benchmarks/kandasamy2015_fig4_check.py curve PANEL LABELS [SUMMARY]
      From the committed summary: per method of LABELS (comma-separated), the mean over the
      spec's finished runs of the best regret so far S_t at t = 100, 200, 300, 400, 450, 500 and 510.
  python benchmarks/kandasamy2015_fig4_check.py modes PANEL LABELS [STORE]
      From the spec's finished runs in STORE (default runs/kandasamy2015-full.db, the local store
      of `hdbo reproduce kandasamy2015 --scale full`; not in git), for each method of LABELS
      (comma-separated): the best point of each run (the one with the run's S_T) split by true
      group. Per group, the component of eq. (7) whose term is largest there (the dominant mode
      v2, weight 0.8, or a minor one) and the group's own regret f_d* - f_d. Prints per method
      the mean over runs of: groups in a minor mode, the regret those groups carry, the regret
      of the groups in the dominant mode, S_T, the evaluation at which the best point came, and
      where its grouped coordinates sit on DIRECT's lattice of cell centres and how many of all
      D coordinates differ from the box centre (DIRECT's first point); then, for groups of at
      most 8 coordinates, the lowest
      regret reachable with every coordinate on that lattice up to each level.
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


def variant(label: str, panel: str, seeds: list[int], extra: dict, budget: int | None = None) -> None:
    spec_s = _spec_regrets(label, panel)
    checkpoints = [t for t in (510, 760) if budget and t < budget]
    print(f"{label} on {panel}, parameters updated by {json.dumps(extra)}"
          + (f", budget {budget} (S_t also at t = {', '.join(map(str, checkpoints))})" if budget else ""))
    print("| seed | S_T | spec run's S_T | R_T/T | repeated queries | seconds |"
          + "".join(f" S_{t} |" for t in checkpoints))
    print("|---:|---:|---:|---:|---:|---:|" + "---:|" * len(checkpoints))
    for seed in seeds:
        cfg = _config(label, panel, seed, extra, budget)
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
        cps = "".join(f" {min(regrets[:t]):.4g} |" for t in checkpoints)
        print(f"| {seed} | {min(regrets):.4g} | {ref} | {np.mean(regrets):.1f} | {reps} | {time.time() - t0:.0f} |{cps}",
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


def curve(panel: str, labels: list[str], path: str) -> None:
    spec = _spec()
    runs = [r for r in read_summary(path) if r.experiment == spec.name and r.problem_label == panel
            and r.status == "finished" and r.budget == spec.budget]
    ts = [100, 200, 300, 400, 450, 500, 510]
    print(f"Mean S_t over the finished runs on {panel} (committed summary):\n")
    print("| method | runs | " + " | ".join(f"t = {t}" for t in ts) + " |")
    print("|---|---:|" + "---:|" * len(ts))
    for label in labels:
        R = np.array([np.fmin.accumulate(r.regret) for r in runs if r.label == label])
        if R.size == 0:
            continue
        print(f"| {label} | {len(R)} | " + " | ".join(_fmt(float(R[:, t - 1].mean())) for t in ts) + " |")


def _lattice_level(v: float, deepest: int = 8) -> int:
    """The smallest m with v a cell centre (2k + 1) / (2 3^m) of DIRECT's trisection of [0, 1]; -1 if none."""
    for m in range(deepest + 1):
        k = round((v * 2 * 3**m - 1) / 2)
        if abs((2 * k + 1) / (2 * 3**m) - v) < 1e-9:
            return m
    return -1


def modes(panel: str, labels: list[str], store_path: str) -> None:
    import itertools

    from hdbo.experiments.store import RunStore
    from hdbo.problems import additive as A

    spec = _spec()
    [p] = [p for p in spec.problems if p.label == panel]
    d, M = int(p.params["d"]), int(p.params["M"])
    V, h = A._centres(d), A._variance(d)
    z_peak, f_star_d = A._peak(d)
    x_peak = (np.array(z_peak) + 1.0) / 2.0
    rows = []
    with RunStore(store_path, create=False) as store:
        runs = [r for r in store.list_runs(experiment=spec.name, status="finished")
                if r.config.problem_label == panel and r.config.label in labels and r.config.budget == spec.budget]
        for r in runs:
            problem = build_problem(r.config)
            G = np.array(problem.structure["groups"])  # (M, d), drawn by the run seed
            ev = store.load_evaluations(r.id)
            k = int(np.nanargmin(ev.regret))
            X = ev.X[k][G]  # (M, d), on [0, 1]
            Z = 2.0 * X - 1.0
            per_group = f_star_d - A._trimodal_values(Z, V, h)
            comp = np.argmax(A._mixture_logits(Z, V, h), axis=-1)
            minor = comp != A._MAIN
            levels = np.array([_lattice_level(float(v)) for v in X.ravel()])
            moved = int(np.sum(np.abs(ev.X[k] - 0.5) > 1e-9))  # of all D coordinates
            rows.append((r.config.label, int(minor.sum()), float(per_group[minor].sum()),
                         float(per_group[~minor].sum()), float(ev.regret[k]), k + 1,
                         float(np.median(np.abs(X - x_peak))), np.mean(levels == -1), np.mean((levels >= 0) & (levels <= 2)),
                         np.mean(levels == 3), np.mean(levels >= 4), moved))
    print(f"Best point of each finished run on {panel}, split by true group (means over runs; "
          f"a minor-mode group costs at least log(0.8/0.1) = {np.log(8):.2f}). The last columns place the "
          "best point's grouped coordinates on DIRECT's lattice of cell centres (2k + 1) / (2 3^m) of [0, 1] "
          "(level m; off = on no level up to 8) and give their median distance to the peak's coordinates; the "
          "last column counts the coordinates of all D that differ from the box centre 0.5 (DIRECT's first point):\n")
    print("| method | runs | groups in a minor mode | their regret | regret of the dominant-mode groups "
          "| S_T | evaluation of the best point (median) | median abs(x_i - x*_i) | off the lattice "
          "| level <= 2 | level 3 | level >= 4 | coordinates off the box centre (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label in labels:
        sel = [row for row in rows if row[0] == label]
        if not sel:
            print(f"| {label} | 0 |" + " |" * 11)
            continue
        a = np.array([row[1:] for row in sel], dtype=float)
        print(f"| {label} | {len(sel)} | {a[:, 0].mean():.2f} | {_fmt(a[:, 1].mean())} | {_fmt(a[:, 2].mean())} "
              f"| {_fmt(a[:, 3].mean())} | {int(np.median(a[:, 4]))} | {a[:, 5].mean():.4f} | {a[:, 6].mean():.0%} "
              f"| {a[:, 7].mean():.0%} | {a[:, 8].mean():.0%} | {a[:, 9].mean():.0%} | {np.median(a[:, 10]):.1f} |")
    # The lowest regret a group can have with every coordinate on the lattice up to level m.
    if d > 8:  # 3^d candidate points per level
        return
    print(f"\nLowest regret with every grouped coordinate a lattice centre of level <= m (per group, and times M = {M}):\n")
    print("| m | per group | all M groups | the point (one group) |")
    print("|---:|---:|---:|---|")
    for m in range(6):
        centres = np.unique(np.concatenate([(2 * np.arange(3**j) + 1) / (2 * 3**j) for j in range(m + 1)]))
        near = [centres[np.argsort(np.abs(centres - v))[:3]] for v in x_peak]
        P = np.array(list(itertools.product(*near)))
        reg = f_star_d - A._trimodal_values(2.0 * P - 1.0, V, h)
        i = int(np.argmin(reg))
        print(f"| {m} | {float(reg[i]):.3g} | {M * float(reg[i]):.3g} | ({', '.join(f'{v:.4f}' for v in P[i])}) |")


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
        variant(args[0], args[1], [int(s) for s in args[2].split(",")], json.loads(args[3]) if len(args) > 3 else {},
                int(args[4]) if len(args) > 4 else None)
    elif mode == "acquisition":
        factors = [float(f) for f in args[4].split(",")] if len(args) > 4 else [0.1, 1.0, 10.0]
        acquisition(args[0], args[1], int(args[2]), int(args[3]), factors)
    elif mode == "curve":
        curve(args[0], args[1].split(","), args[2] if len(args) > 2 else SUMMARY)
    elif mode == "modes":
        modes(args[0], args[1].split(","), args[2] if len(args) > 2 else "runs/kandasamy2015-full.db")
    else:
        raise SystemExit(__doc__)
