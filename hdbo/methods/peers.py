"""Peers: the optimizers people use today, wrapped as hdbo methods (optional extra ``peers``).

``peer:botorch`` (BoTorch's vanilla GP with LogEI), ``peer:tpe`` and ``peer:optuna-gp``
(Optuna's TPE and GP samplers), ``peer:cma`` (CMA-ES from the ``cma`` package) and
``peer:smac`` (SMAC3's random-forest SMBO) run through
``hdbo run``, the store, :func:`hdbo.minimize` and :class:`hdbo.Optimizer` exactly like hdbo's
own methods. They are registered whether or not their packages are installed; the packages are
imported when a peer is built, and a missing one raises :class:`ModuleNotFoundError` naming
the extra. Install torch's CPU wheel first (otherwise pip pulls the CUDA build, about 5.5 GB)::

    pip install torch==2.13.0
    pip install -e ".[peers]"

Every peer works in the unit cube (the user's box mapped affinely), maximizes (hdbo's
convention; BoTorch maximizes too, Optuna's study is created with ``direction="maximize"``,
CMA-ES minimizes ``-y``) and keeps its state as data: the history, the method's generator
and, for BoTorch and CMA-ES, a few numbers drawn at construction. A resumed peer rebuilds its
library object from the stored evaluations (:meth:`Method.from_state`); each wrapper is
written so that the rebuilt object is the one an uninterrupted run holds, so resumed runs
propose the same points (tested), as long as the library versions are the same (a different
BoTorch, Optuna or cma release may change later proposals).

Proposal time is measured by :func:`hdbo.minimize`, :class:`hdbo.Optimizer` and the run
store around :meth:`Method.ask`, as for every method.

Batches (``ask(n)``) and pending points use each library's own mechanism: BoTorch's
``X_pending`` (with ``qLogExpectedImprovement``, since BoTorch's analytic LogEI takes no
pending points), Optuna's ``RUNNING`` trials (TPE's constant liar, the GP sampler's q-batch
log-EI) and CMA-ES's population (a batch draws the current population's next members). With
no point pending, every peer proposes exactly what it proposed before batches existed.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from .._docstrings import fill_doc
from .._validation import check_int
from ..exceptions import StateError
from ._state import internal_array, internal_int, state_int
from .base import Method
from .registry import register

__all__ = ["BoTorchPeer", "OptunaTPEPeer", "OptunaGPPeer", "CMAPeer", "SMACPeer", "PEER_PACKAGES", "PEERS_INSTALL",
           "require_peer_packages"]

# The modules each peer imports when it is built.
PEER_PACKAGES: dict[str, tuple[str, ...]] = {
    "peer:botorch": ("torch", "gpytorch", "botorch"),
    "peer:tpe": ("optuna",),
    "peer:optuna-gp": ("optuna", "torch", "scipy"),
    "peer:cma": ("cma",),
    "peer:smac": ("smac", "ConfigSpace"),
}

PEERS_INSTALL = ('install torch\'s CPU wheel first, `pip install torch==2.13.0` (otherwise pip pulls the CUDA '
                 'build, about 5.5 GB), then the extra: `pip install -e ".[peers]"` (or `pip install botorch optuna '
                 'cma smac`)')


def require_peer_packages(method: str, *modules: str) -> list[Any]:
    """Import the packages a peer needs, or raise one clear error naming the ``peers`` extra.

    Parameters
    ----------
    method : str
        The peer's registry name (for the message).
    *modules : str
        Module names to import.

    Returns
    -------
    list of module

    Raises
    ------
    ModuleNotFoundError
        If a module is missing; the message names the method, the module and how to install
        the extra.
    """
    out = []
    for mod in modules:
        try:
            out.append(importlib.import_module(mod))
        except ImportError as exc:
            raise ModuleNotFoundError(f"method {method!r} needs the package {mod!r}, which is not installed "
                                      f"({exc}); {PEERS_INSTALL}", name=mod) from None
    return out


def _seed_from(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


@contextlib.contextmanager
def _torch_one_thread() -> Iterator[None]:
    """Run a block with torch's intra-op threads at 1 (restored afterwards).

    The GP matrices here have at most a few hundred rows, where threads only compete, as for
    hdbo's own BLAS (``hdbo._threads``; the experiment runner's workers run with one thread):
    one BoTorch fit on 10 points in D = 5 took 0.08 s with one thread and 0.7-2.3 s with
    torch's default 2 on the loaded 2-core development machine.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# =========================================================================== BoTorch
@register
class BoTorchPeer(Method):
    """BoTorch's vanilla Bayesian optimization: ``SingleTaskGP`` + analytic LogEI (``peer:botorch``).

    After an initial design of ``n_init`` scrambled Sobol points (scipy's ``qmc.Sobol``, seeded
    from the method's generator), every proposal fits a fresh ``SingleTaskGP`` to the
    successful evaluations with BoTorch's current defaults: inputs in the unit cube (the box
    mapped affinely), outcomes standardized (``Standardize``), an RBF kernel with one length
    scale per coordinate under the dimension-scaled log-normal prior of Hvarfner et al. (ICML
    2024), no output scale, and BoTorch's default log-normal noise prior; its hyperparameters
    are fitted with ``fit_gpytorch_mll`` (maximum a posteriori). The next point maximizes ``LogExpectedImprovement`` (analytic,
    ``best_f`` = the best value so far) with ``optimize_acqf(q=1, num_restarts=10,
    raw_samples=512)`` over the unit cube, the values of BoTorch's tutorials. Double
    precision throughout, on one torch thread (see ``_torch_one_thread``); torch's random state is seeded from the method's generator before
    each proposal inside ``torch.random.fork_rng`` (the caller's torch state is untouched), so a
    run is deterministic under ``seed`` and a resumed run proposes what an uninterrupted one
    would (the fit starts from BoTorch's defaults each time, never from the previous fit).

    Failed evaluations are never shown to the GP; with fewer than two successes after the
    initial design the proposal is a uniformly random point. If the fit or the acquisition
    optimization raises, a ``RuntimeWarning`` is issued and a random point proposed.

    Batches: the initial design hands out its next Sobol points (``ask(n)`` during the design
    returns the design's next points, then model-based ones). After it, pending points (asked,
    not told) are given to BoTorch as ``X_pending``: the proposal maximizes
    ``qLogExpectedImprovement`` (BoTorch's Monte Carlo LogEI, quasi-random base samples
    seeded like the rest, ``best_f`` the best value so far) jointly over the candidate and the
    pending points, BoTorch's own way of accounting for evaluations in flight; ``ask(n)``
    returns ``n`` points, each proposed with the earlier ones pending. With nothing pending it
    is the analytic LogEI above.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    seed : int, Generator or None
        Random source (the Sobol design and torch's seed at each proposal).
    budget : int, optional
        Unused.
    structure : dict, optional
        Unused.
    n_init : int, default 10
        Size of the initial Sobol design (hdbo's GP methods' default; BoTorch's tutorials use
        2 (D + 1), which exceeds a budget of 100 beyond D = 48).
    num_restarts : int, default 10
        ``optimize_acqf``'s number of L-BFGS-B restarts.
    raw_samples : int, default 512
        ``optimize_acqf``'s number of raw samples for choosing the restarts.

    Raises
    ------
    ModuleNotFoundError
        If torch, botorch or gpytorch is missing (install the ``peers`` extra).
    """

    name = "peer:botorch"

    def __init__(self, bounds, *, n_init: int = 10, num_restarts: int = 10, raw_samples: int = 512,
                 **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.n_init = check_int(n_init, "n_init", low=1)
        self.num_restarts = check_int(num_restarts, "num_restarts", low=1)
        self.raw_samples = check_int(raw_samples, "raw_samples", low=1)
        require_peer_packages(self.name, *PEER_PACKAGES[self.name])
        from scipy.stats import qmc

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Sobol balance warning when n_init is not a power of 2
            self._design = qmc.Sobol(self.dim, scramble=True, seed=_seed_from(self.rng)).random(self.n_init)

    def _ask(self) -> NDArray[np.float64]:
        # The design's next point, past those told and those out (sequential use: design[n_told]).
        for i in range(self.n_told + self.n_pending, self.n_init):
            if not self._repeats_pending(self._design[i]) and not self._was_told(self._design[i]):
                return self._design[i].copy()
        X, y = self.X_obs, self.y_obs
        if y.size < 2:
            return self.rng.random(self.dim)
        seed = _seed_from(self.rng)
        try:
            return self._propose(X, y, seed, self.pending_canonical if self.n_pending else None)
        except Exception as exc:  # noqa: BLE001  (a library failure must not end a run)
            warnings.warn(f"{self.name}: GP fit or LogEI optimization failed ({type(exc).__name__}: {exc}); "
                          "proposing a random point", RuntimeWarning, stacklevel=3)
            return self.rng.random(self.dim)

    def _was_told(self, u: NDArray[np.float64]) -> bool:
        """Whether canonical ``u`` was told already (within 1e-9)."""
        if not self.n_told:
            return False
        return bool(np.any(np.max(np.abs(self.to_canonical(self.X_all) - u), axis=1) <= 1e-9))

    def _propose(self, X: NDArray[np.float64], y: NDArray[np.float64], seed: int,
                 X_pending: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """Fit the GP and maximize LogEI (qLogEI given ``X_pending``, shape (p, D)); a unit-cube point."""
        import torch
        from botorch.acquisition.analytic import LogExpectedImprovement
        from botorch.acquisition.logei import qLogExpectedImprovement
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms.outcome import Standardize
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood

        with torch.random.fork_rng(devices=[]), _torch_one_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BoTorch's optimization-progress and input-data warnings
            torch.manual_seed(seed)
            tX = torch.tensor(X, dtype=torch.float64)
            tY = torch.tensor(y, dtype=torch.float64).unsqueeze(-1)
            model = SingleTaskGP(tX, tY, outcome_transform=Standardize(m=1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            if X_pending is None:
                acq = LogExpectedImprovement(model, best_f=tY.max())
            else:  # BoTorch's pending points need its Monte Carlo LogEI (the analytic one refuses them)
                acq = qLogExpectedImprovement(model, best_f=tY.max(),
                                              X_pending=torch.tensor(X_pending, dtype=torch.float64))
            box = torch.stack([torch.zeros(self.dim, dtype=torch.float64), torch.ones(self.dim, dtype=torch.float64)])
            cand, _ = optimize_acqf(acq, bounds=box, q=1, num_restarts=self.num_restarts,
                                    raw_samples=self.raw_samples)
        return np.clip(cand.detach().numpy().reshape(-1).astype(float), 0.0, 1.0)

    def _get_internal_state(self) -> dict[str, Any]:
        return {"design": self._design.tolist()}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self._design = internal_array(state, "design", shape=(self.n_init, self.dim), low=0.0, high=1.0)


# =========================================================================== Optuna
# The arguments every Optuna peer shares, in the Parameters section of each.
_OPTUNA_DOC = {
    "optuna_common": """
    bounds : Box or array_like of shape (D, 2)
        Search box.
    seed : int, Generator or None
        Random source (the sampler's seed at each proposal).
    budget : int, optional
        Unused.
    structure : dict, optional
        Unused.
    """,
}


class _OptunaPeer(Method):
    """An Optuna sampler driven through ask/tell on an in-memory study (one float per coordinate)."""

    def __init__(self, bounds, *, n_startup_trials: int = 10, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.n_startup_trials = check_int(n_startup_trials, "n_startup_trials", low=0)
        require_peer_packages(self.name, *PEER_PACKAGES[self.name])

    def _sampler(self, optuna: Any, seed: int) -> Any:
        raise NotImplementedError

    def _ask(self) -> NDArray[np.float64]:
        """A fresh study with every told evaluation and every pending point (a RUNNING trial); ask it."""
        import optuna
        from optuna.distributions import FloatDistribution
        from optuna.trial import TrialState, create_trial

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        names = [f"x{i}" for i in range(self.dim)]
        dists = {n: FloatDistribution(0.0, 1.0) for n in names}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study = optuna.create_study(direction="maximize", sampler=self._sampler(optuna, _seed_from(self.rng)))
        U = np.clip(self.to_canonical(self.X_all), 0.0, 1.0)
        trials = []
        for u, y in zip(U, self.y_all):
            ok = bool(np.isfinite(y))
            trials.append(create_trial(params={n: float(v) for n, v in zip(names, u)}, distributions=dists,
                                       value=float(y) if ok else None,
                                       state=TrialState.COMPLETE if ok else TrialState.FAIL))
        for u in np.clip(self.pending_canonical, 0.0, 1.0):  # evaluations in flight
            trials.append(create_trial(params={n: float(v) for n, v in zip(names, u)}, distributions=dists,
                                       state=TrialState.RUNNING))
        study.add_trials(trials)
        threads = _torch_one_thread() if "torch" in PEER_PACKAGES[self.name] else contextlib.nullcontext()
        with threads, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. GPSampler's fallback notices
            trial = study.ask(dists)
        return np.clip(np.array([trial.params[n] for n in names], dtype=float), 0.0, 1.0)


@register
@fill_doc(**_OPTUNA_DOC)
class OptunaTPEPeer(_OptunaPeer):
    """Optuna's TPE sampler (``peer:tpe``) through Optuna's ask/tell.

    Each proposal builds an in-memory study (``direction="maximize"``) with one
    ``FloatDistribution(0, 1)`` per coordinate of the unit cube (the box mapped affinely),
    adds every told evaluation as a trial (failed ones as ``FAIL`` trials, which TPE ignores)
    and asks a ``TPESampler`` with Optuna's defaults (``n_startup_trials=10`` random trials,
    24 EI candidates, independent univariate Parzen estimators) seeded from the method's
    generator. TPE refits its estimators from all trials at every proposal anyway, so this
    proposes what a long-lived study would up to the random stream, and a run is deterministic
    under ``seed`` and resumes exactly. ``optuna.logging`` is set to WARNING.

    Batches: pending points (asked, not told) are added to the study as ``RUNNING`` trials,
    as several trials asked from one study before any is told would be. TPE's constant liar
    (``constant_liar=True``, set here; Optuna's default since 5.0) counts them among the worse
    trials, which steers the next proposal away from them; ``ask(n)`` returns ``n`` points.
    Random startup trials ignore them (they are independent draws). With nothing pending the
    study is the one described above (the constant liar changes nothing without running
    trials).

    Parameters
    ----------
    %(optuna_common)s
    n_startup_trials : int, default 10
        Random trials before TPE (Optuna's default; failed trials do not count).

    Raises
    ------
    ModuleNotFoundError
        If optuna is missing (install the ``peers`` extra).
    """

    name = "peer:tpe"

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=self.n_startup_trials, constant_liar=True)


@register
@fill_doc(**_OPTUNA_DOC)
class OptunaGPPeer(_OptunaPeer):
    """Optuna's GP sampler (``peer:optuna-gp``) through Optuna's ask/tell.

    As ``peer:tpe`` (one in-memory study per proposal with every told evaluation, failed ones
    as ``FAIL`` trials, which the sampler ignores), with Optuna's ``GPSampler`` at its defaults
    (``n_startup_trials=10`` random trials, then a Matern-5/2 GP with log-EI, noise fitted since
    ``deterministic_objective=False``) seeded from the method's generator. A fresh sampler fits
    its kernel from Optuna's default start at every proposal instead of warm-starting from the
    previous fit, so the run is deterministic under ``seed`` and resumes exactly. Needs torch
    (run on one thread, as ``peer:botorch``).

    Batches: pending points (asked, not told) are added to the study as ``RUNNING`` trials;
    after its startup trials the GP sampler then maximizes its q-batch log-EI jointly over the
    candidate and the running trials (Optuna's own treatment of trials in flight), so
    ``ask(n)`` returns ``n`` points. The random startup trials are independent draws. With
    nothing pending the study is the one described above.

    Parameters
    ----------
    %(optuna_common)s
    n_startup_trials : int, default 10
        Random trials before the GP (Optuna's default; failed trials do not count).

    Raises
    ------
    ModuleNotFoundError
        If optuna, torch or scipy is missing (install the ``peers`` extra).
    """

    name = "peer:optuna-gp"

    def _sampler(self, optuna: Any, seed: int) -> Any:
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=self.n_startup_trials)


# =========================================================================== CMA-ES
@register
class CMAPeer(Method):
    """CMA-ES from the ``cma`` package (``peer:cma``), one point at a time from its populations.

    ``cma.CMAEvolutionStrategy`` runs on the unit cube (the box mapped affinely) with bounds
    ``[0, 1]`` handled by cma's ``bounds`` option (its default ``BoundTransform``), initial mean
    ``x0`` a uniformly random point drawn from the seed (not the centre, so the box's centre is
    not special), initial step ``sigma0 = 0.3`` (about a third of the cube's width, cma's advice
    for a start anywhere in the domain) and cma's default population size ``4 + 3 ln D``
    unless ``popsize`` is given. cma's normal samples come from a NumPy generator seeded from the
    method's seed (cma's ``randn`` option; NumPy's global random state is never touched), and
    its console and file output is off.

    :meth:`ask` returns the current population's next candidate that is neither told nor
    pending; :meth:`tell` records a value for it, in any order, and when the whole population
    has values it is told to cma in the population's order. A told point that is not a
    candidate (e.g. a repeated failure's random replacement) takes the place of the first
    candidate neither told nor pending and is passed as an injected solution; if every
    remaining candidate is out, it is recorded in the history but not given to cma. A failed
    evaluation gets the value ``worst + 1`` (worst over the successes told so far, in cma's
    minimized ``-y``; 0 if none succeeded). cma's stopping criteria are not acted on (no
    restarts): a converged run keeps sampling from its final distribution.

    Batches: ``ask(n)`` returns the current population's next candidates, at most the ones
    neither told nor out. CMA-ES samples its next population only after the whole current
    one is told, so once all of its remaining candidates are out ``ask(n)`` returns fewer
    (an empty ``(0, D)`` array; ``ask()`` raises :class:`~hdbo.exceptions.PendingError`)
    until they are told. With the default population ``4 + 3 ln D`` (9 in D = 6) a batch of
    up to that size is full at the start of a population.

    The state holds ``x0``, cma's seed and the population slot each told point filled; a
    resumed run replays the history through a fresh ``CMAEvolutionStrategy`` with those
    slots, which reproduces the uninterrupted run's populations exactly (states written
    before batches, without slots, replay in the order told, as those runs filled them).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box, D >= 2.
    seed : int, Generator or None
        Random source (``x0`` and cma's samples).
    budget : int, optional
        Unused.
    structure : dict, optional
        Unused.
    sigma0 : float, default 0.3
        Initial step size in the unit cube.
    popsize : int or None, default None
        Population size (None: cma's default ``4 + int(3 ln D)``).

    Raises
    ------
    ValueError
        If the box has a single coordinate, or an option is out of range.
    ModuleNotFoundError
        If cma is missing (install the ``peers`` extra).
    """

    name = "peer:cma"

    def __init__(self, bounds, *, sigma0: float = 0.3, popsize: int | None = None, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        from .._validation import check_real

        if self.dim < 2:
            raise ValueError(f"bounds must have D >= 2 coordinates for method {self.name!r} (cma's CMA-ES does not "
                             f"run 1-dimensional problems), got D = {self.dim}")

        self.sigma0 = check_real(sigma0, "sigma0", low=0.0, low_inclusive=False, high=1.0)
        self.popsize = check_int(popsize, "popsize", low=2, allow_none=True)
        require_peer_packages(self.name, *PEER_PACKAGES[self.name])
        self._x0 = self.rng.random(self.dim)
        self._cma_seed = _seed_from(self.rng)
        self._es: Any = None
        # Population slot each told point filled (history order); None: not given to cma.
        # Entries missing at the end (a state written before batches) replay in telling order.
        self._slots: list[int | None] = []

    # -- the cma object, rebuilt from the history when needed
    def _build(self, n_replay: int) -> None:
        """A fresh ``CMAEvolutionStrategy`` fed the first ``n_replay`` told points (exact replay)."""
        import cma

        gen = np.random.default_rng(self._cma_seed)
        opts = {"bounds": [0.0, 1.0], "seed": np.nan, "randn": lambda lam, n: gen.standard_normal((lam, n)),
                "verbose": -9, "verb_log": 0, "verb_disp": 0}
        if self.popsize is not None:
            opts["popsize"] = self.popsize
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._es = cma.CMAEvolutionStrategy(np.array(self._x0, dtype=float), self.sigma0, opts)
        self._pop: list[NDArray[np.float64]] = []
        # per slot of the population: (solution given to cma, -y or NaN), None until told
        self._told: list[tuple[NDArray[np.float64], float] | None] = []
        self._worst = -np.inf  # largest -y over the successes fed so far
        U = np.clip(self.to_canonical(self.X_all), 0.0, 1.0)
        for i in range(n_replay):
            if i < len(self._slots):
                self._fill(self._slots[i], U[i], self._y[i])
            else:  # a state written before batches: the order told fills the slots
                self._slots.append(self._feed(U[i], self._y[i], sequential=True))

    def _new_population(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._pop = [np.asarray(p, dtype=float) for p in self._es.ask()]
        self._told = [None] * len(self._pop)

    def _candidate(self, j: int) -> NDArray[np.float64]:
        return np.clip(self._pop[j], 0.0, 1.0)

    def _feed(self, u: NDArray[np.float64], y: float, *, sequential: bool = False) -> int | None:
        """Give a told point to the population; return the slot it filled (None: not given to cma).

        A candidate not yet told fills its own slot; another point the first slot neither told
        nor pending (``sequential``: the first not told), as an injected solution.
        """
        if not self._pop:
            self._new_population()
        free = [j for j, t in enumerate(self._told) if t is None]
        if sequential:
            slot: int | None = free[0]
        else:
            same = [j for j in free if np.max(np.abs(self._candidate(j) - u)) <= 1e-9]
            idle = [j for j in free if not self._repeats_pending(self._candidate(j))]
            slot = same[0] if same else (idle[0] if idle else None)
        self._fill(slot, u, y)
        return slot

    def _fill(self, slot: int | None, u: NDArray[np.float64], y: float) -> None:
        """Record a told point in ``slot`` of the population; tell cma once every slot is filled."""
        if slot is None:
            return
        if not self._pop:
            self._new_population()
        if not 0 <= slot < len(self._pop) or self._told[slot] is not None:
            raise StateError(f"state['internal']['slots'] refers to slot {slot} of a population of "
                             f"{len(self._pop)}, which is not free")
        cand = self._pop[slot]
        sol = cand if np.max(np.abs(cand - u)) <= 1e-9 else np.asarray(u, dtype=float)
        f = -float(y) if np.isfinite(y) else np.nan
        if np.isfinite(f):
            self._worst = max(self._worst, f)
        self._told[slot] = (sol, f)
        if all(t is not None for t in self._told):
            worst = self._worst if np.isfinite(self._worst) else 0.0
            sols = [t[0] for t in self._told if t is not None]
            vals = [t[1] if np.isfinite(t[1]) else worst + 1.0 for t in self._told if t is not None]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._es.tell(sols, vals)
            self._pop, self._told = [], []

    def _ask(self) -> NDArray[np.float64] | None:
        if self._es is None:
            self._build(self.n_told)
        if not self._pop:
            self._new_population()
        for j, t in enumerate(self._told):
            if t is None and not self._repeats_pending(self._candidate(j)):
                return self._candidate(j).copy()
        return None  # the rest of the population is out: cma needs its values for the next one

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        if self._es is None:
            self._build(self.n_told - 1)  # replays the history before this evaluation
        self._slots.append(self._feed(np.clip(u, 0.0, 1.0), y))

    def _get_internal_state(self) -> dict[str, Any]:
        return {"x0": self._x0.tolist(), "cma_seed": self._cma_seed, "slots": list(self._slots)}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self._x0 = internal_array(state, "x0", shape=(self.dim,), low=0.0, high=1.0)
        self._cma_seed = internal_int(state, "cma_seed", low=0, high=2**63 - 1)
        slots = state.get("slots", [])  # states written before batches have none
        if not isinstance(slots, list) or len(slots) > self.n_told:
            raise StateError(f"state['internal']['slots'] must be a list of at most {self.n_told} slots")
        self._slots = [None if v is None else state_int(v, f"state['internal']['slots'][{i}]", low=0)
                       for i, v in enumerate(slots)]
        self._es = None
        if self._slots:
            self._build(self.n_told)  # replay now: slots that do not fit fail on loading

    def diagnostics(self) -> dict[str, Any]:
        """cma's current step size (None before the first proposal).

        Returns
        -------
        dict
            ``{"sigma": float or None}``.
        """
        return {"sigma": None if self._es is None else float(self._es.sigma)}


# =========================================================================== SMAC3
@register
class SMACPeer(Method):
    """SMAC3's random-forest SMBO (``peer:smac``) through SMAC's ask/tell.

    SMAC (Hutter, Hoos, Leyton-Brown 2011) models the objective with a random forest and
    maximizes expected improvement by local search from the best configurations seen plus
    random sampling, with random configurations interleaved. This peer runs SMAC3's
    ``HyperparameterOptimizationFacade`` at its defaults on the unit cube (one ``Float`` in
    ``[0, 1]`` per coordinate; the box mapped affinely): a scrambled Sobol initial design of
    ``min(10 D, budget / 4)`` points, a random forest of 10 trees on log-scaled costs, log-EI
    maximized over ``challengers = 10000`` candidates, each configuration drawn at random with
    probability 0.2, and a new model every 8 proposals. The forest is fitted and queried on one
    thread (SMAC's default uses every core through joblib threads, which on a shared machine
    mostly wait; the trees are the same). The scenario is deterministic (one evaluation per
    configuration) with ``n_trials = budget`` (SMAC's own default of 100 without a budget,
    which only sizes the initial design: proposals go on past it). SMAC minimizes; it is told
    ``-y``. SMAC's seed (scenario, configuration space) is drawn from the method's generator.
    Nothing is written to the working directory (SMAC's output goes to a temporary directory
    removed with the method) and SMAC's logging setup is not run.

    A failed evaluation is told to SMAC with the worst cost told so far; failures before the
    first success are held back and told with that success's cost right after it (SMAC's own
    crash cost, infinite by default, would leave its forest with NaN targets). A told point
    that SMAC did not propose (a user's own point, a failure's replacement, a cancelled
    proposal) is told as a trial SMAC did not ask, on the intensifier's seed.

    The state holds SMAC's seed and the order of SMAC's asks, of the tells and of cancelled
    proposals. Restoring a state replays them through a fresh SMAC (SMAC asked again where it
    asked, each point told where it was told, matched to SMAC's proposals as in the run).
    SMAC is deterministic under its seed, so this rebuilds the uninterrupted run's SMAC,
    pending proposals included, and the next proposals are the same (tested), as long as the
    SMAC and ConfigSpace versions are the same (with others the history is told as it was, and
    the proposals differ). The replay costs what those proposals cost the first time (at
    D = 50, about 30 s for every 8 proposals of SMAC's model on a shared core): it happens when
    the state is restored, not in the next proposal's time. Where a method is rebuilt from its
    state for every proposal or every few seconds (:class:`~hdbo.integrations.optuna.HDBOSampler`,
    the runner's Dask chunks) the replays add up to a cost quadratic in the history: run
    ``peer:smac`` in one process (``hdbo.minimize``, :class:`~hdbo.Optimizer`, the runner's
    local workers).

    Batches: ``ask(n)`` makes n consecutive SMAC asks, SMAC's own way of serving parallel
    workers (its intensifier hands out new configurations while others run).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    seed : int, Generator or None
        Random source (SMAC's seed).
    budget : int, optional
        SMAC's ``n_trials`` (sizes the default initial design: a quarter of it at most).
    structure : dict, optional
        Unused.
    n_init : int or None, default None
        Size of the Sobol initial design (None: SMAC's default ``min(10 D, budget / 4)``; a
        size given is not capped).
    challengers : int, default 10000
        Candidates of SMAC's acquisition search (local search plus random sampling; SMAC's
        default).

    Raises
    ------
    ValueError
        If an option is out of range.
    ModuleNotFoundError
        If smac or ConfigSpace is missing (install the ``peers`` extra).
    """

    name = "peer:smac"

    def __init__(self, bounds, *, n_init: int | None = None, challengers: int = 10000, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.n_init = check_int(n_init, "n_init", low=1, allow_none=True)
        self.challengers = check_int(challengers, "challengers", low=1)
        require_peer_packages(self.name, *PEER_PACKAGES[self.name])
        self._smac_seed = _seed_from(self.rng)
        self._smac: Any = None
        self._tmp: Any = None
        # "a": SMAC asked; "t": a point told (in the history's order); "c<j>." / "c*.": SMAC's j-th
        # proposal not yet told (all of them) cancelled
        self._events: list[str] = []
        self._held: list[Any] = []  # failed trials told before any success (told once one succeeds)
        self._proposed = 0  # told points that SMAC proposed
        self._out: list[tuple[NDArray[np.float64], Any]] = []  # SMAC's proposals not told yet
        self._trial_seed: int | None = None  # the intensifier's seed, known from the first proposal
        self._worst = -np.inf  # largest cost (-y) told so far

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """SMAC's loggers at ERROR and its warnings off for one call (restored afterwards)."""
        import logging

        logger = logging.getLogger("smac")
        before = logger.level
        logger.setLevel(logging.ERROR)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            logger.setLevel(before)

    def _build(self) -> None:
        """A fresh SMAC that has seen the recorded asks, tells and cancellations again, in their order.

        If the replay is interrupted (an error, Ctrl-C), no half-replayed SMAC is kept: the
        next ask or tell replays again.
        """
        import tempfile

        from ConfigSpace import ConfigurationSpace, Float
        from smac import HyperparameterOptimizationFacade as HPO
        from smac import Scenario

        cs = ConfigurationSpace(seed=self._smac_seed)
        cs.add([Float(f"x{i}", (0.0, 1.0)) for i in range(self.dim)])
        self._tmp = tempfile.TemporaryDirectory(prefix="hdbo-smac-")
        extra = {} if self.budget is None else {"n_trials": int(self.budget)}
        # SMAC caps a design at max_ratio * n_trials (a quarter by default), also a design size given
        design_opts = {} if self.n_init is None else {"n_configs": self.n_init, "max_ratio": 1.0}
        with self._quiet():
            scenario = Scenario(cs, deterministic=True, seed=self._smac_seed, output_directory=self._tmp.name,
                                **extra)
            design = HPO.get_initial_design(scenario, **design_opts)
            maximizer = HPO.get_acquisition_maximizer(scenario, challengers=self.challengers)
            model = HPO.get_model(scenario)
            opts = getattr(model, "_rf_opts", None)
            if isinstance(opts, dict) and "n_jobs" in opts:  # one thread (SMAC's default: every core)
                opts["n_jobs"] = 1
            else:  # pragma: no cover - another SMAC release
                warnings.warn("peer:smac: could not set SMAC's random forest to one thread", RuntimeWarning,
                              stacklevel=3)
            smac = HPO(scenario, target_function=_smac_unused_target, model=model, initial_design=design,
                       acquisition_maximizer=maximizer, overwrite=True, logging_level=False)
        self._space = cs
        self._smac = smac
        self._out, self._held, self._trial_seed, self._worst, self._proposed = [], [], None, -np.inf, 0
        U = np.clip(self.to_canonical(self.X_all), 0.0, 1.0)
        told = 0
        try:
            for token in self._events:
                if token == "a":
                    self._out.append(self._smac_ask())
                elif token == "t":
                    self._match_and_tell(U[told], self._y[told])
                    told += 1
                else:
                    self._drop(None if token == "c*." else int(token[1:-1]))
        except BaseException:
            self._smac = None
            raise

    def _smac_ask(self) -> tuple[NDArray[np.float64], Any]:
        with self._quiet():
            info = self._smac.ask()
        if self._trial_seed is None:
            self._trial_seed = info.seed
        u = np.clip(np.array([info.config[f"x{i}"] for i in range(self.dim)], dtype=float), 0.0, 1.0)
        return u, info

    def _smac_tell(self, info: Any, cost: float) -> None:
        from smac.runhistory.dataclasses import TrialValue

        with self._quiet():
            self._smac.tell(info, TrialValue(cost=float(cost)), save=False)

    def _match_and_tell(self, u: NDArray[np.float64], y: float) -> None:
        """Tell ``u``: as the SMAC proposal it is (within 1e-9), else as a trial SMAC did not ask.

        A failure is told with the worst cost told so far; failures before the first success
        are held back and told with the first success's cost right after it.
        """
        from ConfigSpace import Configuration
        from smac.runhistory.dataclasses import TrialInfo

        j = self._proposal_index(u)
        info = self._out.pop(j)[1] if j is not None else None
        self._proposed += info is not None
        if info is None:
            config = Configuration(self._space, values={f"x{i}": float(v) for i, v in enumerate(u)})
            info = TrialInfo(config=config, seed=self._trial_seed if self._trial_seed is not None else 0)
        if not np.isfinite(y):
            if np.isfinite(self._worst):
                self._smac_tell(info, self._worst)
            else:
                self._held.append(info)
            return
        self._worst = max(self._worst, -float(y))
        self._smac_tell(info, -float(y))
        for held in self._held:
            self._smac_tell(held, self._worst)
        self._held = []

    def _proposal_index(self, u: NDArray[np.float64]) -> int | None:
        """Index of the first SMAC proposal not yet told within 1e-9 of ``u`` (None: no such one)."""
        for j, (v, _) in enumerate(self._out):
            if np.max(np.abs(v - u)) <= 1e-9:
                return j
        return None

    def _drop(self, j: int | None) -> None:
        """Forget SMAC's proposal ``j`` of those not told (None: all of them)."""
        if j is None:
            self._out = []
        elif 0 <= j < len(self._out):
            self._out.pop(j)

    def _ask(self) -> NDArray[np.float64]:
        if self._smac is None:
            self._build()
        try:
            out = self._smac_ask()
        except BaseException:  # SMAC's proposal generator does not survive an exception: rebuild next time
            self._smac = None
            raise
        self._out.append(out)
        self._events.append("a")
        return out[0].copy()

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        self._events.append("t")
        if self._smac is None:
            self._build()  # replays the history, this evaluation included
            return
        try:
            self._match_and_tell(np.clip(u, 0.0, 1.0), y)
        except BaseException:
            self._smac = None
            raise

    def _on_cancel(self, u: NDArray[np.float64] | None) -> None:
        if u is None:
            self._events.append("c*.")
            if self._smac is not None:
                self._drop(None)
            return
        if self._smac is None:
            self._build()
        j = self._proposal_index(u)
        if j is not None:
            self._events.append(f"c{j}.")
            self._drop(j)

    def _get_internal_state(self) -> dict[str, Any]:
        return {"smac_seed": self._smac_seed, "events": "".join(self._events)}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self._smac_seed = internal_int(state, "smac_seed", low=0, high=2**31 - 1)
        events = state.get("events")
        try:
            tokens = _smac_tokens(events) if isinstance(events, str) else None
        except ValueError:
            tokens = None
        if tokens is None or tokens.count("t") != self.n_told or tokens.count("a") > 10 * (self.n_told + 1) + 1000:
            raise StateError(f"state['internal']['events'] must be a string of 'a' (SMAC asked), 't' (a point told) "
                             f"and 'c<j>.' or 'c*.' (proposals cancelled) with {self.n_told} 't'")
        self._events = tokens
        self._smac = None
        self._build()  # the replay happens here, not inside the next (timed) proposal

    def diagnostics(self) -> dict[str, Any]:
        """How many told points SMAC proposed itself.

        Returns
        -------
        dict
            ``{"smac_proposed": int}``.
        """
        return {"smac_proposed": int(self._proposed)}


def _smac_tokens(events: str) -> list[str]:
    """Split a ``peer:smac`` event string into its tokens ``"a"``, ``"t"``, ``"c<j>."`` and ``"c*."``."""
    out: list[str] = []
    i = 0
    while i < len(events):
        ch = events[i]
        if ch in "at":
            out.append(ch)
            i += 1
        elif ch == "c":
            end = events.find(".", i)
            body = events[i + 1:end] if end > 0 else ""
            if body != "*" and not body.isdigit():
                raise ValueError(f"bad cancellation at {i} in {events[i:i + 12]!r}")
            out.append(f"c{body}.")
            i = end + 1
        else:
            raise ValueError(f"unexpected {ch!r} at {i}")
    return out


def _smac_unused_target(config: Any, seed: int = 0) -> float:
    """SMAC's facade wants a target function; with ask/tell it is never called."""
    raise RuntimeError("peer:smac evaluates through hdbo's ask/tell; SMAC's own loop is not used")
