"""Per-method options that make a method run fast in the contract and runner tests.

``FAST_OPTIONS``: for the contract suite (``tests/methods/test_method_contract.py``) on a
5-dimensional box; small initial designs, small acquisition budgets, early refits, small
subspaces, and problem structure for methods that need it.

``RUNNER_OPTIONS``: for the runner's interrupt/resume test
(``tests/experiments/test_runner.py``) on a 2-dimensional flaky problem whose structure is
empty; merged over ``{"n_init": 4, "refit_every": 2}`` for GP methods. Only methods whose
defaults do not fit there need an entry.

``REQUIRED_OPTIONS``: the options without which a method cannot run on a 5-dimensional box whose
problem gives no structure (everything else at its default); for the small-budget and the
option tests (``tests/methods/test_small_budgets.py``, ``tests/methods/test_options.py``).

``method_params()``: every registered method as a pytest parameter, the peers whose packages
(the ``peers`` extra) are missing marked as skipped with the reason.
"""

from __future__ import annotations

import importlib.util

import pytest

from hdbo.methods import available_methods
from hdbo.methods.peers import PEER_PACKAGES, PEERS_INSTALL

FAST_OPTIONS: dict[str, dict] = {
    "gp-ucb": {"n_init": 4, "acq_budget": 150},
    "gp-ei": {"n_init": 4, "acq_budget": 150},
    "auto": {"n_init": 4, "acq_budget": 150},
    "add-gp-ucb": {"n_init": 4, "acq_budget": 150, "d": 2, "M": 3, "explore_iters": 3, "refit_every": 3,
                   "refine_starts": 1},
    # maxiter=1 stops DIRECT after its 1 + 2*5 = 11-point initial sampling, so the run also
    # covers the switch to seeded random points (and its resume).
    "direct": {"maxiter": 1},
    "rpp-gp-ucb": {"n_init": 4, "acq_budget": 150, "d": 2, "M": 3, "explore_iters": 3, "refit_every": 3,
                   "w_iters": 10, "alpha_grid": 5, "n_decompositions": 2},
    "pp-gp-ucb": {"n_init": 4, "acq_budget": 150, "d": 2, "M": 3, "explore_iters": 3, "refit_every": 3,
                  "w_iters": 10, "n_decompositions": 2},
    "rembo": {"n_init": 4, "acq_budget": 150, "d": 2},
    "hesbo": {"n_init": 4, "acq_budget": 150, "d": 2},
    "sre": {"n_init": 4, "acq_budget": 150, "d": 2, "m": 2},  # stages of 8 and 4: a switch at 8
    "ms-ucb": {"n_init": 4, "acq_budget": 150, "d": 2, "N0": 2, "alpha": 1, "refit_every": 3},
    "line-bo": {"n_init": 4, "acq_budget": 150, "refit_every": 3},
    "dropout-ucb": {"n_init": 4, "acq_budget": 150, "d": 2, "refit_every": 3},
    # Phase 1 = 2 (3 + 1) = 8 evaluations (failures at 2 and 7 fall in it), then GP-UCB on a line.
    "si-bo": {"k": 1, "m_Phi": 3, "grid_points": 51, "refit_every": 2, "ds_solver": "admm"},
    "random-subspace-ucb": {"k": 2, "grid_points": 21, "n_init": 3, "refit_every": 3},
    "exact-subspace-ucb": {"grid_points": 21, "n_init": 3, "refit_every": 3,
                           "subspace": [[1.0, 0.0, 0.0, 0.5, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]]},
    "highdim-random-ucb": {"n_candidates": 100, "n_init": 3, "refit_every": 3},
    # 10 FDT evaluations of selection (the failures at 2 and 7 fall in it), then GP-UCB.
    "hds": {"selection_budget": 10, "noise_variance": 1e-4, "acq_budget": 150},
    # One round of 5 pairs needs 10 evaluations; the failures at 2 and 7 make the budget run out
    # within it (ranking of the coordinates sampled so far), then GP-UCB on the 2 kept.
    "cws": {"n_select": 2, "rounds": 1, "selection_budget": 10, "acq_budget": 150},
    # Peers: a few model-based proposals per 12-step run, with small acquisition searches.
    "peer:botorch": {"n_init": 8, "num_restarts": 2, "raw_samples": 32},
    "peer:tpe": {"n_startup_trials": 4},
    "peer:optuna-gp": {"n_startup_trials": 10},  # Optuna's GP proposal takes about a second
    "peer:cma": {"popsize": 4},  # generations end at 4, 8, 12: resumes inside and at their ends
    # SMAC: 4 Sobol points, then a forest every 8 proposals (each fit takes about a second).
    "peer:smac": {"n_init": 4, "challengers": 200},
}


RUNNER_OPTIONS: dict[str, dict] = {
    # embedding methods (d = D = 2 here): n_init = 2 (SRE: 1) so the model is refitted within the first 8
    # evaluations despite the failures; SRE: stage 1 holds evaluations 0-8,
    # stage 2 opens after the resume.
    "rembo": {"n_init": 2, "acq_budget": 150},
    # HeSBO: with D = d = 2 the paper's uniform hash may put both coordinates in one bucket
    # (a diagonal line, failing almost everywhere here); surjective=True keeps them apart.
    "hesbo": {"n_init": 2, "acq_budget": 150, "surjective": True},
    "sre": {"n_init": 1, "refit_every": 1, "m": 2, "stage_length": 8, "acq_budget": 150},
    "hds": {"n_init": 1, "selection_budget": 6, "noise_variance": 1e-4, "acq_budget": 150},
    "cws": {"n_init": 1, "n_select": 1, "rounds": 1, "selection_budget": 4, "acq_budget": 150},
    # d = 1 (M = 2 groups of z) and a 1-iteration exploration phase, so W is learned (and alpha
    # chosen) at the refits before the interrupt and the resumed state carries a learned W
    # (PP: its clipped points often fail here, so it refits at every success).
    "rpp-gp-ucb": {"d": 1, "explore_iters": 1, "w_iters": 10, "alpha_grid": 5, "acq_budget": 150},
    "pp-gp-ucb": {"d": 1, "explore_iters": 1, "w_iters": 10, "acq_budget": 150, "refit_every": 1},
    # MS-UCB / DropoutUCB: d = 1 of the 2 coordinates (d = D = 2 would make MS-UCB plain GP-UCB);
    # MS-UCB / LineBO: refit at every success so a refitted model is stored despite the failures.
    "ms-ucb": {"d": 1, "acq_budget": 150, "refit_every": 1},
    "line-bo": {"acq_budget": 150, "refit_every": 1},
    "dropout-ucb": {"d": 1, "acq_budget": 150},
    # SI-BO: Phase 1 = m_X (m_Phi + 1) = 2 (2 + 1) = 6 evaluations (about half fail here), then
    # GP-UCB on a line; n_init = 1 and refits at every success (also for the baselines, whose UCB
    # keeps probing the failing corner), so a refitted model is stored before the interrupt.
    "si-bo": {"n_init": 1, "k": 1, "m_Phi": 2, "grid_points": 51, "ds_solver": "admm", "refit_every": 1},
    "random-subspace-ucb": {"n_init": 2, "k": 1, "grid_points": 51, "refit_every": 1},
    "exact-subspace-ucb": {"n_init": 2, "subspace": [[1.0, 0.5]], "grid_points": 51, "refit_every": 1},
    "highdim-random-ucb": {"n_init": 2, "n_candidates": 100, "refit_every": 1},
    "peer:botorch": {"n_init": 4, "num_restarts": 2, "raw_samples": 32},
    "peer:tpe": {"n_startup_trials": 4},
    "peer:optuna-gp": {"n_startup_trials": 7},
    "peer:smac": {"n_init": 4, "challengers": 200},
}


REQUIRED_OPTIONS: dict[str, dict] = {
    # exact-subspace-ucb is an oracle baseline: it is told the true subspace by definition
    "exact-subspace-ucb": {"subspace": [[1.0, 0.0, 0.0, 0.5, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]]},
}


def missing_packages(name: str) -> list[str]:
    """The packages a method needs that are not installed (only peers need any)."""
    return [m for m in PEER_PACKAGES.get(name, ()) if importlib.util.find_spec(m) is None]


def method_params(names: list[str] | None = None) -> list:
    """Registered method names as pytest parameters; a peer whose packages are missing is skipped."""
    out = []
    for name in available_methods() if names is None else names:
        missing = missing_packages(name)
        reason = f"{name} needs {', '.join(missing)} (the 'peers' extra): {PEERS_INSTALL}"
        out.append(pytest.param(name, marks=pytest.mark.skipif(bool(missing), reason=reason)))
    return out
