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
    ds = size[None, :] - size[:, None]  # ds[j, h] = d_h - d_j (sizes are distinct: ds != 0 off the diagonal)
    df = f[None, :] - f[:, None]  # df[j, h] = f_h - f_j
    larger = ds > 0
    smaller = ds < 0
    slope = np.divide(df, ds, out=np.zeros_like(df), where=larger | smaller)
    k_high = np.where(larger, slope, np.inf).min(axis=1)  # K may not exceed this
    k_low = np.where(smaller, slope, -np.inf).max(axis=1)  # nor fall below this
    ok = (k_high > 0) & (k_low <= k_high)
    # Jones' condition f_j - K d_j <= fmin - eps |fmin| for the largest admissible K (any K when
    # no larger rectangle bounds it).
    finite = np.isfinite(k_high)
    target = fmin - eps * abs(fmin) + 1e-15 * max(1.0, abs(fmin))
    ok[finite] &= f[finite] - k_high[finite] * size[finite] <= target
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
        if _half_diagonals(kmin[best], pcount[best], dim) < len_tol:
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

        # --- sample points of every chosen rectangle, in one batch. Rectangle r contributes
        # its m_r longest dimensions, first all "+ delta" samples, then all "- delta" ones.
        is_long = levels[chosen] == kmin[chosen][:, None]
        rect_of, dim_of = np.nonzero(is_long)  # pairs in rectangle order, dims ascending
        m_of = is_long.sum(axis=1)
        counts = 2 * m_of
        room = budget - nfev
        complete = int(np.searchsorted(np.cumsum(counts), room, side="right"))
        n_points = int(counts[:complete].sum())
        partial = room - n_points if complete < chosen.size else 0
        total = n_points + partial
        if total == 0:
            return nfev, f"budget of {budget} evaluations used up"
        first_pair = np.concatenate(([0], np.cumsum(m_of)[:-1]))
        q_of = np.arange(rect_of.size) - first_pair[rect_of]  # position within its rectangle
        delta_of = 3.0 ** (-(kmin[chosen][rect_of] + 1))
        start_of = 2 * first_pair[rect_of]  # first sample row of the rectangle
        rows = np.concatenate([start_of + q_of, start_of + m_of[rect_of] + q_of])
        sign = np.ones(2 * rect_of.size)
        sign[rect_of.size :] = -1.0
        pair_ids = np.concatenate([np.arange(rect_of.size)] * 2)
        keep = rows < total
        rows, sign, pair_ids = rows[keep], sign[keep], pair_ids[keep]
        X = np.empty((total, dim))
        X[rows] = centers[chosen[rect_of[pair_ids]]]
        X[rows, dim_of[pair_ids]] += sign * delta_of[pair_ids]
        values = np.asarray(fun(X), dtype=float)
        nfev += total

        # --- divide the rectangles whose samples are complete: in each, trisect along its long
        # dimensions in increasing order of w = min(f(c + delta e_i), f(c - delta e_i)); the
        # children of the q-th dimension in that order have the first q + 1 of them trisected.
        if complete:
            n_pairs = int(first_pair[complete - 1] + m_of[complete - 1])
            rect_c, dim_c, q_c = rect_of[:n_pairs], dim_of[:n_pairs], q_of[:n_pairs]
            row_plus = start_of[:n_pairs] + q_c
            vplus = values[row_plus]
            vminus = values[row_plus + m_of[rect_c]]
            order = np.lexsort((q_c, np.minimum(vplus, vminus), rect_c))  # rank within rectangle
            rect_c, dim_c, vplus, vminus = rect_c[order], dim_c[order], vplus[order], vminus[order]
            parent = chosen[rect_c]
            steps = np.zeros((n_pairs, dim), dtype=np.int64)
            steps[np.arange(n_pairs), dim_c] = 1
            cum = np.cumsum(steps, axis=0)
            group_start = first_pair[rect_c]
            before = np.where(group_start[:, None] > 0, cum[np.maximum(group_start - 1, 0)], 0)
            child_levels = levels[parent] + cum - before
            delta_c = 3.0 ** (-(kmin[parent] + 1))
            sl = slice(n, n + 2 * n_pairs)
            centers[sl] = np.repeat(centers[parent], 2, axis=0)
            step = np.repeat(delta_c, 2)
            step[1::2] *= -1.0  # children come in (+, -) pairs
            centers[n + np.arange(2 * n_pairs), np.repeat(dim_c, 2)] += step
            levels[sl] = np.repeat(child_levels, 2, axis=0)
            fvals[n : n + 2 * n_pairs : 2] = vplus
            fvals[n + 1 : n + 2 * n_pairs : 2] = vminus
            n += 2 * n_pairs
            last = first_pair[1:complete] - 1  # each rectangle's last pair (all its dims trisected)
            last = np.append(last, n_pairs - 1)
            levels[parent[last]] = child_levels[last]
        # refresh (kmin, p) of the divided rectangles and their children
        touched = np.concatenate([chosen[:complete], np.arange(n - n_points, n)]) if complete else chosen[:0]
        if touched.size:
            lv = levels[touched]
            km = lv.min(axis=1)
            kmin[touched] = km
            pcount[touched] = (lv == km[:, None]).sum(axis=1)
        if complete < chosen.size:
            return nfev, f"budget of {budget} evaluations used up"
