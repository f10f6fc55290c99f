"""Structure learners used by methods: additive decompositions (and, later, projections,
low-rank subspaces and variable-selection tests)."""

from __future__ import annotations

from .decomposition import check_decomposition, random_decomposition, refine_decomposition, search_decomposition
from .variable_selection import HDSSelector  # Chen et al. 2012

__all__ = ["check_decomposition", "random_decomposition", "refine_decomposition", "search_decomposition", "HDSSelector"]
