"""Shared machinery of methods that run GP-UCB/EI in the latent box of a random embedding.

:class:`EmbeddingGPMethod` holds an :class:`~hdbo.structure.embeddings.Embedding`
(``embedding_``), works in the symmetric canonical domain ``[-1, 1]^D`` and keeps, for every
told point, its *latent coordinates*: the latent point it proposed for it, or, for a point
it did not propose (a random fallback, a point told by the user), the least-squares latent
point if the embedding reproduces the point (within 1e-8), else None. The GP is fitted on
latent coordinates (normalized to ``[-1, 1]^k``), so points the embedding cannot represent
are kept out of the model (they still count for :attr:`Method.best`). Subclasses may fit
the GP on other inputs (REMBO's ``kernel_space="high"``) by overriding
:meth:`EmbeddingGPMethod._gp_data` and :meth:`EmbeddingGPMethod._latent_acquisition`.

The initial design (``n_init`` points) is drawn uniformly in the latent box, so it lies on
the embedding. The acquisition is maximized over the latent box with the configured maximizer
and the same acquisition-evaluation budget as any :class:`~hdbo.methods.gp_based.GPMethod`
(``acq_budget``, default ``min(5000, 100 D)``); the best latent points observed are offered as
starting candidates, and ``maximizer="lbfgsb"`` uses ``10 k`` starts for a latent dimension k
(SPEC P3.B: "10 x the embedding dimension").

Batches. The latent point of every proposal is kept until that point is told (or cancelled),
so points told in any order get the latent coordinates they were proposed for. A proposal made
while others are pending maximizes the acquisition on the GP conditioned on the pending points'
*latent* coordinates (:meth:`EmbeddingGPMethod._pending_gp_inputs`): at its posterior mean
for UCB (GP-BUCB), at the smallest value observed for EI (the constant liar "CL-min", which
keeps the incumbent and lowers the expected improvement near the points out). If the
proposal's point of the box is still a pending one (REMBO's clip maps distinct latent points
onto one face point), the GP is conditioned on that latent point as well and the acquisition
maximized once more; should that repeat a pending point too, a uniform latent point is
proposed.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_int, check_real
from ..acquisition import EI, UCB
from ..acquisition.schedules import BETA_SCHEDULES
from ..exceptions import StateError
from ..gp import GaussianProcess, Kernel, make_kernel
from ..space import Box
from ..structure.embeddings import Embedding, embedding_from_dict
from ._state import describe, internal_array, internal_field, state_array, state_mapping
from ._subspace_common import start_lengthscale
from .gp_based import GPMethod
from .gp_ucb import resolve_beta

__all__ = ["EmbeddingGPMethod", "default_low_dim"]

Array = NDArray[np.float64]

_MATCH_TOL = 1e-9  # a told point equals a pending proposal (canonical max-norm)
_REPRESENT_TOL = 1e-8  # the embedding reproduces a told point


def default_low_dim(d: int | None, D: int, *, name: str = "d") -> int:
    """The embedding dimension: ``d`` if given (1 <= d <= D), else ``min(5, D)`` (SPEC P3.B)."""
    d = check_int(d, name, low=1, allow_none=True)
    if d is None:
        return min(5, D)
    if d > D:
        raise ValueError(f"{name} must be <= the problem dimension {D}, got {d}")
    return d


class EmbeddingGPMethod(GPMethod):
    """Base class of GP methods that search the latent box of a random embedding.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    acquisition : {"ucb", "ei"}, default "ucb"
        GP-UCB ``mu + sqrt(beta_t) sigma`` or expected improvement over the best value the
        GP has seen.
    beta : str or float, default "kandasamy2015"
        beta_t schedule (UCB only); schedule parameters ``d`` and ``subspace_dim`` default
        to the latent dimension, ``dim`` to D.
    beta_params : dict, optional
        Schedule parameters.
    xi : float, default 0.0
        EI's exploration margin, in units of the GP's output scale (the standard deviation of
        the observed values).
    **kwargs
        :class:`~hdbo.methods.gp_based.GPMethod` options (``n_init``, ``acq_budget``,
        ``maximizer``, ``kernel``, ...).

    Attributes
    ----------
    embedding_ : Embedding
        The embedding in use (set by the subclass before the first ask).

    Notes
    -----
    Batches: ``ask(n)`` always returns ``n`` points; each is proposed on the GP conditioned on
    the pending points at their latent points (see "Batches" in the module docstring).
    """

    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        acquisition: str = "ucb",
        beta: str | float = "kandasamy2015",
        beta_params: dict[str, Any] | None = None,
        xi: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.acquisition = check_choice(acquisition, "acquisition", ("ucb", "ei"))
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        self.xi = check_real(xi, "xi", low=0)
        self.embedding_: Embedding | None = None
        self._latent: list[list[float] | None] = []
        # (canonical point, normalized latent point) of every proposal not yet told, in asking order
        self._proposals: list[tuple[Array, Array]] = []
        self._beta_fn: Callable[[int], float] | None = None

    # ------------------------------------------------------------------ embedding helpers
    def _new_seed(self) -> int:
        """A fresh embedding seed drawn from the method's generator."""
        return int(self.rng.integers(0, 2**62))

    def _set_embedding(self, embedding: Embedding) -> None:
        self.embedding_ = embedding
        self._check_maximizer_dim(embedding.low_dim)
        params = dict(self.beta_params)
        if isinstance(self.beta, str) and self.beta in BETA_SCHEDULES:
            names = inspect.signature(BETA_SCHEDULES[self.beta]).parameters
            if "subspace_dim" in names and embedding.low_dim < self.dim:
                params.setdefault("subspace_dim", embedding.low_dim)
            if "dim" in names and "d" not in names:
                params.setdefault("dim", self.dim)
            if "d" in names:
                params.setdefault("d", embedding.low_dim)
        self._beta_fn = resolve_beta(self.beta, params, embedding.low_dim)

    @property
    def low_dim(self) -> int:
        """Latent dimension k of the embedding in use."""
        assert self.embedding_ is not None
        return self.embedding_.low_dim

    @property
    def latent_box(self) -> Box:
        """The normalized latent box ``[-1, 1]^k`` the GP and the maximizer work in."""
        return Box.symmetric(self.low_dim)

    def _lift(self, W: ArrayLike) -> Array:
        """Canonical points ``[-1, 1]^D`` of normalized latent points W (n, k) or (k,)."""
        assert self.embedding_ is not None
        return self.embedding_.lift(self.embedding_.low_box.from_symmetric(W))

    def _represent(self, u: Array) -> Array | None:
        """Least-squares normalized latent point of canonical ``u`` if the embedding reproduces it (1e-8)."""
        assert self.embedding_ is not None
        Y, ok = self.embedding_.represents(u[None, :], atol=_REPRESENT_TOL)
        return self.embedding_.low_box.to_symmetric(Y[0]) if ok[0] else None

    def _latent_of(self, u: Array) -> Array | None:
        """Normalized latent coordinates of a canonical point, or None if not representable.

        The latent point a pending proposal equal to ``u`` was made for, else
        :meth:`_represent`.
        """
        i = self._proposal_index(u)
        return self._proposals[i][1] if i is not None else self._represent(u)

    # ------------------------------------------------------------------ pending proposals
    def _propose(self, w: Array) -> Array:
        """Record the proposal of normalized latent point ``w``; its canonical point."""
        u = self._lift(w)
        self._proposals.append((u, np.array(w, dtype=float)))
        return u

    def _proposal_index(self, u: Array) -> int | None:
        """Index in the proposal list of the first proposal equal to canonical ``u`` (1e-9), or None."""
        for i, (v, _) in enumerate(self._proposals):
            if np.max(np.abs(v - u)) <= _MATCH_TOL:
                return i
        return None

    def _prune_proposals(self) -> None:
        """Forget proposals that are not pending (e.g. replaced by the base class's random point)."""
        if not self._proposals:
            return
        P = self.pending_canonical
        self._proposals = [(u, w) for u, w in self._proposals
                           if len(P) and np.min(np.max(np.abs(P - u), axis=1)) <= _MATCH_TOL]

    def _gp_inputs_of_latent(self, W: Array) -> Array:
        """GP inputs of normalized latent points W (n, k): W itself (REMBO's ``k_X``: their points)."""
        return W

    def _pending_gp_inputs(self) -> Array | None:
        """GP inputs of the pending points: their proposals' latent points, shape (p, k).

        A pending point without a recorded proposal (a random replacement) enters at its
        least-squares latent point if the embedding reproduces it, and is left out otherwise,
        as it will be left out of the model once told.
        """
        rows = [self._latent_of(u) for u in self.pending_canonical]
        W = [w for w in rows if w is not None]
        return self._gp_inputs_of_latent(np.array(W, dtype=float)) if W else None

    def _pending_value(self) -> float | None:
        """UCB: None (the posterior mean, GP-BUCB); EI: the smallest observed value (CL-min)."""
        if self.acquisition == "ucb":
            return None
        y = self._gp_data()[1]
        return float(np.min(y)) if y.size else None

    def _on_cancel(self, u: Array | None) -> None:
        if u is None:
            self._proposals = []
            return
        i = self._proposal_index(u)
        if i is not None:
            del self._proposals[i]

    def beta_t(self, t: int | None = None) -> float:
        """The exploration weight of an iteration (UCB).

        Parameters
        ----------
        t : int, optional
            Iteration ``t >= 1``; default :attr:`iteration`.

        Returns
        -------
        float
        """
        assert self._beta_fn is not None
        return float(self._beta_fn(self.iteration if t is None else t))

    # ------------------------------------------------------------------ data
    def _latent_rows(self) -> tuple[Array, Array]:
        """Normalized latent coordinates (n, k) and values (n,) of the successful points that have them."""
        rows = [(w, v) for w, v in zip(self._latent, self._y) if w is not None and np.isfinite(v)]
        if not rows:
            return np.empty((0, self.low_dim)), np.empty(0)
        return np.array([r[0] for r in rows], dtype=float), np.array([r[1] for r in rows], dtype=float)

    def _gp_data(self) -> tuple[Array, Array]:
        """GP inputs: normalized latent coordinates; outputs: the observed values."""
        return self._latent_rows()

    def _gp_input_dim(self) -> int:
        return self.low_dim

    def _make_kernel(self) -> Kernel:
        n = self._gp_input_dim()  # REMBO's k_X: D inputs, where a start at 0.5 would not fit
        return make_kernel(self.kernel, n, ard=self.ard, lengthscale_bounds=self.lengthscale_bounds,
                           lengthscale=start_lengthscale(n, self.lengthscale_bounds))

    def _on_tell(self, u: Array, y: float) -> None:
        i = self._proposal_index(u)
        w = self._proposals.pop(i)[1] if i is not None else self._represent(u)
        self._latent.append(None if w is None else [float(v) for v in w])
        self._prune_proposals()

    # ------------------------------------------------------------------ ask
    def _n_model_points(self) -> int:
        """Successful observations that count towards the initial design."""
        return self._gp_data()[1].size

    def _ask(self) -> Array:
        self._prune_proposals()
        if self._n_model_points() < self.n_init:
            return self._propose(self.latent_box.sample(1, self.rng)[0])
        return super()._ask()

    def _latent_acquisition(self, acq: Any) -> tuple[Callable[[Array], Array], Callable[[Array], tuple[Array, Array]]]:
        """The acquisition as a function of normalized latent points (default: the GP's own inputs)."""
        return acq, acq.value_and_grad

    def _acquire(self, gp: GaussianProcess) -> Array:
        return self._propose(self._acquire_latent(gp))

    def _acquire_latent(self, gp: GaussianProcess) -> Array:
        """The normalized latent point maximizing the acquisition, its box point not a pending one.

        ``gp`` is conditioned on the pending points already (see the module docstring).
        """
        w = self._maximize_acquisition(gp)
        if self.n_pending and self._repeats_pending(self._lift(w)):
            # another latent point of a pending box point (REMBO's clip): believe this one too
            w = self._maximize_acquisition(gp.hallucinate(self._gp_inputs_of_latent(w[None, :]),
                                                          self._pending_value()))
            if self._repeats_pending(self._lift(w)):
                w = self.latent_box.sample(1, self.rng)[0]
        return w

    def _maximize_acquisition(self, gp: GaussianProcess) -> Array:
        """Maximize UCB or EI of ``gp`` over the normalized latent box."""
        if self.acquisition == "ucb":
            acq: Any = UCB(gp, self.beta_t())
        else:
            acq = EI(gp, float(np.max(self._gp_data()[1])), xi=self.xi)
        fun, fun_and_grad = self._latent_acquisition(acq)
        return self._maximize_latent(fun, fun_and_grad)

    def _maximize_latent(self, fun: Callable[[Array], Array],
                         fun_and_grad: Callable[[Array], tuple[Array, Array]]) -> Array:
        """Maximize over the normalized latent box within ``acquisition_budget`` evaluations.

        :meth:`GPMethod._maximize` on the latent box, with the best observed latent points as
        starting candidates (and ``10 d`` L-BFGS-B starts when that is the maximizer).
        """
        W, y = self._latent_rows()
        cands = W[np.argsort(-y, kind="stable")[:5]] if y.size else np.empty((0, self.low_dim))
        w = self._maximize(fun, fun_and_grad, bounds=self.latent_box.bounds, candidates=cands,
                           n_starts=10 * self.low_dim)
        return np.clip(w, -1.0, 1.0)

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        assert self.embedding_ is not None
        # one entry per pending point (asking order): the latent point of its proposal, or None
        pending = []
        for u in self.pending_canonical:
            i = self._proposal_index(u)
            pending.append(None if i is None else self._proposals[i][1].tolist())
        state.update(embedding=self.embedding_.to_dict(), latent=self._latent, pending_latent=pending)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        # embedding and latent coordinates first: the GP is rebuilt from _gp_data()
        data = state_mapping(internal_field(state, "embedding"), "state['internal']['embedding']")
        if data.get("dim") != self.dim:
            raise StateError(f"state['internal']['embedding']['dim'] must be {self.dim}, got {data.get('dim')!r:.40}")
        self._set_embedding(embedding_from_dict(data))
        latent = internal_field(state, "latent")
        if not isinstance(latent, list) or len(latent) != self.n_told:
            raise StateError(f"state['internal']['latent'] must be a list of {self.n_told} entries (one per "
                             f"evaluation), got {describe(latent)}")
        d = self.low_dim
        self._latent = [None if w is None else state_array(w, f"state['internal']['latent'][{i}]", shape=(d,)).tolist()
                        for i, w in enumerate(latent)]
        self._proposals = []
        if "pending_latent" in state:
            pending = internal_field(state, "pending_latent")
            if not isinstance(pending, list) or len(pending) != self.n_pending:
                raise StateError(f"state['internal']['pending_latent'] must be a list of {self.n_pending} entries "
                                 f"(one per pending point), got {describe(pending)}")
            for i, (u, w) in enumerate(zip(self.pending_canonical, pending)):
                if w is not None:
                    name = f"state['internal']['pending_latent'][{i}]"
                    self._proposals.append((u, state_array(w, name, shape=(d,), low=-1.0, high=1.0)))
        else:  # a state of before batches: the latent point of the last proposal, if not told yet
            w = internal_array(state, "pending", shape=(d,), allow_none=True)
            if w is not None:
                self._proposals.append((self._lift(w), w))
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """GP hyperparameters, the embedding and how the proposals used it.

        Returns
        -------
        dict
            ``hyperparameters`` (see :meth:`GPMethod.diagnostics`), ``embedding`` (the
            embedding's :meth:`~hdbo.structure.embeddings.Embedding.to_dict`, from which
            :func:`~hdbo.structure.embeddings.embedding_from_dict` rebuilds it exactly),
            ``low_dim`` (latent dimension), ``n_latent`` (told points with latent
            coordinates), ``clipped_fraction`` (fraction of the coordinates of those points
            that the embedding clipped) and, after a model-based query, ``acq_nfev``
            (acquisition evaluations of the last one).
        """
        info = super().diagnostics()
        if self.embedding_ is None:
            return info
        W, _ = self._latent_rows()
        Y = self.embedding_.low_box.from_symmetric(W) if W.size else np.empty((0, self.low_dim))
        info.update(embedding=self.embedding_.to_dict(), low_dim=self.low_dim, n_latent=int(W.shape[0]),
                    clipped_fraction=self.embedding_.clipped_fraction(Y))
        if getattr(self, "last_acq_nfev_", None) is not None:
            info["acq_nfev"] = int(self.last_acq_nfev_)
        return info
