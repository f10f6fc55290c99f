"""Tests of the shared argument checks in hdbo._validation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from hdbo._validation import check_bool, check_choice, check_int, check_real
from hdbo.gp import GaussianProcess, SquaredExponential, make_kernel
from hdbo.methods import make_method
from hdbo.structure import check_decomposition

BOX2 = [(0.0, 1.0), (0.0, 1.0)]


def raises(error: type[Exception], message: str):
    """``pytest.raises`` matching the whole message literally."""
    return pytest.raises(error, match="^" + re.escape(message) + "$")


# ---------------------------------------------------------------------- check_int
@pytest.mark.parametrize("value", [0, 7, -3, np.int64(7), np.int8(-3), np.uint16(5)])
def test_int_accepts_python_and_numpy_integers_and_returns_int(value):
    out = check_int(value, "n")
    assert out == value and type(out) is int


@pytest.mark.parametrize(
    "value, received",
    [(True, "bool True"), (2.0, "float 2.0"), (2.5, "float 2.5"), ("3", "str '3'"), (None, "None")],
)
def test_int_rejects_other_types_naming_what_was_received(value, received):
    with raises(TypeError, f"n must be an int, got {received}"):
        check_int(value, "n", low=1)
    for numpy_value in (np.bool_(True), np.float64(1.0)):
        with pytest.raises(TypeError, match="^n must be an int, got "):
            check_int(numpy_value, "n")


def test_int_bounds_are_inclusive_and_named_in_the_message():
    assert check_int(1, "n", low=1) == 1
    assert check_int(5, "n", high=5) == 5
    assert check_int(3, "n", low=1, high=3) == 3
    with raises(ValueError, "n must be an int >= 1, got 0"):
        check_int(0, "n", low=1)
    with raises(ValueError, "n must be an int <= 5, got 6"):
        check_int(6, "n", high=5)
    with raises(ValueError, "n must be an int in [1, 3], got 4"):
        check_int(np.int64(4), "n", low=1, high=3)


def test_int_allow_none():
    assert check_int(None, "budget", low=1, allow_none=True) is None
    with raises(TypeError, "budget must be an int or None, got float 2.5"):
        check_int(2.5, "budget", allow_none=True)
    with raises(ValueError, "budget must be an int >= 1 or None, got 0"):
        check_int(0, "budget", low=1, allow_none=True)


# ---------------------------------------------------------------------- check_real
@pytest.mark.parametrize("value", [0, 3, -2.5, np.float32(0.5), np.float64(1e300), np.int32(4)])
def test_real_accepts_numbers_and_returns_float(value):
    out = check_real(value, "x")
    assert out == float(value) and type(out) is float


@pytest.mark.parametrize("value", [True, np.bool_(False), "1.0", None, [1.0], np.array([1.0]), 1 + 0j])
def test_real_rejects_other_types(value):
    with pytest.raises(TypeError, match=r"^x must be a real number, got "):
        check_real(value, "x")


def test_real_rejects_nan_always_and_inf_unless_allowed():
    with raises(ValueError, "x must be finite, got nan"):
        check_real(float("nan"), "x")
    with raises(ValueError, "x must be finite, got -inf"):
        check_real(-np.inf, "x")
    assert check_real(np.inf, "x", low=0, finite=False) == math.inf
    with raises(ValueError, "x must be a number, not NaN, got nan"):
        check_real(np.nan, "x", finite=False)


@pytest.mark.parametrize(
    "kwargs, good, bad, message",
    [
        ({"low": 0}, 0.0, -0.5, "x must be >= 0, got -0.5"),
        ({"low": 0, "low_inclusive": False}, 1e-300, 0.0, "x must be > 0, got 0.0"),
        ({"high": 1.0}, 1.0, 1.5, "x must be <= 1.0, got 1.5"),
        ({"high": 1, "high_inclusive": False}, 0.999, 1, "x must be < 1, got 1.0"),
        ({"low": 0, "high": 1.0}, 0, 2, "x must be in [0, 1.0], got 2.0"),
        ({"low": 0, "high": 1, "low_inclusive": False}, 1, 0, "x must be in (0, 1], got 0.0"),
        ({"low": 0, "high": 1, "low_inclusive": False, "high_inclusive": False}, 0.5, 1,
         "x must be in (0, 1), got 1.0"),
        ({"low": 1e-8, "high": 1.0}, 1e-8, 5.0, "x must be in [1e-08, 1.0], got 5.0"),
    ],
)
def test_real_bounds(kwargs, good, bad, message):
    assert check_real(good, "x", **kwargs) == good
    with raises(ValueError, message):
        check_real(bad, "x", **kwargs)


def test_real_allow_none():
    assert check_real(None, "growth", allow_none=True) is None
    with raises(TypeError, "growth must be a real number or None, got str 'a'"):
        check_real("a", "growth", allow_none=True)
    with raises(ValueError, "growth must be > 0 or None, got -1.0"):
        check_real(-1, "growth", low=0, low_inclusive=False, allow_none=True)


# ---------------------------------------------------------------------- check_bool
def test_bool():
    assert check_bool(True, "flag") is True
    out = check_bool(np.bool_(False), "flag")
    assert out is False
    for value, received in [(1, "int 1"), ("no", "str 'no'"), (None, "None")]:
        with raises(TypeError, f"flag must be a bool, got {received}"):
            check_bool(value, "flag")


# ---------------------------------------------------------------------- check_choice
def test_choice_returns_the_value_and_lists_the_choices_in_order():
    assert check_choice("zero", "mean", ("constant", "zero")) == "zero"
    assert check_choice(1.5, "nu", (0.5, 1.5, 2.5)) == 1.5
    with raises(ValueError, "mean must be one of 'constant', 'zero', got 'const'"):
        check_choice("const", "mean", ("constant", "zero"))
    with raises(ValueError, "nu must be one of 0.5, 1.5, 2.5, got 1.0"):
        check_choice(1.0, "nu", [0.5, 1.5, 2.5])


def test_choice_allow_none_and_odd_values():
    assert check_choice(None, "domain", ("unit", "symmetric"), allow_none=True) is None
    with raises(ValueError, "domain must be None or one of 'unit', 'symmetric', got 'box'"):
        check_choice("box", "domain", ("unit", "symmetric"), allow_none=True)
    with raises(ValueError, "domain must be one of 'unit', 'symmetric', got None"):
        check_choice(None, "domain", ("unit", "symmetric"))
    # unhashable values and arrays are rejected with the same ValueError, not a crash
    with pytest.raises(ValueError, match="^kernel must be one of 'se'"):
        check_choice(["se"], "kernel", {"se": 1})
    with pytest.raises(ValueError, match="^kernel must be one of 'se'"):
        check_choice(np.array(["se", "se"]), "kernel", ("se",))


def test_long_values_are_abbreviated_in_messages():
    with pytest.raises(TypeError) as info:
        check_int("x" * 1000, "n")
    assert len(str(info.value)) < 100


# ---------------------------------------------------------------------- the call sites
@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: make_method("gp-ucb", BOX2, n_init=2.5), TypeError, "n_init must be an int, got float 2.5"),
        (lambda: make_method("gp-ucb", BOX2, acq_budget=True), TypeError, "acq_budget must be an int or None"),
        (lambda: make_method("add-gp-ucb", BOX2, acq_fraction=0), ValueError, r"acq_fraction must be in \(0, 1\]"),
        (lambda: make_method("direct", BOX2, eps=float("nan")), ValueError, "eps must be a number, not NaN"),
        (lambda: make_kernel("se", 2.0), TypeError, "dim must be an int or None, got float 2.0"),
        (lambda: check_decomposition(4, 2.0, 2), TypeError, "d must be an int, got float 2.0"),
        (lambda: GaussianProcess(SquaredExponential(), n_restarts=1.5), TypeError,
         "n_restarts must be an int, got float 1.5"),
    ],
)
def test_call_sites_raise_typed_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()
