"""Benchmark problems with known optima, their transforms and the registry.

Every problem is a :class:`Problem` to be **maximized** (usually-minimized functions are
negated). Build one by name with :func:`get`, e.g. ``get("branin", dim=20, domain="unit",
seed=3)``, or call a factory such as :func:`branin` directly. :func:`embed` hides a
problem among more coordinates and :func:`rescale` moves it to ``[0, 1]^D`` or
``[-1, 1]^D``. A module that defines new problems adds them with one
:func:`register_problem` line and is imported below.
"""

from __future__ import annotations

from .base import Problem
from .registry import ProblemSpec, available_problems, get, problem_spec, register_problem
from .transforms import embed, rescale
from .synthetic import (  # also registers the synthetic functions
    ackley,
    beale,
    branin,
    camelback,
    hartmann6,
    hyper_ellipsoid,
    levy,
    rosenbrock,
)
from .additive import KANDASAMY2015_CONFIGS, additive_trimodal, trimodal  # also registers them
from .projected import projected_trimodal  # also registers it (Li et al. 2016)
from .subspace import branin_subspace, gabor_neuron, gp_subspace  # also registers them (Djolonga et al. 2013)
from .gp_samples import chen_beale, chen_branin, gp_sample, quad, quadmix  # also registers them (Chen et al. 2012)
from .suite import (  # also registers them (the issue-18 comparison suite; suite-svm needs scikit-learn, suite-halfcheetah gymnasium[mujoco])
    suite_ackley,
    suite_branin_rotated,
    suite_halfcheetah,
    suite_hartmann6_hidden,
    suite_hartmann6_rotated,
    suite_levy,
    suite_rosenbrock,
    suite_styblinski_tang,
    suite_svm,
)
from .science_tasks import cascade_thresholds, galaxy_likelihood  # also registers them (issue 22: SDSS and VJ substitutes; cascade needs scikit-learn)
from .ml_tasks import nn_weights, ramp_loss  # also registers them (issue 22: the MS-UCB paper's MNIST network and Gisette ramp loss, substitutes; need scikit-learn)
from . import suite, synthetic  # their __all__ lists below

__all__ = [
    "Problem",
    "ProblemSpec",
    "get",
    "available_problems",
    "problem_spec",
    "register_problem",
    "embed",
    "rescale",
    *synthetic.__all__,
    "trimodal",
    "additive_trimodal",
    "projected_trimodal",
    "gp_subspace",
    "gabor_neuron",
    "branin_subspace",
    "KANDASAMY2015_CONFIGS",
    "gp_sample",
    "quad",
    "quadmix",
    "chen_branin",
    "chen_beale",
    *(name for name in suite.__all__ if name != "PROBLEM_IDS"),  # the suite's factories
    "galaxy_likelihood",
    "cascade_thresholds",
    "nn_weights",
    "ramp_loss",
]
