"""DIRECT (Jones, Perttunen and Stuckman 1993) with one vectorized evaluation per iteration.

``scipy.optimize.direct`` calls its objective once per point. Acquisition functions are cheap
per point but carry a fixed Python and BLAS overhead per call, and the GP posterior of a batch
of points costs far less per point than one point at a time (a triangular solve with many
right-hand sides instead of one). Within one DIRECT iteration the points to sample depend only
on the rectangles chosen at the start of the iteration, so they can all be evaluated in one
call without changing the algorithm. This module does that; :func:`maximize_direct
<hdbo.acquisition.maximizers.maximize_direct>` uses it for the original (not locally biased)
DIRECT and SciPy for DIRECT-L.

The algorithm, on the unit cube (the caller maps the box):

1. Evaluate the centre of the cube.
2. Each iteration, find the *potentially optimal* rectangles: rectangle ``j`` of size ``d_j``
   (half its diagonal) and value ``f_j`` (at its centre) is potentially optimal when some
   rate ``K > 0`` makes ``f_j - K d_j`` the lowest over all rectangles and at least
   ``eps |f_min|`` below the best value ``f_min`` (Jones et al., Definition 4.1, with
   ``eps = 1e-4``). Among rectangles of equal size only the one with the lowest value (the
   oldest on ties) is a candidate, as in Gablonsky's implementation which SciPy wraps.
3. Divide each of them (Jones et al., Section 4.3): with ``I`` the dimensions of its longest
   side and ``delta`` a third of that side, sample ``c +- delta e_i`` for ``i`` in ``I``, let
   ``w_i`` be the better of the two values, and trisect along the dimensions of ``I`` in the
   order of increasing ``w_i``, so the best new points get the largest rectangles.

All rectangles' sides are powers of 1/3 and a rectangle's side levels differ by at most one
(only longest sides are divided), so a rectangle's size is fixed by its lowest level ``k`` and
the number ``p`` of sides at that level, which gives an exact integer key for grouping sizes.

The search stops when the next iteration's points do not all fit in the budget (those that fit
are still evaluated, and the rectangles whose samples are complete are divided), when the
rectangle holding the best value has half-diagonal below ``len_tol`` (SciPy's default and
meaning for the original DIRECT), when every rectangle is divided down to ``3**-30`` of the box,
or after ``maxiter`` iterations. There is no volume tolerance: measured as SciPy documents it
(``1e-16`` of the box), it stopped searches in five or six dimensions after a few hundred
points, long before SciPy's own run stopped.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

#: Rectangles are never divided past this level (3**-30 ~ 5e-15 of the box width).
_MAX_LEVEL = 30


def _size_keys(kmin: NDArray[np.int64], p: NDArray[np.int64], dim: int) -> NDArray[np.int64]:
    """Integer key that increases as the rectangle size decreases."""
    return kmin * (dim + 1) + (dim - p)


def _half_diagonals(kmin: Array, p: Array, dim: int) -> Array:
    """Half the diagonal of rectangles with ``p`` sides ``3**-kmin`` and the rest a third of that."""
    return 0.5 * np.sqrt(p * 9.0 ** (-kmin) + (dim - p) * 9.0 ** (-kmin - 1))


def potentially_optimal(f: Array, size: Array, fmin: float, eps: float) -> NDArray[np.bool_]:
    """Which of the size-class representatives are potentially optimal.

    Parameters
    ----------
    f : ndarray of shape (g,)
        Lowest value in each size class.
    size : ndarray of shape (g,)
        Size (half-diagonal) of each class, all distinct.
    fmin : float
        Best value found so far.
    eps : float
        Jones et al.'s ``epsilon`` (required relative improvement).

    Returns
    -------
    ndarray of bool, shape (g,)
    """
    ds = size[None, :] - size[:, None]  # ds[j, h] = d_h - d_j
    df = f[None, :] - f[:, None]  # df[j, h] = f_h - f_j
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = df / ds
    larger = ds > 0
    smaller = ds < 0
    k_high = np.where(larger, slope, np.inf).min(axis=1)  # K may not exceed this
    k_low = np.where(smaller, slope, -np.inf).max(axis=1)  # nor fall below this
    ok = (k_high > 0) & (k_low <= k_high)
    # Jones' condition f_j - K d_j <= fmin - eps |fmin| for the largest admissible K.
    target = fmin - eps * abs(fmin)
    with np.errstate(invalid="ignore"):
        ok &= np.isinf(k_high) | (f - k_high * size <= target + 1e-15 * max(1.0, abs(fmin)))
    return ok


def direct_minimize(
    fun: Callable[[Array], Array],
    dim: int,
    budget: int,
    *,
    eps: float = 1e-4,
    len_tol: float = 1e-6,
    maxiter: int | None = None,
) -> tuple[int, str]:
    """Minimize over the unit cube ``[0, 1]^dim`` with batched DIRECT.

    Parameters
    ----------
    fun : callable
        Maps points of shape (n, dim) to finite values of shape (n,) (the caller replaces
        non-finite values). The caller also records the best point: this function only
        drives the search.
    dim : int
        Dimension, >= 1.
    budget : int
        Most points evaluated, >= 1.
    eps, len_tol : float
        See the module docstring.
    maxiter : int, optional
        Most iterations (the centre evaluation excluded); unlimited by default.

    Returns
    -------
    nfev : int
        Points evaluated.
    message : str
        Why the search stopped.
    """
    cap = budget + 1
    centers = np.empty((cap, dim))
    levels = np.zeros((cap, dim), dtype=np.int64)
    kmin = np.zeros(cap, dtype=np.int64)
    pcount = np.full(cap, dim, dtype=np.int64)
    fvals = np.empty(cap)
    centers[0] = 0.5
    fvals[0] = float(fun(centers[:1])[0])
    n = 1
    nfev = 1
    iteration = 0
    while True:
        if nfev >= budget:
            return nfev, f"budget of {budget} evaluations used up"
        if maxiter is not None and iteration >= maxiter:
            return nfev, f"maxiter {maxiter} reached"
        best = int(np.argmin(fvals[:n]))
        half_diag = _half_diagonals(kmin[best], pcount[best], dim)
        if half_diag < len_tol:
            return nfev, "half-diagonal of the best rectangle below len_tol"
        iteration += 1

        # --- potentially optimal rectangles: one representative per size class
        keys = _size_keys(kmin[:n], pcount[:n], dim)
        order = np.lexsort((np.arange(n), fvals[:n], keys))
        sk = keys[order]
        first = np.ones(n, dtype=bool)
        first[1:] = sk[1:] != sk[:-1]
        reps = order[first]
        reps = reps[kmin[reps] < _MAX_LEVEL]
        if reps.size == 0:
            return nfev, "every rectangle divided to the resolution limit"
        size = _half_diagonals(kmin[reps].astype(float), pcount[reps].astype(float), dim)
        fmin = float(fvals[best])
        mask = potentially_optimal(fvals[reps], size, fmin, eps)
        # largest rectangles first, so a budget cut drops the smallest ones
        chosen = reps[mask][np.argsort(-size[mask], kind="stable")]

        # --- sample points of every chosen rectangle, in one batch
        dims_list = [np.flatnonzero(levels[j] == kmin[j]) for j in chosen]
        counts = np.array([2 * len(ix) for ix in dims_list])
        room = budget - nfev
        complete = int(np.searchsorted(np.cumsum(counts), room, side="right"))
        n_points = int(counts[:complete].sum())
        partial = room - n_points if complete < chosen.size else 0
        total = n_points + partial
        if total == 0:
            return nfev, f"budget of {budget} evaluations used up"
        X = np.empty((total, dim))
        row = 0
        for r in range(min(complete + (partial > 0), chosen.size)):
            j = chosen[r]
            ix = dims_list[r]
            delta = 3.0 ** (-(kmin[j] + 1))
            m = len(ix)
            block = np.repeat(centers[j][None, :], 2 * m, axis=0)
            block[np.arange(m), ix] += delta
            block[m + np.arange(m), ix] -= delta
            take = min(2 * m, total - row)
            X[row : row + take] = block[:take]
            row += take
        values = np.asarray(fun(X), dtype=float)
        nfev += total

        # --- divide the rectangles whose samples are complete
        row = 0
        for r in range(complete):
            j = chosen[r]
            ix = dims_list[r]
            m = len(ix)
            vplus = values[row : row + m]
            vminus = values[row + m : row + 2 * m]
            w = np.minimum(vplus, vminus)
            rank = np.argsort(w, kind="stable")
            lev = levels[j].copy()
            for q in rank:
                i = ix[q]
                lev[i] += 1
                for sign, v in ((1, vplus[q]), (-1, vminus[q])):
                    centers[n] = centers[j]
                    centers[n, i] += sign * 3.0 ** (-(kmin[j] + 1))
                    levels[n] = lev
                    fvals[n] = v
                    n += 1
            levels[j] = lev
            row += 2 * m
        # refresh (kmin, p) of the divided rectangles and their children
        touched = np.concatenate([chosen[:complete], np.arange(n - n_points, n)]) if complete else chosen[:0]
        if touched.size:
            lv = levels[touched]
            km = lv.min(axis=1)
            kmin[touched] = km
            pcount[touched] = (lv == km[:, None]).sum(axis=1)
        if complete < chosen.size:
            return nfev, f"budget of {budget} evaluations used up"
