"""Chen et al. (2012)'s Branin: +Branin, which "peaks at (-1, -1)" of the rescaled domain."""

import numpy as np
import pytest

from hdbo.problems import chen_beale, chen_branin, get


def _grid(n=401):
    g = np.linspace(-1.0, 1.0, n)
    return np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)


@pytest.mark.parametrize("rescale_values", [False, True])
def test_positive_branin_peaks_at_the_corner(rescale_values):
    p = chen_branin(6, seed=3, rescale_values=rescale_values, negate=False)
    act = p.structure["active_dims"]
    assert p.optimizer.shape == (6,)
    np.testing.assert_array_equal(p.optimizer[act], [-1.0, -1.0])
    peak = 1.0 if rescale_values else 308.129096
    assert p.optimum_value == pytest.approx(peak, rel=1e-6)
    assert float(p(p.optimizer[None, :])[0]) == pytest.approx(p.optimum_value, rel=1e-12)
    X = np.zeros((401 * 401, 6))
    X[:, act] = _grid()
    v = p(X)
    assert v.max() <= p.optimum_value + 1e-9  # the corner is the maximum over the box
    assert np.unravel_index(np.argmax(v), (401, 401)) == (0, 0)
    if rescale_values:
        assert v.min() == pytest.approx(-1.0, abs=1e-3)  # the minima of Branin map to -1


def test_sign_only_flips_the_negated_default():
    pos = chen_branin(5, seed=1, rescale_values=False, negate=False)
    neg = chen_branin(5, seed=1, rescale_values=False)
    X = np.random.default_rng(0).uniform(-1, 1, (50, 5))
    np.testing.assert_allclose(pos(X), -neg(X))
    assert pos.structure == neg.structure
    # the registry passes the option through
    assert get("chen-branin", dim=5, seed=1, negate=False, rescale_values=False).optimum_value == pos.optimum_value


def test_negate_must_be_a_bool():
    with pytest.raises(TypeError, match="negate"):
        chen_branin(4, negate="no")
    with pytest.raises(TypeError, match="rescale_values"):
        chen_branin(4, rescale_values=1)


def test_chen_beale_checks_rescale_values_as_chen_branin_does():
    with pytest.raises(TypeError, match="rescale_values must be a bool, got str"):
        chen_beale(4, rescale_values="no")
    assert chen_beale(4, rescale_values=np.bool_(False)).optimum_value == chen_beale(4, rescale_values=False).optimum_value
