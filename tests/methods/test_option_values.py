"""Option values are checked at construction, by name (issue 17): a flag must be a bool, and a
count has an upper limit (``hdbo._validation.MAX_COUNT``) instead of failing later inside numpy
with a message that names nothing."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import hdbo
from hdbo._validation import MAX_COUNT
from hdbo.methods import available_methods, get_method_class

from _fast_options import FAST_OPTIONS, REQUIRED_OPTIONS

OURS = [m for m in available_methods() if not m.startswith("peer")]


def _defaults(method: str) -> dict:
    sig = inspect.signature(get_method_class(method).__init__)
    return {n: p.default for n, p in sig.parameters.items()
            if p.kind is p.KEYWORD_ONLY and p.default is not inspect.Parameter.empty}


def _cases(kind: type) -> list[tuple[str, str]]:
    out = []
    for method in OURS:
        for name, default in _defaults(method).items():
            if name in ("budget", "seed"):
                continue
            if kind is bool and isinstance(default, bool):
                out.append((method, name))
            if kind is int and isinstance(default, int) and not isinstance(default, bool):
                out.append((method, name))
    return out


def _options(method: str) -> dict:
    return {**REQUIRED_OPTIONS.get(method, {}), **FAST_OPTIONS.get(method, {})}


@pytest.mark.parametrize(("method", "option"), _cases(bool))
def test_flag_options_must_be_bool(method, option):
    opts = {**_options(method), option: "no"}  # a truthy string must not silently mean True
    with pytest.raises(TypeError, match=rf"^{option} must be a bool"):
        hdbo.Optimizer([(0.0, 1.0)] * 5, method=method, seed=0, budget=10, **opts)


@pytest.mark.parametrize(("method", "option"), _cases(int))
def test_count_options_have_a_limit(method, option):
    opts = {**_options(method), option: 10**19}
    with pytest.raises(ValueError, match=rf"^{option} must be an int"):
        hdbo.Optimizer([(0.0, 1.0)] * 5, method=method, seed=0, budget=10, **opts)


@pytest.mark.parametrize(("method", "option"), [("gp-ucb", "acq_budget"), ("highdim-random-ucb", "n_candidates"),
                                                ("si-bo", "m_X"), ("si-bo", "m_Phi"), ("sre", "m")])
def test_huge_counts_are_refused_by_name(method, option):
    with pytest.raises(ValueError, match=rf"^{option} must be an int in \[\d+, \d+\]"):
        hdbo.minimize(lambda x: float(np.sum(x)), [(0.0, 1.0)] * 5, method=method, budget=12,
                      **{**_options(method), option: 10**19})
    assert MAX_COUNT == 10_000_000
