"""Additive decompositions: random partitions and their search by marginal likelihood.

Kandasamy et al. (2015), §4.4: a decomposition assigns the D coordinates to M disjoint groups
of at most d coordinates. There are D! / (d!^M M!) of them, so the practical algorithm scores
O(D) random decompositions (and the current one) by the GP's marginal likelihood and keeps the
best ("partial maximization").
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from .._docstrings import fill_doc
from .._validation import check_int
from ..gp import GaussianProcess

__all__ = ["group_sizes", "random_decomposition", "search_decomposition", "refine_decomposition", "check_decomposition"]

Groups = list[list[int]]

# The data arguments of the decomposition searches (filled in by ``fill_doc``).
_DOC = {
    "training_data": """
        Parameters
        ----------
        X : ndarray of shape (t, D)
            Training inputs.
        y : ndarray of shape (t,)
            Training outputs.
    """,
}


def check_decomposition(D: int, d: int, M: int) -> None:
    """Validate that M groups of at most d coordinates can cover D coordinates.

    Parameters
    ----------
    D : int
        Number of coordinates (not checked).
    d : int
        Maximum group size.
    M : int
        Number of groups.

    Raises
    ------
    TypeError
        If d or M is not an int.
    ValueError
        If d or M is < 1, d > D, M > D, or d * M < D.
    """
    d, M = check_int(d, "d", low=1), check_int(M, "M", low=1)
    if d > D:
        raise ValueError(f"d must be <= the dimension {D}, got {d}")
    if M > D:
        raise ValueError(f"M must be <= the dimension {D}, got {M}")
    if d * M < D:
        raise ValueError(f"M groups of at most d coordinates must cover all {D} coordinates; d * M = {d * M} < {D}")


def group_sizes(D: int, d: int, M: int, *, balanced: bool = False) -> list[int]:
    """Sizes of the M groups of a random decomposition of D coordinates into groups of at most d.

    By default the groups are filled to d in turn, each later group keeping at least one
    coordinate: ``(d, ..., d, D - (M - 1) d)`` when ``M = ceil(D / d)``, e.g. (3, 3, 3, 1) for
    Add-3/4 in D = 10. This is how the authors' public code builds Add-d/M
    (``preprocessDecomposition.m``: ``ceil(D/d)`` groups, the remaining coordinates in the last),
    and the paper's "M groups of size at most d" allows it; with it Add-3/4 can hold the three
    true groups of the (10, 3, 3) function. ``balanced=True`` gives sizes that differ by at most
    one instead, e.g. (3, 3, 2, 2), which can hold at most two of them.

    Parameters
    ----------
    D, d, M : int
        Number of coordinates, maximum group size and number of groups, ``d * M >= D``.
    balanced : bool, default False
        Sizes differing by at most one instead of groups filled to d.

    Returns
    -------
    list of M int
        Positive sizes summing to D, each ``<= d``.

    Raises
    ------
    TypeError, ValueError
        If ``(D, d, M)`` is invalid (see :func:`check_decomposition`).
    """
    check_decomposition(D, d, M)
    if balanced:
        return [D // M + (k < D % M) for k in range(M)]
    sizes, left = [], D
    for k in range(M):
        size = min(d, left - (M - k - 1))
        sizes.append(size)
        left -= size
    return sizes


def random_decomposition(D: int, d: int, M: int, rng: np.random.Generator, *, balanced: bool = False) -> Groups:
    """A uniformly random assignment of the D coordinates to M groups of at most d.

    The coordinates are permuted at random and cut into groups of the sizes
    :func:`group_sizes` gives: filled to d in turn (the authors' construction), or with
    ``balanced=True`` sizes that differ by at most one. Indices are sorted within a group.

    Parameters
    ----------
    D : int
        Number of coordinates.
    d, M : int
        Maximum group size and number of groups, with ``d * M >= D``.
    rng : numpy.random.Generator
        Source of the permutation.
    balanced : bool, default False
        See :func:`group_sizes`.

    Returns
    -------
    list of M lists of int
        Every coordinate in exactly one group.

    Raises
    ------
    TypeError, ValueError
        If ``(D, d, M)`` is invalid (see :func:`check_decomposition`).
    """
    sizes = group_sizes(D, d, M, balanced=balanced)
    perm = rng.permutation(D)
    return [sorted(int(i) for i in part) for part in np.split(perm, np.cumsum(sizes)[:-1])]


@fill_doc(**_DOC)
def search_decomposition(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    make_gp: Callable[[Groups], GaussianProcess],
    candidates: Sequence[Groups],
) -> tuple[Groups, GaussianProcess, NDArray[np.float64]]:
    """Score candidate decompositions by marginal likelihood and return the best.

    %(training_data)s
    make_gp : callable
        ``make_gp(groups)`` returns an unfitted GP with an additive kernel over ``groups`` and
        the hyperparameters to score at (they are not optimized here).
    candidates : sequence of decompositions
        Ties keep the earliest candidate (put the current decomposition first to keep it
        unless another is strictly better).

    Returns
    -------
    groups : list of lists of int
        The best decomposition.
    gp : GaussianProcess
        Its GP, fitted (factorized) on (X, y) without changing hyperparameters.
    scores : ndarray of shape (len(candidates),)
        Log marginal likelihood of every candidate (``-inf`` where factorization failed).

    Raises
    ------
    ValueError
        If ``candidates`` is empty.
    """
    if not candidates:
        raise ValueError("candidates must contain at least one decomposition")
    scores = np.empty(len(candidates))
    best_gp: GaussianProcess | None = None
    for i, groups in enumerate(candidates):
        gp = make_gp(groups).fit(X, y, optimize=False)
        scores[i] = float(gp.log_marginal_likelihood())
        if best_gp is None or scores[i] > scores[: i].max():
            best_gp = gp
    best = int(np.argmax(scores))
    return [list(g) for g in candidates[best]], best_gp, scores  # type: ignore[return-value]


def _neighbours(groups: Groups, d: int):
    """Decompositions one step away: swap two coordinates of different groups, or move one
    coordinate to another group that has room (and would not be left empty)."""
    M = len(groups)
    for a in range(M):
        for b in range(M):
            if a == b:
                continue
            for i in groups[a]:
                if a < b:
                    for j in groups[b]:
                        new = [list(g) for g in groups]
                        new[a] = sorted([k for k in new[a] if k != i] + [j])
                        new[b] = sorted([k for k in new[b] if k != j] + [i])
                        yield new
                if len(groups[b]) < d and len(groups[a]) > 1:
                    new = [list(g) for g in groups]
                    new[a] = [k for k in new[a] if k != i]
                    new[b] = sorted(new[b] + [i])
                    yield new


@fill_doc(**_DOC)
def refine_decomposition(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    make_gp: Callable[[Groups], GaussianProcess],
    groups: Groups,
    *,
    d: int,
    max_steps: int = 100,
) -> tuple[Groups, GaussianProcess, float]:
    """Hill-climb on the marginal likelihood by swapping/moving single coordinates.

    An extension of the paper's random partial maximization (not in the paper): starting from
    ``groups``, repeatedly take the first neighbouring decomposition (two coordinates of
    different groups swapped, or one moved to a group with fewer than d coordinates) whose
    marginal likelihood is higher, until none is or ``max_steps`` moves were made. One sweep
    costs ``O(D^2)`` factorizations of the t x t kernel matrix.

    %(training_data)s
    make_gp : callable
        ``make_gp(groups)`` returns an unfitted GP over ``groups``, as for
        :func:`search_decomposition`.
    groups : list of lists of int
        The starting decomposition.
    d : int
        Maximum group size; a move never makes a group larger than this.
    max_steps : int, default 100
        Maximum number of improving moves.

    Returns
    -------
    groups : list of lists of int
        The final decomposition.
    gp : GaussianProcess
        Its GP, fitted (factorized) on (X, y) without changing hyperparameters.
    lml : float
        Its log marginal likelihood.
    """
    gp = make_gp(groups).fit(X, y, optimize=False)
    best = float(gp.log_marginal_likelihood())
    for _ in range(max_steps):
        for cand in _neighbours(groups, d):
            cgp = make_gp(cand).fit(X, y, optimize=False)
            score = float(cgp.log_marginal_likelihood())
            if score > best + 1e-9:
                groups, gp, best = cand, cgp, score
                break
        else:
            break
    return [list(g) for g in groups], gp, best
