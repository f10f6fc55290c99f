"""Structure learners used by methods: additive decompositions (and, later, projections,
low-rank subspaces and variable-selection tests)."""

from __future__ import annotations

from .decomposition import check_decomposition, random_decomposition, refine_decomposition, search_decomposition
from .embeddings import AnchoredEmbedding, Embedding, GaussianEmbedding, HashingEmbedding, embedding_from_dict
from .projection import (
    ProjectionFit,
    choose_alpha,
    delta_ratio,
    feasible_alpha,
    learn_projection,
    outer_box,
    projected_log_marginal_likelihood,
    restrict_projection,
)
from .subspace import dantzig_selector, noise_calibrated_lambda, principal_cosines, recover_subspace, sin_theta
from .variable_selection import HDSSelector  # Chen et al. 2012

__all__ = [
    "check_decomposition",
    "random_decomposition",
    "refine_decomposition",
    "search_decomposition",
    "ProjectionFit",
    "choose_alpha",
    "delta_ratio",
    "feasible_alpha",
    "learn_projection",
    "outer_box",
    "projected_log_marginal_likelihood",
    "restrict_projection",
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
