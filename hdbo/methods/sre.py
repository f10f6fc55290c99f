"""SRE: sequential random embeddings (Qian, Hu, Yu, IJCAI 2016), each stage solved by GP-UCB.

Qian et al. optimize functions with a low *epsilon-effective* dimension (every coordinate may
matter, most only a little) by m stages of random embeddings. Stage i draws a Gaussian matrix
``A_i in R^(D x d)`` and optimizes

    g_i(alpha, y) = f(clip(alpha x_{i-1} + A_i y)),   (alpha, y) in [-1, 1]^(1 + d),

so the stage searches around the previous solution ``x_{i-1}`` (``alpha = 1, y = 0`` is
``x_{i-1}`` itself; ``alpha`` can also shrink it); ``x_i = clip(alpha* x_{i-1} + A_i y*)``.
The MS-UCB paper (Tran-The et al. 2020) runs SRE with m = 5 and a GP-UCB optimizer per
stage (SPEC P3.B.4). As implemented (SPEC P3.B.4 where the papers are silent):

* ``mode="scaled"`` (default) is the form above; ``mode="offset"`` searches
  ``x = clip(x_{i-1} + A_i y)``, ``y in [-half_width, half_width]^d``, without the scale.
  ``d = 5`` by default, at most D.
* **Scale of the embedding.** Qian et al.'s released code draws ``A_i`` with iid
  ``N(0, 1/d)`` entries and searches ``y in [-1, 1]^d`` (their SRE demo sets the variance to
  ``1/d``; ZOOpt, by the same group, defaults ``variance_A`` to ``1/d``). Here ``A_i`` has
  iid N(0, 1) entries and ``y in [-half_width, half_width]^d`` with default
  ``half_width = 1/sqrt(d)``, the same set of points (``A y / sqrt(d)`` with
  ``y in [-1, 1]^d``). SPEC P3.B.4 [PROPOSED] wrote N(0, 1) with ``y in [-1, 1]^d``
  (``half_width=1``), which is sqrt(d) times wider: at d = 5 every coordinate of ``A y``
  has standard deviation 1.29 for y uniform, so 44% of the coordinates of stage 1's points
  were clipped onto a face of the box, against 8% with the authors' scale (the paper's
  code wins over SPEC's proposal).
* **No repeated evaluations.** The anchor's value is known (it enters the stage's GP at
  ``(1, 0, ..., 0)``), yet a GP fitted on a stage's few points can put its UCB maximum on an
  observed point (marginal likelihood then often explains the data as noise, so the
  posterior mean at the best point wins). A proposal that repeats a told point (canonical
  max-norm <= 1e-9) is replaced by a uniform point of the stage's latent box, which the
  objective has not seen; :meth:`SRE.diagnostics` counts these (``n_repeats_avoided``).
  Before this guard (with ``half_width=1``), on Branin hidden in D = 50 with the MS-UCB
  spec's options, 5 of 10 runs of budget 60 repeated 1 or 2 evaluations (the best initial
  point, the anchor) and 3 runs of budget 300 repeated 6, 22 and 1.
* **Batches.** As in :class:`~hdbo.methods.embedding_based.EmbeddingGPMethod`: a proposal is
  made on the stage's GP conditioned on the pending points at their latent points (the ones
  proposed in the current stage; a point proposed in an earlier stage has no latent point in
  this stage's embedding, is not conditioned on and, once told, stays out of the stage's GP
  unless the new embedding reproduces it). A proposal that repeats a pending point is handled
  by the embedding base class, one that repeats a told point by the guard above. The stage of
  a proposal is that of the next evaluation to be told (``n_told``), so a batch asked at the
  end of a stage belongs to it even if it runs past the stage's planned length.
* ``x_0 = 0`` (the centre of the box), so stage 1 searches ``clip(A_1 y)``. The anchor of a
  later stage is the **best point observed so far** (not necessarily the best point of the
  previous stage, which can be worse); its known value enters the stage's GP at its latent
  point ``(1, 0, ..., 0)`` without being evaluated again.
* **Budget split.** With ``budget`` known, the ``budget - n_init`` evaluations after the
  initial design are split into m stages as evenly as possible (the first
  ``(budget - n_init) mod m`` stages get one more); stage 1 also holds the ``n_init`` initial
  points, which are drawn uniformly in its latent box. ``stage_length`` fixes the length of
  every stage instead (also the fallback without a budget: 30). Asked beyond the plan, SRE
  goes on with further stages of ``ceil((budget - n_init) / m)`` evaluations.
  :attr:`SRE.stage_lengths` lists the plan.
* Each stage is a fresh GP-UCB run on its own latent box (normalized to ``[-1, 1]^k``): the
  GP holds the anchor and the stage's own observations; a later stage starts with
  ``stage_init`` uniform latent points (default ``max(1, n_init // m)``), then GP-UCB with
  ``beta_t = 0.2 k log 2t`` (k the latent dimension, t counted within the stage), maximized
  within ``acq_budget`` acquisition evaluations.

Behaviour to expect. Branin hidden in D = 50 with the MS-UCB spec's options
(``experiments/tranthe2020/fig1_d50.toml``, acquisition budget 500; d = 5, m = 5; problem and
method seeds 0-2; median best Branin value, F* = 0.398; ``benchmarks/tt20_baselines_check.py``):
random search 1.37 / 0.49 / 0.43 at 60 / 150 / 300 evaluations; SRE 1.96 / 0.56 / 0.49, where
the scale SPEC proposed (``half_width=1``) without the repeat guard gave 2.02 / 1.56 / 1.37 and
repeated 2, 4 and 29 evaluations of the 3 runs at 60, 150 and 300. At 60 evaluations the
four later stages have 8 evaluations each, 4 of them random, so SRE trails random search
there (seeds 0-9: median 1.29 against 0.93). Every stage is a clipped Gaussian embedding, so
SRE shares REMBO's clipping distortion. Measured with ``half_width=1`` (mean over 8 problem
seeds of log10 simple regret; random search -0.35 at 60 and -0.63 at 100 evaluations): d = 4,
m = 5 (budget 100, stages of 26 + 4 x 18) -0.38 at 100 (``mode="offset"``,
``half_width=0.5``: -0.85); d = d_e = 2, m = 2 (budget 60) -1.24 at 60. Qian et al. target
functions where every coordinate matters a little (low epsilon-effective dimension), where
re-embedding around the best point pays off.

References
----------
Qian, Hu, Yu. Derivative-free optimization of high-dimensional non-convex functions by
sequential random embeddings. IJCAI 2016.
Tran-The, Gupta, Rana, Venkatesh. Trading convergence rate with computational budget in high
dimensional Bayesian optimization. AAAI 2020 (SPEC P3.B.4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_choice, check_int, check_real
from ..space import Box
from ..structure.embeddings import AnchoredEmbedding
from ..exceptions import StateError
from ._state import internal_int
from .embedding_based import EmbeddingGPMethod, default_low_dim
from .gp_based import GPMethod
from .registry import register

__all__ = ["SRE"]

Array = NDArray[np.float64]

_DEFAULT_STAGE_LENGTH = 30
_REPEAT_TOL = 1e-9  # a proposal within this canonical max-norm distance of a told point repeats it


@register
class SRE(EmbeddingGPMethod):
    """Sequential random embeddings with GP-UCB per stage; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    d : int, optional
        Random directions per stage, ``1 <= d <= D``; default ``min(5, D)``.
    m : int, default 5
        Number of planned stages (embeddings).
    mode : {"scaled", "offset"}, default "scaled"
        ``clip(alpha x_prev + A y)`` (Qian et al.) or ``clip(x_prev + A y)``.
    half_width : float, optional
        Half width of the box of y; default ``1/sqrt(d)`` (Qian et al.'s code: ``A`` with
        N(0, 1/d) entries and ``y in [-1, 1]^d``; see the module docstring).
    stage_init : int, optional
        Uniform latent points at the start of every stage after the first; default
        ``max(1, n_init // m)``.
    stage_length : int, optional
        Evaluations per stage (stage 1: plus ``n_init``); default from ``budget`` (see the
        module docstring), or 30 without a budget.
    **kwargs
        :class:`~hdbo.methods.embedding_based.EmbeddingGPMethod` options (``acquisition``,
        ``beta``, ...) and :class:`~hdbo.methods.gp_based.GPMethod` options (``n_init``,
        ``acq_budget``, ``budget``, ...).

    Attributes
    ----------
    embedding_ : AnchoredEmbedding
        The current stage's embedding (its ``anchor`` is the stage's starting point).
    stage_ : int
        Index (0-based) of the current stage; -1 before the first ask.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (e.g. ``d > D``, ``m < 1``).

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("sre", [(0, 1)] * 20, seed=0, budget=60, n_init=10, m=5)
    >>> m.stage_lengths
    [20, 10, 10, 10, 10]
    """

    name = "sre"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        d: int | None = None,
        m: int = 5,
        mode: str = "scaled",
        half_width: float | None = None,
        stage_init: int | None = None,
        stage_length: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.d = default_low_dim(d, self.dim)
        self.m = check_int(m, "m", low=1, high=10_000)  # stages; the paper uses m = 5
        self.mode = check_choice(mode, "mode", ("scaled", "offset"))
        # Qian et al.'s code: A with N(0, 1/d) entries on y in [-1, 1]^d, i.e. N(0, 1) entries on
        # [-1/sqrt(d), 1/sqrt(d)]^d. SPEC P3.B.4 [PROPOSED] has N(0, 1) on [-1, 1]^d; the paper's
        # code wins (module docstring).
        hw = 1.0 / math.sqrt(self.d) if half_width is None else half_width
        self.half_width = check_real(hw, "half_width", low=0, low_inclusive=False)
        self._n_repeats_avoided = 0
        self.stage_init = check_int(stage_init, "stage_init", low=1, allow_none=True, high=MAX_COUNT)
        self.stage_length = check_int(stage_length, "stage_length", low=1, allow_none=True, high=MAX_COUNT)
        self.stage_ = -1
        self._anchor_index: int | None = None
        # stage 1's embedding around x_0 = 0; its seed comes first from the generator
        self._set_embedding(self._stage_embedding(np.zeros(self.dim)))

    # ------------------------------------------------------------------ plan
    @property
    def n_stage_init(self) -> int:
        """Uniform latent points that open every stage after the first."""
        return self.stage_init if self.stage_init is not None else max(1, self.n_init // self.m)

    def _length(self, k: int) -> int:
        """Planned evaluations of stage k (0-based), not counting stage 1's initial design."""
        if self.stage_length is not None:
            return self.stage_length
        if self.budget is None:
            return _DEFAULT_STAGE_LENGTH
        rest = max(self.budget - self.n_init, 0)
        if k < self.m:
            return rest // self.m + (1 if k < rest % self.m else 0)
        return max(1, math.ceil(rest / self.m))

    @property
    def stage_lengths(self) -> list[int]:
        """Planned evaluations of the m stages (the first includes the ``n_init`` initial points)."""
        return [self._length(k) + (self.n_init if k == 0 else 0) for k in range(self.m)]

    def _stage_start(self, k: int) -> int:
        """Told-point index at which stage k starts."""
        return sum(self._length(j) for j in range(k)) + (self.n_init if k > 0 else 0)

    def stage_of(self, n: int) -> int:
        """The stage (0-based) that evaluation number n (0-based) belongs to.

        Parameters
        ----------
        n : int
            Index of an evaluation, ``n >= 0``.

        Returns
        -------
        int
            Stages with a planned length of 0 (budget smaller than m) are skipped.
        """
        k, end = 0, self.n_init + self._length(0)
        while n >= end:
            k += 1
            end += self._length(k)
        return k

    # ------------------------------------------------------------------ stages
    def _stage_embedding(self, anchor: Array) -> AnchoredEmbedding:
        return AnchoredEmbedding(self.dim, self.d, seed=self._new_seed(), anchor=anchor, mode=self.mode,
                                 half_width=self.half_width)

    def _start_stage(self, k: int) -> None:
        """Open stage k: anchor at the best point so far, a new matrix, a fresh GP."""
        if k > 0:
            y = self.y_all
            ok = np.flatnonzero(np.isfinite(y))
            if ok.size:
                i = int(ok[np.argmax(y[ok])])
                self._anchor_index = i
                anchor = np.clip(self.to_canonical(self.X_all[i]), -1.0, 1.0)
            else:
                self._anchor_index, anchor = None, np.zeros(self.dim)
            self._set_embedding(self._stage_embedding(anchor))
            self._proposals = []  # latent points of the old embedding
            # points told in this stage before it was opened are re-expressed in the new embedding
            start = self._stage_start(k)
            for i in range(start, self.n_told):
                w = self._latent_of(self.to_canonical(self.X_all[i]))
                self._latent[i] = None if w is None else [float(v) for v in w]
        self.stage_ = k
        self.gp_ = None
        self._n_at_refit = 0

    def _stage_rows(self) -> tuple[Array, Array]:
        """The current stage's own successful points with latent coordinates."""
        start = self._stage_start(max(self.stage_, 0))
        rows = [(w, v) for w, v in zip(self._latent[start:], self._y[start:]) if w is not None and np.isfinite(v)]
        if not rows:
            return np.empty((0, self.low_dim)), np.empty(0)
        return np.array([r[0] for r in rows], dtype=float), np.array([r[1] for r in rows], dtype=float)

    def _latent_rows(self) -> tuple[Array, Array]:
        """The anchor (if it has a value) followed by the stage's own points."""
        W, y = self._stage_rows()
        if self._anchor_index is not None and self.stage_ > 0:
            emb = self.embedding_
            assert isinstance(emb, AnchoredEmbedding)
            w0 = emb.low_box.to_symmetric(emb.origin)
            W = np.vstack([w0[None, :], W])
            y = np.concatenate([[self._y[self._anchor_index]], y])
        return W, y

    @property
    def iteration(self) -> int:
        """Index t >= 1 of the upcoming model-based query within the current stage.

        Pending points count, as in :attr:`GPMethod.iteration <hdbo.methods.gp_based.GPMethod.iteration>`.
        """
        start = self._stage_start(max(self.stage_, 0))
        n_random = self.n_init if self.stage_ <= 0 else self.n_stage_init
        return max(1, self.n_told + self.n_pending - start - n_random + 1)

    def _ask(self) -> Array:
        k = self.stage_of(self.n_told)
        if k != self.stage_:
            self._start_stage(k)
        self._prune_proposals()
        need = self.n_init if self.stage_ == 0 else self.n_stage_init
        if self._stage_rows()[1].size < need:
            return self._propose(self.latent_box.sample(1, self.rng)[0])
        return GPMethod._ask(self)

    def _acquire(self, gp: Any) -> Array:
        """The acquisition's proposal, or a uniform latent point of the stage if it repeats a told point."""
        w = self._acquire_latent(gp)
        u = self._lift(w)
        if self.n_told and np.min(np.max(np.abs(self.to_canonical(self.X_all) - u), axis=1)) <= _REPEAT_TOL:
            # the objective is deterministic: a repeat (often the anchor, latent (1, 0, ..., 0))
            # teaches nothing; explore the stage's latent box instead
            self._n_repeats_avoided += 1
            w = self.latent_box.sample(1, self.rng)[0]
        return self._propose(w)

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(stage=self.stage_, anchor_index=self._anchor_index, n_repeats_avoided=self._n_repeats_avoided)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self.stage_ = internal_int(state, "stage", low=-1, high=self.stage_of(self.n_told))
        self._anchor_index = internal_int(state, "anchor_index", low=0, high=self.n_told - 1, allow_none=True)
        # states written before the repeat guard have no counter
        self._n_repeats_avoided = (internal_int(state, "n_repeats_avoided", low=0)
                                   if "n_repeats_avoided" in state else 0)
        if self._anchor_index is not None and not np.isfinite(self._y[self._anchor_index]):
            raise StateError(f"state['internal']['anchor_index'] must name a successful evaluation, got "
                             f"{self._anchor_index} (a failed one)")
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """See :meth:`EmbeddingGPMethod.diagnostics`, plus the stages.

        Returns
        -------
        dict
            Also ``stage`` (1-based current stage, 0 before the first ask), ``m``,
            ``stage_lengths`` (the plan), ``stage_best`` (best successful value told in each
            stage so far, None for a stage without one), ``mode`` and ``n_repeats_avoided``
            (GP-UCB proposals that repeated a told point and were replaced by a uniform latent
            point).
        """
        info = super().diagnostics()
        y = self.y_all
        best: list[float | None] = []
        for k in range(self.stage_of(self.n_told - 1) + 1 if self.n_told else 0):
            seg = y[self._stage_start(k): self._stage_start(k + 1)]
            seg = seg[np.isfinite(seg)]
            best.append(float(seg.max()) if seg.size else None)
        info.update(stage=self.stage_ + 1, m=self.m, stage_lengths=self.stage_lengths, stage_best=best, mode=self.mode,
                    n_repeats_avoided=self._n_repeats_avoided)
        return info
