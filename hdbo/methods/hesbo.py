"""HeSBO: hashing-enhanced subspace Bayesian optimization (Nayebi, Munteanu, Poloczek, ICML 2019).

The embedding is a count sketch: every coordinate ``i`` of ``x in [-1, 1]^D`` gets a bucket
``h(i) in {1..d}`` and a sign ``s_i in {-1, +1}``, and ``x_i = s_i y_{h(i)}`` for
``y in [-1, 1]^d``. Every latent point maps into the box, so nothing is clipped and the map
is injective on Y (unlike REMBO's clip); BO runs on y.

As implemented:

* ``d = 5`` by default (the MS-UCB paper's setting), at most D. Buckets ``h(i)`` and signs
  ``s_i`` are drawn independently and uniformly from the method's seed, as in Nayebi et al.
  (2019) and SPEC P3.B.6 (``surjective=False``, the default). A bucket may then stay empty and
  waste a latent coordinate (probability about ``d (1 - 1/d)^D``, negligible for ``D >> d``);
  ``surjective=True`` (an option of ours) first gives every bucket one random coordinate.
* The initial design: ``n_init`` points uniform in ``[-1, 1]^d``.
* GP on y (Matern-5/2 ARD, the GP core's ML-II fitting), GP-UCB with
  ``beta_t = 0.2 d log 2t`` (default) or EI (``acquisition="ei"``; Nayebi et al. used EI),
  maximized over ``[-1, 1]^d`` within ``acq_budget`` acquisition evaluations.
* Points told without being proposed enter the model at their least-squares latent point
  (per bucket, the mean of ``s_i x_i``) if the sketch reproduces them, otherwise they are
  kept out of the GP.
* Batches (:class:`~hdbo.methods.embedding_based.EmbeddingGPMethod`): each proposal is made on
  the GP conditioned on the pending points at their latent points (observed at the posterior
  mean for UCB, at the smallest observed value for EI).

With the problem's ``structure["active_dims"]`` known (embedded benchmarks), ``diagnostics()``
reports ``active_collisions``: the number of active coordinates that share a bucket with
another one. HeSBO can reach every optimum of the active coordinates only when it is 0.

References
----------
Nayebi, Munteanu, Poloczek. A framework for Bayesian optimization in embedded subspaces.
ICML 2019.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._validation import check_bool
from ..space import Box
from ..structure.embeddings import HashingEmbedding
from .embedding_based import EmbeddingGPMethod, default_low_dim
from .registry import register

__all__ = ["HeSBO"]


@register
class HeSBO(EmbeddingGPMethod):
    """Hashing-enhanced subspace BO; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    d : int, optional
        Number of buckets (latent dimension), ``1 <= d <= D``; default ``min(5, D)``.
    surjective : bool, default False
        Make every bucket receive at least one coordinate (default: the paper's plain
        uniform hash).
    **kwargs
        :class:`~hdbo.methods.embedding_based.EmbeddingGPMethod` options (``acquisition``,
        ``beta``, ``beta_params``, ``xi``) and :class:`~hdbo.methods.gp_based.GPMethod` options.

    Attributes
    ----------
    embedding_ : HashingEmbedding
        ``embedding_.buckets`` and ``embedding_.signs`` define the sketch.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (e.g. ``d > D``).

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("hesbo", [(-5, 5)] * 30, seed=0, d=4, n_init=2, acq_budget=60)
    >>> m.embedding_.buckets.shape, sorted(set(m.embedding_.signs.tolist()))
    ((30,), [-1.0, 1.0])
    """

    name = "hesbo"

    def __init__(self, bounds: Box | ArrayLike, *, d: int | None = None, surjective: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.d = default_low_dim(d, self.dim)
        self.surjective = check_bool(surjective, "surjective")
        self._set_embedding(HashingEmbedding(self.dim, self.d, seed=self._new_seed(), surjective=self.surjective))

    def diagnostics(self) -> dict[str, Any]:
        """See :meth:`EmbeddingGPMethod.diagnostics`, plus the sketch and, if known, ``active_collisions``.

        Returns
        -------
        dict
            Also ``buckets`` and ``signs`` (lists of length D) and, with
            ``structure["active_dims"]``, ``active_collisions`` (int) and
            ``active_separated`` (bool, no collision).
        """
        info = super().diagnostics()
        emb = self.embedding_
        assert isinstance(emb, HashingEmbedding)
        info.update(buckets=emb.buckets.tolist(), signs=[int(s) for s in emb.signs])
        active = self.structure.get("active_dims")
        if active:
            info["active_collisions"] = emb.collisions(active)
            info["active_separated"] = info["active_collisions"] == 0
        return info
