"""What running every reproduction at full scale costs, and what is left, from the committed summaries.

Run:  python benchmarks/reproduction_cost.py [SET ...]      (default: every set in experiments/)

For each spec of a set at full scale: the runs it asks for, those finished in the set's
committed full-scale summary (``docs/reproductions/summaries/<set>-full.csv.gz``, matched by
config id as ``hdbo reproductions-index`` does), the runs still to make, and their cost in
core-hours. A run of a ``prefix_of`` spec that its donor spec's run will supply costs nothing of
its own ("from the donor"). The cost of a missing run is the median wall time of the finished
runs of the same spec, problem and method (their ``wall_seconds``: one process, measured while
other jobs shared the machine's 2 cores, so an upper estimate for an idle core). When that problem
has none, the median over the method's runs on the spec's other problems stands in (named in the
last column: a cost measured on another problem, e.g. a smaller D, is only a rough guide); a method
with no finished run in the spec has an unknown cost, counted apart. Runs copied from a donor
(diagnostic ``derived_from``) do not count as measurements. "Core-hours per seed" sums the medians
of the spec's measured (problem, method) pairs, so it is a whole seed only when no method is named
in the last column. Sets that are not a paper's (``example``, the ``highdim`` suite) are left out
unless named.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from pathlib import Path

from hdbo.experiments.prefix import prefix_donors
from hdbo.experiments.spec import find_specs, load_spec
from hdbo.experiments.summary import config_id, read_summary

SUMMARIES = Path("docs/reproductions/summaries")


def _table(name: str) -> list[str]:
    specs = [load_spec(p).at_scale("full") for p in find_specs(name)]
    path = SUMMARIES / f"{name}-full.csv.gz"
    runs = read_summary(path) if path.is_file() else []
    done = {r.config for r in runs if r.status == "finished"}
    walls: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    by_method: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in runs:
        copied = bool(r.diagnostics) and "derived_from" in r.diagnostics
        if r.status == "finished" and not copied and math.isfinite(r.wall_seconds) and r.wall_seconds > 0:
            walls[(r.experiment, r.problem_label, r.label)].append(r.wall_seconds)
            by_method[(r.experiment, r.label)].append(r.wall_seconds)
    lines = []
    total_h, total_unknown = 0.0, 0
    for spec in specs:
        configs = spec.run_configs("full")
        donated = {config_id(c) for c, _ in prefix_donors(configs, specs)}
        missing = [c for c in configs if config_id(c) not in done]
        own = [c for c in missing if config_id(c) not in donated]
        hours, unknown, elsewhere = 0.0, set(), set()
        for c in own:
            w = walls.get((c.experiment, c.problem_label, c.label))
            if not w and by_method.get((c.experiment, c.label)):
                w = by_method[(c.experiment, c.label)]
                elsewhere.add((c.problem_label, c.label))
            if w:
                hours += statistics.median(w) / 3600
            else:
                unknown.add(c.label)
        per_seed = 0.0
        for p in spec.problems:
            for m in spec.methods:
                w = walls.get((spec.name, p.label, m.label))
                if w:
                    per_seed += statistics.median(w) / 3600
        total_h += hours
        total_unknown += sum(1 for c in own if c.label in unknown)
        seeds = len(spec.seeds)
        parts = []
        if unknown:
            parts.append("unknown: " + ", ".join(sorted(unknown)))
        if elsewhere:
            probs = sorted({p for p, _ in elsewhere})
            meths = sorted({m for _, m in elsewhere})
            parts.append(f"from other problems: {', '.join(meths)} on {', '.join(probs)}")
        note = "; ".join(parts)
        lines.append(
            f"| {spec.name} | {len(configs)} ({seeds} seeds) | {len(configs) - len(missing)} "
            f"| {len(missing) - len(own)} | {len(own)} | {per_seed:.2f} | {hours:.1f} "
            f"| {note or '—'} |"
        )
    lines.append(f"| **{name} in all** | | | | | | **{total_h:.1f}** | {total_unknown} runs of unknown cost |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*")
    args = ap.parse_args()
    names = args.sets or sorted(p.name for p in Path("experiments").iterdir()
                                if p.is_dir() and any(p.glob("*.toml")) and p.name not in ("highdim", "example"))
    print("| spec | runs asked (full scale) | finished | from the donor | to make | core-hours per seed "
          "(measured methods) | core-hours to make | methods whose cost is unknown or measured on another problem |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in names:
        for line in _table(name):
            print(line)


if __name__ == "__main__":
    main()
