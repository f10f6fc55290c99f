"""LineBO (Kirschner, Mutný, Hiller, Ischebeck, Krause, ICML 2019): BO on one-dimensional subspaces.

Every iteration restricts the acquisition to a line through the current best guess and queries
its maximizer on the segment where the line meets the box. As implemented (the MS-UCB paper,
Tran-The et al. 2020, uses LineBO as a baseline with its own implementation, so its setting,
SPEC.md P3.B item 3, is followed where Kirschner et al. leave a choice):

* GP on all D coordinates and all data (not only the points of the current line);
  Matern-5/2, isotropic, hyperparameters refitted after every observation, 20 uniform initial
  points in ``[-1, 1]^D`` (the MS-UCB paper's common settings).
* Anchor ``x_hat``: the observed point with the largest posterior mean (Kirschner et al.'s
  "best guess" restricted to evaluated points).
* Direction of the line (option ``line_direction``): ``"random"`` (RandomLineBO: uniform on
  the unit sphere S^{D-1}, the default) or ``"coordinate"`` (CoordinateLineBO: a uniformly
  random coordinate axis). The option was first called ``direction``, the name of
  :class:`hdbo.Optimizer`'s "minimize"/"maximize" argument (which :func:`hdbo.minimize` and
  :func:`hdbo.maximize` set), so it was renamed; states and stored runs with the old name load.
* The segment ``{x_hat + s v : lo <= s <= hi}`` inside ``[-1, 1]^D``; UCB with
  ``beta_t = "tranthe2020"`` at ``d = 1`` (the MS-UCB paper's weight for a one-dimensional search
  space) is maximized on it by a grid over s (half the acquisition budget, one vectorized call)
  and L-BFGS-B in s from the best grid points (the other half, analytic gradient
  ``d a / d s = grad a . v``).
* One evaluation per line (a new line every iteration).

The acquisition budget per iteration is ``acq_budget`` evaluations, default ``1000`` (the grid
of SPEC P3.B item 3 plus its refinement).

References
----------
Kirschner, Mutný, Hiller, Ischebeck, Krause. Adaptive and safe Bayesian optimization in high
dimensions via one-dimensional subspaces. ICML 2019, Algorithm 1 (LineBO).
Tran-The, Gupta, Rana, Venkatesh, AAAI 2020, Section "Experiments" (the baseline); SPEC.md P3.B.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_real
from ..acquisition import UCB
from ..acquisition.maximizers import maximize_lbfgsb
from ..gp import GaussianProcess
from ..space import Box
from ._subspace_common import SubspaceUCBMixin
from .gp_based import GPMethod
from .registry import register

__all__ = ["LineBO", "line_segment"]

Array = NDArray[np.float64]


def line_segment(x: Array, v: Array, lower: float = -1.0, upper: float = 1.0) -> tuple[float, float]:
    """The range ``[lo, hi]`` of s with ``x + s v`` inside the cube ``[lower, upper]^D``.

    Parameters
    ----------
    x : ndarray of shape (D,)
        A point of the cube.
    v : ndarray of shape (D,)
        A non-zero direction.
    lower, upper : float
        The cube's faces.

    Returns
    -------
    (float, float)
        ``lo <= 0 <= hi``.

    Examples
    --------
    >>> line_segment(np.array([0.5, 0.0]), np.array([1.0, 0.0]))
    (-1.5, 0.5)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (lower - x) / v
        b = (upper - x) / v
    nz = v != 0
    lo = float(np.max(np.minimum(a, b)[nz]))
    hi = float(np.min(np.maximum(a, b)[nz]))
    return min(lo, 0.0), max(hi, 0.0)


@register
class LineBO(SubspaceUCBMixin, GPMethod):
    """LineBO: UCB maximized on a line through the best guess; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (the method works on ``[-1, 1]^D``).
    line_direction : {"random", "coordinate"}, default "random"
        Uniform direction on the sphere (RandomLineBO) or a random coordinate axis
        (CoordinateLineBO). Formerly ``direction`` (still accepted by
        :func:`~hdbo.methods.make_method` with a ``FutureWarning``; not by
        :class:`hdbo.Optimizer`, whose ``direction`` is "minimize" or "maximize").
    grid_fraction : float, default 0.5
        Fraction of ``acq_budget`` spent on the grid along the line, in (0, 1].
    acq_budget : int, optional
        Acquisition evaluations per iteration (default 1000).
    beta : str or float, default "tranthe2020"
        beta_t schedule or constant (``"tranthe2020"`` with subspace dimension 1).
    beta_params : dict, optional
        Schedule parameters.
    n_init, refit_every, refit_growth, kernel, ard, noise_variance, fit_noise, n_restarts, restart_schedule,
    lengthscale_bounds
        GP options (:class:`~hdbo.methods.gp_based.GPMethod`); defaults as MS-UCB: 20
        initial points, Matern-5/2, isotropic, refit after every observation.
    maximizer : {"lbfgsb"}
        Accepted for the common interface; the line search is grid + L-BFGS-B.
    polish : bool, default False
        Must be False.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (see also :class:`~hdbo.methods.gp_based.GPMethod`).

    Attributes
    ----------
    anchor_, direction_ : ndarray of shape (D,)
        Anchor and direction of the last line (canonical coordinates).

    Notes
    -----
    Batches: a line carries one evaluation, so a line has no state to wait for and each point
    of a batch gets its own line, with a fresh direction, through the same anchor (the
    observed point of largest posterior mean, which pending points do not change). The UCB
    along it is that of the GP conditioned on the pending points at its posterior mean,
    GP-BUCB's hallucination (:class:`~hdbo.methods._subspace_common.SubspaceUCBMixin`), so a
    line that passes near a pending point is searched elsewhere (should the line's best point
    be a pending one all the same, its best other searched point is proposed); ``ask(n)``
    returns ``n`` points. The iteration ``t`` of ``beta_t`` counts the pending proposals.
    """

    name = "line-bo"
    domain = "symmetric"
    renamed_options = {"direction": "line_direction"}

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        line_direction: str = "random",
        grid_fraction: float = 0.5,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.line_direction = check_choice(line_direction, "line_direction", ("random", "coordinate"))
        self.grid_fraction = check_real(grid_fraction, "grid_fraction", low=0, high=1, low_inclusive=False)
        self._set_subspace_dim(1)
        self.anchor_: Array | None = None
        self.direction_: Array | None = None

    def _default_acq_budget(self) -> int:
        """Acquisition evaluations per iteration without ``acq_budget``: 1000 (SPEC P3.B item 3)."""
        return 1000

    def _draw_direction(self) -> Array:
        D = self.dim
        if self.line_direction == "coordinate":
            v = np.zeros(D)
            v[self.rng.integers(D)] = 1.0
            return v
        v = self.rng.standard_normal(D)
        return v / np.linalg.norm(v)

    def _acquire(self, gp: GaussianProcess) -> Array:
        acq = UCB(gp, self.beta_t())
        X = self.X_obs
        anchor = X[int(np.argmax(gp.predict(X)[0]))]
        v = self._draw_direction()
        lo, hi = line_segment(anchor, v)
        B = self.acquisition_budget
        n_grid = max(2, min(B, int(round(B * self.grid_fraction))))
        s = np.linspace(lo, hi, n_grid)
        vals = acq(anchor[None, :] + s[:, None] * v[None, :])
        vals = np.where(np.isfinite(vals), vals, -np.inf)
        best_s, best_v = float(s[int(np.argmax(vals))]), float(np.max(vals))
        nfev = n_grid
        left = B - n_grid
        if left >= 4 and hi > lo:
            def fun(S: Array) -> Array:
                return acq(anchor[None, :] + S[:, :1] * v[None, :])

            def fun_and_grad(S: Array) -> tuple[Array, Array]:
                val, grad = acq.value_and_grad(anchor[None, :] + S[:, :1] * v[None, :])
                return val, (grad @ v)[:, None]

            top = s[np.argsort(-vals, kind="stable")[:3]][:, None]
            res = maximize_lbfgsb(fun, np.array([[lo, hi]]), budget=left, rng=self.rng, fun_and_grad=fun_and_grad,
                                  n_starts=3, n_raw=0, x0_candidates=top)
            nfev += res.nfev
            if res.value > best_v:
                best_s, best_v = float(res.x[0]), float(res.value)
        if self.n_pending:
            # a point already out is not proposed again: the best other point searched on the line
            cand_s, cand_v = np.append(best_s, s), np.append(best_v, vals)
            i = self._best_not_pending(cand_v, lambda j: anchor + cand_s[j] * v)
            if i is not None:
                best_s, best_v = float(cand_s[i]), float(cand_v[i])
        self.anchor_, self.direction_ = anchor, v
        self.last_acq_nfev_ = nfev
        self.last_ = {"acq_nfev": nfev, "acq_value": best_v, "segment_length": float((hi - lo) * np.linalg.norm(v))}
        return np.clip(anchor + best_s * v, -1.0, 1.0)

    def diagnostics(self) -> dict[str, Any]:
        """Facts of the last line search and the GP hyperparameters.

        Returns
        -------
        dict
            ``acq_nfev``, ``acq_value``, ``segment_length`` of the last iteration, plus
            ``hyperparameters``; empty before the first model-based query.
        """
        return super().diagnostics()
