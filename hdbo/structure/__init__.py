"""Structure learners used by methods: additive decompositions (and, later, projections,
low-rank subspaces and variable-selection tests)."""

from __future__ import annotations

from .decomposition import check_decomposition, random_decomposition, refine_decomposition, search_decomposition
from .embeddings import AnchoredEmbedding, Embedding, GaussianEmbedding, HashingEmbedding, embedding_from_dict
from . import projection
from .projection import *  # noqa: F403  (every public name of projection.py)
from .subspace import dantzig_selector, noise_calibrated_lambda, principal_cosines, recover_subspace, sin_theta
from .variable_selection import HDSSelector  # Chen et al. 2012

__all__ = [
    "check_decomposition",
    "random_decomposition",
    "refine_decomposition",
    "search_decomposition",
    *projection.__all__,
    "Embedding",
    "GaussianEmbedding",
    "HashingEmbedding",
    "AnchoredEmbedding",
    "embedding_from_dict",
    "dantzig_selector",
    "noise_calibrated_lambda",
    "principal_cosines",
    "recover_subspace",
    "sin_theta",
    "HDSSelector",
]
