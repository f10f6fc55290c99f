"""Random low-dimensional embeddings of the symmetric cube ``[-1, 1]^D``.

An embedding maps latent coordinates ``y`` of a small box ``Y`` (dimension ``d``) to points
``x = p(y)`` of the canonical domain ``X = [-1, 1]^D``. Methods such as REMBO, HeSBO and SRE
run Bayesian optimization on ``y`` and query ``p(y)``.

* :class:`GaussianEmbedding` (REMBO, Wang et al. 2013/2016): ``x = clip(A y)``, ``A`` of
  shape (D, d) with iid N(0, 1) entries, ``y in [-sqrt(d), sqrt(d)]^d``; coordinates of
  ``A y`` outside ``[-1, 1]`` are clipped (the convex projection onto X for a box).
* :class:`HashingEmbedding` (HeSBO, Nayebi et al. 2019): a count sketch; coordinate ``i``
  gets a bucket ``h(i)`` and a sign ``s_i``, and ``x_i = s_i y_{h(i)}`` for
  ``y in [-1, 1]^d``, which lies in X without clipping.
* :class:`AnchoredEmbedding` (SRE, Qian et al. 2016): one stage of sequential random
  embeddings around an anchor ``x0``, ``x = clip(alpha x0 + A y)`` with latent
  ``(alpha, y) in [-1, 1]^(1 + d)`` (``mode="scaled"``, the paper's form), or
  ``x = clip(x0 + A y)`` with latent ``y`` (``mode="offset"``).

Every embedding is generated from an integer ``seed`` and serializes to a small JSON dict
(:meth:`Embedding.to_dict`) from which :func:`embedding_from_dict` rebuilds it exactly, so a
method's state need not store the matrix. ``matrix`` gives the dense (D, d) matrix.

References
----------
Wang, Hutter, Zoghi, Matheson, de Freitas. Bayesian optimization in a billion dimensions via
random embeddings. IJCAI 2013; JAIR 55, 2016.
Nayebi, Munteanu, Poloczek. A framework for Bayesian optimization in embedded subspaces.
ICML 2019.
Qian, Hu, Yu. Derivative-free optimization of high-dimensional non-convex functions by
sequential random embeddings. IJCAI 2016.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_int, check_real
from ..space import Box

__all__ = [
    "Embedding",
    "GaussianEmbedding",
    "HashingEmbedding",
    "AnchoredEmbedding",
    "embedding_from_dict",
    "EMBEDDINGS",
]

Array = NDArray[np.float64]


def _check_seed(seed: Any) -> int:
    seed = check_int(seed, "seed", low=0)
    return int(seed)


def _rows(Y: ArrayLike, d: int, name: str) -> tuple[Array, bool]:
    """``Y`` as float rows of width d, and whether the input was a single vector."""
    arr = np.asarray(Y, dtype=float)
    single = arr.ndim == 1
    arr = arr[None, :] if single else arr
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"{name} must have shape (n, {d}) or ({d},), got shape {np.shape(Y)}")
    return arr, single


class Embedding(ABC):
    """Base class: a map ``p`` from a latent box ``Y`` (dimension d) into ``[-1, 1]^D``.

    Attributes
    ----------
    kind : str
        Registry name used by :meth:`to_dict` / :func:`embedding_from_dict` (class attribute).
    dim : int
        Ambient dimension D.
    low_dim : int
        Latent dimension (the number of columns of :attr:`low_box`).
    seed : int
        The seed every random choice of the embedding came from.
    """

    kind: ClassVar[str] = ""

    def __init__(self, dim: int, low_dim: int, *, seed: int) -> None:
        self.dim = check_int(dim, "dim", low=1)
        self.low_dim = check_int(low_dim, "low_dim", low=1)
        self.seed = _check_seed(seed)

    # ------------------------------------------------------------------ interface
    @property
    @abstractmethod
    def low_box(self) -> Box:
        """The latent box Y, dimension :attr:`low_dim`."""

    @abstractmethod
    def _affine(self, Y: Array) -> Array:
        """The unclipped image of latent rows Y (n, low_dim), shape (n, D)."""

    @abstractmethod
    def _linear_part(self) -> Array:
        """The matrix M (D, low_dim) with ``_affine(Y) = Y M^T + c``."""

    def _offset(self) -> Array:
        """The constant c of ``_affine`` (default 0), shape (D,)."""
        return np.zeros(self.dim)

    @property
    def matrix(self) -> Array:
        """The dense matrix M of shape (D, low_dim) with ``lift(y) = clip(M y + c)``."""
        return self._linear_part().copy()

    def lift(self, Y: ArrayLike) -> Array:
        """Map latent points into ``[-1, 1]^D`` (clipping what falls outside).

        Parameters
        ----------
        Y : array_like of shape (n, low_dim) or (low_dim,)
            Latent points (normally inside :attr:`low_box`; not checked).

        Returns
        -------
        ndarray of shape (n, D) or (D,)
            Points of the canonical cube.

        Raises
        ------
        ValueError
            If Y has the wrong number of columns.
        """
        arr, single = _rows(Y, self.low_dim, "Y")
        X = np.clip(self._affine(arr), -1.0, 1.0)
        return X[0] if single else X

    def pullback(self, Y: ArrayLike, G: ArrayLike) -> Array:
        """Gradient with respect to Y of ``phi(lift(Y))`` given ``G = grad phi`` at ``lift(Y)``.

        The vector-Jacobian product ``(G * mask) M`` where ``mask`` is 0 on clipped
        coordinates (the clip is flat there; at the kink itself the one-sided derivative
        from inside is used).

        Parameters
        ----------
        Y : array_like of shape (n, low_dim)
            Latent points.
        G : array_like of shape (n, D)
            Gradients of a function of x at ``lift(Y)``.

        Returns
        -------
        ndarray of shape (n, low_dim)
        """
        arr, _ = _rows(Y, self.low_dim, "Y")
        G = np.asarray(G, dtype=float).reshape(arr.shape[0], self.dim)
        inside = np.abs(self._affine(arr)) <= 1.0
        return (G * inside) @ self._linear_part()

    def clipped_fraction(self, Y: ArrayLike) -> float:
        """Fraction of the coordinates of ``M y + c`` that :meth:`lift` clips, over the rows of Y.

        Parameters
        ----------
        Y : array_like of shape (n, low_dim) or (low_dim,)

        Returns
        -------
        float
            In [0, 1]; 0 for an empty Y.
        """
        arr, _ = _rows(Y, self.low_dim, "Y")
        if arr.shape[0] == 0:
            return 0.0
        return float(np.mean(np.abs(self._affine(arr)) > 1.0))

    def project(self, X: ArrayLike) -> Array:
        """Least-squares latent coordinates of points, clipped into :attr:`low_box`.

        ``argmin_y ||M y + c - x||_2`` (minimum-norm solution), then clipped into the box.
        ``lift(project(x)) == x`` holds when x lies on the embedded subspace without
        clipping; callers check that themselves (see :meth:`represents`).

        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)
            Points of the canonical cube.

        Returns
        -------
        ndarray of shape (n, low_dim) or (low_dim,)
        """
        arr, single = _rows(X, self.dim, "X")
        M = self._linear_part()
        Y = np.linalg.lstsq(M, (arr - self._offset()).T, rcond=None)[0].T
        Y = self.low_box.clip(Y)
        return Y[0] if single else Y

    def represents(self, X: ArrayLike, *, atol: float = 1e-8) -> tuple[Array, NDArray[np.bool_]]:
        """Latent coordinates of points and whether the embedding reproduces them.

        Parameters
        ----------
        X : array_like of shape (n, D)
            Points of the canonical cube.
        atol : float, default 1e-8
            Tolerance (max-norm) on ``lift(project(x)) - x``.

        Returns
        -------
        Y : ndarray of shape (n, low_dim)
            :meth:`project` of X.
        ok : ndarray of bool of shape (n,)
            True where ``lift(Y)`` equals X within ``atol``.
        """
        arr, _ = _rows(X, self.dim, "X")
        Y = self.project(arr)
        Y = Y.reshape(arr.shape[0], self.low_dim)
        ok = np.max(np.abs(self.lift(Y) - arr), axis=1, initial=0.0) <= atol
        return Y, ok

    # ------------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """A small JSON-serializable description from which :func:`embedding_from_dict` rebuilds it.

        Returns
        -------
        dict
            ``kind``, ``dim``, ``low_dim``, ``seed`` and the subclass's own parameters.
        """
        return {"kind": self.kind, "dim": self.dim, "low_dim": self.low_dim, "seed": self.seed, **self._params()}

    def _params(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, low_dim={self.low_dim}, seed={self.seed})"


class GaussianEmbedding(Embedding):
    """REMBO's embedding ``x = clip(A y)`` with ``A_ij ~ N(0, 1)``.

    Parameters
    ----------
    dim : int
        Ambient dimension D.
    low_dim : int
        Embedding dimension d (Wang et al. require ``d >= d_e``, the effective dimension).
    seed : int
        Non-negative seed of ``A`` (``numpy.random.default_rng(seed).standard_normal((D, d))``).
    half_width : float, optional
        ``Y = [-half_width, half_width]^d``; default ``sqrt(d)`` (Wang et al. 2016, §3.2:
        the optimum of a function with effective dimension d lies in this box with
        probability at least ``1 - eps`` for moderate ``eps``).

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or is out of range.

    Examples
    --------
    >>> emb = GaussianEmbedding(50, 4, seed=0)
    >>> emb.low_box.upper
    array([2., 2., 2., 2.])
    >>> bool(abs(emb.lift([2.0, -2.0, 1.0, 0.5])).max() <= 1.0)
    True
    """

    kind = "gaussian"

    def __init__(self, dim: int, low_dim: int, *, seed: int, half_width: float | None = None) -> None:
        super().__init__(dim, low_dim, seed=seed)
        hw = math.sqrt(self.low_dim) if half_width is None else half_width
        self.half_width = check_real(hw, "half_width", low=0, low_inclusive=False)
        self.A = np.random.default_rng(self.seed).standard_normal((self.dim, self.low_dim))
        self._box = Box(np.full(self.low_dim, -self.half_width), np.full(self.low_dim, self.half_width))

    @property
    def low_box(self) -> Box:
        """``[-half_width, half_width]^d``."""
        return self._box

    def _affine(self, Y: Array) -> Array:
        return Y @ self.A.T

    def _linear_part(self) -> Array:
        return self.A

    def _params(self) -> dict[str, Any]:
        return {"half_width": self.half_width}


class HashingEmbedding(Embedding):
    """HeSBO's count-sketch embedding ``x_i = s_i y_{h(i)}`` on ``Y = [-1, 1]^d``.

    Parameters
    ----------
    dim : int
        Ambient dimension D.
    low_dim : int
        Number of buckets d.
    seed : int
        Non-negative seed of the buckets and signs.
    surjective : bool, default False
        False (default) draws every ``h(i)`` uniformly and independently, as in Nayebi et
        al. (2019), so a bucket may stay empty. True (with ``D >= d``) makes every bucket
        receive at least one coordinate (d distinct coordinates, chosen at random, are
        assigned to the d buckets first; the others hash uniformly), so no latent
        coordinate is wasted. The difference vanishes for ``D >> d``.

    Attributes
    ----------
    buckets : ndarray of int of shape (D,)
        ``h(i)`` in ``{0, ..., d - 1}``.
    signs : ndarray of float of shape (D,)
        ``s_i`` in ``{-1, +1}``.

    Examples
    --------
    >>> emb = HashingEmbedding(6, 2, seed=1)
    >>> x = emb.lift([0.5, -1.0])
    >>> bool(np.all(np.abs(x) == np.where(emb.buckets == 0, 0.5, 1.0)))
    True
    """

    kind = "hashing"

    def __init__(self, dim: int, low_dim: int, *, seed: int, surjective: bool = False) -> None:
        super().__init__(dim, low_dim, seed=seed)
        self.surjective = bool(surjective)
        rng = np.random.default_rng(self.seed)
        buckets = rng.integers(0, self.low_dim, size=self.dim)
        if self.surjective and self.dim >= self.low_dim:
            first = rng.choice(self.dim, size=self.low_dim, replace=False)
            buckets[first] = np.arange(self.low_dim)
        self.buckets = buckets.astype(np.intp)
        self.signs = rng.choice(np.array([-1.0, 1.0]), size=self.dim)
        M = np.zeros((self.dim, self.low_dim))
        M[np.arange(self.dim), self.buckets] = self.signs
        self._M = M
        self._box = Box.symmetric(self.low_dim)

    @property
    def low_box(self) -> Box:
        """``[-1, 1]^d``."""
        return self._box

    def _affine(self, Y: Array) -> Array:
        return Y[:, self.buckets] * self.signs

    def _linear_part(self) -> Array:
        return self._M

    def project(self, X: ArrayLike) -> Array:
        """Least squares for a count sketch: ``y_j`` = mean of ``s_i x_i`` over bucket j (0 if empty).

        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)

        Returns
        -------
        ndarray of shape (n, d) or (d,)
        """
        arr, single = _rows(X, self.dim, "X")
        counts = np.bincount(self.buckets, minlength=self.low_dim).astype(float)
        sums = (arr * self.signs) @ np.abs(self._M)
        Y = np.clip(sums / np.maximum(counts, 1.0), -1.0, 1.0)
        return Y[0] if single else Y

    def collisions(self, coords: ArrayLike) -> int:
        """Number of coordinates in ``coords`` that share a bucket with an earlier one.

        HeSBO can represent every point of the box restricted to ``coords`` (e.g. a problem's
        active coordinates) only if this is 0.

        Parameters
        ----------
        coords : array_like of int
            Coordinate indices in ``[0, D)``.

        Returns
        -------
        int
        """
        b = self.buckets[np.asarray(coords, dtype=np.intp)]
        return int(b.size - np.unique(b).size)

    def _params(self) -> dict[str, Any]:
        return {"surjective": self.surjective}


class AnchoredEmbedding(Embedding):
    """One stage of sequential random embeddings (SRE) around an anchor point ``x0``.

    ``mode="scaled"`` (Qian et al. 2016): latent ``z = (alpha, y) in [-1, 1]^(1 + d)`` and
    ``x = clip(alpha x0 + A y)``; ``z = (1, 0, ..., 0)`` gives ``x0`` itself.
    ``mode="offset"``: latent ``y in [-half_width, half_width]^d``, ``x = clip(x0 + A y)``;
    ``y = 0`` gives ``x0``.

    Parameters
    ----------
    dim : int
        Ambient dimension D.
    low_dim : int
        Dimension d of the random part (the latent dimension is d + 1 with ``"scaled"``).
    seed : int
        Non-negative seed of ``A`` (D, d), iid N(0, 1).
    anchor : array_like of shape (D,)
        The point ``x0`` in ``[-1, 1]^D`` (the previous stage's solution).
    mode : {"scaled", "offset"}, default "scaled"
    half_width : float, default 1.0
        Half width of the box of ``y``.

    Raises
    ------
    ValueError
        If ``anchor`` has the wrong shape or leaves ``[-1, 1]^D``, or ``mode`` is unknown.
    """

    kind = "anchored"

    def __init__(self, dim: int, low_dim: int, *, seed: int, anchor: ArrayLike, mode: str = "scaled",
                 half_width: float = 1.0) -> None:
        super().__init__(dim, low_dim, seed=seed)
        self.mode = check_choice(mode, "mode", ("scaled", "offset"))
        self.half_width = check_real(half_width, "half_width", low=0, low_inclusive=False)
        x0 = np.asarray(anchor, dtype=float)
        if x0.shape != (self.dim,) or not np.all(np.abs(x0) <= 1.0):
            raise ValueError(f"anchor must be a point of [-1, 1]^{self.dim}, got shape {x0.shape}")
        self.anchor = x0.copy()
        self.A = np.random.default_rng(self.seed).standard_normal((self.dim, self.low_dim))
        self.n_random = self.low_dim
        hw = np.full(self.low_dim, self.half_width)
        if self.mode == "scaled":
            self.low_dim = self.low_dim + 1
            self._box = Box(np.concatenate([[-1.0], -hw]), np.concatenate([[1.0], hw]))
            self._M = np.hstack([self.anchor[:, None], self.A])
        else:
            self._box = Box(-hw, hw)
            self._M = self.A
        self.origin = np.concatenate([[1.0], np.zeros(self.n_random)]) if self.mode == "scaled" else np.zeros(self.n_random)

    @property
    def low_box(self) -> Box:
        """``[-1, 1] x [-half_width, half_width]^d`` (scaled) or ``[-half_width, half_width]^d`` (offset)."""
        return self._box

    def _affine(self, Y: Array) -> Array:
        return Y @ self._M.T + self._offset()

    def _offset(self) -> Array:
        return self.anchor if self.mode == "offset" else np.zeros(self.dim)

    def _linear_part(self) -> Array:
        return self._M

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`Embedding.to_dict`; ``low_dim`` is the random part's d, plus the anchor."""
        out = super().to_dict()
        out["low_dim"] = self.n_random
        return out

    def _params(self) -> dict[str, Any]:
        return {"anchor": self.anchor.tolist(), "mode": self.mode, "half_width": self.half_width}


#: Embedding classes by :attr:`Embedding.kind`.
EMBEDDINGS: dict[str, type[Embedding]] = {
    cls.kind: cls for cls in (GaussianEmbedding, HashingEmbedding, AnchoredEmbedding)
}


def embedding_from_dict(data: dict[str, Any]) -> Embedding:
    """Rebuild an embedding from :meth:`Embedding.to_dict` output (exactly: same seed, same matrix).

    Parameters
    ----------
    data : dict
        Output of :meth:`Embedding.to_dict` (possibly through JSON).

    Returns
    -------
    Embedding

    Raises
    ------
    ValueError
        If ``data["kind"]`` is not a known embedding (the message lists the known ones).
    """
    if not isinstance(data, dict) or data.get("kind") not in EMBEDDINGS:
        kind = data.get("kind") if isinstance(data, dict) else None
        raise ValueError(f"unknown embedding kind {kind!r}; known kinds: {', '.join(sorted(EMBEDDINGS))}")
    params = {k: v for k, v in data.items() if k not in ("kind", "dim", "low_dim")}
    return EMBEDDINGS[data["kind"]](int(data["dim"]), int(data["low_dim"]), **params)
