"""SI-BO (Djolonga, Krause, Cevher, NIPS 2013): subspace identification, then GP-UCB on it.

For ``f(x) = g(A x)`` with A of shape (k, D), k << D, Algorithm 1 of the paper:

**Phase 1 (subspace identification)**, every query through ``ask``/``tell``:

1. ``m_X`` sampling centres ``xi_j`` uniform on the unit sphere ``S^{D-1}``;
2. ``m_Phi`` matrices ``Phi_i`` of shape (D, m_X) with entries ``+-1/sqrt(m_Phi)`` (SPEC.md
   P1.A.4-1: the paper's Algorithm 1 prints ``{+-1/sqrt(m_Phi)}^k`` and a loop over m_X; we
   follow the text: D x m_X matrices, i = 1..m_Phi);
3. queries: the m_X centres, then ``xi_j + eps phi_{i,j}`` for i = 1..m_Phi, j = 1..m_X, each
   repeated ``n_rep`` times in a row and averaged (Theorem 5's resampling), so Phase 1 costs
   exactly ``n_SI = m_X (m_Phi + 1) n_rep`` evaluations;
4. the finite-difference measurements ``y_i`` of eq. (1) and the Dantzig selector (eq. 2),
   solved by cvxpy when installed, else by our ADMM (:mod:`hdbo.structure.subspace`);
5. ``A_hat`` = the top-k left singular vectors of the solution.

**Phase 2**: GP-UCB on ``z in B^k(1 + eps_bar)`` with ``x = A_hat^T z``, the Phase-1 data reused
in projected coordinates ``A_hat x`` (:class:`~hdbo.methods.subspace_ucb.SubspaceUCB`: grid or
DIRECT in k dimensions, ``beta_t = 2 log(|Z| t^2 pi^2 / (6 delta))`` with t counted from the
first Phase-2 query).

Evaluations its structure learning needs: ``n_SI = m_X (m_Phi + 1) n_rep`` before the first
Phase-2 query; with the defaults below and k = 2 that is 210 at D = 20, 930 at D = 100, 2730 at
D = 300 and 9030 at D = 1000 (``phase1_evaluations``; :meth:`SIBO.structure_evaluations` gives
it without building the method). Below that budget SI-BO cannot learn its subspace (it warns at
construction), so the public suite (``experiments/highdim/``, budgets 100 and 300) reports it
as excluded rather than running it to no purpose.

Defaults (SPEC.md P1.A.4-3/4, where the paper gives no values): ``m_X = k + 1``,
``m_Phi = ceil(1.5 k (D + m_X))``, ``eps = 0.3``, ``n_rep = 1``, ``eps_bar = 0.1``,
``delta = 0.1``; ``lambda = c_lambda sqrt(2 m_X) (sigma / eps) (sqrt(D) + sqrt(m_X))`` with
``c_lambda = 0.36`` and sigma the known noise std divided by ``sqrt(n_rep)`` (the paper's eq.-4
bound with any realistic C_2 makes the selector return 0); lambda halved up to 10 times while
the solution has numerical rank < k. With ``noise_std=None`` sigma is estimated from the
measurements (:func:`hdbo.structure.subspace.estimate_fd_noise`). In the noiseless case
(``noise_std=0``) lambda is floored at ``1e-8 ||calA*(y)||_op`` to keep the conic problem
well posed.

Accuracy of Phase 1 (measured; the paper reports no angles). Three error sources bound
``||sin Theta(A, A_hat)||``, none of them a solver effect (cvxpy and ADMM give the same angles):

* noise: with the paper's ``+-1/sqrt(m_Phi)`` directions each entry of ``calA*(y)`` carries
  noise of std ``sqrt(2 m_X) sigma / eps`` **whatever m_Phi is** (the signal of one measurement
  shrinks as ``1/sqrt(m_Phi)``), so only a longer step, fewer centres or resampling reduce it;
* curvature: ``(eps/2) phi^T H phi`` per term, with a part shared by every measurement; it
  grows with eps (the error is linear in eps when noise-free);
* conditioning: at ``m_Phi ~ D m_X`` the measurement operator is worst conditioned and the
  selector, with lambda below the noise level, amplifies both errors like least squares. The
  default rule lands there for k = 2 (D = 100: m_Phi = 309 for D m_X = 300).

On the GP-Posterior task (D = 100, Matern-5/2 with l = 1/2, whose Hessian entries have std
about 20, sigma = 0.01) the defaults give about 0.72 (8 instances, Phase 1 only; 0.70 even
noise-free), m_X = 2, m_Phi = 464, eps = 0.6 (the same n_SI = 930) about 0.57, and
m_X = 3, m_Phi = 3000 (n_SI = 9003) about 0.43: no allocation of a ~930-query Phase 1 that we
tried recovers that plane closely.

Domain. The paper's domain is the ball ``B^D(1 + eps_bar)``. Here the canonical coordinates are
the symmetric cube ``[-1, 1]^D`` of the user's box, whose largest inscribed ball is the unit
ball (SPEC.md P1.A.4-7: for the Gabor cube [0,1]^D this is the frame ``x = c + rho u`` with
``c = 0.5``, ``rho = 0.5``). Centres lie on its unit sphere; ``eps`` and the ball radius are in
these units (so SPEC's Gabor step ``eps = 0.3`` in cube units is ``epsilon = 0.6`` here). Every
query is clipped to the box; a finite-difference point that had to be clipped is left out of
the measurements (its step is no longer ``eps phi``), as is any term whose evaluation failed
or whose told point differs from the design point.

Kernel hyperparameters. Algorithm 1 takes the kernel as given; SPEC.md P1.A.4 proposes ML-II.
We fit ML-II on the Phase-2 observations only (after ``min_fit_points`` of them; the initial
``lengthscale`` until then) and use every observation in the posterior. Fitting on the
Phase-1 data too collapsed the length-scale to its lower bound: a Phase-1 value depends on the
part of ``A xi`` that ``A_hat`` does not see, so each centre's cluster of finite-difference
points sits at almost one ``z`` with values spread far beyond the noise, which only a tiny
length-scale explains (seen at D = 30 and D = 100; ``fit_phase1=True`` restores it).

Reading of told values. The Phase-1 design is a sequence of ``n_SI`` evaluation *slots*
(slot s evaluates design point ``s // n_rep``). Each of the first ``n_SI`` evaluations told
takes one slot: the slot it was asked for or, for a point SI-BO did not propose (the caller
evaluated something else), the first slot neither taken nor out. Its value is the value of the
slot's design point if the told point equals it (within 1e-9 in canonical coordinates);
otherwise it is used only as GP data. A repetition (``n_rep > 1``) of a design point that
failed is replaced by a uniform point, which takes the repetition's slot. Asked and told one
at a time, the p-th evaluation takes slot p.

Batches. Phase 1's points do not depend on the values, so ``ask(n)`` hands out the next
``n`` design slots that are not out yet, in order. It returns fewer than ``n`` points (and
``ask()`` raises :class:`~hdbo.exceptions.PendingError`) when no slot is left to hand out:
every slot not yet told is pending, or, with ``n_rep > 1``, repeats a design point that is
pending (a point is not evaluated twice at once; its next repetition is handed out once its
value is told). In particular once the whole design is out, nothing more is proposed until all
``n_SI`` evaluations are told, since the Dantzig selector needs every one of them. Phase 2 is
GP-UCB on the learned subspace, with pending points conditioned on at their projections
(:class:`~hdbo.methods.subspace_ucb.SubspaceUCB`).

References
----------
J. Djolonga, A. Krause, V. Cevher. High-dimensional Gaussian process bandits. NIPS 2013,
Algorithm 1, eqs. (1), (2), (4), Theorems 4-5, Section 5
(``../shared/papers/000_b66171859d87e3f4.txt``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_bool, check_choice, check_int, check_real
from ..exceptions import StateError
from ..gp import GaussianProcess
from ..space import Box
from ..structure.subspace import (
    DS_SOLVERS,
    adjoint_operator,
    estimate_fd_noise,
    finite_difference_measurements,
    noise_calibrated_lambda,
    orthonormal_rows,
    recover_subspace,
)
from ._state import describe, internal_array, internal_field, internal_int, state_int, state_mapping
from .registry import register
from .subspace_ucb import SubspaceUCB, _refit_known_noise

__all__ = ["SIBO"]

Array = NDArray[np.float64]

_MATCH_TOL = 1e-9  # a told point equals a pending design query (canonical max-norm)


def _design_size(dim: int, k: int, m_X: int | None, m_Phi: int | None) -> tuple[int, int]:
    """``(m_X, m_Phi)`` of Phase 1, the defaults filled in: ``m_X = k + 1``, ``m_Phi = ceil(1.5 k (D + m_X))``."""
    n_centres = m_X if m_X is not None else k + 1
    n_directions = m_Phi if m_Phi is not None else math.ceil(1.5 * k * (dim + n_centres))
    return n_centres, n_directions


@register
class SIBO(SubspaceUCB):
    """SI-BO: Phase 1 learns the subspace by low-rank recovery, Phase 2 runs GP-UCB on it.

    See the module docstring for the algorithm and every choice where the paper is silent.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    k : int, default 2
        Dimension of the subspace kept (number of singular vectors).
    m_X : int, optional
        Number of sampling centres (default ``k + 1``).
    m_Phi : int, optional
        Number of random direction matrices (default ``ceil(1.5 k (D + m_X))``).
    epsilon : float, default 0.3
        Finite-difference step (canonical units: the inscribed ball has radius 1).
    n_rep : int, default 1
        Evaluations of each Phase-1 point, averaged (the noisy-case resampling).
    c_lambda : float, default 0.36
        Multiplier of the noise-calibrated Dantzig tolerance.
    lam : float, optional
        A fixed Dantzig tolerance instead of the rule.
    ds_solver : {"auto", "cvxpy", "admm", "adjoint"}, default "auto"
        Dantzig-selector solver (:func:`hdbo.structure.subspace.dantzig_selector`). "auto"
        is cvxpy (the reference formulation) when installed. Its cost grows fast with
        ``D m_X``: on the Gabor task (D = 289, m_X = 2, m_Phi = 199) cvxpy/SCS took minutes
        of CPU where "admm" took 0.1 s for the same subspace; prefer "admm" for large D.
    max_halvings : int, default 10
        Halvings of lambda while the solution's rank is below k.
    noise_std : float, optional
        Known noise std of one evaluation (objective units): sets lambda and fixes the GP
        noise. None estimates it for lambda and fits it in the GP.
    fit_phase1 : bool, default False
        Whether the Phase-1 observations enter the ML-II fit of the kernel hyperparameters
        (they always enter the posterior). See "Kernel hyperparameters" in the module docstring.
    min_fit_points : int, default 10
        Phase-2 observations needed before the first ML-II fit (with ``fit_phase1=False``);
        until then the kernel keeps its initial hyperparameters (``lengthscale``).
    **kwargs
        :class:`~hdbo.methods.subspace_ucb.SubspaceUCB` options (``ball_margin``, ``delta``,
        ``grid_points``, ``beta``, ``lengthscale``) and
        :class:`~hdbo.methods.gp_based.GPMethod` options (``refit_every``, ``maximizer``, ...).

    Attributes
    ----------
    subspace_ : ndarray of shape (k, D) or None
        The recovered subspace ``A_hat`` (orthonormal rows, canonical coordinates); None
        during Phase 1.
    subspace_user_ : ndarray of shape (k, D) or None
        An orthonormal basis of the same subspace in the user's units.
    phase1_evaluations : int
        ``n_SI = m_X (m_Phi + 1) n_rep``.
    sin_theta_ : float or None
        ``||sin Theta(A, A_hat)||_2`` against the problem's true subspace, when known.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (the message names it).

    Notes
    -----
    Batches: in Phase 1, ``ask(n)`` returns the next design points in order, and fewer than
    ``n`` (``ask()``: :class:`~hdbo.exceptions.PendingError`) once every design evaluation not
    yet told is pending, or with ``n_rep > 1`` is a repetition of a pending design point (it
    waits for that point's value). Phase 2 starts when all ``n_SI`` Phase-1 evaluations are
    told (the Dantzig selector needs all of them); from then on ``ask(n)`` returns ``n``
    points, proposed by GP-UCB on the learned subspace conditioned on the pending points'
    projections. See "Reading of told values" and "Batches" in the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.methods import make_method
    >>> m = make_method("si-bo", [(-1, 1)] * 6, seed=0, k=1, m_Phi=4, noise_std=0.0, grid_points=51)
    >>> m.phase1_evaluations
    10
    >>> for _ in range(12):
    ...     x = m.ask()
    ...     m.tell(x, float(np.sin(x[0] + x[1])))
    >>> m.subspace_.shape
    (1, 6)
    """

    name = "si-bo"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        k: int = 2,
        m_X: int | None = None,
        m_Phi: int | None = None,
        epsilon: float = 0.3,
        n_rep: int = 1,
        c_lambda: float = 0.36,
        lam: float | None = None,
        ds_solver: str = "auto",
        max_halvings: int = 10,
        noise_std: float | None = None,
        fit_phase1: bool = False,
        min_fit_points: int = 10,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, k=k, noise_std=noise_std, **kwargs)
        self.fit_phase1 = check_bool(fit_phase1, "fit_phase1")
        self.min_fit_points = check_int(min_fit_points, "min_fit_points", low=2, high=MAX_COUNT)
        D, k = self.dim, self.k
        self.m_X = check_int(m_X, "m_X", low=1, allow_none=True, high=MAX_COUNT)
        self.m_Phi = check_int(m_Phi, "m_Phi", low=1, allow_none=True, high=MAX_COUNT)
        self.epsilon = check_real(epsilon, "epsilon", low=0, low_inclusive=False)
        self.n_rep = check_int(n_rep, "n_rep", low=1, high=MAX_COUNT)
        self.c_lambda = check_real(c_lambda, "c_lambda", low=0)
        self.lam = check_real(lam, "lam", low=0, allow_none=True)
        self.ds_solver = check_choice(ds_solver, "ds_solver", DS_SOLVERS)
        self.max_halvings = check_int(max_halvings, "max_halvings", low=0, high=MAX_COUNT)
        self.n_centres, self.n_directions = _design_size(D, k, self.m_X, self.m_Phi)
        if k > self.n_centres:
            warnings.warn(f"si-bo: k = {k} > m_X = {self.n_centres}: the gradient matrix has rank <= m_X, so "
                          "the extra directions are random", RuntimeWarning, stacklevel=2)
        self.phase1_evaluations = self.n_centres * (self.n_directions + 1) * self.n_rep
        if self.budget is not None and self.budget <= self.phase1_evaluations:
            warnings.warn(f"si-bo: budget {self.budget} <= the {self.phase1_evaluations} Phase-1 evaluations; "
                          "no optimization phase will run", RuntimeWarning, stacklevel=2)
        # The design (centres, directions) is regenerated from this seed, drawn from the method's
        # generator, so the state stays small.
        self._design_seed = int(self.rng.integers(2**63 - 1))
        self._design: tuple[Array, Array, Array] | None = None
        # Phase-1 slots (see "Reading of told values"): the slot of each of the first n_SI told
        # evaluations (-1: none left), and the (canonical point, slot) of each pending design query
        self._slots: list[int] = []
        self._reserved: list[tuple[Array, int]] = []
        self._slot_proposed: int | None = None  # the slot of the proposal _ask just made
        self._slot_told: NDArray[np.bool_] | None = None  # cache: the slots in _slots (None: rebuild)
        self.subspace_: Array | None = None
        self.estimate_info_: dict[str, Any] = {}

    @classmethod
    def structure_evaluations(cls, dim: int, **options: Any) -> int | None:
        """Evaluations of Phase 1 at dimension ``dim``: ``n_SI = m_X (m_Phi + 1) n_rep``.

        The same count as :attr:`phase1_evaluations` of a method built on a D-dimensional
        box with these options (computed without building it): the subspace is estimated
        only once all of them are told, and no Phase-2 query comes before.

        Parameters
        ----------
        dim : int
            Input dimension D (``>= 1``).
        **options
            SI-BO options; ``k`` (default 2), ``m_X``, ``m_Phi`` and ``n_rep`` change the count.

        Returns
        -------
        int
            With the defaults: 930 at D = 100, 2730 at D = 300.

        Raises
        ------
        TypeError
            If ``dim`` or one of those options is not an int, or an option is not one of SI-BO's.
        ValueError
            If ``dim`` or one of those options is below 1.

        Examples
        --------
        >>> SIBO.structure_evaluations(300), SIBO.structure_evaluations(300, k=1)
        (2730, 908)
        """
        dim = cls._check_structure_options(dim, options)
        k = check_int(options.get("k", 2), "k", low=1, high=dim)
        m_X = check_int(options.get("m_X"), "m_X", low=1, allow_none=True, high=MAX_COUNT)
        m_Phi = check_int(options.get("m_Phi"), "m_Phi", low=1, allow_none=True, high=MAX_COUNT)
        n_rep = check_int(options.get("n_rep", 1), "n_rep", low=1, high=MAX_COUNT)
        n_centres, n_directions = _design_size(dim, k, m_X, m_Phi)
        return n_centres * (n_directions + 1) * n_rep

    def _refit(self, X: Array, y: Array) -> GaussianProcess:
        if self.fit_phase1:
            return _refit_known_noise(self, X, y)
        return _refit_known_noise(self, X, y, fit_rows=self._phase2_rows(), min_fit=self.min_fit_points)

    def _phase2_rows(self) -> NDArray[np.bool_]:
        """Which successful observations (rows of the GP data) were told after Phase 1."""
        ok = np.isfinite(self.y_all)
        return (np.arange(ok.size) >= self.phase1_evaluations)[ok]

    # ------------------------------------------------------------------ design
    def design(self) -> tuple[Array, Array, Array]:
        """The Phase-1 design in canonical coordinates.

        Returns
        -------
        centres : ndarray of shape (m_X, D)
            Uniform on the unit sphere.
        Phi : ndarray of shape (m_Phi, D, m_X)
            Entries ``+-1/sqrt(m_Phi)``; column j of ``Phi[i]`` is the direction ``phi_{i,j}``.
        points : ndarray of shape (m_X (m_Phi + 1), D)
            Query order: the centres, then ``xi_j + eps phi_{i,j}`` for i (outer), j (inner),
            clipped to ``[-1, 1]^D`` (each is queried ``n_rep`` times in a row).
        """
        if self._design is None:
            rng = np.random.default_rng(self._design_seed)
            D, mX, mP = self.dim, self.n_centres, self.n_directions
            G = rng.standard_normal((mX, D))
            centres = G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)
            signs = rng.integers(0, 2, size=(mP, D, mX), dtype=np.int8) * 2 - 1
            Phi = signs.astype(float) / math.sqrt(mP)
            steps = centres[None, :, :] + self.epsilon * np.transpose(Phi, (0, 2, 1))  # (mP, mX, D)
            points = np.vstack([centres, steps.reshape(-1, D)])
            self._design = (centres, Phi, np.clip(points, -1.0, 1.0))
            self._unclipped = np.all(np.abs(points) <= 1.0, axis=1)
        return self._design

    @property
    def in_phase1(self) -> bool:
        """Whether the next query belongs to Phase 1."""
        return self.n_told < self.phase1_evaluations

    @property
    def iteration(self) -> int:
        """Index t >= 1 of the upcoming Phase-2 query (t = 1 right after Phase 1; pending points count)."""
        return max(1, self.n_told + self.n_pending - self.phase1_evaluations + 1)

    # ------------------------------------------------------------------ Phase-1 slots
    def _reservation(self, u: Array) -> int | None:
        """Index in the reservations of the pending design query equal to canonical ``u``, or None."""
        for j, (v, _) in enumerate(self._reserved):
            if np.max(np.abs(v - u)) <= _MATCH_TOL:
                return j
        return None

    def _first_free_slot(self, *, skip_pending: bool) -> int | None:
        """The first slot neither told nor out, or None.

        With ``skip_pending``, also not one whose design point is pending (``n_rep > 1``: a
        point is not evaluated twice at once).
        """
        if self._slot_told is None:
            self._slot_told = np.zeros(self.phase1_evaluations, dtype=bool)
            self._slot_told[[s for s in self._slots if s >= 0]] = True
        free = ~self._slot_told
        free[[s for _, s in self._reserved]] = False
        if skip_pending:
            for _, s in self._reserved:
                q = s // self.n_rep
                free[q * self.n_rep:(q + 1) * self.n_rep] = False
        hits = np.flatnonzero(free)
        return int(hits[0]) if hits.size else None

    def _on_tell(self, u: Array, y: float) -> None:
        super()._on_tell(u, y)
        if self.n_told <= self.phase1_evaluations:  # one of the first n_SI evaluations: it takes a slot
            j = self._reservation(u)
            slot = self._reserved.pop(j)[1] if j is not None else self._first_free_slot(skip_pending=False)
            self._slots.append(-1 if slot is None else slot)
            if slot is not None and self._slot_told is not None:
                self._slot_told[slot] = True
        if not self.in_phase1:
            self._reserved = []  # queries still out are GP data only

    def _on_cancel(self, u: Array | None) -> None:
        super()._on_cancel(u)
        if u is None:
            self._reserved = []
            return
        j = self._reservation(u)
        if j is not None:
            del self._reserved[j]  # the slot is handed out again

    # ------------------------------------------------------------------ Phase 1 -> A_hat
    def _phase1_values(self) -> tuple[Array, Array]:
        """Averaged values of the design points (NaN where none is usable) and the clip mask."""
        _, _, points = self.design()
        n_pts = points.shape[0]
        total = np.zeros(n_pts)
        count = np.zeros(n_pts)
        X = self.to_canonical(self.X_all[: self.phase1_evaluations])
        y = self.y_all[: self.phase1_evaluations]
        for p in range(y.size):
            if self._slots[p] < 0:
                continue
            q = self._slots[p] // self.n_rep
            if np.isfinite(y[p]) and np.max(np.abs(X[p] - points[q])) <= 1e-9:
                total[q] += y[p]
                count[q] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return values, self._unclipped

    def _identify(self) -> None:
        """Solve the Dantzig selector on the Phase-1 data and set :attr:`subspace_`."""
        centres, Phi, points = self.design()
        mX, mP = self.n_centres, self.n_directions
        values, unclipped = self._phase1_values()
        fc = values[:mX]
        fs = values[mX:].reshape(mP, mX)
        mask = np.isfinite(fs) & np.isfinite(fc)[None, :] & unclipped[mX:].reshape(mP, mX)
        Phi_m = Phi * mask[:, None, :]
        y = finite_difference_measurements(np.nan_to_num(fc), np.nan_to_num(fs), self.epsilon, mask=mask)
        if self.noise_std is not None:
            sigma = self.noise_std / math.sqrt(self.n_rep)
        else:
            sigma = estimate_fd_noise(Phi_m, y, self.epsilon, self.k, m_X=mX) if mask.any() else 0.0
        lam = self.lam if self.lam is not None else noise_calibrated_lambda(
            sigma, self.epsilon, self.dim, mX, c_lambda=self.c_lambda)
        floor = 1e-8 * float(np.linalg.norm(adjoint_operator(Phi_m, y), 2))
        lam = max(lam, floor)
        if not mask.any():
            warnings.warn("si-bo: no usable Phase-1 finite difference; using a random subspace",
                          RuntimeWarning, stacklevel=3)
        est = recover_subspace(Phi_m, y, self.k, lam, solver=self.ds_solver, max_halvings=self.max_halvings,
                               rng=self.rng)
        self.subspace_ = est.A_hat
        sv = est.singular_values
        self.estimate_info_ = {
            "lambda": est.lam,
            "lambda_initial": lam,
            "n_halvings": est.n_halvings,
            "ds_solver": est.solver,
            "ds_status": est.status,
            "singular_values": [float(v) for v in sv],
            "sigma_used": float(sigma),
            "fd_terms_used": int(mask.sum()),
            "fd_terms_total": int(mask.size),
        }

    def _projection(self) -> Array | None:
        if self.subspace_ is None and not self.in_phase1:
            self._identify()
        return self.subspace_

    @property
    def subspace_user_(self) -> Array | None:
        """An orthonormal basis (rows) of the recovered subspace in the user's units, or None."""
        if self.subspace_ is None:
            return None
        return orthonormal_rows(self.subspace_ / (0.5 * self.bounds.width)[None, :])

    @property
    def sin_theta_(self) -> float | None:
        """``||sin Theta(A, A_hat)||_2`` against the problem's true subspace (None if unknown)."""
        return self.subspace_diagnostics().get("sin_theta")

    # ------------------------------------------------------------------ ask
    def _ask(self) -> Array | None:
        if self.in_phase1:
            slot = self._first_free_slot(skip_pending=True)
            if slot is None:
                return None  # the rest of the design is out (module docstring, "Batches")
            _, _, points = self.design()
            u = points[slot // self.n_rep].copy()
            if slot % self.n_rep and self._repeats_failure(u):
                # a repetition of a design point that failed: a uniform point takes its slot (the
                # base class's rule for a repeated failure, applied here so the slot follows the point)
                warnings.warn(f"{self.name}: Phase-1 design point {slot // self.n_rep} already failed once; "
                              "proposing a random point for its repetition instead", RuntimeWarning, stacklevel=3)
                u = self.space.sample(1, self.rng)[0]
            self._slot_proposed = slot  # reserved for the point ask returns (_on_asked)
            return u
        self._projection()
        return super()._ask()

    def _on_asked(self, u: Array) -> None:
        # the slot follows the point actually handed out (the base class may have replaced the
        # proposal by a random point, e.g. a design point that a foreign tell already failed)
        if self._slot_proposed is not None:
            self._reserved.append((u.copy(), self._slot_proposed))
            self._slot_proposed = None

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        slots = self._slots
        reserved = [None] * self.n_pending  # the slot of each pending point (asking order), or None
        for u, slot in self._reserved:
            i = self._pending_index(u)
            if i is not None:
                reserved[i] = slot
        state.update(design_seed=self._design_seed,
                     subspace=None if self.subspace_ is None else self.subspace_.tolist(),
                     estimate_info=self.estimate_info_,
                     # None: slot p for the p-th evaluation (told one at a time, in order)
                     phase1_slots=None if slots == list(range(len(slots))) else list(slots),
                     phase1_pending_slots=reserved)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self._design_seed = internal_int(state, "design_seed", low=0, high=2**63 - 1)
        self._design = None
        n_si, n_p1 = self.phase1_evaluations, min(self.n_told, self.phase1_evaluations)
        # states of before batches have neither entry: slot p for the p-th evaluation, none out
        slots = state.get("phase1_slots")
        if slots is None:
            self._slots = list(range(n_p1))
        else:
            name = "state['internal']['phase1_slots']"
            if not isinstance(slots, list) or len(slots) != n_p1:
                raise StateError(f"{name} must be None or a list of {n_p1} slots (one per Phase-1 evaluation), "
                                 f"got {describe(slots)}")
            self._slots = [state_int(v, f"{name}[{i}]", low=-1, high=n_si - 1) for i, v in enumerate(slots)]
        self._slot_told = None
        reserved = state.get("phase1_pending_slots") or [None] * self.n_pending
        name = "state['internal']['phase1_pending_slots']"
        if not isinstance(reserved, list) or len(reserved) != self.n_pending:
            raise StateError(f"{name} must be a list of {self.n_pending} entries (one per pending point), "
                             f"got {describe(reserved)}")
        P = self.pending_canonical
        self._reserved = [(P[i].copy(), state_int(v, f"{name}[{i}]", low=0, high=n_si - 1))
                          for i, v in enumerate(reserved) if v is not None]
        used = [s for s in self._slots if s >= 0] + [s for _, s in self._reserved]
        if len(set(used)) != len(used):
            raise StateError("state['internal']['phase1_slots'] and ['phase1_pending_slots'] must not repeat a slot")
        self.subspace_ = internal_array(state, "subspace", shape=(self.k, self.dim), allow_none=True)
        self.estimate_info_ = dict(state_mapping(internal_field(state, "estimate_info"),
                                                 "state['internal']['estimate_info']"))
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """Phase-1 facts, the recovered subspace and its angles to the truth (JSON values).

        Returns
        -------
        dict
            ``phase1_evaluations`` (n_SI), ``m_X``, ``m_Phi``, ``epsilon``, ``n_rep``,
            ``phase1_done``; after Phase 1 also ``lambda``, ``lambda_initial``,
            ``n_halvings``, ``ds_solver``, ``ds_status``, ``singular_values``,
            ``sigma_used``, ``fd_terms_used``/``fd_terms_total`` and ``subspace`` (k x D
            list, canonical coordinates); with the true subspace known, ``sin_theta``,
            ``cos_angles`` and ``min_cos``; plus the GP hyperparameters and ``k``.
        """
        info = super().diagnostics()
        info.update(phase1_evaluations=self.phase1_evaluations, m_X=self.n_centres, m_Phi=self.n_directions,
                    epsilon=self.epsilon, n_rep=self.n_rep, phase1_done=self.subspace_ is not None)
        info.update(self.estimate_info_)
        if self.subspace_ is not None:
            info["subspace"] = self.subspace_.tolist()
        return info
