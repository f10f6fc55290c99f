"""REMBO: Bayesian optimization in a random embedding (Wang et al., IJCAI 2013; JAIR 2016).

For a function with effective dimension ``d_e <= d``, a random Gaussian matrix
``A in R^(D x d)`` contains an optimizer in its range with probability 1 (Wang et al. 2016,
Thm. 2). REMBO therefore runs BO on ``y in Y = [-sqrt(d), sqrt(d)]^d`` and queries
``x = p_X(A y)``, where ``p_X`` is the projection onto the box; for the box
``X = [-1, 1]^D`` (the symmetric canonical domain, mapped to the user's box) it is the clip.

As implemented:

* ``A`` has iid N(0, 1) entries; ``Y = [-half_width, half_width]^d`` with
  ``half_width = sqrt(d)`` (Wang et al. 2016, §3.2; SPEC P3.B.5). ``d = 5`` by default (the
  MS-UCB paper's setting), at most D.
* The initial design: ``n_init`` points uniform in Y (so they lie on the embedding).
* GP-UCB (default, ``beta_t = 0.2 d log 2t`` with d the embedding dimension) or EI
  (``acquisition="ei"``), maximized over Y with the acquisition-evaluation budget
  ``acq_budget`` (same meaning and default as every GP method).
* Kernel space (Wang et al. 2016, §4): ``kernel_space="low"`` (default) is their ``k_Y``, a
  Matern-5/2 ARD kernel on the latent coordinates (normalized to ``[-1, 1]^d``). Its caveat:
  distinct ``y`` can clip to the same ``x`` (the map is not injective outside the region where
  nothing is clipped), so the GP may treat equal points as different and far-away corners
  of Y are over-explored. ``kernel_space="high"`` is their ``k_X``: an isotropic kernel on
  the clipped points ``x = p_X(A y)`` themselves, which sees through the clipping at the cost
  of a D-dimensional kernel (the GP is still exact; one acquisition evaluation costs O(t D)
  more). The acquisition is then maximized over y with the chain rule through the clip.
  ``k_Y`` is the default because it is REMBO's original (2013) form and the one most
  comparisons use; ``ard`` defaults to True for ``k_Y`` and False for ``k_X`` (one
  length-scale per coordinate of a D-dimensional input would over-fit).
* Points told without being proposed (random fallbacks, user points) enter the ``k_Y`` model
  only if the embedding reproduces them (least-squares latent point, 1e-8); ``k_X`` uses every
  point.
* Batches (:class:`~hdbo.methods.embedding_based.EmbeddingGPMethod`): each proposal is made on
  the GP conditioned on the pending points (observed at the posterior mean for UCB, at the
  smallest observed value for EI), at their latent points (``k_Y``) or at the points
  themselves (``k_X``). With ``k_Y`` a latent point whose clipped image is a pending point is
  conditioned on as well and the acquisition maximized again.

Behaviour to expect (Branin embedded in D = 50, 2 active coordinates at random; mean over 8
problem seeds of log10 simple regret; random search: +0.01 at 30 evaluations, -0.35 at 60,
-0.63 at 100): with the ``sqrt(d)`` box about 2/3 of each coordinate's range of ``A y`` is
clipped, so most of Y maps onto faces of the cube and the interior optima of Branin occupy a
thin slab of Y. With d = 4 > d_e REMBO stalls on a face minimum (regret 1.6 at x_1 = 10) on
most seeds and does not beat random search even at 100 evaluations (``k_Y`` +0.27 at 30,
-0.26 at 100; ``k_X`` +0.13, -0.22); ``k_Y`` also re-proposes the same corner of the cube
from distinct y (its length-scales collapse to the lower bound). With d = d_e = 2 and
``k_X`` it beats random search (-1.0 at 40, -1.8 at 60 evaluations; 4 of 8 seeds find the
optimum, 3 stall on a face, in 1 the 2 x 2 block of A is nearly singular). With d = 2 and
``k_Y`` it is weaker (-0.74 at 60; median +0.02), so ``kernel_space="high"`` is the better
choice when d is close to the effective dimension. This is the
clipping distortion Nayebi et al. (2019) and Letham et al. (2020) describe, not a defect of
the implementation (GP-UCB with the same settings on 2-D Branin reaches 1e-4). See
``tests/methods/test_embedding_regret.py`` and ``test_rembo_regret.py``.

References
----------
Letham, Calandra, Rai, Bakshy. Re-examining linear embeddings for high-dimensional Bayesian
optimization. NeurIPS 2020.
Nayebi, Munteanu, Poloczek. A framework for Bayesian optimization in embedded subspaces.
ICML 2019.
Wang, Zoghi, Hutter, Matheson, de Freitas. Bayesian optimization in high dimensions via
random embeddings. IJCAI 2013.
Wang, Hutter, Zoghi, Matheson, de Freitas. Bayesian optimization in a billion dimensions via
random embeddings. JAIR 55, 2016.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice
from ..space import Box
from ..structure.embeddings import GaussianEmbedding
from .embedding_based import EmbeddingGPMethod, default_low_dim
from .registry import register

__all__ = ["REMBO"]

Array = NDArray[np.float64]


@register
class REMBO(EmbeddingGPMethod):
    """Random EMbedding Bayesian Optimization; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    d : int, optional
        Embedding dimension, ``1 <= d <= D``; default ``min(5, D)``.
    half_width : float, optional
        Half width of the latent box Y; default ``sqrt(d)``.
    kernel_space : {"low", "high"}, default "low"
        GP on the latent y (``k_Y``) or on the clipped high-dimensional points (``k_X``).
    ard : bool, optional
        One length-scale per GP input; default True for ``"low"``, False for ``"high"``.
    **kwargs
        :class:`~hdbo.methods.embedding_based.EmbeddingGPMethod` options (``acquisition``,
        ``beta``, ``beta_params``, ``xi``) and :class:`~hdbo.methods.gp_based.GPMethod` options
        (``n_init``, ``acq_budget``, ``maximizer``, ``kernel``, ...).

    Attributes
    ----------
    embedding_ : GaussianEmbedding
        The embedding (``embedding_.A`` is the matrix).

    Raises
    ------
    TypeError, ValueError
        If an option is invalid, e.g. ``d > D`` or an unknown ``kernel_space``.

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("rembo", [(0, 1)] * 20, seed=0, d=3, n_init=2, acq_budget=60)
    >>> m.embedding_.A.shape
    (20, 3)
    >>> x = m.ask(); bool((x >= 0).all() and (x <= 1).all())
    True
    """

    name = "rembo"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        d: int | None = None,
        half_width: float | None = None,
        kernel_space: str = "low",
        ard: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self.kernel_space = check_choice(kernel_space, "kernel_space", ("low", "high"))
        super().__init__(bounds, ard=(kernel_space == "low") if ard is None else ard, **kwargs)
        self.d = default_low_dim(d, self.dim)
        self.half_width = half_width
        self._set_embedding(GaussianEmbedding(self.dim, self.d, seed=self._new_seed(), half_width=half_width))

    # ------------------------------------------------------------------ k_X
    def _gp_data(self) -> tuple[Array, Array]:
        if self.kernel_space == "low":
            return super()._gp_data()
        return self.X_obs, self.y_obs

    def _gp_input_dim(self) -> int:
        return self.low_dim if self.kernel_space == "low" else self.dim

    def _gp_inputs_of_latent(self, W: Array) -> Array:
        return W if self.kernel_space == "low" else self._lift(W)

    def _pending_gp_inputs(self) -> Array | None:
        if self.kernel_space == "low":
            return super()._pending_gp_inputs()
        return self.pending_canonical  # k_X: the points themselves, as the told ones

    def _latent_acquisition(self, acq: Any) -> tuple[Callable[[Array], Array], Callable[[Array], tuple[Array, Array]]]:
        if self.kernel_space == "low":
            return super()._latent_acquisition(acq)
        emb = self.embedding_
        assert emb is not None
        scale = emb.low_box.width / 2.0  # dY/dW of the normalization

        def fun(W: Array) -> Array:
            return acq(self._lift(W))

        def fun_and_grad(W: Array) -> tuple[Array, Array]:
            Y = emb.low_box.from_symmetric(W)
            v, g = acq.value_and_grad(emb.lift(Y))
            return v, emb.pullback(Y, g) * scale

        return fun, fun_and_grad

    def diagnostics(self) -> dict[str, Any]:
        """See :meth:`EmbeddingGPMethod.diagnostics`, plus ``kernel_space``.

        Returns
        -------
        dict
        """
        info = super().diagnostics()
        info["kernel_space"] = self.kernel_space
        return info
