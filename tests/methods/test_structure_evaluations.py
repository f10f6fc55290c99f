"""Method.structure_evaluations: the evaluations a method's structure learning needs at dimension D."""

from __future__ import annotations

import warnings

import pytest

from hdbo.experiments.suite_report import STRUCTURE_CELLS
from hdbo.methods import available_methods, get_method_class
from hdbo.methods.hds import SELECTION_EVALUATIONS_MEASURED
from hdbo.space import Box

#: The methods with a separate learning phase; every other method answers None.
WITH_PHASE = {"hds", "si-bo", "cws"}
STRUCTURED = sorted({name for _, _, names in STRUCTURE_CELLS for name in names})


def test_every_structured_method_of_the_report_is_registered():
    assert set(STRUCTURED) <= set(available_methods())
    assert WITH_PHASE <= set(STRUCTURED)


@pytest.mark.parametrize("name", sorted(set(available_methods()) - WITH_PHASE))
def test_methods_without_a_learning_phase_answer_none(name):
    cls = get_method_class(name)
    for dim in (1, 100, 300):
        assert cls.structure_evaluations(dim) is None


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_hds_gives_its_measured_counts_at_the_measured_dimensions(test):
    hds = get_method_class("hds")
    for dim, counts in SELECTION_EVALUATIONS_MEASURED.items():
        assert hds.structure_evaluations(dim, test=test) == counts[test]
    assert hds.structure_evaluations(200, test=test) == {"fdt": 554, "gpt": 207}[test]


def test_hds_default_test_is_fdt_and_other_options_do_not_change_the_count():
    hds = get_method_class("hds")
    assert hds.structure_evaluations(200) == 554
    assert hds.structure_evaluations(200, noise_variance=0.01, optimize=False) == 554


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_hds_count_grows_with_d_linearly_in_log_d(test):
    hds = get_method_class("hds")
    counts = [hds.structure_evaluations(d, test=test) for d in range(1, 2001)]
    assert all(b >= a for a, b in zip(counts, counts[1:]))  # monotone
    assert counts[0] == counts[9] == SELECTION_EVALUATIONS_MEASURED[10][test]  # flat below D = 10
    assert counts[999] > counts[399] > counts[299] > counts[99] > counts[9]  # increasing beyond
    # between two measured dimensions: on the straight line in log D (D = 100 is 0.2435 of the way from 80 to 200)
    lo, hi = SELECTION_EVALUATIONS_MEASURED[80][test], SELECTION_EVALUATIONS_MEASURED[200][test]
    assert counts[99] == round(lo + (hi - lo) * 0.24353)
    # above D = 400: the last segment extended (D = 800 is one more doubling)
    last = SELECTION_EVALUATIONS_MEASURED[400][test] - SELECTION_EVALUATIONS_MEASURED[200][test]
    assert counts[799] == SELECTION_EVALUATIONS_MEASURED[400][test] + last


def test_hds_counts_at_the_suite_dimensions():
    hds = get_method_class("hds")
    assert [hds.structure_evaluations(d) for d in (100, 300)] == [482, 611]
    assert [hds.structure_evaluations(d, test="gpt") for d in (100, 300)] == [187, 236]


@pytest.mark.parametrize("dim", [3, 20, 100, 300])
@pytest.mark.parametrize("options", [{}, {"k": 1}, {"m_X": 4, "n_rep": 2}, {"m_Phi": 7}])
def test_si_bo_count_is_the_phase1_of_the_method_built_on_that_dimension(dim, options):
    cls = get_method_class("si-bo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # k > m_X
        built = cls(Box.unit(dim), seed=0, **options)
    assert cls.structure_evaluations(dim, **options) == built.phase1_evaluations


def test_si_bo_and_cws_counts_with_their_defaults():
    assert [get_method_class("si-bo").structure_evaluations(d) for d in (20, 100, 300, 1000)] == [210, 930, 2730, 9030]
    cws = get_method_class("cws")
    assert [cws.structure_evaluations(d) for d in (100, 300)] == [200, 600]  # one round, 2 D
    assert cws.structure_evaluations(100, rounds=3) == 600
    assert cws.structure_evaluations(100, n_select=6) == 200


@pytest.mark.parametrize("name", STRUCTURED)
def test_arguments_are_checked(name):
    cls = get_method_class(name)
    with pytest.raises(ValueError, match="dim"):
        cls.structure_evaluations(0)
    with pytest.raises(TypeError, match="dim"):
        cls.structure_evaluations(100.0)
    with pytest.raises(TypeError, match=rf"method '{name}' has no option\(s\) 'no_such_option'"):
        cls.structure_evaluations(100, no_such_option=1)


def test_options_that_enter_a_count_are_checked():
    with pytest.raises(ValueError, match="test"):
        get_method_class("hds").structure_evaluations(100, test="ttest")
    with pytest.raises(ValueError, match="k"):
        get_method_class("si-bo").structure_evaluations(3, k=4)
    with pytest.raises(TypeError, match="rounds"):
        get_method_class("cws").structure_evaluations(100, rounds=1.5)
