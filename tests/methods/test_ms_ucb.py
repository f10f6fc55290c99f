"""MS-UCB (Tran-The et al. 2020): subspace construction, |Z_t|, budget, d = D, and a small benchmark."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.acquisition import UCB
from hdbo.acquisition.schedules import tranthe2020
from hdbo.methods import make_method
from hdbo.methods.ms_ucb import SubspacePosterior, splitmix_uniform, subspace_count

from _runs import drive, random_regrets, regrets

BOX = np.array([[-3.0, 5.0], [0.0, 1.0], [10.0, 20.0], [-1.0, 1.0], [0.0, 2.0], [-5.0, -4.0]])
FAST = dict(n_init=4, acq_budget=300, n_restarts=0, refit_every=5)


def objective(x: np.ndarray) -> float:
    u = (x - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0])
    return float(-np.sum((u - 0.3) ** 2) + 0.1 * np.sin(7 * u[0]))


@pytest.mark.parametrize(("N0", "alpha", "t", "expected"), [(1, 0, 7, 7), (3, 0, 5, 15), (1, 1, 6, 21),
                                                          (1, 2, 4, 30), (2, 2, 3, 28), (5, 1, 0, 0)])
def test_subspace_count_formula(N0, alpha, t, expected):
    assert subspace_count(t, N0, alpha) == expected


@pytest.mark.parametrize(("N0", "alpha"), [(1, 0), (2, 1), (1, 2)])
def test_z_grows_as_the_formula_says(N0, alpha):
    m = make_method("ms-ucb", BOX, seed=1, d=2, N0=N0, alpha=alpha, **FAST)
    drive(m, FAST["n_init"], objective)
    total = 0
    for t in range(1, 6):
        drive(m, 1, objective)
        diag = m.diagnostics()
        total += N0 * t**alpha
        assert diag["t"] == t
        assert diag["N_t"] == N0 * t**alpha
        assert diag["n_subspaces"] == total


def test_every_proposal_lies_on_a_subspace_of_z_t():
    """Model-based proposals fix the D - d z-coordinates at some z in Z_t (Definition 1)."""
    m = make_method("ms-ucb", BOX, seed=2, d=2, N0=2, alpha=1, **FAST)
    xs = drive(m, 12, objective)
    assert np.all(xs >= BOX[:, 0]) and np.all(xs <= BOX[:, 1])
    assert_array_equal(m.y_dims_, [4, 5])  # the paper's y: the last d coordinates
    U = m.to_canonical(xs[FAST["n_init"]:])
    for t, u in enumerate(U, start=1):
        Z = m.subspaces(np.arange(subspace_count(t, 2, 1)))
        assert np.min(np.max(np.abs(Z - u[m.z_dims_]), axis=1)) < 1e-9
        assert np.all(np.abs(u) <= 1.0)


def test_y_dims_options():
    first = make_method("ms-ucb", BOX, seed=0, d=2, y_dims="first", **FAST)
    assert_array_equal(first.y_dims_, [0, 1])
    assert_array_equal(first.z_dims_, [2, 3, 4, 5])
    given = make_method("ms-ucb", BOX, seed=0, d=2, y_dims=[5, 1], **FAST)
    assert_array_equal(given.y_dims_, [1, 5])
    rand = make_method("ms-ucb", BOX, seed=0, d=3, y_dims="random", **FAST)
    assert rand.y_dims_.size == 3 and np.unique(rand.y_dims_).size == 3


def test_subspaces_are_uniform_and_reproducible():
    m = make_method("ms-ucb", [(-1, 1)] * 12, seed=5, d=2, **FAST)
    Z = m.subspaces(np.arange(4000))
    assert Z.shape == (4000, 10)
    assert np.all(Z >= -1) and np.all(Z < 1)
    assert abs(Z.mean()) < 0.02 and abs(Z.var() - 1 / 3) < 0.01
    assert_array_equal(m.subspaces([17, 3]), Z[[17, 3]])  # any subset, same values
    assert abs(np.corrcoef(Z[:-1, 0], Z[1:, 0])[0, 1]) < 0.05
    u = splitmix_uniform(123, np.arange(10, dtype=np.uint64))
    assert_array_equal(u, splitmix_uniform(123, np.arange(10, dtype=np.uint64)))
    assert not np.array_equal(u, splitmix_uniform(124, np.arange(10, dtype=np.uint64)))


def test_acquisition_budget_is_respected():
    m = make_method("ms-ucb", BOX, seed=3, d=2, N0=5, alpha=2, n_init=4, acq_budget=120, n_restarts=0,
                    refit_every=5)
    drive(m, 4, objective)
    for _ in range(5):
        drive(m, 1, objective)
        diag = m.diagnostics()
        assert 1 <= diag["acq_nfev"] <= 120
        # 40 screening evaluations: once |Z_t| > 40 only 40 subspaces (new ones first) are screened
        assert diag["screened_subspaces"] == min(40, diag["n_subspaces"])
        assert diag["n_starts"] <= 80 // 10


def test_beta_is_the_papers_schedule():
    m = make_method("ms-ucb", [(-1, 1)] * 100, seed=0, **FAST)
    assert m.beta_t(1) == pytest.approx(tranthe2020(1, dim=100, subspace_dim=5))
    assert m.beta_t(1) == pytest.approx(43.03, abs=0.01)  # SPEC P3.A.3
    full = make_method("ms-ucb", [(-1, 1)] * 3, seed=0, d=3, **FAST)  # d = D: same formula, d -> D
    t = 4
    expected = 2 * np.log(np.pi**2 * t**2 / 0.1) + 2 * 3 * np.log(2 * 3 * np.sqrt(np.log(6 * 3 / 0.1)) * t**2)
    assert full.beta_t(t) == pytest.approx(expected)


def test_d_equal_D_reduces_to_gp_ucb():
    """With d = D every subspace is the whole box: given the same data, the same GP
    hyperparameters and the same beta, MS-UCB proposes the same point as ``gp-ucb`` (both with
    multi-start L-BFGS-B), and that point is the global maximizer of the UCB on a 401 x 401 grid."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (8, 2))

    def f(x):
        return float(-np.sum((x - 0.3) ** 2) + 0.3 * np.sin(4 * x[0]))

    common = dict(n_init=8, ard=False, fit_noise=False, noise_variance=1e-6, n_restarts=0, beta=2.0,
                  acq_budget=600)
    # the same length-scale: 0.5 on [-1, 1] (MS-UCB's domain) is 0.25 on [0, 1] (GP-UCB's)
    ms = make_method("ms-ucb", [(-1, 1)] * 2, seed=0, d=2, lengthscale_bounds=(0.5, 0.5), **common)
    gp_ucb = make_method("gp-ucb", [(-1, 1)] * 2, seed=0, maximizer="lbfgsb", polish=False, gp_prior="none",
                         lengthscale_bounds=(0.25, 0.25), **common)
    for x in X:
        ms.tell(x, f(x))
        gp_ucb.tell(x, f(x))
    a, b = ms.ask(), gp_ucb.ask()
    assert_allclose(a, b, atol=1e-4)
    g = np.linspace(-1, 1, 401)
    grid = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    acq = UCB(ms.gp_, 2.0)
    values = acq(grid)
    assert acq(a[None, :])[0] >= values.max() - 1e-9
    assert_allclose(a, grid[np.argmax(values)], atol=0.01)
    assert ms.diagnostics()["n_subspaces"] == 1 and ms.z_dims_.size == 0


def test_proposal_maximizes_the_ucb_over_the_union_of_subspaces():
    """With d < D, the query is (close to) the best UCB value over every subspace of Z_t: a dense
    grid over y on each of the N0 = 3 subspaces finds nothing better, and the query lies on the
    subspace holding the grid's best."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (10, 4))

    def f(x):
        return float(-np.sum((x - 0.2) ** 2) + 0.4 * np.sin(3 * x[2]) * np.cos(2 * x[3]))

    ms = make_method("ms-ucb", [(-1, 1)] * 4, seed=4, d=2, N0=3, n_init=10, ard=False, fit_noise=False,
                     noise_variance=1e-6, n_restarts=0, beta=2.0, acq_budget=800, lengthscale_bounds=(0.6, 0.6))
    for x in X:
        ms.tell(x, f(x))
    a = ms.ask()
    Z = ms.subspaces(np.arange(3))
    assert ms.diagnostics()["n_subspaces"] == 3
    g = np.linspace(-1, 1, 201)
    Y = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    acq = UCB(ms.gp_, 2.0)
    best = [acq(ms._assemble(np.repeat(z[None, :], Y.shape[0], axis=0), Y)).max() for z in Z]
    assert acq(a[None, :])[0] >= max(best) - 1e-3
    on = np.flatnonzero(np.max(np.abs(Z - a[ms.z_dims_]), axis=1) < 1e-9)
    assert on.tolist() == [int(np.argmax(best))]
    # the subspaces differ enough for the choice to matter
    assert max(best) - min(best) > 0.05


@pytest.mark.parametrize("kernel", ["matern52", "matern32", "matern12", "se"])
@pytest.mark.parametrize("ard", [False, True])
def test_subspace_posterior_equals_the_gp_posterior(kernel, ard, rng):
    """The split distances (z part once per subspace, y part per call) give the GP's own moments
    and the y-columns of its input gradients, to round-off."""
    D, d = 12, 3
    m = make_method("ms-ucb", [(-1, 1)] * D, seed=0, d=d, y_dims=[0, 5, 11], n_init=15, kernel=kernel, ard=ard,
                    n_restarts=0)
    X = rng.uniform(-1, 1, (15, D))
    for x in X:
        m.tell(x, float(-np.sum((x - 0.2) ** 2) + np.sin(3 * x[0]) * x[5]))
    gp = m._sync_gp()
    Z = m.subspaces(np.arange(4))
    rows = rng.integers(0, 4, 40)
    Y = rng.uniform(-1, 1, (40, d))
    Y[0] = X[0, m.y_dims_]  # at a training point's free coordinates
    mine = SubspacePosterior(gp, Z, rows, m.z_dims_, m.y_dims_).predict(Y, return_grad=True)
    ref = gp.predict(m._assemble(Z[rows], Y), return_grad=True, standardized=True)
    for a, b in zip(mine[:2], ref[:2]):
        assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(mine[2:], ref[2:]):
        assert_allclose(a, b[:, m.y_dims_], rtol=1e-9, atol=1e-12)


def test_split_distances_do_not_change_the_proposals(monkeypatch):
    """The same run with the GP evaluated on assembled points (the general path) proposes the
    same points, to round-off."""
    def run():
        m = make_method("ms-ucb", [(-1, 1)] * 30, seed=7, d=4, N0=2, alpha=1, n_init=8, acq_budget=1500,
                        n_restarts=0)
        return drive(m, 14, lambda x: float(-np.sum((x[:6] - 0.3) ** 2) + 0.5 * np.sin(3 * x[-1])))

    fast = run()
    monkeypatch.setattr(SubspacePosterior, "applies", staticmethod(lambda gp: False))
    assert_allclose(run(), fast, atol=1e-7)


def _quad(x: np.ndarray) -> float:
    return float(-np.sum((x[:5] - 0.3) ** 2) + 0.1 * np.sin(3 * x[-1]))


def _direct_cz(m, gp, n_now):
    """The z parts SubspacePosterior computes itself from the materialized subspaces."""
    rows = np.arange(n_now)
    return SubspacePosterior(gp, m.subspaces(rows), rows, m.z_dims_, m.y_dims_)._cz


def test_cached_z_parts_follow_new_subspaces_points_and_pending_points(rng):
    """The table of z . x products kept across iterations gives the z parts of every subspace
    computed afresh, after new subspaces, new observations, a refit (new length-scale), a
    pending point conditioned on and withdrawn, and a new subspace seed."""
    D, d = 40, 3
    m = make_method("ms-ucb", [(-1, 1)] * D, seed=1, d=d, N0=2, alpha=1, n_init=6, acq_budget=3000, n_restarts=0)
    for x in rng.uniform(-1, 1, (6, D)):
        m.tell(x, _quad(x))
    S, _ = m._split_budget()
    checked = 0
    for step in range(5):
        gp = m._sync_gp()
        n_now = m.n_subspaces()
        cz = m._cz_table(gp, n_now, S)
        assert cz is not None and cz.shape == (n_now, gp.n_train)
        assert_allclose(cz, _direct_cz(m, gp, n_now), rtol=1e-10, atol=1e-9)
        # a GP conditioned on a pending point has one more column, which the next observation
        # (another point) must replace
        u = rng.uniform(-1, 1, (1, D))
        cond = gp.hallucinate(u)
        assert_allclose(m._cz_table(cond, n_now, S), _direct_cz(m, cond, n_now), rtol=1e-10, atol=1e-9)
        x = m.ask() if step % 2 else rng.uniform(-1, 1, D)  # a told point need not be the proposal
        m.tell(x, _quad(x))
        checked += 1
    assert checked == 5 and m._cross["G"].shape[0] >= m.n_subspaces(m.iteration - 1)
    # built in one go (as by a resumed method) the table has the same entries, bit for bit
    gp, n_now = m._sync_gp(), m.n_subspaces()
    grown = m._cz_table(gp, n_now, S)
    fresh = type(m).from_state(m.state_dict())
    assert fresh._cross is None
    assert_array_equal(fresh._cz_table(gp, n_now, S), grown)
    m.subspace_seed_ += 1  # as a restored state would: the table is rebuilt for the new Z
    gp = m._sync_gp()
    assert_allclose(m._cz_table(gp, 7, S), _direct_cz(m, gp, 7), rtol=1e-10, atol=1e-9)


def test_z_part_table_only_where_it_applies():
    """No table with a length-scale per coordinate, with Matern-1/2's exact distances, or when
    the screening does not reach every subspace."""
    D = 20
    for options, n_screen in [({"ard": True}, 10**6), ({"kernel": "matern12"}, 10**6), ({}, 3)]:
        m = make_method("ms-ucb", [(-1, 1)] * D, seed=0, d=2, n_init=5, n_restarts=0, **options)
        for x in np.random.default_rng(0).uniform(-1, 1, (5, D)):
            m.tell(x, _quad(x))
        assert m._cz_table(m._sync_gp(), 5, n_screen) is None, options


def test_z_part_table_does_not_change_the_proposals(monkeypatch):
    """The same run with the z parts computed afresh at every step proposes the same points,
    to round-off."""
    import hdbo.methods.ms_ucb as ms_ucb_module

    def run():
        m = make_method("ms-ucb", [(-1, 1)] * 30, seed=3, d=4, N0=2, alpha=1, n_init=8, acq_budget=1500,
                        n_restarts=0)
        return drive(m, 14, lambda x: float(-np.sum((x[:6] - 0.3) ** 2) + 0.5 * np.sin(3 * x[-1])))

    cached = run()
    monkeypatch.setattr(ms_ucb_module, "_CROSS_MAX", 0)
    assert_allclose(run(), cached, atol=1e-7)


@pytest.mark.parametrize(
    ("options", "exc", "match"),
    [
        ({"d": 7}, ValueError, "d"),
        ({"d": 0}, ValueError, "d"),
        ({"d": 2.0}, TypeError, "d"),
        ({"N0": 0}, ValueError, "N0"),
        ({"alpha": -1}, ValueError, "alpha"),
        ({"y_dims": "middle"}, ValueError, "y_dims"),
        ({"d": 2, "y_dims": [0, 0]}, ValueError, "y_dims"),
        ({"d": 2, "y_dims": [0, 9]}, ValueError, "y_dims"),
        ({"screen_fraction": 1.0}, ValueError, "screen_fraction"),
        ({"maximizer": "direct"}, ValueError, "maximizer"),
        ({"polish": True}, ValueError, "polish"),
        ({"beta": "nope"}, ValueError, "beta"),
    ],
)
def test_invalid_options(options, exc, match):
    with pytest.raises(exc, match=match):
        make_method("ms-ucb", BOX, seed=0, **options)


def test_beats_random_search_on_embedded_branin():
    """Branin hidden in D = 50, 40 evaluations, d = 5, problem seeds 0-7 (tests/methods/_runs.py).

    Measured: simple regret median 0.50, mean 1.20; random search (5 runs per seed) median
    1.15, mean 1.29. Branin's 2 active coordinates are both among the fixed z in about 81% of
    the seeds, where only the choice among the random z in Z_t can find good values for them.
    The mean is one seed's luck: 0.74 (seed 7: 0.82) before the acquisition was maximized in
    the GP's standardized units (issue 17), 1.20 (seed 7: 4.49) after; over seeds 0-31 the
    median is 0.70 and the mean 1.23 / 1.37 either way. Required: the median 40% lower than
    random search's and the mean lower.
    """
    ours = regrets("ms-ucb", range(8), 40, n_init=10, acq_budget=600, n_restarts=0, refit_every=3)
    rand = random_regrets(range(8), 40)
    assert np.median(ours) < 0.6 * np.median(rand), (ours, rand)
    assert np.mean(ours) < np.mean(rand), (ours, rand)


def _levy20_acquisition_gap(seed: int, beta: float | str) -> float:
    """Brute-force UCB maximum over every subspace of Z_t minus MS-UCB's own, Levy D = 20, d = 5.

    25 model-based iterations with the default budget (6000 evaluations per step, 200 starts),
    then one more proposal; the brute force screens 4000 random y on each of the 26 subspaces
    and polishes each subspace's best by L-BFGS-B (standardized UCB units).
    """
    from scipy.optimize import minimize

    from hdbo.problems import get

    p = get("levy", dim=20, domain="symmetric")
    m = make_method("ms-ucb", p.bounds, seed=seed, d=5, n_init=20, n_restarts=0, refit_every=5, beta=beta)
    drive(m, 45, lambda x: float(p(x)))
    m.ask()  # not told: the GP below is the one this proposal was made with
    last = m.diagnostics()
    gp, n, b = m._sync_gp(), last["n_subspaces"], last["beta"]
    Z = m.subspaces(np.arange(n))
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(n), 4000)
    Y = rng.uniform(-1, 1, (rows.size, 5))
    v = UCB(SubspacePosterior(gp, Z, rows, m.z_dims_, m.y_dims_), b)(Y).reshape(n, 4000)
    best = -np.inf
    for j in range(n):
        one = UCB(SubspacePosterior(gp, Z[j:j + 1], np.zeros(1, dtype=np.int64), m.z_dims_, m.y_dims_), b)

        def neg(y, one=one):
            val, grad = one.value_and_grad(y[None, :])
            return -val[0], -grad[0]

        res = minimize(neg, Y[j * 4000 + int(np.argmax(v[j]))], jac=True, method="L-BFGS-B", bounds=[(-1, 1)] * 5)
        best = max(best, -res.fun, v[j].max())
    return float(best - last["acq_value"])


def test_budgeted_search_finds_the_ucb_maximum_over_z_t_at_d20():
    """The Figure-1 setting (issue 20): D = 20, d = 5, |Z_t| = 26, default budget. Measured gaps
    to the brute force: with the paper's beta_t (about 130, the UCB is mostly sigma) < 1e-4 on
    seeds 0-3; with beta = 2 (the mean matters) <= 1e-4 on 7 of seeds 0-7 and 0.06 on seed 0
    (spread of the subspaces' maxima 0.1-0.6; a negative gap: ours is the better). Required:
    < 0.02 with the paper's beta; with beta = 2, < 0.01 on at least 6 of 8 seeds and < 0.15 on
    all."""
    paper = [_levy20_acquisition_gap(s, "tranthe2020") for s in range(4)]
    assert max(paper) < 0.02, paper
    small = np.array([_levy20_acquisition_gap(s, 2.0) for s in range(8)])
    assert np.sum(small < 0.01) >= 6 and small.max() < 0.15, small
