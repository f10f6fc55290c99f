"""HDS tree search with the FDT and GPT tests (Chen, Castro, Krause 2012, Algorithm 1, eqs. 1-3)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from hdbo.problems import gp_sample
from hdbo.structure.variable_selection import (
    HDSSelector,
    fdt_llr,
    fdt_variances,
    gpt_llr,
    gpt_llr_moments,
    gpt_predictive,
)

NOISE = 0.1  # noise variance of the paper's default setting


def select(problem, test: str, seed: int, noise_variance: float = NOISE, budget: int = 2000, **kw) -> HDSSelector:
    """Run a selector to the end on noisy values of ``problem`` (on [-1, 1]^D)."""
    rng = np.random.default_rng(seed)
    sel = HDSSelector(problem.dim, background=rng.uniform(-1, 1, problem.dim), test=test,
                      noise_variance=noise_variance, max_evaluations=budget, **kw)
    noise = np.random.default_rng(seed + 1000)
    while not sel.done:
        x = sel.propose(rng)
        sel.consume(x, problem(x) + math.sqrt(noise_variance) * noise.standard_normal())
    return sel


# ---------------------------------------------------------------------------- closed forms
def test_fdt_variances_and_llr_match_eq2():
    var0, var1 = fdt_variances(1.0, 0.1)
    assert var0 == pytest.approx(0.2) and var1 == pytest.approx(2 * (0.95 + 0.1))
    dy = np.array([-1.3, 0.0, 0.2, 0.9, 2.5])
    expected = norm.logpdf(dy, scale=math.sqrt(var1)) - norm.logpdf(dy, scale=math.sqrt(var0))
    np.testing.assert_allclose(fdt_llr(dy, var0, var1), expected, rtol=1e-12)
    # the printed form: (1/(2 s0^2) - 1/(2 s1^2)) dy^2 + log(s0 / s1)
    assert fdt_llr(0.7, var0, var1) == pytest.approx(
        (1 / (2 * var0) - 1 / (2 * var1)) * 0.49 + math.log(math.sqrt(var0) / math.sqrt(var1)))
    assert isinstance(fdt_llr(0.7, var0, var1), float)


def test_fdt_llr_drift_has_the_sign_of_the_true_hypothesis(rng):
    var0, var1 = fdt_variances(1.0, 0.1)
    assert np.mean(fdt_llr(rng.normal(0, math.sqrt(var0), 20000), var0, var1)) < -0.5
    assert np.mean(fdt_llr(rng.normal(0, math.sqrt(var1), 20000), var0, var1)) > 0.5


def test_gpt_predictive_matches_direct_formulas(rng):
    z, y, zq = rng.uniform(-1, 1, 6), rng.normal(size=6), np.linspace(-1, 1, 7)
    sv, b, nv = 1.3, 0.2, 0.05
    m1, v1 = gpt_predictive(z, y, zq, hypothesis=1, signal_variance=sv, bandwidth=b, noise_variance=nv)
    K = sv * np.exp(-((z[:, None] - z[None, :]) ** 2) / b**2) + nv * np.eye(6)
    k = sv * np.exp(-((z[:, None] - zq[None, :]) ** 2) / b**2)
    np.testing.assert_allclose(m1, k.T @ np.linalg.solve(K, y), atol=1e-10)
    np.testing.assert_allclose(v1, nv + sv - np.sum(k * np.linalg.solve(K, k), axis=0), atol=1e-10)
    # H0 (constant kernel sigma_s^2): the posterior of an unknown constant from n values
    m0, v0 = gpt_predictive(z, y, zq, hypothesis=0, signal_variance=sv, bandwidth=b, noise_variance=nv)
    n = z.size
    np.testing.assert_allclose(m0, n * sv / (nv + n * sv) * y.mean(), atol=1e-10)
    np.testing.assert_allclose(v0, nv + sv * nv / (nv + n * sv), atol=1e-10)
    # no data: the prior
    m, v = gpt_predictive([], [], zq, hypothesis=1, signal_variance=sv, bandwidth=b, noise_variance=nv)
    np.testing.assert_allclose(m, 0.0)
    np.testing.assert_allclose(v, sv + nv)


def test_gpt_llr_is_the_log_ratio_of_predictive_densities():
    got = gpt_llr(0.8, 0.1, 0.3, -0.2, 0.9)
    expected = norm.logpdf(0.8, -0.2, math.sqrt(0.9)) - norm.logpdf(0.8, 0.1, math.sqrt(0.3))
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("m0,v0,m1,v1", [(0.0, 0.2, 0.0, 1.1), (0.3, 0.15, -0.4, 0.8), (0.1, 0.5, 0.6, 0.55)])
def test_gpt_llr_moments_closed_form_and_monte_carlo(m0, v0, m1, v1):
    E, V = gpt_llr_moments([m0], [v0], [m1], [v1])
    # the paper's representation w2 chi^2(1, lambda) + w0 (appendix, eqs. 18-19)
    w2 = 0.5 * (v1 / v0 - 1)
    w0 = math.log(math.sqrt(v0 / v1)) - (m1 - m0) ** 2 / (2 * (v1 - v0))
    lam = (math.sqrt(v1) * (m1 - m0) / (v1 - v0)) ** 2
    assert E[0] == pytest.approx(w2 * (1 + lam) + w0, rel=1e-10)
    assert V[0] == pytest.approx(w2**2 * (2 + 4 * lam), rel=1e-10)
    # and the distribution of the increment under H1
    y = np.random.default_rng(5).normal(m1, math.sqrt(v1), 400_000)
    llr = norm.logpdf(y, m1, math.sqrt(v1)) - norm.logpdf(y, m0, math.sqrt(v0))
    assert E[0] == pytest.approx(llr.mean(), abs=0.02 * max(1.0, abs(E[0])))
    assert V[0] == pytest.approx(llr.var(), rel=0.03)


# ---------------------------------------------------------------------------- the tree
def test_split_in_halves_and_active_leaf_selected():
    # f depends on coordinate 3 only; noise-free evaluations with a tiny assumed noise
    f = lambda x: 2.0 * math.sin(10 * x[3])  # noqa: E731
    rng = np.random.default_rng(0)
    sel = HDSSelector(5, background=rng.uniform(-1, 1, 5), noise_variance=1e-3)
    while not sel.done:
        x = sel.propose(rng)
        sel.consume(x, f(x))
    assert sel.selected == [3] and sel.finished
    active = [d["dims"] for d in sel.decided if d["active"]]
    assert active == [[0, 1, 2, 3, 4], [3, 4], [3]]  # root, its right half, the leaf
    inactive = [d["dims"] for d in sel.decided if not d["active"]]
    assert sorted(inactive) == [[0, 1, 2], [4]]  # halves: first ceil(|I|/2) to the left
    assert sel.n_evaluations == 2 * sel.n_iterations


def test_points_are_diagonals_through_the_background():
    rng = np.random.default_rng(1)
    bg = rng.uniform(-1, 1, 8)
    sel = HDSSelector(8, background=bg, test="fdt")
    x1 = sel.propose(rng)
    assert np.array_equal(sel.propose(rng), x1)  # repeated until consumed
    assert np.allclose(x1, x1[0])  # the root: every coordinate set to z
    sel.consume(x1, 0.3)
    x2 = sel.propose(rng)
    assert x2[0] - x1[0] == pytest.approx(3 * 0.1)  # the pair: z + delta, delta = 3 b
    assert -1 <= x1[0] <= 1 - 0.3
    node = sel.point([2, 5], 0.25)
    assert node[2] == node[5] == 0.25 and np.array_equal(np.delete(node, [2, 5]), np.delete(bg, [2, 5]))


def test_fdt_samples_the_node_with_largest_llr():
    rng = np.random.default_rng(2)
    sel = HDSSelector(8, background=np.zeros(8), test="fdt")
    sel.nodes[0].llr = 20.0  # force a split
    sel._decide(sel.nodes[0])
    left, right = sel.nodes
    assert left.dims == [0, 1, 2, 3] and right.dims == [4, 5, 6, 7]
    right.llr, left.llr = 3.0, -2.0
    x = sel.propose(rng)
    assert np.all(x[4:] == x[4]) and np.all(x[:4] == 0.0)
    sel.pending = None
    left.llr = 5.0
    x = sel.propose(rng)
    assert np.all(x[:4] == x[0]) and np.all(x[4:] == 0.0)


def _index(node, grid, bandwidth=0.1):
    """``E[LLR] + sqrt(V[LLR])`` of a node on the grid, from the module's formulas."""
    kw = dict(signal_variance=1.0, bandwidth=bandwidth, noise_variance=0.1)
    m0, v0 = gpt_predictive(node.z, node.y, grid, hypothesis=0, **kw)
    m1, v1 = gpt_predictive(node.z, node.y, grid, hypothesis=1, **kw)
    E, V = gpt_llr_moments(m0, v0, m1, v1)
    return E + np.sqrt(V)


def test_gpt_proposes_the_argmax_of_the_index():
    sel = HDSSelector(4, background=np.zeros(4), test="gpt", grid_size=41)
    sel.nodes[0].llr = 20.0
    sel._decide(sel.nodes[0])
    a, b = sel.nodes
    a.z, a.y = [0.0, 0.5], [0.0, 0.0]  # a flat node: small index
    b.z, b.y = [0.0], [1.5]             # a varying one
    ucb_a, ucb_b = _index(a, sel.grid), _index(b, sel.grid)
    assert ucb_b.max() > ucb_a.max()  # node b is sampled
    # b's far grid points (beyond H1's correlation range) tie at its maximum: a tie to break
    top = np.flatnonzero(ucb_b >= ucb_b.max() - 1e-12 * max(1.0, abs(ucb_b.max())))
    assert top.size > 1
    seen = set()
    for seed in range(20):
        fresh = HDSSelector.from_state(sel.state_dict())
        x = fresh.propose(np.random.default_rng(seed))
        assert np.all(x[a.dims] == 0.0)  # the other node and the background are untouched
        z = x[b.dims]
        assert np.all(z == z[0])
        j = int(np.flatnonzero(sel.grid == z[0])[0])
        assert j in top  # the point attains b's maximal index
        seen.add(j)
    assert len(seen) > 1  # ties are broken at random, not always at the lowest point


def test_gpt_breaks_ties_at_random_and_takes_a_unique_argmax():
    # A fresh node's index is flat (H0 and H1 agree before any data): every grid point ties.
    lowest = []
    chosen = []
    for seed in range(10):
        sel = HDSSelector(3, background=np.zeros(3), test="gpt", grid_size=201)
        assert np.ptp(_index(sel.nodes[0], sel.grid)) == 0.0
        z = float(sel.propose(np.random.default_rng(seed))[0])
        again = HDSSelector(3, background=np.zeros(3), test="gpt", grid_size=201)
        assert float(again.propose(np.random.default_rng(seed))[0]) == z  # deterministic under the seed
        assert float(sel.propose(np.random.default_rng(seed + 99))[0]) == z  # pending: nothing redrawn
        lowest.append(z == -1.0)
        chosen.append(z)
    assert not all(lowest) and len(set(chosen)) >= 8
    # A unique maximum is taken, and no random number is drawn for it.
    sel = HDSSelector(3, background=np.zeros(3), test="gpt", grid_size=41)
    node = sel.nodes[0]
    node.z, node.y = [-0.3, 0.0, 0.3], [0.2, 1.4, -0.1]  # data varying on H1's scale: a peaked index
    ucb = _index(node, sel.grid)
    j = int(np.argmax(ucb))
    assert np.sum(ucb >= ucb[j] - 1e-12 * max(1.0, abs(ucb[j]))) == 1
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    x = sel.propose(rng)
    assert np.all(x == sel.grid[j]) and rng.bit_generator.state == before


def test_inactive_root_stops_with_nothing_selected():
    rng = np.random.default_rng(4)
    sel = HDSSelector(16, background=rng.uniform(-1, 1, 16), test="gpt")
    noise = np.random.default_rng(5)
    while not sel.done:
        x = sel.propose(rng)
        sel.consume(x, 0.7 + math.sqrt(0.1) * noise.standard_normal())  # a constant function
    assert sel.selected == [] and sel.finished
    assert [d["active"] for d in sel.decided] == [False]


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_recovers_active_set_of_a_gp_sample(test):
    # D = 32, d = 2, the paper's kernel (b = 0.1, sigma_s^2 = 1) and noise variance 0.1
    for seed in (0, 1, 2):
        problem = gp_sample(32, d=2, seed=seed, n_features=2048)
        sel = select(problem, test, seed=10 + seed)
        assert sorted(sel.selected) == problem.structure["active_dims"], (test, seed)
        assert sel.finished and sel.n_evaluations < 1000


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_evaluations_grow_with_log_d_not_d(test):
    means: dict[int, float] = {}
    for D in (16, 64, 256):
        counts = []
        for seed in range(4):
            problem = gp_sample(D, d=2, seed=100 + seed, n_features=1024)
            sel = select(problem, test, seed=200 + seed)
            assert sorted(sel.selected) == problem.structure["active_dims"]
            counts.append(sel.n_evaluations)
        means[D] = float(np.mean(counts))
    # log2 D goes 4 -> 6 -> 8 (x2 overall) while D grows x16: allow x3.5 for the constant and noise
    assert means[256] < 3.5 * means[16], means
    # increments per factor 4 in D stay of the same order (linear in log D), not x4 (linear in D)
    assert means[256] - means[64] < 2.5 * max(means[64] - means[16], 0.1 * means[16]), means


def test_budget_is_respected_and_pairs_are_not_split():
    problem = gp_sample(64, d=2, seed=3, n_features=512)
    sel = select(problem, "fdt", seed=0, budget=15)
    assert sel.done and sel.n_evaluations == 14  # 7 pairs; a pair does not start with 1 evaluation left
    sel = select(problem, "gpt", seed=0, budget=15)
    assert sel.done and sel.n_evaluations == 15


def test_failed_evaluation_drops_the_pair_and_gpt_excludes_the_point():
    rng = np.random.default_rng(6)
    sel = HDSSelector(4, background=np.zeros(4), test="fdt")
    x = sel.propose(rng)
    sel.consume(x, 1.0)
    sel.consume(sel.propose(rng), float("nan"))
    assert sel.pending is None and sel.nodes[0].llr == 0.0 and sel.n_failed == 1 and sel.n_iterations == 0
    sel = HDSSelector(4, background=np.zeros(4), test="gpt", grid_size=11)
    x = sel.propose(rng)
    sel.consume(x, float("nan"))
    j = int(np.argmin(np.abs(sel.grid - x[0])))
    assert sel.nodes[0].excluded == [j]
    assert sel.propose(rng)[0] != x[0]


def test_consume_ignores_a_point_that_was_not_proposed():
    rng = np.random.default_rng(7)
    sel = HDSSelector(4, background=np.zeros(4))
    x = sel.propose(rng)
    assert sel.consume(x + 0.5, 1.0) is False and sel.n_evaluations == 0
    assert sel.consume(x, 1.0) is True and sel.n_evaluations == 1


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_state_dict_round_trip_continues_identically(test):
    problem = gp_sample(16, d=2, seed=4, n_features=512)
    rng = np.random.default_rng(8)
    a = HDSSelector(16, background=rng.uniform(-1, 1, 16), test=test)
    for _ in range(25):
        x = a.propose(rng)
        a.consume(x, problem(x))
    x = a.propose(rng)  # a pending proposal goes through the state too
    b = HDSSelector.from_state(json.loads(json.dumps(a.state_dict())))
    ra, rb = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(30):
        if a.done:
            break
        xa, xb = a.propose(ra), b.propose(rb)
        assert np.array_equal(xa, xb)
        a.consume(xa, problem(xa))
        b.consume(xb, problem(xb))
    assert a.state_dict() == b.state_dict()


def test_argument_validation():
    bg = np.zeros(4)
    with pytest.raises(ValueError, match="theta1"):
        HDSSelector(4, background=bg, theta1=0.0)
    with pytest.raises(ValueError, match="theta0"):
        HDSSelector(4, background=bg, theta0=1.0)
    with pytest.raises(ValueError, match="test"):
        HDSSelector(4, background=bg, test="cws")
    with pytest.raises(ValueError, match="background"):
        HDSSelector(4, background=np.zeros(3))
    with pytest.raises(ValueError, match="background"):
        HDSSelector(2, background=[0.0, 1.5])
    with pytest.raises(ValueError, match="noise_variance"):
        HDSSelector(4, background=bg, noise_variance=0.0)
    with pytest.raises(RuntimeError, match="finished"):
        sel = HDSSelector(4, background=bg, max_evaluations=1)
        sel.propose(np.random.default_rng(0))


def test_gpt_offset_variance_handles_a_shifted_function():
    # The paper's zero-mean H1 (sigma_s^2 = 1) loses to H0's unknown constant when the function
    # sits far from 0; the optional offset on both hypotheses removes the level.
    base = gp_sample(32, d=2, seed=0, n_features=2048)

    class Shifted:
        dim = 32

        def __call__(self, x):
            return base(x) + 50.0

    plain = select(Shifted(), "gpt", seed=10)
    assert plain.selected == [] and plain.n_evaluations < 50
    shifted = select(Shifted(), "gpt", seed=10, offset_variance=1e6)
    assert sorted(shifted.selected) == base.structure["active_dims"]
    m, v = gpt_predictive([0.0], [50.0], [0.5], hypothesis=1, signal_variance=1.0, bandwidth=0.1,
                          noise_variance=0.1, offset_variance=1e6)
    assert m[0] == pytest.approx(50.0, rel=0.01)  # the level is learned from one value
    with pytest.raises(ValueError, match="offset_variance"):
        HDSSelector(4, background=np.zeros(4), offset_variance=-1.0)


def test_fdt_llr_of_huge_differences_is_infinite_without_warnings():
    from hdbo.structure.variable_selection import fdt_llr

    with np.errstate(all="raise"):
        out = fdt_llr(np.array([1e200, -1e300, 0.5]), 0.01, 1.0)
    assert np.isposinf(out[0]) and np.isposinf(out[1]) and np.isfinite(out[2])
