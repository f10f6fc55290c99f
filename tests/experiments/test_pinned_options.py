"""The reproduction specs pin the papers' settings: a changed default cannot reach them.

Every method of every reproduction spec (all of ``experiments/`` except the public suite
``highdim/`` and the ``example/``), at both scales, is built on its problem's box and its
resolved options (:meth:`~hdbo.methods.base.Method.get_params`) are compared with the
snapshot ``tests/data/pinned_options.json.gz``, written from the code before hdbo's defaults
changed (the dimension-scaled GP prior and the local acquisition search). An option added
since then must appear with the value that gives the old behaviour (:data:`NEW_OPTIONS`).

A new spec's methods are added to the snapshot as resolved now, without the
:data:`NEW_OPTIONS` keys (which every spec must still pin). Regenerate the snapshot only when a
spec itself changes on purpose::

    python tests/experiments/test_pinned_options.py > tests/data/pinned_options.json.gz
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "data" / "pinned_options.json.gz"
#: Spec folders that are not reproductions of a paper (they run hdbo's defaults on purpose).
NOT_PINNED = {"highdim", "example"}
#: Options added after the snapshot, with the value that keeps the papers' behaviour.
NEW_OPTIONS = {"gp_prior": "none", "fdt_delta": None, "restart_schedule": "every", "batch_starts": False}


def _spec_paths() -> list[Path]:
    return sorted(p for p in (ROOT / "experiments").glob("*/*.toml") if p.parent.name not in NOT_PINNED)


def resolve_options() -> dict[str, dict[str, Any]]:
    """``"folder/file.toml|scale|label" -> get_params()`` (JSON values) of every pinned spec's methods."""
    from hdbo import problems
    from hdbo.experiments.spec import load_spec
    from hdbo.methods import make_method
    from hdbo.utils import to_jsonable

    out: dict[str, dict[str, Any]] = {}
    boxes: dict[str, Any] = {}
    for path in _spec_paths():
        spec = load_spec(path)
        for scale in ("quick", "full"):
            seen = set()
            for c in spec.run_configs(scale):
                if c.label in seen:
                    continue
                seen.add(c.label)
                pkey = json.dumps([c.problem, c.problem_params], sort_keys=True, default=str)
                if pkey not in boxes:
                    boxes[pkey] = problems.get(c.problem, **c.problem_params)
                prob = boxes[pkey]
                method = make_method(c.method, prob.bounds, seed=0, budget=c.budget, structure=prob.structure,
                                     **c.method_params)
                out[f"{path.parent.name}/{path.name}|{scale}|{c.label}"] = to_jsonable(method.get_params())
    return out


def _snapshot() -> dict[str, dict[str, Any]]:
    with gzip.open(SNAPSHOT, "rt") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def resolved() -> dict[str, dict[str, Any]]:
    return resolve_options()


def test_every_pinned_method_is_in_the_snapshot(resolved):
    assert set(resolved) == set(_snapshot())


def test_resolved_options_equal_the_pinned_ones(resolved):
    """A default changed in code shows up here unless the spec sets the papers' value."""
    snapshot = _snapshot()
    diffs = []
    for key, params in sorted(resolved.items()):
        old = snapshot[key]
        for name in sorted(set(old) | set(params)):
            if name in old and name in params:
                if old[name] != params[name]:
                    diffs.append(f"{key}: {name} = {params[name]!r}, pinned {old[name]!r}")
            elif name in params:
                if name not in NEW_OPTIONS or params[name] != NEW_OPTIONS[name]:
                    diffs.append(f"{key}: new option {name} = {params[name]!r} (must be pinned)")
            else:
                diffs.append(f"{key}: option {name} disappeared")
    assert not diffs, "\n".join(diffs[:20])


def test_the_snapshot_pins_the_papers_gp_settings():
    """The snapshot is not empty and holds the papers' GP settings (DIRECT, bare ML-II bounds)."""
    snapshot = _snapshot()
    assert len(snapshot) > 150
    gp_ucb = [v for k, v in snapshot.items() if k.startswith("kandasamy2015/") and k.endswith("|GP-UCB")]
    assert gp_ucb and all(v["maximizer"] == "direct" and v["lengthscale_bounds"] == [0.05, 20.0] for v in gp_ucb)


def test_chen2012_uses_the_grid_searchs_thresholds_in_every_setting():
    # Chen et al. (2012), Sec. 5: the thresholds chosen by the grid search at D = 200, noise 0.1
    # are "then used for all settings"; threshold_grid.toml reruns that grid and picks (5, -10).
    snapshot = _snapshot()
    hds = {k: v for k, v in snapshot.items()
           if k.startswith("chen2012/") and not k.startswith("chen2012/threshold_grid.toml") and "theta1" in v}
    assert len(hds) >= 50
    assert {(v["theta1"], v["theta0"]) for v in hds.values()} == {(5, -10)}
    grid = {(v["theta1"], v["theta0"]) for k, v in snapshot.items() if k.startswith("chen2012/threshold_grid.toml")}
    assert (5, -10) in grid and len(grid) == 9


if __name__ == "__main__":  # write the snapshot (gzip) to stdout
    data = json.dumps(resolve_options(), sort_keys=True, indent=0).encode()
    sys.stdout.buffer.write(gzip.compress(data, mtime=0))
