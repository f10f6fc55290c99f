"""Hierarchical Diagonal Sampling (HDS) with the FDT and GPT sequential tests.

Chen, Castro and Krause (ICML 2012), Section 3, Algorithm 1. The function ``f`` on
``[-1, 1]^D`` is assumed to depend on a few *active* coordinates only. HDS keeps a tree of
coordinate sets ("nodes"). For a node ``I`` the one-dimensional *diagonal projection*

    f_I(z) = f(x_I(z)),   x_I(z)_i = z if i in I else x0_i,   z in [-1, 1],

(with a background vector ``x0 ~ U[-1, 1]^D`` drawn once) is constant when ``I`` holds no
active coordinate and varies otherwise. A sequential likelihood-ratio test on noisy values
of ``f_I`` declares the node active (``LLR >= theta1``: it is split into two halves, or, if it
is a single coordinate, that coordinate is selected) or inactive (``LLR <= theta0``: it and
its whole subtree are dropped). Two tests are implemented:

* **FDT** (Sec. 3.2): pairs of evaluations at ``z`` and ``z + delta`` (``delta = 3 b``); the
  difference ``dy`` is ``N(0, sigma_0^2 = 2 sigma^2)`` under H0 and, for one active
  coordinate, ``N(0, sigma_1^2 = 2 (0.95 sigma_s^2 + sigma^2))`` under H1; the LLR of one
  pair is eq. (2), summed over pairs (eq. 1). The undetermined node with the largest LLR is
  sampled next (ties: the node created first).
* **GPT** (Sec. 3.3): the node's data are modelled by a GP under each hypothesis
  (H0: ``K_0 = sigma_s^2``, an unknown constant; H1: ``K_1 = sigma_s^2 exp(-(z - z')^2 / b^2)``);
  the LLR increment is the log ratio of the two predictive densities of the new value
  (eq. 3), and the next (node, z) maximizes ``E[LLR] + sqrt(V[LLR])`` under H1 over the
  undetermined nodes and a grid of ``grid_size`` points on ``[-1, 1]``.

:class:`HDSSelector` is a state machine: :meth:`HDSSelector.propose` returns the next
query (a point of ``[-1, 1]^D``) and :meth:`HDSSelector.consume` takes its value, so a method
can route every query through ``ask``/``tell``; :meth:`HDSSelector.state_dict` is JSON.

Choices where the paper is silent (SPEC.md P2.A.2, P2.A.7):

* Sample counts are function evaluations (an FDT pair counts 2); loop iterations (pairs for
  FDT) are reported as well. A new FDT pair is not started with fewer than 2 evaluations
  of the budget left.
* FDT draws ``z ~ U[-1, 1 - delta]`` so that ``z + delta`` stays in the box; ``delta`` is
  capped at 2 (then ``z = -1``, ``z + delta = 1``), for bandwidths misestimated upwards.
* Split: the sorted coordinates of a node, first ``ceil(|I|/2)`` to the left child.
* GPT grid: 201 points on ``[-1, 1]``. The node with the largest maximum of the index is
  sampled (ties: the node created first); among that node's grid points whose index is within
  ``1e-12`` (relative) of its maximum, one is drawn uniformly at random with the ``rng`` given
  to :meth:`HDSSelector.propose`. The paper maximizes over the continuum and states no tie
  rule; ties are common (a fresh node's index is flat, and grid points beyond H1's correlation
  range have identical indices), and taking the lowest grid point would sweep neighbouring
  points ``0.01`` apart, which a wrong (small) ``b`` turns into a failed test
  (``docs/reproductions/chen2012-misspec-diagnosis.md``). A grid point may be sampled again.
* A failed evaluation (NaN) is not shown to a test: it drops the pending FDT pair; for GPT
  the grid point is excluded for that node.
* ``sigma_1^2`` uses the factor 0.95 the paper prints (``fdt_factor``); the exact value for
  ``a = 1``, ``delta = 3b`` would be ``1 - e^-9`` (SPEC.md P2.A.3 erratum).
* ``offset_variance`` (GPT, default 0 = the paper's test) adds an unknown constant of that
  prior variance to both hypotheses; an extension for functions whose level is far from 0 in
  units of ``sigma_s`` (the paper's zero-mean H1 then loses to H0's unknown constant).
* ``V[LLR]``: derived from the paper's ``w_2 chi^2(1, lambda) + w_0`` representation,
  ``V = ((s_1^2 - s_0^2)^2 + 2 s_1^2 (mu_1 - mu_0)^2) / (2 s_0^4)``. SPEC.md P2.A.4 omits the
  factor 1/2; the paper's distribution wins (checked by Monte Carlo in the tests).

References
----------
B. Chen, R. M. Castro, A. Krause. Joint optimization and variable selection of
high-dimensional Gaussian processes. ICML 2012 (``../shared/papers/001_fbcc165fdee27bb5.txt``),
Algorithm 1, eqs. (1)-(3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_int, check_real

__all__ = [
    "TESTS",
    "HDSSelector",
    "fdt_variances",
    "fdt_llr",
    "gpt_predictive",
    "gpt_llr",
    "gpt_llr_moments",
]

TESTS = ("fdt", "gpt")
_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------- FDT formulas
def fdt_variances(signal_variance: float, noise_variance: float, factor: float = 0.95) -> tuple[float, float]:
    """Variances of a finite difference ``dy`` under H0 and H1 (Sec. 3.2).

    Parameters
    ----------
    signal_variance : float
        ``sigma_s^2``.
    noise_variance : float
        ``sigma^2`` of the observation noise.
    factor : float, default 0.95
        ``1 - exp(-delta^2 / b^2)`` as printed in the paper.

    Returns
    -------
    (float, float)
        ``sigma_0^2 = 2 sigma^2`` and ``sigma_1^2 = 2 (factor sigma_s^2 + sigma^2)``.
    """
    return 2.0 * noise_variance, 2.0 * (factor * signal_variance + noise_variance)


def fdt_llr(dy: ArrayLike, var0: float, var1: float) -> NDArray[np.float64] | float:
    """Log-likelihood ratio of finite differences, eq. (2).

    ``LLR(dy) = (1 / (2 sigma_0^2) - 1 / (2 sigma_1^2)) dy^2 + log(sigma_0 / sigma_1)``.

    Parameters
    ----------
    dy : float or array_like of shape (n,)
        Differences ``y(z) - y(z + delta)``.
    var0, var1 : float
        ``sigma_0^2`` and ``sigma_1^2`` (see :func:`fdt_variances`).

    Returns
    -------
    float or ndarray of shape (n,)
    """
    dy = np.asarray(dy, dtype=float)
    # Differences beyond ~1e154 overflow dy^2 to inf: an infinitely decisive ratio, which is
    # what it is under the test's noise model (whose variances are in the objective's units).
    with np.errstate(over="ignore"):
        out = (0.5 / var0 - 0.5 / var1) * dy * dy + 0.5 * math.log(var0 / var1)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------- GPT formulas
def gpt_predictive(
    z: ArrayLike,
    y: ArrayLike,
    zq: ArrayLike,
    *,
    hypothesis: int,
    signal_variance: float,
    bandwidth: float,
    noise_variance: float,
    offset_variance: float = 0.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Predictive mean and variance of a new noisy value of ``f_I`` under H0 or H1 (Sec. 3.3).

    ``mu_a(x) = k_a(x)^T (K_a + sigma^2 I)^{-1} y`` and
    ``s_a^2(x) = sigma^2 + K_a(x, x) - k_a(x)^T (K_a + sigma^2 I)^{-1} k_a(x)`` with
    ``K_0 = sigma_s^2`` (constant) and ``K_1 = sigma_s^2 exp(-(x - x')^2 / b^2)``.

    Parameters
    ----------
    z : array_like of shape (t,)
        The node's sampled positions.
    y : array_like of shape (t,)
        Their observed values.
    zq : array_like of shape (m,)
        Query positions.
    hypothesis : {0, 1}
        Which kernel.
    signal_variance, bandwidth, noise_variance : float
        ``sigma_s^2``, ``b`` and ``sigma^2``.
    offset_variance : float, default 0.0
        ``c^2`` of an unknown constant offset added to *both* hypotheses
        (``K_a + c^2``); 0 is the paper's model (not an option of the paper: see
        :class:`HDSSelector`).

    Returns
    -------
    mean, var : ndarray of shape (m,)
        ``mu_a`` and ``s_a^2`` (the noise included).
    """
    z = np.asarray(z, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    zq = np.asarray(zq, dtype=float).reshape(-1)

    def kern(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        if hypothesis == 0:
            return np.full((a.size, b.size), signal_variance + offset_variance)
        d = a[:, None] - b[None, :]
        return offset_variance + signal_variance * np.exp(-(d * d) / (bandwidth * bandwidth))

    prior = np.full(zq.size, signal_variance + offset_variance + noise_variance)
    if z.size == 0:
        return np.zeros(zq.size), prior
    K = kern(z, z)
    K[np.diag_indices_from(K)] += noise_variance
    L = np.linalg.cholesky(K)
    kq = kern(z, zq)  # (t, m)
    V = np.linalg.solve(L, kq)
    w = np.linalg.solve(L, y)
    mean = V.T @ w
    var = np.maximum(prior - np.einsum("ij,ij->j", V, V), 1e-300)
    return mean, var


def gpt_llr(y: float, mean0: float, var0: float, mean1: float, var1: float) -> float:
    """The LLR increment of eq. (3): ``log N(y; mu_1, s_1^2) - log N(y; mu_0, s_0^2)``.

    Parameters
    ----------
    y : float
        The new observation.
    mean0, var0, mean1, var1 : float
        Predictive means and variances under H0 and H1 (:func:`gpt_predictive`).

    Returns
    -------
    float
    """
    r0, r1 = y - mean0, y - mean1
    return float(0.5 * (math.log(var0) - math.log(var1)) + 0.5 * r0 * r0 / var0 - 0.5 * r1 * r1 / var1)


def gpt_llr_moments(
    mean0: ArrayLike, var0: ArrayLike, mean1: ArrayLike, var1: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Mean and variance of the next LLR increment under H1 (Sec. 3.3, sampling strategy).

    Under H1 the increment is ``w_2 chi^2(1, lambda) + w_0``, whence
    ``E = ((mu_1 - mu_0)^2 + s_1^2 - s_0^2) / (2 s_0^2) + log(s_0 / s_1)`` and
    ``V = 2 w_2^2 (1 + 2 lambda) = ((s_1^2 - s_0^2)^2 + 2 s_1^2 (mu_1 - mu_0)^2) / (2 s_0^4)``.

    Parameters
    ----------
    mean0, var0, mean1, var1 : array_like of shape (m,)
        Predictive moments under H0 and H1.

    Returns
    -------
    E, V : ndarray of shape (m,)
    """
    m0, v0, m1, v1 = (np.asarray(a, dtype=float) for a in (mean0, var0, mean1, var1))
    dm2 = (m1 - m0) ** 2
    E = (dm2 + v1 - v0) / (2.0 * v0) + 0.5 * np.log(v0 / v1)
    V = ((v1 - v0) ** 2 + 2.0 * v1 * dm2) / (2.0 * v0 * v0)
    return E, V


# ---------------------------------------------------------------------------- the tree
@dataclass
class _Node:
    """An undetermined node: its coordinates, LLR and (GPT) data."""

    id: int
    dims: list[int]
    llr: float = 0.0
    n_evals: int = 0
    z: list[float] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    excluded: list[int] = field(default_factory=list)  # GPT grid indices that failed

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "dims": self.dims, "llr": self.llr, "n_evals": self.n_evals,
                "z": self.z, "y": self.y, "excluded": self.excluded}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "_Node":
        return cls(int(d["id"]), [int(i) for i in d["dims"]], float(d["llr"]), int(d["n_evals"]),
                   [float(v) for v in d["z"]], [float(v) for v in d["y"]], [int(i) for i in d["excluded"]])


class HDSSelector:
    """Algorithm 1 (HDS) as a propose/consume state machine.

    Parameters
    ----------
    dim : int
        Number of coordinates D.
    background : array_like of shape (D,)
        The background vector ``x0`` in ``[-1, 1]^D`` (draw it with
        ``rng.uniform(-1, 1, D)`` before any query).
    test : {"fdt", "gpt"}, default "fdt"
        The sequential test.
    theta1 : float, default 10.0
        Upper threshold ``Theta_1 > 0`` (node active).
    theta0 : float, default -10.0
        Lower threshold ``Theta_0 < 0`` (node inactive).
    bandwidth : float, default 0.1
        ``b`` of the SE kernel ``sigma_s^2 exp(-sum (x_i - x'_i)^2 / b^2)``.
    signal_variance : float, default 1.0
        ``sigma_s^2``.
    noise_variance : float, default 0.1
        Assumed observation-noise variance ``sigma^2``.
    max_evaluations : int, optional
        Selection budget ``N_max`` (evaluations); None for no limit.
    fdt_factor : float, default 0.95
        The factor of ``sigma_1^2`` (see :func:`fdt_variances`).
    delta : float, optional
        FDT step; default ``3 b``, capped at 2.
    grid_size : int, default 201
        GPT grid points on ``[-1, 1]``.
    offset_variance : float, default 0.0
        GPT only: prior variance ``c^2`` of an unknown constant added to both hypotheses
        (H0: ``K_0 = sigma_s^2 + c^2``; H1: ``K_1 = c^2 + sigma_s^2 exp(-(z - z')^2 / b^2)``).
        0 (default) is the paper's test. A large ``c^2`` (e.g. 1e6) lets GPT work on functions
        whose level is far from 0 in units of ``sigma_s`` (e.g. raw Quad values in the
        hundreds), where the paper's zero-mean H1 loses to the "unknown constant" H0 at the
        first few samples and the root is declared inactive. An extension, not the paper's.

    Attributes
    ----------
    nodes : list
        Undetermined nodes, in creation order.
    selected : list of int
        Coordinates declared active so far (the output ``A'``), in the order found.
    decided : list of dict
        Every decided node: ``{"dims", "active", "llr", "n_evals"}``.
    n_evaluations : int
        Evaluations consumed (failed ones included).
    n_iterations : int
        Completed test steps (FDT pairs or GPT samples).

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or is out of range (``theta1 <= 0``,
        ``theta0 >= 0``, a non-positive variance or bandwidth, a background vector of the
        wrong shape or outside ``[-1, 1]``, an unknown test).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = lambda x: np.sin(10 * x[3])            # only coordinate 3 is active
    >>> sel = HDSSelector(8, background=rng.uniform(-1, 1, 8), noise_variance=0.01)
    >>> while not sel.done:
    ...     x = sel.propose(rng)
    ...     _ = sel.consume(x, f(x) + 0.1 * rng.standard_normal())
    >>> sel.selected
    [3]
    """

    def __init__(
        self,
        dim: int,
        *,
        background: ArrayLike,
        test: str = "fdt",
        theta1: float = 10.0,
        theta0: float = -10.0,
        bandwidth: float = 0.1,
        signal_variance: float = 1.0,
        noise_variance: float = 0.1,
        max_evaluations: int | None = None,
        fdt_factor: float = 0.95,
        delta: float | None = None,
        grid_size: int = 201,
        offset_variance: float = 0.0,
    ) -> None:
        self.dim = check_int(dim, "dim", low=1)
        self.test = check_choice(test, "test", TESTS)
        self.theta1 = check_real(theta1, "theta1", low=0, low_inclusive=False)
        self.theta0 = check_real(theta0, "theta0", high=0, high_inclusive=False)
        self.bandwidth = check_real(bandwidth, "bandwidth", low=0, low_inclusive=False)
        self.signal_variance = check_real(signal_variance, "signal_variance", low=0, low_inclusive=False)
        self.noise_variance = check_real(noise_variance, "noise_variance", low=0, low_inclusive=False)
        self.max_evaluations = check_int(max_evaluations, "max_evaluations", low=1, allow_none=True)
        self.fdt_factor = check_real(fdt_factor, "fdt_factor", low=0, high=1, low_inclusive=False)
        delta = 3.0 * self.bandwidth if delta is None else check_real(delta, "delta", low=0, low_inclusive=False)
        self.delta = min(float(delta), 2.0)
        self.grid_size = check_int(grid_size, "grid_size", low=2)
        self.offset_variance = check_real(offset_variance, "offset_variance", low=0)
        bg = np.asarray(background, dtype=float).reshape(-1)
        if bg.size != self.dim or not np.all(np.abs(bg) <= 1.0):
            raise ValueError(f"background must be a vector of {self.dim} values in [-1, 1], got shape {bg.shape}")
        self.background = bg.copy()
        self.grid = np.linspace(-1.0, 1.0, self.grid_size)
        self.var0, self.var1 = fdt_variances(self.signal_variance, self.noise_variance, self.fdt_factor)
        self.nodes: list[_Node] = [_Node(0, list(range(self.dim)))]
        self.next_id = 1
        self.selected: list[int] = []
        self.decided: list[dict[str, Any]] = []
        self.n_evaluations = 0
        self.n_iterations = 0
        self.n_failed = 0
        self.pending: dict[str, Any] | None = None
        self._cache: dict[int, tuple[int, NDArray[np.float64]]] = {}  # node id -> (n data, index on grid)

    # ------------------------------------------------------------------ status
    @property
    def cost_per_step(self) -> int:
        """Evaluations per test step: 2 for FDT (a pair), 1 for GPT."""
        return 2 if self.test == "fdt" else 1

    @property
    def finished(self) -> bool:
        """True when no node is undetermined (the tree search is complete)."""
        return not self.nodes

    @property
    def done(self) -> bool:
        """True when the search is complete or the budget cannot pay for another step."""
        if self.pending is not None:
            return False
        if self.finished:
            return True
        if self.max_evaluations is None:
            return False
        return self.max_evaluations - self.n_evaluations < self.cost_per_step

    def point(self, dims: list[int], z: float) -> NDArray[np.float64]:
        """``x_I(z)``: the background vector with the coordinates ``dims`` set to ``z``.

        Parameters
        ----------
        dims : list of int
            The node ``I``.
        z : float
            Position on the diagonal, in ``[-1, 1]``.

        Returns
        -------
        ndarray of shape (D,)
        """
        x = self.background.copy()
        x[dims] = z
        return x

    def _node(self, node_id: int) -> _Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)  # pragma: no cover - internal invariant

    # ------------------------------------------------------------------ GPT index
    def _gpt_index(self, node: _Node) -> NDArray[np.float64]:
        """``E[LLR] + sqrt(V[LLR])`` on the grid for one node (cached until its data change)."""
        cached = self._cache.get(node.id)
        key = len(node.z) + 1000003 * len(node.excluded)
        if cached is not None and cached[0] == key:
            return cached[1]
        kw = dict(signal_variance=self.signal_variance, bandwidth=self.bandwidth, noise_variance=self.noise_variance,
                  offset_variance=self.offset_variance)
        m0, v0 = gpt_predictive(node.z, node.y, self.grid, hypothesis=0, **kw)
        m1, v1 = gpt_predictive(node.z, node.y, self.grid, hypothesis=1, **kw)
        E, V = gpt_llr_moments(m0, v0, m1, v1)
        ucb = E + np.sqrt(np.maximum(V, 0.0))
        if node.excluded:
            ucb = ucb.copy()
            ucb[node.excluded] = -np.inf
        self._cache[node.id] = (key, ucb)
        return ucb

    # ------------------------------------------------------------------ propose / consume
    def propose(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """The next query, in ``[-1, 1]^D``; repeated calls return the same point until :meth:`consume`.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the FDT positions and of GPT's choice among grid points whose index ties
            (a GPT step with a unique maximum draws nothing). Nothing is drawn while a step is
            pending.

        Returns
        -------
        ndarray of shape (D,)

        Raises
        ------
        RuntimeError
            If the selection is :attr:`done`.
        """
        if self.pending is None:
            if self.done:
                raise RuntimeError("HDS selection is finished; nothing to propose")
            if self.test == "fdt":
                # Node with the largest LLR; max() keeps the first (earliest created) on ties.
                node = max(self.nodes, key=lambda n: n.llr)
                z = float(rng.uniform(-1.0, 1.0 - self.delta)) if self.delta < 2.0 else -1.0
                self.pending = {"node": node.id, "z": z, "stage": 0, "y_first": None}
            else:
                best, best_val = None, -np.inf
                for node in self.nodes:  # node with the largest index; ties: the node created first
                    ucb = self._gpt_index(node)
                    top = float(np.max(ucb))
                    if top > best_val:
                        best, best_val = node, top
                if best is None:  # every grid point of every node failed: fall back to the first node
                    best = (self.nodes[0].id, 0)
                else:  # grid points of that node tying with its maximum: one uniformly at random
                    ucb = self._gpt_index(best)
                    ties = np.flatnonzero(ucb >= best_val - 1e-12 * max(1.0, abs(best_val)))
                    j = int(ties[rng.integers(ties.size)]) if ties.size > 1 else int(ties[0])
                    best = (best.id, j)
                self.pending = {"node": best[0], "z": float(self.grid[best[1]]), "grid_index": best[1], "stage": 0}
        node = self._node(self.pending["node"])
        z = self.pending["z"] + (self.delta if self.pending["stage"] == 1 else 0.0)
        return self.point(node.dims, min(z, 1.0))

    def consume(self, x: ArrayLike | None, y: float) -> bool:
        """Take the value of the proposed point.

        Parameters
        ----------
        x : array_like of shape (D,) or None
            The evaluated point. If given and it differs from the pending proposal (by more
            than 1e-9), the value is ignored (it is not part of the test).
        y : float
            The observed value; NaN/inf marks a failed evaluation (see the module docstring).

        Returns
        -------
        bool
            Whether the value was used by the test.
        """
        if self.pending is None:
            return False
        if x is not None:
            expected = self.propose(np.random.default_rng(0))  # pending: no randomness used
            if np.max(np.abs(np.asarray(x, dtype=float).reshape(-1) - expected)) > 1e-9:
                return False
        node = self._node(self.pending["node"])
        self.n_evaluations += 1
        node.n_evals += 1
        y = float(y)
        if not np.isfinite(y):
            self.n_failed += 1
            if self.test == "gpt":
                node.excluded.append(int(self.pending["grid_index"]))
            self.pending = None
            return True
        if self.test == "fdt":
            if self.pending["stage"] == 0:
                self.pending["stage"], self.pending["y_first"] = 1, y
                return True
            dy = self.pending["y_first"] - y
            node.llr += fdt_llr(dy, self.var0, self.var1)  # eq. (1)-(2)
        else:
            kw = dict(signal_variance=self.signal_variance, bandwidth=self.bandwidth,
                      noise_variance=self.noise_variance, offset_variance=self.offset_variance)
            z = self.pending["z"]
            m0, v0 = gpt_predictive(node.z, node.y, [z], hypothesis=0, **kw)
            m1, v1 = gpt_predictive(node.z, node.y, [z], hypothesis=1, **kw)
            node.llr += gpt_llr(y, float(m0[0]), float(v0[0]), float(m1[0]), float(v1[0]))  # eq. (3)
            node.z.append(float(z))
            node.y.append(y)
        self.pending = None
        self.n_iterations += 1
        self._decide(node)
        return True

    def _decide(self, node: _Node) -> None:
        if self.theta0 < node.llr < self.theta1:
            return
        active = node.llr >= self.theta1
        self.decided.append({"dims": node.dims if len(node.dims) <= 8 else [node.dims[0], node.dims[-1]],
                             "size": len(node.dims), "active": bool(active), "llr": node.llr,
                             "n_evals": node.n_evals})
        i = self.nodes.index(node)
        del self.nodes[i]
        self._cache.pop(node.id, None)
        if not active:
            return
        if len(node.dims) == 1:
            self.selected.append(node.dims[0])
            return
        dims = sorted(node.dims)
        half = (len(dims) + 1) // 2
        for part in (dims[:half], dims[half:]):
            self.nodes.append(_Node(self.next_id, part))
            self.next_id += 1

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable state (the constructor's arguments and the tree).

        Returns
        -------
        dict
        """
        return {
            "dim": self.dim, "background": self.background.tolist(), "test": self.test,
            "theta1": self.theta1, "theta0": self.theta0, "bandwidth": self.bandwidth,
            "signal_variance": self.signal_variance, "noise_variance": self.noise_variance,
            "max_evaluations": self.max_evaluations, "fdt_factor": self.fdt_factor, "delta": self.delta,
            "grid_size": self.grid_size, "offset_variance": self.offset_variance,
            "nodes": [n.to_dict() for n in self.nodes], "next_id": self.next_id,
            "selected": list(self.selected), "decided": self.decided,
            "n_evaluations": self.n_evaluations, "n_iterations": self.n_iterations, "n_failed": self.n_failed,
            "pending": self.pending,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "HDSSelector":
        """Rebuild a selector from :meth:`state_dict` output.

        Parameters
        ----------
        state : dict

        Returns
        -------
        HDSSelector
        """
        keys = ("test", "theta1", "theta0", "bandwidth", "signal_variance", "noise_variance", "max_evaluations",
                "fdt_factor", "delta", "grid_size")
        sel = cls(state["dim"], background=state["background"], offset_variance=state.get("offset_variance", 0.0),
                  **{k: state[k] for k in keys})
        sel.nodes = [_Node.from_dict(n) for n in state["nodes"]]
        sel.next_id = int(state["next_id"])
        sel.selected = [int(i) for i in state["selected"]]
        sel.decided = [dict(d) for d in state["decided"]]
        sel.n_evaluations = int(state["n_evaluations"])
        sel.n_iterations = int(state["n_iterations"])
        sel.n_failed = int(state["n_failed"])
        sel.pending = None if state["pending"] is None else dict(state["pending"])
        dim = sel.dim
        for node in sel.nodes:  # coordinates index the point; a tampered one must not reach ask()
            if not node.dims or any(not 0 <= i < dim for i in node.dims + node.excluded):
                raise ValueError(f"HDS node {node.id} has coordinates outside [0, {dim}): {node.dims}")
        if any(not 0 <= i < dim for i in sel.selected):
            raise ValueError(f"HDS 'selected' has coordinates outside [0, {dim}): {sel.selected}")
        return sel
