"""Decomposition search: random partitions, marginal-likelihood ranking, swap refinement."""

from __future__ import annotations

import numpy as np
import pytest

from hdbo.gp import Additive, GaussianProcess, SquaredExponential
from hdbo.structure import check_decomposition, random_decomposition, refine_decomposition, search_decomposition

D, d, M = 12, 3, 4


def _canonical(groups):
    return sorted(tuple(sorted(g)) for g in groups)


def _additive_gp_sample(seed: int, n: int = 120):
    """Noisy values of a sample of the additive GP with a random true decomposition."""
    rng = np.random.default_rng(seed)
    true = random_decomposition(D, d, M, rng)
    X = rng.random((n, D))
    K = Additive(SquaredExponential(lengthscale=0.3), true)(X)
    y = np.linalg.cholesky(K + 1e-6 * np.eye(n)) @ rng.standard_normal(n) + 0.01 * rng.standard_normal(n)
    return rng, true, X, y


def _make_gp(groups):
    # the generating hyperparameters; the search only changes the grouping
    return GaussianProcess(Additive(SquaredExponential(lengthscale=0.3), groups), noise_variance=1e-4,
                           noise_bounds=(1e-4, 1e-4), mean="zero", standardize=False)


def test_random_decomposition_is_a_partition_with_bounded_sizes(rng):
    for D_, d_, M_ in [(10, 3, 4), (10, 5, 2), (12, 3, 4), (7, 7, 1), (10, 1, 10)]:
        groups = random_decomposition(D_, d_, M_, rng)
        assert len(groups) == M_
        assert sorted(i for g in groups for i in g) == list(range(D_))
        assert max(len(g) for g in groups) <= d_
    a = random_decomposition(12, 3, 4, np.random.default_rng(3))
    assert a == random_decomposition(12, 3, 4, np.random.default_rng(3))


def test_random_groups_are_filled_to_d_as_in_the_authors_code():
    """Add-3/4 in D = 10 gets groups of sizes (3, 3, 3, 1) (the authors' preprocessDecomposition.m),
    so it can hold the three true groups of the (10, 3, 3) function; balanced=True keeps the
    old sizes (3, 3, 2, 2), which cannot."""
    from hdbo.structure.decomposition import group_sizes

    assert group_sizes(10, 3, 4) == [3, 3, 3, 1]
    assert group_sizes(10, 3, 4, balanced=True) == [3, 3, 2, 2]
    assert group_sizes(40, 12, 4) == [12, 12, 12, 4]
    assert group_sizes(10, 5, 3) == [5, 4, 1]  # every later group keeps a coordinate
    assert group_sizes(12, 3, 4) == group_sizes(12, 3, 4, balanced=True) == [3, 3, 3, 3]
    for D_, d_, M_ in [(10, 3, 4), (40, 3, 14), (10, 5, 3), (96, 29, 4)]:
        sizes = group_sizes(D_, d_, M_)
        assert sum(sizes) == D_ and len(sizes) == M_ and 1 <= min(sizes) and max(sizes) <= d_
    rng = np.random.default_rng(0)
    groups = [random_decomposition(10, 3, 4, rng) for _ in range(200)]
    assert all(sorted(map(len, g)) == [1, 3, 3, 3] for g in groups)
    assert all(sorted(i for grp in g for i in grp) == list(range(10)) for g in groups)
    # the permutation is uniform: every coordinate lands in the singleton group now and then
    assert {g[-1][0] for g in groups} == set(range(10))
    # with d dividing D the partition is the one the balanced split gives from the same draw
    a = random_decomposition(12, 3, 4, np.random.default_rng(5))
    assert a == random_decomposition(12, 3, 4, np.random.default_rng(5), balanced=True)


@pytest.mark.parametrize("args,match", [((10, 2, 4), "d \\* M = 8 < 10"), ((10, 0, 4), "d must be"),
                                        ((10, 11, 1), "d must be <="), ((3, 1, 4), "M must be <=")])
def test_check_decomposition_errors(args, match):
    with pytest.raises(ValueError, match=match):
        check_decomposition(*args)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_likelihood_ranks_the_true_decomposition_first(seed):
    rng, true, X, y = _additive_gp_sample(seed)
    candidates = [random_decomposition(D, d, M, rng) for _ in range(D)]
    position = seed % (len(candidates) + 1)
    candidates.insert(position, true)
    groups, gp, scores = search_decomposition(X, y, _make_gp, candidates)
    assert _canonical(groups) == _canonical(true)
    assert int(np.argmax(scores)) == position
    # by a wide margin: the next best is at least 20 nats worse
    assert scores[position] - np.sort(scores)[-2] > 20
    assert gp.n_train == X.shape[0]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_search_plus_refinement_recovers_the_true_grouping(seed):
    # The paper's random partial maximization (D random candidates), then swap hill-climbing
    # from the 3 best candidates, as AddGPUCB(refine_starts=3) does.
    rng, true, X, y = _additive_gp_sample(seed)
    candidates = [random_decomposition(D, d, M, rng) for _ in range(D)]
    _, _, scores = search_decomposition(X, y, _make_gp, candidates)
    results = [refine_decomposition(X, y, _make_gp, candidates[i], d=d) for i in np.argsort(-scores)[:3]]
    groups, _, lml = max(results, key=lambda r: r[2])
    assert _canonical(groups) == _canonical(true)
    assert lml > scores.max()
