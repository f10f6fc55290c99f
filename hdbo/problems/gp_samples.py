"""Benchmarks of Chen, Castro, Krause (ICML 2012), Section 5: few active coordinates in ``[-1, 1]^D``.

* ``gp-sample`` (Sec. 5, "Functions sampled from a GP"): ``f ~ GP(0, K)`` with the SE kernel
  of Section 2, ``K(x, x') = sigma_s^2 exp(-sum_{i in A} (x_i - x'_i)^2 / b^2)`` (no factor 2;
  ``b = 0.1``, ``sigma_s^2 = 1``), depending on ``d`` random active coordinates ``A``. The
  sample is drawn with **random Fourier features** (SPEC.md P2-C1):
  ``f(x) = sigma_s sqrt(2/F) sum_j cos(w_j^T x_A + c_j)``, ``w_j ~ N(0, (2 / b^2) I_d)``,
  ``c_j ~ U[0, 2 pi)``, ``F = 4096`` features. ``E[cos(w^T r)] = exp(-r^2 / b^2)``, so the
  covariance is the paper's kernel up to the Monte-Carlo error of F features; the function is
  a fixed, consistent sample that can be evaluated anywhere. Its maximum over the box is
  computed numerically (dense grid + L-BFGS-B polish; see :func:`gp_sample`).
* ``quad`` / ``quadmix`` (Sec. 5, "Functions embedded in high dimensions"):
  ``Quad(x) = |P (x - x*)|^2``, ``P = diag(1/b on A, 1/100 elsewhere)``, ``x* ~ U[-1, 1]^D``;
  QuadMix uses ``M P`` with ``M = (1 - r) I + r 11^T``, ``r = 1/D`` (our reading of the
  paper's ``(1 - r_mix) I + r_mix``). The problems maximize ``-Quad`` (maximum 0 at ``x*``);
  the paper's ``+ sigma_n^2`` is read as the observation noise (SPEC.md P2-C2). Function
  values are *not* rescaled: the paper's recovery rates (Table 1) are only plausible for the
  raw function (after rescaling the values of Quad to [-1, 1], a finite difference would be
  of the order of the noise and every test would declare the root inactive).
* ``chen-branin`` / ``chen-beale``: Branin and Beale hidden among ``dim`` coordinates
  (:func:`~hdbo.problems.transforms.embed`), the domain mapped to ``[-1, 1]^dim``
  (:func:`~hdbo.problems.transforms.rescale`) and, with ``rescale_values=True`` (default),
  the values (of the maximized function) mapped linearly onto ``[-1, 1]`` with exact or
  dense-grid extremes over the box (SPEC.md P2-C2 reads "rescaled to [-1, 1]" as both).
  Beale is negated (maximum at the flat minimum of Beale). Branin is negated by default
  (``negate=True``: three maximizers); ``negate=False`` maximizes Branin itself, which is the
  paper's reading: "It has a broad global landscape and peaks at (-1, -1)" holds only for
  ``+Branin``, whose maximum over the box, ``F(-5, 0) = 308.13``, is the corner ``(-1, -1)``
  of the rescaled domain (the minima of Branin map to ``(-0.75, 0.64)``, ``(0.09, -0.70)``,
  ``(0.92, -0.67)``). The sign does not change variable selection (the tests use squared
  differences or zero-mean models), only the optimization of Fig. 5.
  Which value scale the paper used is not stated and no single one reproduces Table 1
  (notes in ``experiments/chen2012/table1.toml``): with the values on ``[-1, 1]`` and noise
  variance 0.1 a finite difference at ``3 b`` along one coordinate of Branin has a mean square
  of about 0.04, far below the noise level, and FDT cannot recover Branin (the paper: it
  always does), while with the raw values FDT also recovers Beale (the paper: never).

Every problem has ``structure["active_dims"]``: the active coordinates (the key
:func:`~hdbo.problems.transforms.embed` uses).

References
----------
B. Chen, R. M. Castro, A. Krause. Joint optimization and variable selection of
high-dimensional Gaussian processes. ICML 2012, Section 5.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize as scipy_minimize

from .._docstrings import fill_doc
from .._validation import check_int, check_real
from ..space import Box
from ..utils import as_generator
from .base import Problem
from .registry import register_problem
from .synthetic import beale, branin
from .transforms import embed, rescale

__all__ = ["gp_sample", "quad", "quadmix", "chen_branin", "chen_beale"]


class _RFF:
    """``X (n, D) -> sigma_s sqrt(2/F) sum_j cos(W X_A^T + c)``; a class so it pickles."""

    def __init__(self, active: NDArray[np.intp], W: NDArray[np.float64], c: NDArray[np.float64], scale: float) -> None:
        self.active, self.W, self.c, self.scale = active, W, c, scale

    def values(self, Z: NDArray[np.float64]) -> NDArray[np.float64]:
        """Values at points given in the active coordinates only, shape (n, d) -> (n,)."""
        out = np.empty(Z.shape[0])
        for s in range(0, Z.shape[0], 2048):
            out[s:s + 2048] = np.cos(Z[s:s + 2048] @ self.W.T + self.c).sum(axis=1)
        return self.scale * out

    def value_and_grad(self, z: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        arg = self.W @ z + self.c
        return self.scale * float(np.cos(arg).sum()), -self.scale * (np.sin(arg) @ self.W)

    def __call__(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.values(X[:, self.active])


def _maximize_rff(fun: _RFF, d: int, rng: np.random.Generator) -> tuple[float, NDArray[np.float64]]:
    """Numerical maximum of an RFF sample on ``[-1, 1]^d``: candidates, then L-BFGS-B polish."""
    if d <= 2:
        n = 201 if d == 2 else 2001
        g = np.linspace(-1.0, 1.0, n)
        if d == 1:
            vals = fun.values(g[:, None])
            cand = g[:, None]
        else:
            # cos(w1 u + w2 v + c) = Re(e^{i(w1 u + c)} e^{i w2 v}): the grid is one complex product.
            A = np.exp(1j * (np.outer(g, fun.W[:, 0]) + fun.c))
            B = np.exp(1j * np.outer(g, fun.W[:, 1]))
            vals = fun.scale * (A @ B.T).real.reshape(-1)
            cand = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
    else:
        cand = rng.uniform(-1.0, 1.0, size=(min(10000 * d, 50000), d))
        vals = fun.values(cand)
    starts = cand[np.argsort(-vals)[:10]]
    best_v, best_z = float(np.max(vals)), cand[int(np.argmax(vals))]
    for z0 in starts:
        res = scipy_minimize(lambda z: tuple(-np.asarray(v) for v in fun.value_and_grad(z)), z0, jac=True,
                             method="L-BFGS-B", bounds=[(-1.0, 1.0)] * d)
        if -res.fun > best_v:
            best_v, best_z = float(-res.fun), np.clip(res.x, -1.0, 1.0)
    return best_v, best_z


def gp_sample(dim: int, *, d: int = 2, bandwidth: float = 0.1, signal_variance: float = 1.0,
              n_features: int = 4096, seed: int = 0) -> Problem:
    """A GP sample on ``[-1, 1]^dim`` that depends on ``d`` random coordinates (module docstring).

    Parameters
    ----------
    dim : int
        D, the number of coordinates (``dim >= d``).
    d : int, default 2
        Number of active coordinates (SPEC.md P2.A.7-2: the paper does not state it; 2).
    bandwidth : float, default 0.1
        ``b`` of the kernel (paper: 0.1).
    signal_variance : float, default 1.0
        ``sigma_s^2`` (paper: 1).
    n_features : int, default 4096
        Number F of random Fourier features.
    seed : int, default 0
        Draws the active set, the features and the optimum search's candidates.

    Returns
    -------
    Problem
        On ``[-1, 1]^dim``; ``optimum_value`` is the maximum found by a grid of 201^2 points
        (d = 2, spacing 0.01 against a length-scale ``b / sqrt(2) = 0.07``; 2001 for d = 1)
        or ``min(10000 d, 50000)`` random points (d > 2), then L-BFGS-B from the 10 best
        candidates (exact to optimizer tolerance for
        d <= 2, an estimate for larger d); ``optimizer`` the corresponding point (inactive
        coordinates at 0); ``structure = {"active_dims": [...]}`` (sorted).

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or is out of range (``d > dim``, a non-positive
        bandwidth, variance or feature count).
    """
    dim = check_int(dim, "dim", low=1)
    d = check_int(d, "d", low=1, high=dim)
    bandwidth = check_real(bandwidth, "bandwidth", low=0, low_inclusive=False)
    signal_variance = check_real(signal_variance, "signal_variance", low=0, low_inclusive=False)
    n_features = check_int(n_features, "n_features", low=1)
    rng = as_generator(seed)
    active = np.sort(rng.choice(dim, size=d, replace=False)).astype(np.intp)
    W = rng.normal(0.0, math.sqrt(2.0) / bandwidth, size=(n_features, d))
    c = rng.uniform(0.0, 2.0 * math.pi, size=n_features)
    fun = _RFF(active, W, c, math.sqrt(signal_variance) * math.sqrt(2.0 / n_features))
    fmax, zmax = _maximize_rff(fun, d, rng)
    xopt = np.zeros(dim)
    xopt[active] = zmax
    return Problem(fun, Box.symmetric(dim), name="gp-sample", optimum_value=fmax, optimizer=xopt,
                   structure={"active_dims": [int(i) for i in active]})


class _NegQuad:
    """``X -> -|M P (X - x*)|^2`` with ``M = (1 - r) I + r 11^T`` (r = 0: Quad)."""

    def __init__(self, p: NDArray[np.float64], xstar: NDArray[np.float64], r: float) -> None:
        self.p, self.xstar, self.r = p, xstar, r

    def __call__(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        V = (X - self.xstar) * self.p
        if self.r:
            V = (1.0 - self.r) * V + self.r * V.sum(axis=1, keepdims=True)
        return -np.sum(V * V, axis=1)


def _quad(dim: int, d: int, bandwidth: float, seed: int, mix: bool) -> Problem:
    dim = check_int(dim, "dim", low=1)
    d = check_int(d, "d", low=1, high=dim)
    bandwidth = check_real(bandwidth, "bandwidth", low=0, low_inclusive=False)
    rng = as_generator(seed)
    active = np.sort(rng.choice(dim, size=d, replace=False)).astype(np.intp)
    xstar = rng.uniform(-1.0, 1.0, size=dim)
    p = np.full(dim, 1.0 / 100.0)
    p[active] = 1.0 / bandwidth
    fun = _NegQuad(p, xstar, 1.0 / dim if mix else 0.0)
    # M P is invertible (M has eigenvalues 1 - r and 1 - r + r D > 0), so x* is the only zero.
    return Problem(fun, Box.symmetric(dim), name="quadmix" if mix else "quad", optimum_value=0.0,
                   optimizer=xstar, structure={"active_dims": [int(i) for i in active]})


def quad(dim: int, *, d: int = 2, bandwidth: float = 0.1, seed: int = 0) -> Problem:
    """``-Quad(x) = -|P (x - x*)|^2`` on ``[-1, 1]^dim`` (Chen et al. 2012, Sec. 5).

    Parameters
    ----------
    dim : int
        D.
    d : int, default 2
        Number of active coordinates (``P_ii = 1 / b`` there, ``1/100`` elsewhere).
    bandwidth : float, default 0.1
        ``b``.
    seed : int, default 0
        Draws the active coordinates and ``x* ~ U[-1, 1]^dim``.

    Returns
    -------
    Problem
        Maximum 0 at ``x*``; ``structure = {"active_dims": [...]}``. The inactive
        coordinates have a small but non-zero effect.
    """
    return _quad(dim, d, bandwidth, seed, mix=False)


def quadmix(dim: int, *, d: int = 2, bandwidth: float = 0.1, seed: int = 0) -> Problem:
    """``-QuadMix(x) = -|M P (x - x*)|^2``, ``M = (1 - 1/D) I + (1/D) 11^T`` (Chen et al. 2012, Sec. 5).

    Parameters
    ----------
    dim, d, bandwidth, seed
        As in :func:`quad`.

    Returns
    -------
    Problem
        Maximum 0 at ``x*``; ``structure = {"active_dims": [...]}``.
    """
    return _quad(dim, d, bandwidth, seed, mix=True)


class _Affine:
    """``X -> a f(X) + c`` (value rescaling); a class so it pickles."""

    def __init__(self, problem: Problem, a: float, c: float) -> None:
        self.problem, self.a, self.c = problem, a, c

    def __call__(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.a * np.asarray(self.problem(X), dtype=float) + self.c


@functools.cache
def _value_range(name: str) -> tuple[float, float]:
    """Minimum and maximum of the (maximized) 2-D function over its box: exact optimum, grid minimum."""
    base = branin() if name == "branin" else beale()
    axes = [np.linspace(lo, hi, 1001) for lo, hi in zip(base.bounds.lower, base.bounds.upper)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    return float(np.min(base(grid))), float(base.optimum_value)


#: Branin at the corner ``(-5, 0)`` of its box, its maximum there (the paper's "peak at (-1, -1)").
_BRANIN_PEAK = float(-branin()(np.array([[-5.0, 0.0]]))[0])


def _hidden(name: str, dim: int, seed: int, rescale_values: bool, negate: bool = True) -> Problem:
    for flag, label in ((rescale_values, "rescale_values"), (negate, "negate")):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{label} must be a bool, got {type(flag).__name__}")
    rescale_values, negate = bool(rescale_values), bool(negate)
    base = branin() if name == "branin" else beale()
    dim = check_int(dim, "dim", low=2)
    p = rescale(embed(base, dim, seed=seed), "symmetric")
    if name == "branin" and not negate:
        # +Branin (Chen et al.: "peaks at (-1, -1)"): maximum at the corner u = (-5, 0).
        active = p.structure["active_dims"]
        xopt = np.zeros(dim)
        xopt[active] = -1.0
        p = Problem(_Affine(p, -1.0, 0.0), p.bounds, name="chen-branin", optimum_value=_BRANIN_PEAK,
                    optimizer=xopt, structure={"active_dims": list(active)})
        if not rescale_values:
            return p
        lo, hi = -float(base.optimum_value), _BRANIN_PEAK  # min of Branin (exact), its maximum
        a = 2.0 / (hi - lo)
        return Problem(_Affine(p, a, -1.0 - a * lo), p.bounds, name="chen-branin", optimum_value=1.0,
                       optimizer=xopt, structure={"active_dims": list(active)})
    if not rescale_values:
        return Problem(p, p.bounds, name=f"chen-{name}", optimum_value=p.optimum_value, optimizer=p.optimizer,
                       structure=p.structure)
    lo, hi = _value_range(name)
    a = 2.0 / (hi - lo)
    c = -1.0 - a * lo
    return Problem(_Affine(p, a, c), p.bounds, name=f"chen-{name}", optimum_value=1.0, optimizer=p.optimizer,
                   structure={"active_dims": p.structure["active_dims"]})


#: The sections that :func:`chen_branin` and :func:`chen_beale` share (filled by :func:`fill_doc`).
_CHEN_DOC = {
    "dim_seed": """
        dim : int
            D >= 2 (the paper: 200).
        seed : int, default 0
            Picks the 2 active coordinates.
        """,
    "returns": """
        Returns
        -------
        Problem
            ``structure = {"active_dims": [...]}``.
        """,
}


@fill_doc(**_CHEN_DOC)
def chen_branin(dim: int, *, seed: int = 0, rescale_values: bool = True, negate: bool = True) -> Problem:
    """Branin hidden in ``[-1, 1]^dim``, values optionally mapped onto ``[-1, 1]`` (module docstring).

    Parameters
    ----------
    %(dim_seed)s
    rescale_values : bool, default True
        Map the values linearly onto ``[-1, 1]`` (maximum 1).
    negate : bool, default True
        Maximize ``-Branin`` (three maximizers). False maximizes ``+Branin``, the paper's
        function ("peaks at (-1, -1)"): one maximizer, the corner where the two active
        coordinates are -1, value 308.13 (1 with ``rescale_values``).

    %(returns)s

    Raises
    ------
    TypeError
        If ``negate`` or ``rescale_values`` is not a bool.
    """
    return _hidden("branin", dim, seed, rescale_values, negate)


@fill_doc(**_CHEN_DOC)
def chen_beale(dim: int, *, seed: int = 0, rescale_values: bool = True) -> Problem:
    """(Negated) Beale hidden in ``[-1, 1]^dim``, values mapped onto ``[-1, 1]`` (module docstring).

    Parameters
    ----------
    %(dim_seed)s
    rescale_values : bool, default True
        Map the values linearly onto ``[-1, 1]`` (maximum 1); about 90% of the box is then
        nearly flat.

    %(returns)s

    Raises
    ------
    TypeError
        If ``rescale_values`` is not a bool.
    """
    return _hidden("beale", dim, seed, rescale_values)


register_problem("gp-sample", gp_sample)
register_problem("quad", quad)
register_problem("quadmix", quadmix)
register_problem("chen-branin", chen_branin, min_dim=2)
register_problem("chen-beale", chen_beale, min_dim=2)
