"""Whole reproduction runs with and without ``hdbo._malloc.tune_malloc``: time and values.

The experiment runner sets glibc's malloc mmap threshold, trim threshold and top pad, so that
arrays freed at every step stay in the process instead of being given back to the system and
faulted in again (``hdbo/_malloc.py``). This script runs the same full-scale runs in fresh processes
(``hdbo reproduce`` on a copy of the spec, one method and problem, a fresh store each time),
alternating ``HDBO_MALLOC_TUNING=0`` (glibc's defaults) and the default (tuned), and prints the
median wall-clock, user and system seconds of each, their ratio, and whether the runs' values
are the same bit for bit (they must be: the setting moves memory, not arithmetic).

Run (the machine is shared; compare within one run)::

    OMP_NUM_THREADS=1 python benchmarks/bench_malloc.py            # every case, 3 repeats
    OMP_NUM_THREADS=1 python benchmarks/bench_malloc.py --repeats 1 --case add5

Options: ``--repeats`` (default 3), ``--case`` (repeatable; default every case below).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from hdbo._malloc import _USER_VARIABLES
from hdbo.experiments.store import RunStore

ROOT = pathlib.Path(__file__).resolve().parent.parent

# name: (paper, spec file, problem label, method label, budget or None for the spec's)
CASES = {
    "add5": ("kandasamy2015", "fig4.toml", "(96,5,19)", "Add-5", None),
    "rpp10": ("li2016", "table1_T1000.toml", "D=50", "RPP-10", 310),
    "gpucb-li": ("li2016", "table1_T1000.toml", "D=50", "GP-UCB", 510),
    "msucb": ("tranthe2020", "fig1_d20.toml", "Levy D=20", "MS-UCB", None),
}


def run_case(case: str, tuned: bool, workdir: pathlib.Path) -> tuple[float, float, float, np.ndarray, int]:
    """One run of ``case`` in a fresh process: wall, user and system seconds, the run's values
    and points (``y`` then ``X`` flattened) and its number of evaluations."""
    paper, spec, problem, method, budget = CASES[case]
    specs = workdir / "specs" / paper
    if specs.exists():
        shutil.rmtree(specs)
    specs.mkdir(parents=True)
    text = (ROOT / "experiments" / paper / spec).read_text()
    if budget is not None:
        text = re.sub(r"(?m)^budget = \d+", f"budget = {budget}", text, count=1)
    (specs / spec).write_text(text)
    store = workdir / f"{case}-{int(tuned)}.db"
    for p in workdir.glob(store.name + "*"):
        p.unlink()
    env = dict(os.environ, HDBO_MALLOC_TUNING="1" if tuned else "0", OMP_NUM_THREADS="1")
    for v in (*_USER_VARIABLES, "GLIBC_TUNABLES"):  # only HDBO_MALLOC_TUNING decides
        env.pop(v, None)
    cmd = [sys.executable, "-m", "hdbo.cli", "reproduce", paper, "--specs-dir", str(workdir / "specs"),
           "--scale", "full", "--seed", "0", "--problem", problem, "--method", method,
           "--store", str(store), "--no-summary", "--report", str(workdir / "r.md"), "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=workdir)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with RunStore(store) as st:
        runs = st.list_runs()
        if len(runs) != 1:
            sys.exit(f"{case}: expected one run, the store holds {len(runs)}")
        rec = runs[0]
        ev = st.load_evaluations(rec.id)
        y = np.concatenate([np.asarray(ev.y, dtype=float), np.asarray(ev.X, dtype=float).ravel()])
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, y, int(ev.y.size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    args = ap.parse_args()
    cases = args.case or list(CASES)
    print("| run | evaluations | glibc default: wall / user / sys s | tuned: wall / user / sys s "
          "| wall ratio | sys ratio | same values |")
    print("|---|---:|---|---|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="hdbo-malloc-") as tmp:
        workdir = pathlib.Path(tmp)
        for case in cases:
            times: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
            values: dict[bool, list[np.ndarray]] = {False: [], True: []}
            for r in range(args.repeats):
                for tuned in ((False, True) if r % 2 == 0 else (True, False)):
                    wall, user, sys_s, y, n = run_case(case, tuned, workdir)
                    times[tuned].append((wall, user, sys_s))
                    values[tuned].append(y)
            med = {k: [statistics.median(t[i] for t in v) for i in range(3)] for k, v in times.items()}
            ref = values[False][0]
            same = all(np.array_equal(ref, y, equal_nan=True) for v in values.values() for y in v)
            paper, _, problem, method, _ = CASES[case]
            d, t = med[False], med[True]
            print(f"| {paper} {method} on {problem} | {n} | {d[0]:.1f} / {d[1]:.1f} / {d[2]:.1f} "
                  f"| {t[0]:.1f} / {t[1]:.1f} / {t[2]:.1f} | {d[0] / t[0]:.2f} | {d[2] / max(t[2], 1e-3):.0f} "
                  f"| {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
