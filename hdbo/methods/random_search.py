"""Uniform random search: the baseline every paper reports (``RAND``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .base import Method
from .registry import register

__all__ = ["RandomSearch"]


@register
class RandomSearch(Method):
    """Query points drawn independently and uniformly from the box.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    seed : int, Generator or None
        Random source.
    budget : int, optional
        Unused (accepted for a uniform interface).
    structure : dict, optional
        Unused.
    """

    name = "random"
    budget_independent = True

    def _ask(self) -> NDArray[np.float64]:
        return self.rng.random(self.dim)
