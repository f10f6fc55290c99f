"""hdbo inside Optuna: :class:`HDBOSampler`, an Optuna sampler backed by any hdbo method.

An existing Optuna study moves onto hdbo by changing its sampler; the objective, the study
and the storage stay as they are::

    pip install "hdbo[optuna]"

    from hdbo.integrations.optuna import HDBOSampler
    study = optuna.create_study(direction="minimize", sampler=HDBOSampler(seed=0))

How a proposal is made
----------------------
A proposal depends on nothing the sampler remembers: it is rebuilt from the study's trials
(a cache, below, only saves time), so the sampler works with every Optuna storage (in memory,
RDB, journal), with several worker processes sharing one study, and after a restart. For trial
number ``n``:

1. The relative search space is Optuna's intersection search space (the parameters every
   completed trial suggested, with the same distribution). Its float and int parameters
   (except single-valued ones) form an hdbo box (:class:`ParameterBox`); categorical
   parameters and parameters outside that space are sampled independently (below).
2. ``opt = hdbo.Optimizer(box, method=method, seed=seed, direction=study.direction, **options)``.
3. The finished trials, in trial-number order, are told in one batch, ``opt.tell(X, y)``:
   complete trials with their value; failed and pruned trials as failed evaluations
   (``None``: hdbo's failure policy keeps them in the history, never shows them to a model,
   and never proposes such a point again). A trial that lacks a parameter of the box, or
   suggested it with another distribution, is left out.
4. The running (and waiting, enqueued) trials other than trial ``n`` become pending points
   (a worker that died leaves its trial running, and so pending, unless the storage's
   heartbeat marks it failed),
   in trial-number order, and the optimizer's generator is replaced by
   ``numpy.random.default_rng([seed, n])``, both through the optimizer's state:
   ``state = opt.state_dict()``, ``state["method"]["pending"] = P``,
   ``state["method"]["rng"] = generator_state(default_rng([seed, n]))``,
   ``opt = hdbo.Optimizer.from_state(state)``. A running trial whose parameters are not all
   in the storage yet counts with the proposal this sampler published for it (the trial's
   system attribute ``"hdbo"``).
5. ``x = opt.ask()``; the parameters are ``x`` mapped back (:meth:`ParameterBox.decode`).

So a proposal is determined by the seed and the trials so far, and equals what an
:class:`hdbo.Optimizer` built by the same steps proposes (tested). GP methods condition their
posterior on the pending points (GP-BUCB's hallucination), so parallel workers spread out.

After step 5 the proposal is published in the trial's system attribute ``"hdbo"`` (with the
timings below), and the running trials are read once more: if another worker's running trial
holds the same point (two workers that asked at the same moment saw the same trials), the
sampler asks the same optimizer again, which now has that point pending, and takes the next
point instead (if the method cannot propose another, the trial goes to the independent
sampler, as below). The attribute records which trial was duplicated (``"duplicate_of"``).

Parameters
----------
* Float parameters are searched on their own scale, ``log=True`` ones in log space (the box
  coordinate is ``log(value)``).
* Int parameters and float parameters with a ``step`` are searched on a box widened by half a
  step at each end, ``[low - step/2, high + step/2]``, so every value of the grid owns a
  slice of equal width, and rounded to the nearest value of the grid; ``log=True`` ints on
  ``[log(low - 1/2), log(high + 1/2)]``, rounded to the nearest int. A trial is told at the
  value it evaluated (the GP sees the int, not the continuous proposal).

Independent sampling
--------------------
``independent_sampler`` (default: Optuna's ``RandomSampler`` seeded from the seed, the trial
number and the parameter name, so independent draws are determined by them too) samples

* every parameter of the first trials, while no trial has completed and the search space is
  not known yet (as for every relative sampler in Optuna); these trials count as hdbo's
  initial design, since they are told like any other;
* categorical parameters, and parameters that are not in the relative search space (not
  suggested by every completed trial, or with a range that changed);
* every parameter of a trial for which the method cannot propose because it must first see
  the values of running trials (``"direct"`` while its query is out, the sequential tests of
  ``"hds"``, ``"peer:cma"`` at the end of a population; :class:`~hdbo.exceptions.PendingError`).
  Such trials are told to the method later like any other point.

Each case is said once per sampler and parameter in an :class:`IndependentSamplingWarning`
naming the parameters and the independent sampler (``warn_independent_sampling=False``
silences them).

Caching and cost
----------------
Step 3 is cached: the sampler keeps the state after the last tell of each study it serves
(in memory, in this process); when the finished trials of the next proposal begin with the
same trials (the same numbers, points and values), it loads that state and tells only the
new ones. Loading a state resumes exactly (:meth:`hdbo.Optimizer.from_state`), so the
cache never changes a proposal (tested against ``cache=False``). What it cannot save is the
model fit: a rebuilt GP method fits its hyperparameters from scratch at every trial, where a
long-lived optimizer refits on a schedule, warm-started, and updates its factorization in
between. :attr:`HDBOSampler.timings` holds, per proposal, the seconds spent reading the
trials, rebuilding the optimizer and asking it; the same numbers are stored with the trial
(system attribute ``"hdbo"``). ``benchmarks/bench_optuna_sampler.py`` measures the overhead
against hdbo's own ``ask``.

What does not carry over
------------------------
What a method remembers about its own proposals, beyond the points and values, is not in the
trials. ``"auto"``'s choice between its global and trust-region searches learns from the
outcomes of its earlier choices; rebuilt from the trials it has none, so it chooses each
search with probability 1/2 (its trust region, which follows the values, is rebuilt exactly).
Its choice between the ARD and the isotropic kernel (option ``kernel_selection``) is made from
the data at every fit, so it does carry over, from fits that start afresh. Its noise probe
(option ``noise_probe``) carries over too: the rebuilt optimizer finds the probe among the
trials (a pair of points 1e-6 of the box apart) and does not probe again.

Multi-objective studies raise a ``ValueError``: hdbo has no multi-objective method.

The method ``"hdbo-optuna"``
----------------------------
:class:`ThroughOptuna` is an hdbo method that proposes each point by asking an
:class:`HDBOSampler` on an in-memory Optuna study of its history: hdbo through Optuna, with
Optuna's overhead. Importing :mod:`hdbo.integrations.optuna_plugin` registers it under
``"hdbo-optuna"`` (this module registers nothing), so it runs wherever a method runs::

    hdbo run --plugin hdbo.integrations.optuna_plugin --method hdbo-optuna --problem ...

and the comparison suite can put "hdbo through Optuna" next to hdbo's own runs
(``docs/guide/optuna.md``).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

try:
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.search_space import intersection_search_space
    from optuna.study import Study, StudyDirection
    from optuna.trial import FrozenTrial, TrialState
except ImportError as exc:  # pragma: no cover - exercised only without optuna
    raise ModuleNotFoundError(
        f"hdbo.integrations.optuna needs Optuna, which is not installed ({exc}); "
        'install the extra: pip install "hdbo[optuna]" (or pip install optuna)', name="optuna") from None

from .._validation import check_bool, check_int
from ..api import Optimizer
from ..exceptions import PendingError
from ..methods import Method, available_methods, get_method_class
from ..methods.registry import option_names
from ..space import Box
from ..utils import generator_state

__all__ = ["HDBOSampler", "IndependentSamplingWarning", "ParameterBox", "Rebuild", "ThroughOptuna",
           "ProposalTiming", "SYSTEM_ATTR"]

#: The trial system attribute in which the sampler publishes its proposal and timings.
SYSTEM_ATTR = "hdbo"
#: Two points are the same when every box coordinate differs by at most this fraction of the box's width.
_SAME = 1e-9
#: Studies whose told state the sampler keeps (least recently used dropped first).
_CACHE_SLOTS = 8
_PENDING_STATES = (TrialState.RUNNING, TrialState.WAITING)


class IndependentSamplingWarning(UserWarning):
    """Parameters of a trial were sampled by the independent sampler instead of the hdbo method."""


# =========================================================================== parameter box
class ParameterBox:
    """The float and int parameters of an Optuna search space as an hdbo box.

    Coordinate ``j`` of the box is parameter ``names[j]``: its value for a plain float, its
    logarithm for ``log=True``, and for int parameters and stepped floats the value on a box
    widened by half a step at each end (see the module docstring).

    Parameters
    ----------
    search_space : mapping of str to optuna.distributions.BaseDistribution
        Float and int distributions with ``low < high``, in the order the coordinates take.

    Raises
    ------
    TypeError
        If a distribution is neither a ``FloatDistribution`` nor an ``IntDistribution``.
    ValueError
        If the space is empty or a distribution has a single value.

    Examples
    --------
    >>> from optuna.distributions import FloatDistribution, IntDistribution
    >>> pb = ParameterBox({"lr": FloatDistribution(1e-4, 1e-1, log=True), "n": IntDistribution(1, 4)})
    >>> pb.box.bounds.round(3).tolist()
    [[-9.21, -2.303], [0.5, 4.5]]
    >>> pb.decode([-4.6, 2.49])
    {'lr': 0.010051835744633586, 'n': 2}
    >>> pb.encode({"lr": 0.01, "n": 2}).round(3).tolist()
    [-4.605, 2.0]
    """

    def __init__(self, search_space: Mapping[str, BaseDistribution]) -> None:
        if not isinstance(search_space, Mapping) or not search_space:
            raise ValueError(f"search_space must be a non-empty mapping of parameter names to distributions, "
                             f"got {search_space!r:.80}")
        self.names: list[str] = []
        self.distributions: dict[str, BaseDistribution] = {}
        lower, upper = [], []
        for name, dist in search_space.items():
            if not self.supports(dist):
                if isinstance(dist, (FloatDistribution, IntDistribution)):
                    raise ValueError(f"search_space[{name!r}] has a single value ({dist}); leave it out")
                raise TypeError(f"search_space[{name!r}] must be a FloatDistribution or IntDistribution, "
                                f"got {type(dist).__name__}")
            lo, hi = self._bounds(dist)
            self.names.append(name)
            self.distributions[name] = dist
            lower.append(lo)
            upper.append(hi)
        self.box = Box(lower, upper)

    @staticmethod
    def supports(dist: BaseDistribution) -> bool:
        """Whether ``dist`` becomes a coordinate: a float or int distribution with ``low < high``."""
        return isinstance(dist, (FloatDistribution, IntDistribution)) and not dist.single()

    @staticmethod
    def _bounds(dist: FloatDistribution | IntDistribution) -> tuple[float, float]:
        if dist.log:
            if isinstance(dist, IntDistribution):
                return math.log(dist.low - 0.5), math.log(dist.high + 0.5)
            return math.log(dist.low), math.log(dist.high)
        step = dist.step
        if step is None:
            return float(dist.low), float(dist.high)
        return dist.low - 0.5 * step, dist.high + 0.5 * step

    @property
    def dim(self) -> int:
        """Number of coordinates."""
        return len(self.names)

    def signature(self) -> tuple[tuple[str, str], ...]:
        """``(name, repr(distribution))`` pairs: equal for equal spaces."""
        return tuple((n, repr(self.distributions[n])) for n in self.names)

    def decode(self, x: ArrayLike) -> dict[str, float | int]:
        """The parameter values of box point ``x`` (rounded onto int and step grids).

        Parameters
        ----------
        x : array_like of shape (D,)

        Returns
        -------
        dict
            Parameter name to a value of its distribution (an ``int`` for int parameters).

        Raises
        ------
        ValueError
            If ``x`` does not have shape (D,) or is not finite.
        """
        arr = np.asarray(x, dtype=float).reshape(-1)
        if arr.size != self.dim or not np.all(np.isfinite(arr)):
            raise ValueError(f"x must be a finite point of shape ({self.dim},), got {np.asarray(x)!r:.80}")
        out: dict[str, float | int] = {}
        for name, v in zip(self.names, arr):
            dist = self.distributions[name]
            if isinstance(dist, IntDistribution):
                if dist.log:
                    out[name] = int(min(max(math.floor(math.exp(v) + 0.5), dist.low), dist.high))
                else:
                    k = self._grid_index(v, dist.low, dist.high, dist.step)
                    out[name] = int(dist.low + k * dist.step)
            elif dist.log:
                out[name] = float(min(max(math.exp(v), dist.low), dist.high))
            elif dist.step is not None:
                k = self._grid_index(v, dist.low, dist.high, dist.step)
                out[name] = float(min(dist.low + k * dist.step, dist.high))
            else:
                out[name] = float(min(max(v, dist.low), dist.high))
        return out

    @staticmethod
    def _grid_index(v: float, low: float, high: float, step: float) -> int:
        n_steps = int(round((high - low) / step))
        return int(min(max(math.floor((v - low) / step + 0.5), 0), n_steps))

    def encode(self, params: Mapping[str, Any]) -> NDArray[np.float64]:
        """The box point of parameter values (each value's coordinate, clipped into the box).

        Parameters
        ----------
        params : mapping of str to number
            A value for every name of :attr:`names` (other entries are ignored).

        Returns
        -------
        ndarray of shape (D,)

        Raises
        ------
        KeyError
            If a parameter is missing.
        """
        x = np.empty(self.dim)
        for j, name in enumerate(self.names):
            v = float(params[name])
            x[j] = math.log(v) if self.distributions[name].log else v
        return self.box.clip(x)

    def trial_point(self, trial: FrozenTrial) -> NDArray[np.float64] | None:
        """The box point of a trial's parameters, or None if one is missing or has another distribution."""
        dists = trial.distributions
        for name in self.names:
            if name not in trial.params or dists.get(name) != self.distributions[name]:
                return None
        return self.encode(trial.params)

    def same(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
        """Whether box points ``a`` and ``b`` agree within 1e-9 of the width in every coordinate."""
        return bool(np.all(np.abs(np.asarray(a) - np.asarray(b)) <= _SAME * self.box.width))


# =========================================================================== records
@dataclass(frozen=True)
class ProposalTiming:
    """Seconds spent on one proposal of :class:`HDBOSampler`.

    Attributes
    ----------
    trial : int
        Trial number.
    n_observed, n_failed, n_pending : int
        Trials told as observations, as failures, and given as pending points.
    cached : bool
        Whether the told state came from the cache (only new trials told).
    read_s : float
        Reading the trials from the storage and mapping them to box points.
    rebuild_s : float
        Building the optimizer: constructing or loading it, telling the trials, setting the
        pending points and the generator (steps 2-4 of the module docstring).
    ask_s : float
        ``Optimizer.ask`` (the method's proposal, model fit included).
    total_s : float
        All of :meth:`HDBOSampler.sample_relative`, publishing the proposal and the duplicate
        check included.
    fallback : bool
        True if the method could not propose (the trial went to the independent sampler).
    """

    trial: int
    n_observed: int
    n_failed: int
    n_pending: int
    cached: bool
    read_s: float
    rebuild_s: float
    ask_s: float
    total_s: float
    fallback: bool = False


@dataclass
class Rebuild:
    """The optimizer :meth:`HDBOSampler.rebuild` built for a trial, and where its data came from.

    Attributes
    ----------
    optimizer : hdbo.Optimizer
        Ready to ``ask`` (told the finished trials, pending points set, generator seeded).
    space : ParameterBox
        The box the optimizer searches.
    observed, failed, pending : list of int
        Numbers of the trials told as observations, told as failures, and given as pending.
    cached : bool
        Whether the told state came from the cache.
    read_s, rebuild_s : float
        Seconds spent reading the trials and building the optimizer.
    """

    optimizer: Optimizer
    space: ParameterBox
    observed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    cached: bool = False
    read_s: float = 0.0
    rebuild_s: float = 0.0


@dataclass
class _Told:
    """The cached state of an optimizer told some finished trials (in number order)."""

    numbers: list[int]
    X: NDArray[np.float64]
    y: NDArray[np.float64]  # NaN for failures
    state: dict[str, Any]


# =========================================================================== sampler
class HDBOSampler(BaseSampler):
    """An Optuna sampler that proposes the float and int parameters jointly with an hdbo method.

    See the module docstring for how a proposal is made, how parameters are mapped, what is
    sampled independently, and what the cache saves.

    Parameters
    ----------
    method : str, default "auto"
        A registered hdbo method (:func:`hdbo.methods.available_methods`); ``"auto"`` is
        hdbo's default.
    seed : int or None
        Seed of every random choice; with None one is drawn from the operating system when
        the sampler is built (so two unseeded samplers differ).
    independent_sampler : optuna.samplers.BaseSampler, optional
        Samples what the method does not (see the module docstring). Default: Optuna's
        ``RandomSampler``, seeded per trial and parameter from ``seed``.
    warn_independent_sampling : bool, default True
        Issue an :class:`IndependentSamplingWarning` (once per parameter and reason).
    cache : bool, default True
        Keep the told state of each study between proposals (see the module docstring).
    **options
        Options of the method (e.g. ``n_init=5``, ``acq_budget=500``) and ``budget``, the
        number of trials planned (methods with phases split it; others ignore it).

    Attributes
    ----------
    timings : list of ProposalTiming
        One entry per proposal made by this sampler object, in order.

    Raises
    ------
    ValueError
        If ``method`` is not registered (the message lists the methods) or is
        ``"hdbo-optuna"`` itself, or ``seed`` is negative.
    TypeError
        If ``seed`` is not an int or None, an option is not one of the method's, or
        ``independent_sampler`` is not an Optuna sampler.

    Examples
    --------
    >>> import optuna
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", -5.0, 5.0)
    ...     n = trial.suggest_int("n", 1, 8)
    ...     return (x - 1.0) ** 2 + (n - 3) ** 2
    >>> import warnings
    >>> sampler = HDBOSampler(method="gp-ucb", seed=0, n_init=4, acq_budget=200)
    >>> study = optuna.create_study(sampler=sampler)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", IndependentSamplingWarning)  # trial 0 is random
    ...     study.optimize(objective, n_trials=12)
    >>> len(study.trials), len(sampler.timings)
    (12, 11)
    """

    def __init__(
        self,
        method: str = "auto",
        seed: int | None = None,
        *,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        cache: bool = True,
        **options: Any,
    ) -> None:
        if not isinstance(method, str):
            raise TypeError(f"method must be a registered method name (str), got {type(method).__name__}")
        if method == ThroughOptuna.name:
            raise ValueError(f"method {method!r} is hdbo through Optuna itself; give the hdbo method it should "
                             "run, e.g. method='auto'")
        if method not in available_methods():
            raise ValueError(f"unknown method {method!r}; available methods: {', '.join(available_methods())}")
        valid = ["budget", *option_names(get_method_class(method))]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise TypeError(f"method {method!r} has no option(s) {', '.join(map(repr, unknown))}; "
                            f"its options: {', '.join(valid)}")
        seed = check_int(seed, "seed", low=0, allow_none=True)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError(f"independent_sampler must be an optuna.samplers.BaseSampler, got "
                            f"{type(independent_sampler).__name__}")
        self.method = method
        self.seed = seed
        self._seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
        self.options = dict(options)
        self._independent = independent_sampler
        self._warn = check_bool(warn_independent_sampling, "warn_independent_sampling")
        self._use_cache = check_bool(cache, "cache")
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple, _Told] = OrderedDict()
        self._warned: set[tuple[str, str]] = set()
        self._fallback: set[tuple] = set()  # trials the method could not propose for
        self._known: set[tuple] = set()  # studies with a completed trial
        self.timings: list[ProposalTiming] = []

    def __str__(self) -> str:
        return f"HDBOSampler(method={self.method!r})"

    def __getstate__(self) -> dict[str, Any]:
        # For tools that copy a sampler into another process: the lock cannot be copied, and
        # the cache is rebuilt there.
        state = self.__dict__.copy()
        state["_lock"] = None
        state["_cache"] = OrderedDict()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ Optuna's interface
    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """The float and int parameters of the intersection search space (see the module docstring).

        Raises
        ------
        ValueError
            If the study has more than one objective.
        """
        self._check_single_objective(study)
        space = intersection_search_space(study.get_trials(deepcopy=False))
        return {name: d for name, d in space.items() if ParameterBox.supports(d)}

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """Propose the parameters of ``search_space`` for ``trial`` with the hdbo method.

        Returns ``{}`` (every parameter then goes to the independent sampler) when the space
        is empty or the method must wait for running trials.

        Raises
        ------
        ValueError
            If the study has more than one objective, or the method cannot be built on the
            search space (the message names both).
        """
        self._check_single_objective(study)
        if not search_space:
            return {}
        t0 = time.perf_counter()
        rebuilt = self.rebuild(study, trial, search_space=search_space)
        opt, space = rebuilt.optimizer, rebuilt.space
        t1 = time.perf_counter()
        try:
            x = opt.ask()
        except PendingError as exc:
            t2 = time.perf_counter()
            return self._fall_back(study, trial, rebuilt, exc, t2 - t1, t2 - t0)
        t2 = time.perf_counter()
        params = space.decode(x)
        self._publish(study, trial, params)
        duplicate = self._running_duplicate(study, trial, space, space.encode(params))
        if duplicate is not None:
            # Another worker's running trial holds this point (both saw the same trials): it
            # is pending in `opt` now, so the next proposal accounts for it.
            try:
                params = space.decode(opt.ask())
            except PendingError as exc:
                t3 = time.perf_counter()
                return self._fall_back(study, trial, rebuilt, exc, t2 - t1, t3 - t0, duplicate_of=duplicate)
        t3 = time.perf_counter()
        self._record(study, trial, rebuilt, params, t2 - t1, t3 - t0, duplicate_of=duplicate)
        return params

    def _fall_back(self, study: Study, trial: FrozenTrial, rebuilt: Rebuild, exc: PendingError, ask_s: float,
                   total_s: float, duplicate_of: int | None = None) -> dict[str, Any]:
        """The method must wait for running trials: leave this trial to the independent sampler."""
        with self._lock:
            self._fallback.add(self._trial_key(study, trial))
        self._record(study, trial, rebuilt, None, ask_s, total_s, fallback=True, duplicate_of=duplicate_of)
        self._warn_once(("pending", ""), (
            f"HDBOSampler: method {self.method!r} cannot propose a point for trial {trial.number} before the "
            f"values of running trials are in ({exc}); the parameters of such trials are sampled independently "
            f"by {self._independent_name()} and told to the method later like any other point. Said once; "
            "HDBOSampler.timings marks these trials (fallback=True)."))
        return {}

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        """Sample one parameter with the independent sampler (see the module docstring)."""
        self._check_single_objective(study)
        if self._warn:
            self._warn_independent(study, trial, param_name, param_distribution)
        if self._independent is not None:
            return self._independent.sample_independent(study, trial, param_name, param_distribution)
        seed = np.random.SeedSequence([self._seed, trial.number, zlib.crc32(param_name.encode("utf-8"))])
        rs = RandomSampler(seed=int(seed.generate_state(1)[0]))
        return rs.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Pass the call on to a given independent sampler."""
        if self._independent is not None:
            self._independent.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        """Forget the trial's fallback mark; pass the call on to a given independent sampler."""
        with self._lock:
            self._fallback.discard(self._trial_key(study, trial))
        if self._independent is not None:
            self._independent.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        """Reseed a given independent sampler (the sampler's own draws are per trial number already)."""
        if self._independent is not None:
            self._independent.reseed_rng()

    # ------------------------------------------------------------------ the rebuild
    def rebuild(self, study: Study, trial: FrozenTrial | int, *,
                search_space: Mapping[str, BaseDistribution] | None = None) -> Rebuild:
        """The optimizer the sampler asks for ``trial`` (steps 1-4 of the module docstring).

        Parameters
        ----------
        study : optuna.Study
        trial : optuna.trial.FrozenTrial or int
            The trial to propose for (or its number); it is neither told nor pending.
        search_space : mapping, optional
            The relative search space (default: :meth:`infer_relative_search_space`).

        Returns
        -------
        Rebuild

        Raises
        ------
        ValueError
            If the search space has no float or int parameter, the study has several
            objectives, or the method cannot be built on the space.
        """
        number = trial if isinstance(trial, (int, np.integer)) else trial.number
        self._check_single_objective(study)
        if search_space is None:
            search_space = self.infer_relative_search_space(study, trial)  # type: ignore[arg-type]
        if not search_space:
            raise ValueError("the study's relative search space has no float or int parameter yet (no trial has "
                             "completed, or every parameter is categorical)")
        t0 = time.perf_counter()
        space = ParameterBox(search_space)
        told_numbers, X, y, failed, pending, P = [], [], [], [], [], []
        for t in study.get_trials(deepcopy=False):
            if t.number == number:
                continue
            if t.state in _PENDING_STATES:
                p = self._pending_point(space, t)
                if p is not None:
                    pending.append(t.number)
                    P.append(p)
                continue
            x = space.trial_point(t)
            if x is None:
                continue
            if t.state == TrialState.COMPLETE:
                value = float(t.value) if t.value is not None else math.nan
            elif t.state in (TrialState.FAIL, TrialState.PRUNED):
                value = math.nan
                failed.append(t.number)
            else:  # pragma: no cover - every finished state is listed above
                continue
            told_numbers.append(t.number)
            X.append(x)
            y.append(value)
        t1 = time.perf_counter()
        X_arr = np.array(X, dtype=float).reshape(-1, space.dim)
        y_arr = np.array(y, dtype=float)
        direction = "maximize" if study.direction == StudyDirection.MAXIMIZE else "minimize"
        key = (study.study_name, direction, space.signature())
        state, cached = self._told_state(key, space, direction, told_numbers, X_arr, y_arr)
        method_state = dict(state["method"])
        method_state["pending"] = [p.tolist() for p in P]
        method_state["rng"] = generator_state(np.random.default_rng([self._seed, int(number)]))
        opt = Optimizer.from_state({**state, "method": method_state})
        t2 = time.perf_counter()
        failed_set = set(failed)
        observed = [n for n in told_numbers if n not in failed_set]
        return Rebuild(optimizer=opt, space=space, observed=observed, failed=failed, pending=pending,
                       cached=cached, read_s=t1 - t0, rebuild_s=t2 - t1)

    def _told_state(self, key: tuple, space: ParameterBox, direction: str, numbers: list[int],
                    X: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[dict[str, Any], bool]:
        """``Optimizer.state_dict()`` after telling ``(X, y)`` (step 3), from the cache when it has a prefix."""
        entry = None
        if self._use_cache:
            with self._lock:
                entry = self._cache.get(key)
        k = 0
        if entry is not None:
            k = len(entry.numbers)
            ok = k <= len(numbers) and entry.numbers == numbers[:k]
            ok = ok and np.array_equal(entry.X, X[:k]) and np.array_equal(entry.y, y[:k], equal_nan=True)
            if not ok:
                entry, k = None, 0
        if entry is not None and k == len(numbers):
            return entry.state, True
        try:
            if entry is not None:
                opt = Optimizer.from_state(entry.state)
            else:
                opt = Optimizer(space.box, method=self.method, seed=self._seed, direction=direction, **self.options)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"HDBOSampler: method {self.method!r} cannot be built on the study's {space.dim} float/int "
                            f"parameter(s) {space.names}: {exc}") from exc
        if len(numbers) > k:
            values = [None if math.isnan(v) else float(v) for v in y[k:]]
            opt.tell(X[k:], values)
        state = opt.state_dict()
        if self._use_cache:
            with self._lock:
                self._cache[key] = _Told(numbers=list(numbers), X=X.copy(), y=y.copy(), state=state)
                self._cache.move_to_end(key)
                while len(self._cache) > _CACHE_SLOTS:
                    self._cache.popitem(last=False)
        return state, entry is not None

    @staticmethod
    def _pending_point(space: ParameterBox, t: FrozenTrial) -> NDArray[np.float64] | None:
        """The point of a running or waiting trial, or None if it is not known yet.

        Its parameters when all are in the storage; else the proposal this sampler published
        for it (system attribute :data:`SYSTEM_ATTR`) or, for an enqueued trial, its fixed
        parameters, either completed by the parameters already stored.
        """
        x = space.trial_point(t)
        if x is not None:
            return x
        published = t.system_attrs.get(SYSTEM_ATTR)
        sources = [published.get("params") if isinstance(published, dict) else None,
                   t.system_attrs.get("fixed_params")]
        for source in sources:
            if isinstance(source, dict):
                try:
                    return space.encode({**source, **t.params})
                except (KeyError, TypeError, ValueError):
                    continue
        return None

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _check_single_objective(study: Study) -> None:
        if len(study.directions) > 1:
            raise ValueError(
                f"HDBOSampler optimizes a single objective, but study {study.study_name!r} has "
                f"{len(study.directions)} ({', '.join(d.name.lower() for d in study.directions)}); hdbo has no "
                "multi-objective method (Optuna's NSGAIISampler or TPESampler handle such studies)")

    @staticmethod
    def _trial_key(study: Study, trial: FrozenTrial) -> tuple:
        return (study.study_name, trial._trial_id, trial.datetime_start)

    def _independent_name(self) -> str:
        if self._independent is not None:
            return type(self._independent).__name__
        return "Optuna's RandomSampler (seeded from the sampler's seed, the trial number and the parameter name)"

    def _warn_once(self, key: tuple[str, str], message: str) -> None:
        if not self._warn:
            return
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        warnings.warn(message, IndependentSamplingWarning, stacklevel=4)

    def _warn_independent(self, study: Study, trial: FrozenTrial, name: str, dist: BaseDistribution) -> None:
        with self._lock:
            fallback = self._trial_key(study, trial) in self._fallback
        if fallback:
            return  # said by sample_relative
        who = self._independent_name()
        if isinstance(dist, CategoricalDistribution):
            self._warn_once(("categorical", name), (
                f"HDBOSampler: parameter {name!r} is categorical; it is sampled independently by {who} (hdbo's "
                "methods search float and int parameters). Said once for this parameter."))
            return
        study_key = (study.study_name, getattr(study, "_study_id", None))
        with self._lock:
            known = study_key in self._known
        if not known:
            known = bool(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
            if known:
                with self._lock:
                    self._known.add(study_key)
        if not known:
            self._warn_once(("startup", ""), (
                f"HDBOSampler: trial {trial.number} is sampled independently by {who}: the search space is not "
                "known before a trial completes (as for every relative sampler in Optuna). Such trials are told to "
                f"the method like any other and count as its initial design. Said once."))
            return
        self._warn_once(("outside", name), (
            f"HDBOSampler: parameter {name!r} is sampled independently by {who}: it is not in the relative search "
            "space (not suggested by every completed trial, or suggested with another range). Said once for this "
            "parameter."))

    def _publish(self, study: Study, trial: FrozenTrial, params: dict[str, Any],
                 extra: dict[str, Any] | None = None) -> None:
        """Store the proposal (and timings) in the trial's system attribute :data:`SYSTEM_ATTR`."""
        value = {"method": self.method, "params": params, **(extra or {})}
        try:
            study._storage.set_trial_system_attr(trial._trial_id, SYSTEM_ATTR, value)
        except AttributeError:  # pragma: no cover - a study object without a storage
            pass

    def _running_duplicate(self, study: Study, trial: FrozenTrial, space: ParameterBox,
                           x: NDArray[np.float64]) -> int | None:
        """The number of another running trial that holds the point ``x`` (box coordinates), or None."""
        for t in study.get_trials(deepcopy=False, states=_PENDING_STATES):
            if t.number == trial.number:
                continue
            p = self._pending_point(space, t)
            if p is not None and space.same(p, x):
                return t.number
        return None

    def _record(self, study: Study, trial: FrozenTrial, rebuilt: Rebuild, params: dict[str, Any] | None,
                ask_s: float, total_s: float, *, fallback: bool = False, duplicate_of: int | None = None) -> None:
        """Keep the proposal's timing and publish it with the proposal (:data:`SYSTEM_ATTR`)."""
        timing = ProposalTiming(
            trial=trial.number, n_observed=len(rebuilt.observed), n_failed=len(rebuilt.failed),
            n_pending=len(rebuilt.pending), cached=rebuilt.cached, read_s=rebuilt.read_s,
            rebuild_s=rebuilt.rebuild_s, ask_s=ask_s, total_s=total_s, fallback=fallback)
        with self._lock:
            self.timings.append(timing)
        extra = {"seconds": {"read": timing.read_s, "rebuild": timing.rebuild_s, "ask": timing.ask_s,
                             "total": timing.total_s},
                 "n_observed": timing.n_observed, "n_failed": timing.n_failed, "n_pending": timing.n_pending,
                 "cached": timing.cached, "fallback": fallback, "duplicate_of": duplicate_of}
        self._publish(study, trial, params if params is not None else {}, extra)


# =========================================================================== hdbo through Optuna
class ThroughOptuna(Method):
    """hdbo through Optuna (``"hdbo-optuna"``): each point proposed by :class:`HDBOSampler`.

    Every :meth:`ask` builds an in-memory Optuna study (``direction="maximize"``, hdbo's
    convention) with one ``FloatDistribution(0, 1)`` per coordinate of the unit cube (the
    box mapped affinely), adds every told evaluation as a trial (failed ones as ``FAIL``
    trials) and every pending point as a ``RUNNING`` trial, and asks it with an
    :class:`HDBOSampler` running ``sampler_method``. The sampler's seed is drawn from the
    method's generator at construction, so a run is deterministic under ``seed`` and
    resumes exactly (the sampler keeps nothing between proposals). The first proposal, made
    before any trial completed, is the sampler's independent random draw; it counts as the
    first point of the method's initial design.

    This is what a user of Optuna runs, with Optuna's overhead included; the suite compares it
    with ``sampler_method`` run by hdbo directly (``docs/guide/optuna.md``).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    seed : int, Generator or None
        Random source (the sampler's seed).
    budget : int, optional
        Passed on to the sampler's method (methods with phases split it).
    structure : dict, optional
        Unused.
    sampler_method : str, default "auto"
        The hdbo method the sampler runs.
    sampler_options : dict, optional
        Options of ``sampler_method`` (JSON values).

    Raises
    ------
    ValueError
        If ``sampler_method`` is not registered or is ``"hdbo-optuna"``.
    TypeError
        If ``sampler_options`` is not a dict of options of ``sampler_method``.
    """

    name = "hdbo-optuna"

    def __init__(self, bounds: Box | ArrayLike, *, sampler_method: str = "auto",
                 sampler_options: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        if sampler_options is None:
            sampler_options = {}
        if not isinstance(sampler_options, dict) or not all(isinstance(k, str) for k in sampler_options):
            raise TypeError(f"sampler_options must be a dict of option names to values, got "
                            f"{type(sampler_options).__name__}")
        if "budget" in sampler_options:
            raise TypeError("sampler_options must not hold 'budget': the method's own budget is passed on")
        HDBOSampler(sampler_method, seed=0, **sampler_options)  # checks the name and the option names
        self.sampler_method = sampler_method
        self.sampler_options = dict(sampler_options)
        self._sampler_seed = int(self.rng.integers(2**31 - 1))

    def _names(self) -> list[str]:
        width = len(str(self.dim - 1))
        return [f"x{i:0{width}d}" for i in range(self.dim)]  # sorted by name = coordinate order

    def _ask(self) -> NDArray[np.float64]:
        from optuna.trial import create_trial

        names = self._names()
        dists = {n: FloatDistribution(0.0, 1.0) for n in names}
        sampler = HDBOSampler(self.sampler_method, seed=self._sampler_seed, warn_independent_sampling=False,
                              cache=False, budget=self.budget, **self.sampler_options)
        verbosity = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        try:
            study = optuna.create_study(direction="maximize", sampler=sampler)
            trials = []
            for u, y in zip(np.clip(self.to_canonical(self.X_all), 0.0, 1.0), self.y_all):
                ok = bool(np.isfinite(y))
                trials.append(create_trial(params={n: float(v) for n, v in zip(names, u)}, distributions=dists,
                                           value=float(y) if ok else None,
                                           state=TrialState.COMPLETE if ok else TrialState.FAIL))
            for u in np.clip(self.pending_canonical, 0.0, 1.0):
                trials.append(create_trial(params={n: float(v) for n, v in zip(names, u)}, distributions=dists,
                                           state=TrialState.RUNNING))
            study.add_trials(trials)
            trial = study.ask(dists)
        finally:
            optuna.logging.set_verbosity(verbosity)
        return np.clip(np.array([trial.params[n] for n in names], dtype=float), 0.0, 1.0)

    def _get_internal_state(self) -> dict[str, Any]:
        return {"sampler_seed": self._sampler_seed}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        from ..methods._state import internal_int

        self._sampler_seed = internal_int(state, "sampler_seed", low=0, high=2**31 - 1)
