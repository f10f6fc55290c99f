"""Development sweep of a method's options on the suite's development instances.

Run:  python benchmarks/dev_sweep.py TAG [--method auto] [--options JSON] [--budget 100]
                                         [--problems SUBSTRING ...] [--instances 0 6 7 ...]
                                         [--out benchmarks/dev_sweep.csv.gz]
      python benchmarks/dev_sweep.py --table [--baseline TAG] [--out ...]

Each run is one ``hdbo.minimize`` call of ``--method`` with ``--options`` on one suite problem
(:mod:`hdbo.problems.suite`) and one *development* instance: 0 and 6-13 by default. The judging
instances 1-5 of ``docs/benchmarks.md`` are refused, so nothing tuned here has seen them. The run
seed is the instance, as in the suite's specs. One line per finished run is appended to
``--out`` (gzip CSV: tag, method, options, problem, dim, instance, budget, best value in the
minimization convention, seconds). Keys of ``--options`` that start with ``_`` are recorded but
not passed (a note on a variant made by a patch of the code, as some of the recorded runs were);
runs already in the file under the same tag, method, options
and budget are skipped, so an interrupted sweep resumes where it stopped.

``--table`` prints, for the runs of ``--budget`` on ``--instances``, per problem, the median best of each tag (``--tags``: which, in order) and on
how many instances it beat ``--baseline`` (ties count as not better), over the instances both
ran; then each tag's mean rank over the (problem, instance) pairs that every tag ran. This is how the defaults
of issue 19 were chosen (``benchmarks/dev_sweep_*.md``).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
from scipy.stats import rankdata

import hdbo
from hdbo import problems

#: The suite's ten problems at their report dimensions (``experiments/highdim/*.toml``).
PROBLEMS = [
    ("suite-hartmann6-hidden", 300), ("suite-hartmann6-rotated", 300),
    ("suite-hartmann6-rotated", 100), ("suite-branin-rotated", 100),
    ("suite-levy", 100), ("suite-ackley", 100), ("suite-styblinski-tang", 100),
    ("suite-rosenbrock", 60), ("suite-halfcheetah", 102), ("suite-svm", 32),
]
DEV_INSTANCES = [0, 6, 7, 8, 9, 10, 11, 12, 13]
JUDGING = {1, 2, 3, 4, 5}
FIELDS = ["tag", "method", "options", "problem", "dim", "instance", "budget", "best", "seconds"]


def _read(path: str) -> list[dict[str, str]]:
    if not os.path.exists(path):
        return []
    with gzip.open(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def _append(path: str, row: dict[str, object]) -> None:
    new = not os.path.exists(path)
    with gzip.open(path, "at", newline="") as fh:  # one gzip member per line: safe to interrupt
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def sweep(args: argparse.Namespace) -> None:
    bad = sorted(JUDGING.intersection(args.instances))
    if bad:
        raise SystemExit(f"instances {bad} judge the defaults in docs/benchmarks.md; use development instances")
    options = json.loads(args.options)
    if not isinstance(options, dict):
        raise SystemExit("--options must be a JSON object")
    key_opts = json.dumps(options, sort_keys=True)
    done = {(r["problem"], int(r["dim"]), int(r["instance"])) for r in _read(args.out)
            if r["tag"] == args.tag and r["method"] == args.method and r["options"] == key_opts
            and int(r["budget"]) == args.budget}
    chosen = [(n, d) for n, d in PROBLEMS if not args.problems or any(s in f"{n}-{d}" for s in args.problems)]
    for name, dim in chosen:
        for inst in args.instances:
            if (name, dim, inst) in done:
                continue
            prob = problems.get(name, dim=dim, instance=inst)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = hdbo.maximize(lambda x: float(prob(np.asarray(x))), prob.bounds, budget=args.budget,
                                    method=args.method, seed=inst,
                                    **{k: v for k, v in options.items() if not k.startswith("_")})
            row = {"tag": args.tag, "method": args.method, "options": key_opts, "problem": name, "dim": dim,
                   "instance": inst, "budget": args.budget, "best": f"{-res.fun:.9g}",
                   "seconds": f"{time.perf_counter() - start:.3g}"}
            _append(args.out, row)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)


def table(args: argparse.Namespace) -> None:
    rows = [r for r in _read(args.out) if int(r["budget"]) == args.budget and int(r["instance"]) in args.instances]
    tags = args.tags or list(dict.fromkeys(r["tag"] for r in rows))
    best: dict[tuple[str, str, int], float] = {}
    for r in rows:
        best[(r["tag"], f"{r['problem']} D={r['dim']}", int(r["instance"]))] = float(r["best"])
    base = args.baseline or (tags[0] if tags else None)
    cells = sorted({k[1] for k in best})
    print("| problem | " + " | ".join(tags) + " |")
    print("|---|" + "---:|" * len(tags))
    for cell in cells:
        out = []
        for tag in tags:
            inst = sorted(k[2] for k in best if k[0] == tag and k[1] == cell)
            if not inst:
                out.append("")
                continue
            med = statistics.median(best[(tag, cell, i)] for i in inst)
            common = [i for i in inst if (base, cell, i) in best]
            wins = sum(best[(tag, cell, i)] < best[(base, cell, i)] for i in common)
            out.append(f"{med:.4g}" + ("" if tag == base else f" ({wins}/{len(common)})"))
        print(f"| {cell} | " + " | ".join(out) + " |")
    print(f"\nMedian best over the development instances (minimization convention); in brackets, on how many "
          f"instances the tag beat `{base}` among those both ran.")
    pairs = sorted({k[1:] for k in best if all((t,) + k[1:] in best for t in tags)})
    if pairs and len(tags) > 1:
        ranks = np.array([rankdata([best[(t,) + k] for t in tags]) for k in pairs])
        print(f"\nMean rank (1 = best; ties share the mean rank) over the {len(pairs)} (problem, instance) "
              "pairs every tag ran:\n")
        print("| " + " | ".join(tags) + " |\n|" + "---:|" * len(tags))
        print("| " + " | ".join(f"{r:.2f}" for r in ranks.mean(axis=0)) + " |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tag", nargs="?")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--options", default="{}")
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--problems", nargs="*", default=[])
    ap.add_argument("--instances", type=int, nargs="*", default=DEV_INSTANCES)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "dev_sweep.csv.gz"))
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--baseline")
    ap.add_argument("--tags", nargs="*", default=None, help="with --table: the tags to show, in order")
    args = ap.parse_args(argv)
    if args.table:
        table(args)
    elif not args.tag:
        ap.error("give a TAG (or --table)")
    else:
        sweep(args)


if __name__ == "__main__":
    main(sys.argv[1:])
