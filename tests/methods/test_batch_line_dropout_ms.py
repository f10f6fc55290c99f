"""Batches and pending points of the subspace UCB methods: LineBO, DropoutUCB and MS-UCB.

Each proposal of a batch is made on the GP conditioned on the pending points at its posterior
mean (GP-BUCB), in the GP's own input space (DropoutUCB: the kept coordinates; MS-UCB: the
subspace posteriors), with the iteration t counting pending proposals; a search whose best
point is a pending one proposes its best other candidate instead of leaving it to the base
class's random replacement.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from typing import Iterator

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import hdbo.methods.ms_ucb as ms_ucb_module
from hdbo.methods import Method, get_method_class, make_method

from _runs import drive

BOX = np.array([[-3.0, 5.0], [0.0, 1.0], [10.0, 20.0], [-1.0, 1.0], [0.0, 2.0], [-5.0, -4.0]])
FAST = dict(n_init=4, acq_budget=150, n_restarts=0)
#: per method: options for a 6-D box (d = 2 kept / free coordinates)
OPTIONS = {"line-bo": {}, "dropout-ucb": dict(d=2), "ms-ucb": dict(d=2)}
METHODS = sorted(OPTIONS)


def objective(x: np.ndarray) -> float:
    u = (x - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0])
    return float(-np.sum((u - 0.3) ** 2) + 0.1 * np.sin(7 * u[0]))


def objective_1d(X: np.ndarray) -> np.ndarray:
    return -np.sum((X - 0.3) ** 2, axis=-1) + 0.2 * np.sin(5 * X[..., 0])


def make(name: str, seed: int = 0, **extra):
    return make_method(name, BOX, seed=seed, **FAST, **OPTIONS[name], **extra)


def told(name: str, n: int, seed: int = 0, **extra):
    """The method after ``n`` ask/tell steps (the first ``n_init`` are the random design)."""
    m = make(name, seed, **extra)
    drive(m, n, objective)
    return m


@contextlib.contextmanager
def pending_warnings() -> Iterator[list[str]]:
    """The messages of the warnings about pending points that the block gives (filled at its end)."""
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield messages
    messages += [str(w.message) for w in caught if "pending" in str(w.message)]


def min_distance(U: np.ndarray) -> float:
    """Smallest largest-coordinate difference between two rows of U."""
    d = np.max(np.abs(U[:, None, :] - U[None, :, :]), axis=2)
    return float(d[np.triu_indices(len(U), 1)].min())


@pytest.mark.parametrize("name", METHODS)
def test_ask_n_returns_distinct_points_without_the_safety_net(name):
    m = told(name, 6)
    with pending_warnings() as warned:
        X = m.ask(4)
    assert warned == []
    assert X.shape == (4, 6) and m.n_pending == 4
    assert np.all(X >= BOX[:, 0]) and np.all(X <= BOX[:, 1])
    assert_allclose(m.pending, X)
    # spread in the canonical cube [-1, 1]^6, far beyond the base's 1e-9
    assert min_distance(m.to_canonical(X)) > 0.1


@pytest.mark.parametrize("name", METHODS)
def test_the_hallucination_spreads_a_batch_on_a_line(name, monkeypatch):
    """On [-1, 1] (D = d = 1: every method searches the whole interval at every proposal) the
    points of a batch are spread because the GP is conditioned on the pending ones. Measured min
    distances over seeds 0-5: medians 0.15-0.17 with it; with the conditioning switched off the
    batch collapses (medians 0.006-0.025, the points a grid step or an L-BFGS-B tolerance apart)."""
    options = {} if name == "line-bo" else dict(d=1)

    def spreads() -> list[float]:
        out = []
        for seed in range(6):
            m = make_method(name, [(-1.0, 1.0)], seed=seed, n_init=4, acq_budget=100, n_restarts=0, **options)
            X0 = m.ask(4)
            m.tell(X0, objective_1d(X0))
            with pending_warnings() as warned:
                X = m.ask(4)
            assert len(X) == 4 and warned == []
            out.append(min_distance(X))
        return out

    with_pending = spreads()
    monkeypatch.setattr(get_method_class(name), "_pending_gp_inputs", lambda self: None)  # no conditioning
    without = spreads()
    assert np.median(with_pending) > 0.1, with_pending
    assert np.median(without) < 0.05, without
    assert min(with_pending) > 1e-6 and min(without) > 1e-6  # no repeats either way (the guard)


@pytest.mark.parametrize("name", METHODS)
def test_each_proposal_searches_the_gp_conditioned_on_the_pending_points(name, monkeypatch):
    """The GP given to the acquisition holds the pending points (projected onto the kept
    coordinates for DropoutUCB) at their posterior mean; the fitted GP is left unchanged."""
    m = told(name, 6)
    n_obs = m.y_obs.size
    seen = []
    acquire = type(m)._acquire

    def spy(self, gp):
        P = self.pending_canonical if name != "dropout-ucb" else self.pending_canonical[:, self.dims_]
        seen.append((gp.n_train, gp.X_[n_obs:].copy(), P.copy(), self.gp_ is gp))
        return acquire(self, gp)

    monkeypatch.setattr(type(m), "_acquire", spy)
    m.ask(3)
    assert [s[0] for s in seen] == [n_obs, n_obs + 1, n_obs + 2]
    for _, extra, P, is_gp in seen:
        assert extra.shape == P.shape
        assert_allclose(extra, P, atol=1e-12)
        assert is_gp  # what the acquisition reads through self.gp_ is the conditioned GP too
    assert m.gp_.n_train == n_obs
    if name == "dropout-ucb":
        assert m.gp_.X_.shape[1] == 2


def test_ms_ucb_subspace_posteriors_see_the_pending_points(monkeypatch):
    """Every SubspacePosterior of a batch's later proposal is built from a GP holding the
    pending points, and its (low-dimensional) std at a pending point is the noise level, far
    below the std the fitted GP gives there."""
    m = told("ms-ucb", 6)
    n_obs = m.y_obs.size
    sizes = []

    class Spy(ms_ucb_module.SubspacePosterior):
        def __init__(self, gp, *args, **kwargs):
            sizes.append(gp.n_train)
            super().__init__(gp, *args, **kwargs)

    monkeypatch.setattr(ms_ucb_module, "SubspacePosterior", Spy)
    x = m.ask()
    assert set(sizes) == {n_obs}
    sizes.clear()
    m.ask()
    assert sizes and set(sizes) == {n_obs + 1}
    # the posterior of the pending point's own subspace, from the conditioned and the fitted GP
    u = m.pending_canonical[0]
    assert_allclose(m.from_canonical(u), x)
    z, y = u[m.z_dims_][None, :], u[m.y_dims_][None, :]
    rows = np.zeros(1, dtype=np.int64)
    cond = m.gp_.hallucinate(u[None, :])
    std_cond = ms_ucb_module.SubspacePosterior(cond, z, rows, m.z_dims_, m.y_dims_).predict(y)[1][0]
    std_fit = ms_ucb_module.SubspacePosterior(m.gp_, z, rows, m.z_dims_, m.y_dims_).predict(y)[1][0]
    assert std_cond < 0.05 * std_fit, (std_cond, std_fit)


def test_ms_ucb_batch_points_get_their_own_iteration_and_subspaces():
    """With N0 = 1, alpha = 0 (|Z_t| = t) the k-th point of a batch is searched over Z_{t+k}:
    it lies on one of those subspaces, ``t`` and ``beta_t`` advance, and a cancelled proposal
    gives its iteration back."""
    m = told("ms-ucb", 6)
    t0 = m.iteration
    assert t0 == 6 - FAST["n_init"] + 1
    ts, betas = [], []
    for k in range(3):
        x = m.ask()
        ts.append(m.diagnostics()["t"])
        betas.append(m.diagnostics()["beta"])
        assert m.diagnostics()["n_subspaces"] == t0 + k
        Z = m.subspaces(np.arange(t0 + k))
        on = np.max(np.abs(Z - m.to_canonical(x)[m.z_dims_]), axis=1) < 1e-9
        assert np.count_nonzero(on) == 1
    assert ts == [t0, t0 + 1, t0 + 2] and betas[0] < betas[1] < betas[2]
    assert m.iteration == t0 + 3
    m.cancel(m.pending[1])
    assert m.iteration == t0 + 2 and m.n_pending == 2
    P = m.pending
    m.tell(P[::-1], [objective(p) for p in P[::-1]])
    assert m.iteration == t0 + 2 and m.n_pending == 0


@pytest.mark.parametrize("name", ["line-bo", "dropout-ucb"])
def test_the_iteration_of_beta_counts_pending_proposals(name):
    m = told(name, 6)
    t0 = m.iteration
    m.ask(2)
    assert m.iteration == t0 + 2
    assert m.beta_t() == pytest.approx(m.beta_t(t0 + 2))
    m.cancel()
    assert m.iteration == t0


@pytest.mark.parametrize("name", METHODS)
def test_state_round_trip_with_pending_points(name):
    m = told(name, 7)
    m.ask(3)
    state = json.loads(json.dumps(m.state_dict()))
    resumed = Method.from_state(state)
    assert_allclose(resumed.pending, m.pending)
    assert resumed.iteration == m.iteration
    assert_allclose(resumed.ask(2), m.ask(2), atol=1e-12)


@pytest.mark.parametrize("name", METHODS)
def test_asynchronous_order(name):
    m = told(name, 5)
    with pending_warnings() as warned:
        X = m.ask(4)
        m.tell(X[::-1], [objective(x) for x in X[::-1]])  # reverse order
        assert m.n_pending == 0 and m.n_told == 9
        Y = m.ask(2)
        m.tell(Y[1], objective(Y[1]))  # one back, ask again while the other is out
        z = m.ask()
        assert m.n_pending == 2
        assert np.max(np.abs(m.to_canonical(z) - m.to_canonical(Y[0]))) > 1e-3
        m.tell(z, objective(z))
        m.tell(Y[0], objective(Y[0]))
        assert m.n_pending == 0 and m.n_told == 12
        drive(m, 1, objective)  # sequential use goes on
    assert warned == []


@pytest.mark.parametrize("name", ["line-bo", "dropout-ucb"])
def test_a_pending_maximizer_is_replaced_by_the_best_other_candidate(name, monkeypatch):
    """Seed 2 on [-1, 1]: the fitted length-scale (about 15 on an interval of width 2) is so
    long that conditioning on the pending point x = 1 leaves the UCB largest there. The method
    proposes its best other searched point; without that step the base class replaces the
    repeat by a random point, with a warning."""
    options = {} if name == "line-bo" else dict(d=1)

    def batch():
        m = make_method(name, [(-1.0, 1.0)], seed=2, n_init=4, acq_budget=100, n_restarts=0, **options)
        X0 = m.ask(4)
        m.tell(X0, objective_1d(X0))
        with pending_warnings() as warned:
            X = m.ask(4)
        return X, warned

    X, caught = batch()
    assert caught == [] and len(X) == 4
    assert min_distance(X) > 1e-6
    assert np.max(X) == 1.0  # the first point of the batch: the UCB's maximizer
    monkeypatch.setattr(get_method_class(name), "_best_not_pending", lambda self, values, point: None)
    _, caught = batch()
    assert len(caught) >= 1


def test_best_not_pending_skips_points_already_out():
    m = told("ms-ucb", 4)
    P = m.ask(2)
    U = m.to_canonical(P)
    cands = np.vstack([U[1], U[0] + 5e-7, U[0] + 1e-3, np.zeros(6)])
    values = np.array([3.0, 2.0, 1.0, np.nan])
    assert m._best_not_pending(values, lambda i: cands[i]) == 2
    assert m._best_not_pending(values[:2], lambda i: cands[i]) is None
    # outside the canonical box counts after clipping
    assert m._best_not_pending(np.array([1.0]), lambda i: np.where(U[0] >= 1.0, 2.0, U[0])[None][i]) is None
    m.cancel()
    assert m._best_not_pending(values, lambda i: cands[i]) == 0


@pytest.mark.parametrize("name", METHODS)
def test_sequential_use_is_unchanged_by_the_batch_rule(name):
    """Asked one at a time, nothing is pending when a point is proposed: two runs, one of
    which asks through ``ask(1)`` batches, give the same trace."""
    a, b = make(name, 3), make(name, 3)
    xa = drive(a, 8, objective)
    xb = []
    for _ in range(8):
        x = b.ask(1)
        assert x.shape == (1, 6)
        b.tell(x, [objective(x[0])])
        xb.append(x[0])
    assert_array_equal(xa, np.array(xb))
