"""REMBO improves on random search on Branin embedded in D = 50 with d = d_e = 2 (see
``test_embedding_regret.py`` for the measurements of every setting; a separate file so each
file stays fast)."""

from __future__ import annotations

from _runs import log10, random_regrets, regrets

FAST = {"n_init": 8, "acq_budget": 150, "n_restarts": 0, "refit_every": 5}


def test_rembo_beats_random_search_with_d_equal_to_the_effective_dimension():
    # measured: REMBO d=2 k_X -1.34 (per seed -2.6 0.2 0.2 0.2 -1.6 -4.4), random -0.33
    seeds = range(6)
    rembo = log10(regrets("rembo", seeds, 60, d=2, kernel_space="high", **FAST)).mean()
    assert rembo < log10(random_regrets(seeds, 60)).mean() - 0.5
