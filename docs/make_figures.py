"""Run the examples of the method-family pages and draw their figures.

Each page ``docs/guide/methods/<name>.md`` with a comment ``<!-- example: <name> ... -->``
has a Python block right after it. This script runs that block as it stands (so the example on
the page is exactly the code that made the figure) and plots, for every entry of the
``results`` dict it builds, the simple regret ``problem.optimum_value - best value so far``
against the evaluations, into ``docs/guide/methods/figures/<name>.png``.

The documentation build does not run this script; rerun it after changing an example and
commit the PNGs (each is kept under 60 KB)::

    OMP_NUM_THREADS=1 python docs/make_figures.py            # every page
    OMP_NUM_THREADS=1 python docs/make_figures.py gp peers   # some of them

It needs matplotlib (``pip install -e ".[plots]"``) and, for the peers page, the ``peers``
extra.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from hdbo.experiments.report import save_png

METHODS_DIR = Path(__file__).resolve().parent / "guide" / "methods"
FIGURES_DIR = METHODS_DIR / "figures"
MAX_BYTES = 60_000
_EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+)[^>]*-->\s*```python\n(?P<code>.*?)```", re.S)


def find_examples(directory: Path = METHODS_DIR) -> dict[str, str]:
    """Collect the marked example blocks of the method pages.

    Parameters
    ----------
    directory : Path
        Folder of the method-family pages.

    Returns
    -------
    dict of str to str
        Example name (the figure's file name) to the block's source code.

    Raises
    ------
    ValueError
        If two blocks have the same name.
    """
    examples: dict[str, str] = {}
    for page in sorted(directory.glob("*.md")):
        for match in _EXAMPLE.finditer(page.read_text(encoding="utf-8")):
            name = match["name"]
            if name in examples:
                raise ValueError(f"example name {name!r} is used twice (second time in {page})")
            examples[name] = match["code"]
    return examples


def run_example(name: str, code: str) -> dict:
    """Execute one example block in a fresh namespace and return that namespace.

    Parameters
    ----------
    name : str
        The example's name (for messages).
    code : str
        Its source code; it must define ``problem`` and ``results``.

    Returns
    -------
    dict
        The namespace after execution.

    Raises
    ------
    ValueError
        If the block does not define ``problem`` and a non-empty ``results`` dict.
    """
    namespace: dict = {"__name__": f"example_{name}"}
    exec(compile(code, f"<example {name}>", "exec"), namespace)  # noqa: S102 - our own pages
    if "problem" not in namespace or not isinstance(namespace.get("results"), dict) or not namespace["results"]:
        raise ValueError(f"example {name!r} must define `problem` and a non-empty dict `results`")
    return namespace


def plot_regret(name: str, problem, results: dict, out: Path) -> int:
    """Plot best-so-far simple regret against evaluations and save a small PNG.

    Parameters
    ----------
    name : str
        Example name, used in the title.
    problem : hdbo.problems.Problem
        The problem the results were obtained on (its ``optimum_value`` must be known).
    results : dict of str to hdbo.OptimizeResult
        One maximization result per label.
    out : Path
        PNG file to write.

    Returns
    -------
    int
        Size of the written file in bytes.

    Raises
    ------
    ValueError
        If the problem's optimum is unknown.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if problem.optimum_value is None:
        raise ValueError(f"example {name!r}: the problem has no known optimum to compute regret from")
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=80)
    for label, res in results.items():
        y = np.asarray(res.history.y, dtype=float)
        best = np.fmax.accumulate(np.where(np.isnan(y), -np.inf, y))
        regret = np.maximum(problem.optimum_value - best, 1e-6)
        ax.step(np.arange(1, len(y) + 1), regret, where="post", label=label, linewidth=1.4)
    ax.set_yscale("log")
    ax.set_xlabel("evaluations")
    ax.set_ylabel("simple regret (log scale)")
    ax.set_title(f"{problem.name}, D = {problem.dim}, seed 0", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, out, dpi=80)
    plt.close(fig)
    return out.stat().st_size


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: run the chosen examples and write their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="examples to run (default: all)")
    args = parser.parse_args(argv)
    examples = find_examples()
    unknown = sorted(set(args.names) - set(examples))
    if unknown:
        parser.error(f"unknown example(s) {unknown}; valid: {sorted(examples)}")
    status = 0
    for name in args.names or sorted(examples):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            namespace = run_example(name, examples[name])
        size = plot_regret(name, namespace["problem"], namespace["results"], FIGURES_DIR / f"{name}.png")
        print(f"{name}: {time.perf_counter() - start:.0f} s, figures/{name}.png {size / 1000:.0f} KB", flush=True)
        if size > MAX_BYTES:
            print(f"  {name}.png is larger than {MAX_BYTES // 1000} KB", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
