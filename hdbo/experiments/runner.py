"""Execute runs (one problem x one method x one seed x one budget) and resume interrupted ones.

A run is described by a :class:`~hdbo.experiments.store.RunConfig`. :func:`run_one`
executes it in this process against a :class:`~hdbo.experiments.store.RunStore`, writing
every evaluation as it happens; :func:`run_many` executes a list of them serially, in a
local process pool or on a Dask cluster, skipping the finished ones. Whatever executes the
runs, only the process that called :func:`run_many` (the *driver*) opens the store: worker
processes and Dask tasks receive a run's configuration and what is stored of it, compute
evaluations and send them back, and the driver writes them. No shared file system is needed.

Seeds
-----
The run seed ``s`` seeds three things, through separate streams so that the method's random
draws are independent of the instance it is tested on:

* the problem instance: ``problems.get(name, seed=s, **params)`` (unless ``params`` fixes
  ``seed``), so run seed 3 is the same instance as ``problems.get(name, seed=3)``;
* the method: ``make_method(..., seed=method_seed(s))`` with
  ``method_seed(s) = SeedSequence([s, 1]).generate_state(1)[0]``;
* the observation noise: ``default_rng(SeedSequence([s, 7]))``.

The same configuration therefore always gives the same trace, whatever the number of workers.

Failure policy
--------------
An exception raised by the objective (any :class:`Exception`), or a non-finite observed or
noise-free value, records a *failed* evaluation: ``y`` is NULL in the store, the message is
kept, the method is told ``y=None`` and the run goes on. A failed evaluation counts against
the budget. :class:`KeyboardInterrupt` (and other :class:`BaseException`) is not caught: the
run is marked ``"failed"`` with the reason and stays resumable, and the exception propagates.

One run, one process
--------------------
Before executing a run, :func:`run_one` claims it in the store
(:meth:`~hdbo.experiments.store.RunStore.claim_run`): the run is marked ``"running"`` with
this process's host name and pid, and a heartbeat refreshed at every evaluation. A second
process (another ``hdbo run`` on the same store) that is asked for the same run while its
owner is alive does not execute it: it returns a :class:`RunResult` with
``running_elsewhere=True`` and leaves the run untouched. The claim of a process that died
(pid gone on this host, or no heartbeat for ``stale_after`` seconds from another host) is
taken over and the run resumed. See :mod:`hdbo.experiments.store` for the exact rule.
:func:`run_many` claims every run it hands to a worker process (in the name of that
process) or to Dask (in the name of the driver) the same way, and writes the run's
evaluations under that claim.

Workers
-------
With ``workers > 1``, :func:`run_many` starts that many worker processes (``spawn``), each
executing one run at a time. A worker process never opens the store: it receives the run's
configuration and stored evaluations and states, rebuilds the run from them (as a resume
does), and sends every evaluation back with the method state it produced as soon as it is
computed; the driver stores each one in one SQLite transaction, so a process killed at any
point leaves the store consistent and the run resumable. A worker process that dies (``kill
-9``, the out-of-memory killer, a crash) or is interrupted takes only its own run down: the
driver stores what it sent before dying, records that run as *interrupted* (status
``"failed"``, error ``"interrupted: worker process ... was killed by signal 9 ... (after k of
T evaluations)"``, stored evaluations kept), lists it in :attr:`RunSummary.interrupted`,
starts a new worker while runs are left and finishes the others. The interrupted run is not
retried by the same call (a run that kills its worker, e.g. by exhausting memory, would do
it again): running the same command again resumes it from its last stored evaluation.
Worker processes end when the driver dies (on Linux through ``prctl(PR_SET_PDEATHSIG)``,
everywhere through a thread checking the parent twice a second), so a killed ``hdbo run``
leaves no run executing behind it.

Dask
----
With ``dask_address``, :func:`run_many` connects to a ``dask.distributed`` scheduler and
executes each run as a sequence of tasks. A task receives the run's configuration and its
stored evaluations and states, rebuilds the method from them (as a resume does), executes
evaluations for about ``dask_chunk_seconds`` (at least one; fewer when the run ends) and
returns them with the method state after the last one, plus the method's diagnostics when
the run is over or the error that stopped it. The driver stores the chunk in one
transaction and submits the next task, built from what is now stored; continuing tasks
have priority over first ones, so started runs go first. Tasks do not open the
store, so the Dask workers may run on machines that do not see its file; they need hdbo
(and the plugins, see below) installed. A task lost with its worker (process killed,
machine gone) is rescheduled by Dask on another worker with the same arguments, that is
from what the driver has stored, and because resuming is exact the run ends as if nothing
had happened. Dask gives up on a task whose workers keep dying (more than
``distributed.scheduler.allowed-failures`` times, 3 by default: ``KilledWorker``); the run
is then recorded as interrupted, as with a local worker. Runs executing on Dask are claimed
in the name of the driver; when the driver is stopped (Ctrl-C), its runs are recorded as
interrupted and the next call resumes them.

Resume
------
A run whose status is not ``"finished"`` is resumed from its last stored evaluation: the
method is rebuilt with ``Method.from_state(state, history=(X, y))``, the noise generator from
its stored state, and the loop continues at ``t = n_done``. Because the state and the
evaluation it follows are written in one transaction, a resumed run gives exactly the trace
an uninterrupted run would have given; the same holds for every Dask chunk, so a run gives
the same points and values serially, in worker processes and on Dask.

Problems and methods
--------------------
``config.problem`` and ``config.method`` are names in the problem and method registries
(``hdbo.problems.get``, ``hdbo.methods.make_method``); nothing is imported because of a name
(``"module:attr"`` is refused). A problem or method of your own is registered by a module of
yours, loaded with :func:`hdbo.experiments.plugins.load_plugins` (``--plugin`` on the command
line); :func:`run_many` imports the loaded plugin modules in its worker processes and Dask
tasks too (see :mod:`hdbo.experiments.plugins`), so they must be importable there.
"""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.connection import wait as wait_for_ready
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .._docstrings import fill_doc
from .._progress import Progress
from .._malloc import tune_malloc
from .._threads import blas_threads as limit_blas_threads
from ..methods import Method, make_method
from ..problems.base import Problem
from ..utils import generator_from_state, generator_state
from .plugins import PLUGIN_HELP, check_registry_name, import_plugins, loaded_plugins
from .store import (
    STALE_AFTER_SECONDS,
    ClaimLostError,
    Evaluation,
    RunConfig,
    RunOwner,
    RunRecord,
    RunStore,
)

__all__ = [
    "DASK_CHUNK_SECONDS",
    "METHOD_STREAM",
    "NOISE_STREAM",
    "RunResult",
    "RunSummary",
    "resolve_problem",
    "build_problem",
    "build_method",
    "method_seed",
    "noise_generator",
    "run_one",
    "run_many",
]

#: Second entry of the seed sequence of the method's seed.
METHOD_STREAM = 1
#: Second entry of the seed sequence of the observation-noise generator.
NOISE_STREAM = 7
#: Default seconds of work after which a Dask task returns its evaluations (``run_many``).
DASK_CHUNK_SECONDS = 5.0
#: Seconds the driver waits for its worker processes before looking at them again.
_POLL_SECONDS = 0.5
#: Seconds between two checks, in a worker process, that its parent process is alive.
_PARENT_POLL_SECONDS = 0.5
#: Seconds busy workers get to answer after run_many is interrupted, before they are terminated.
_STOP_GRACE_SECONDS = 3.0
#: Exit status of a worker process that ends because its parent died.
_ORPHAN_EXIT_CODE = 3
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


# ---------------------------------------------------------------------------- problems
def resolve_problem(name: str) -> Callable[..., Problem]:
    """The factory building the registered problem ``name`` (``hdbo.problems.get``).

    Only registered names are accepted: nothing is imported or called because of ``name``.
    Register a problem of your own with :func:`hdbo.problems.register_problem` in a module
    loaded by :func:`hdbo.experiments.plugins.load_plugins`.

    Parameters
    ----------
    name : str
        A problem registry name (see :func:`hdbo.problems.available_problems`).

    Returns
    -------
    callable
        ``factory(**params) -> Problem``.

    Raises
    ------
    TypeError
        ``name`` is not a non-empty string.
    ValueError
        ``name`` is ``"module:attr"`` or not registered (the message lists the registered
        names and how to register one), or the problem registry is not available.
    """
    check_registry_name(name, "problem")
    try:
        from ..problems import available_problems, get as registry_get
    except ImportError as exc:  # the registry is optional while the package is being built
        raise ValueError(f"the problem registry (hdbo.problems.get) is not available: {exc}") from None
    if name not in available_problems():
        raise ValueError(
            f"unknown problem {name!r}; available problems: {', '.join(available_problems())} ({PLUGIN_HELP})"
        )

    def factory(**kwargs: Any) -> Problem:
        return registry_get(name, **kwargs)

    return factory


def build_problem(config: RunConfig) -> Problem:
    """Build the problem instance of a run (the run seed seeds it unless params fix ``seed``).

    Parameters
    ----------
    config : RunConfig
        The run; ``config.problem`` and ``config.problem_params`` are used.

    Returns
    -------
    Problem
        The instance, with bounds of shape (D, 2).

    Raises
    ------
    ValueError
        Unknown problem name or bad parameters (raised by the problem factory).
    TypeError
        The factory did not return a :class:`~hdbo.problems.base.Problem`, or rejected a
        parameter.
    """
    params = dict(config.problem_params)
    params.setdefault("seed", config.seed)
    problem = resolve_problem(config.problem)(**params)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem {config.problem!r} built a {type(problem).__name__}, not a hdbo Problem")
    return problem


# The parameter method_seed and noise_generator share.
_DOC = {
    "run_seed": """
    seed : int
        Run seed, ``>= 0``.
    """,
}


@fill_doc(**_DOC)
def method_seed(seed: int) -> int:
    """The seed given to the method of a run with this run seed (a stream apart from the problem's).

    Parameters
    ----------
    %(run_seed)s

    Returns
    -------
    int
        ``SeedSequence([seed, METHOD_STREAM]).generate_state(1)[0]``.

    Examples
    --------
    >>> method_seed(0) == method_seed(0) != method_seed(1)
    True
    """
    return int(np.random.SeedSequence([int(seed), METHOD_STREAM]).generate_state(1)[0])


@fill_doc(**_DOC)
def noise_generator(seed: int) -> np.random.Generator:
    """The observation-noise generator of a run with this seed.

    Parameters
    ----------
    %(run_seed)s

    Returns
    -------
    numpy.random.Generator
        ``default_rng(SeedSequence([seed, NOISE_STREAM]))``.
    """
    return np.random.default_rng(np.random.SeedSequence([int(seed), NOISE_STREAM]))


def build_method(config: RunConfig, problem: Problem) -> Method:
    """Build the method of a run on the problem's bounds.

    Parameters
    ----------
    config : RunConfig
        The run; ``method``, ``method_params``, ``seed`` and ``budget`` are used.
    problem : Problem
        Supplies the bounds (shape (D, 2)) and the known ``structure``.

    Returns
    -------
    Method
        Seeded with :func:`method_seed` of the run seed.

    Raises
    ------
    ValueError
        Unknown method name or a bad option value.
    TypeError
        An option the method does not take.
    """
    return make_method(
        config.method,
        problem.bounds,
        seed=method_seed(config.seed),
        budget=config.budget,
        structure=problem.structure,
        **config.method_params,
    )


# ---------------------------------------------------------------------------- one run
@dataclass
class RunResult:
    """Outcome of :func:`run_one`.

    Attributes
    ----------
    run_id : int
    status : str
        ``"finished"``; ``"running"`` (or whatever the owner left) when ``running_elsewhere``.
    n_evaluations : int
        Evaluations stored for the run (all of them, not only this session's).
    n_failed_evaluations : int
    resumed_from : int
        Number of evaluations that were already stored when this call started.
    skipped : bool
        The run was already finished; nothing was executed.
    running_elsewhere : bool
        Another live process owns the run (or took it over while this call ran it); this
        call left it alone. Run the same command again later to pick it up if that process
        dies.
    owner : RunOwner or None
        That other process, when ``running_elsewhere``.
    best_f : float or None
        Largest noise-free value among successful evaluations.
    simple_regret : float or None
        Final simple regret (None if the optimum is unknown).
    wall_seconds : float
        Total wall time of the run across sessions.
    error : str or None
    """

    run_id: int
    status: str
    n_evaluations: int
    n_failed_evaluations: int = 0
    resumed_from: int = 0
    skipped: bool = False
    best_f: float | None = None
    simple_regret: float | None = None
    wall_seconds: float = 0.0
    error: str | None = None
    running_elsewhere: bool = False
    owner: RunOwner | None = None


def _finite_or_none(v: Any) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _result_from_store(
    store: RunStore,
    run: RunRecord,
    *,
    resumed_from: int = 0,
    skipped: bool = False,
    elsewhere: RunOwner | None = None,
    running_elsewhere: bool = False,
) -> RunResult:
    ev = store.load_evaluations(run.id)
    ok = np.isfinite(ev.f)
    best_f = float(np.max(ev.f[ok])) if ok.any() else None
    okr = np.isfinite(ev.regret)
    sr = float(np.min(ev.regret[okr])) if okr.any() else None
    return RunResult(
        run_id=run.id,
        status=run.status,
        n_evaluations=len(ev),
        n_failed_evaluations=int(ev.failed.sum()),
        resumed_from=resumed_from,
        skipped=skipped,
        best_f=best_f,
        simple_regret=sr,
        wall_seconds=run.wall_seconds,
        error=run.error,
        running_elsewhere=running_elsewhere,
        owner=elsewhere,
    )


def run_one(
    store: RunStore,
    config: RunConfig,
    *,
    callback: Callable[[Evaluation], Any] | None = None,
    stale_after: float = STALE_AFTER_SECONDS,
) -> RunResult:
    """Execute, or resume, one run and store every evaluation as it happens.

    Parameters
    ----------
    store : RunStore
        Where the run lives (created on first use).
    config : RunConfig
        The run.
    callback : callable, optional
        ``callback(evaluation)`` after each evaluation is stored (``evaluation.x`` of shape
        (D,)); used for progress. An exception it raises stops the run like an error of
        the method.
    stale_after : float, default STALE_AFTER_SECONDS
        Seconds without a heartbeat after which another host's claim on the run is stale
        and taken over (see :meth:`RunStore.claim_run`).

    Returns
    -------
    RunResult
        ``skipped=True`` if the run was already finished; ``running_elsewhere=True`` if
        another live process owns it (nothing was executed or changed).

    Raises
    ------
    ValueError, TypeError
        Unknown problem/method or bad parameters (the run is marked ``"failed"``).
    KeyboardInterrupt
        Passed through after marking the run ``"failed"`` (resumable).
    Exception
        Any error of the method itself is stored with the run (status ``"failed"``) and
        re-raised. Errors of the objective do not stop the run (see the module docstring).

    Examples
    --------
    >>> store = RunStore(":memory:")
    >>> cfg = RunConfig(experiment="demo", problem="branin", method="random", seed=0, budget=5)
    >>> res = run_one(store, cfg)
    >>> res.status, res.n_evaluations, run_one(store, cfg).skipped
    ('finished', 5, True)
    """
    run = store.get_or_create_run(config)
    if run.status == "finished":
        return _result_from_store(store, run, skipped=True)
    claim = store.claim_run(run.id, stale_after=stale_after)
    run = claim.record  # as of the claim: resume from what is stored now
    if not claim.acquired:
        if run.status == "finished":
            return _result_from_store(store, run, skipped=True)
        return _result_from_store(store, run, resumed_from=run.n_evaluations, elsewhere=claim.owner,
                                  running_elsewhere=True)
    me = claim.owner

    session_start = time.perf_counter()
    wall_before = run.wall_seconds

    def wall() -> float:
        return wall_before + (time.perf_counter() - session_start)

    n_done = run.n_evaluations
    try:
        execution = _Execution(config, _resume_point(store, run.id))
        if n_done == 0:
            store.start_run(run.id, noise_rng_state=generator_state(execution.noise_rng))
    except BaseException as exc:
        store.fail_run(run.id, _describe(exc), wall_seconds=wall(), owner=me)
        raise

    try:
        while not execution.complete:
            evaluation = execution.step()
            method_state, noise_rng_state = execution.states()
            store.append_evaluation(
                run.id,
                evaluation,
                method_state=method_state,
                noise_rng_state=noise_rng_state,
                wall_seconds=wall(),
                owner=me,
            )
            if callback is not None:
                callback(evaluation)
        diagnostics = execution.method.diagnostics()
    except ClaimLostError:  # judged stale and taken over: the new owner goes on, we stop quietly
        now = store.get_run(run.id)
        return _result_from_store(store, now, resumed_from=n_done, elsewhere=now.owner, running_elsewhere=True)
    except BaseException as exc:
        done = store.n_evaluations(run.id)
        store.fail_run(
            run.id, f"{_describe(exc)} (after {done} of {config.budget} evaluations)", wall_seconds=wall(), owner=me
        )
        raise
    store.finish_run(run.id, diagnostics=diagnostics, wall_seconds=wall())
    return _result_from_store(store, store.get_run(run.id), resumed_from=n_done)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    msg = str(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _evaluate(
    problem: Problem, x: np.ndarray, rng: np.random.Generator
) -> tuple[float | None, float | None, str | None]:
    """``(y, f, error)``; ``y`` is None for a failed evaluation."""
    try:
        y_raw, f_raw = problem.evaluate(x, rng)
    except Exception as exc:  # the objective's failure is data, not a crash
        return None, None, _describe(exc)
    y_val, f_val = np.asarray(y_raw).reshape(-1)[0], np.asarray(f_raw).reshape(-1)[0]
    y, f = _finite_or_none(y_val), _finite_or_none(f_val)
    if y is None or f is None:
        return None, None, f"non-finite value (y={y_val!r}, f={f_val!r})"
    return y, f, None


# ---------------------------------------------------------------------------- executing away from the store
def _resume_point(store: RunStore, run_id: int) -> dict[str, Any]:
    """What a run is rebuilt from: its stored evaluations and states (see "Resume" above).

    Returns
    -------
    dict
        ``run_id``, ``n_done``, ``method_state`` and ``noise_rng_state`` (None before the
        first evaluation), ``X`` of shape (n_done, D) and ``y`` (length n_done, None for a
        failed evaluation). Plain data: it is sent to worker processes and Dask tasks.
    """
    rec = store.get_run(run_id)
    ev = store.load_evaluations(run_id)
    return {
        "run_id": int(run_id),
        "n_done": len(ev),
        "method_state": rec.method_state,
        "noise_rng_state": rec.noise_rng_state,
        "X": ev.X,
        "y": [None if bad else float(v) for v, bad in zip(ev.y, ev.failed, strict=True)],
    }


class _Execution:
    """A run rebuilt from a resume point and executed one evaluation at a time; no store involved.

    Parameters
    ----------
    config : RunConfig
        The run.
    resume : dict
        :func:`_resume_point` of the run: a new run (``n_done = 0``) is built from its
        configuration, a started one with ``Method.from_state(state, history=(X, y))`` and
        the stored noise-generator state.

    Raises
    ------
    ValueError, TypeError
        Unknown problem or method, bad parameters.
    RuntimeError
        Evaluations are stored but no state to resume from.
    """

    def __init__(self, config: RunConfig, resume: dict[str, Any]) -> None:
        self.config = config
        self.problem = build_problem(config)
        self.t = int(resume["n_done"])
        if self.t == 0:
            self.method = build_method(config, self.problem)
            self.noise_rng = noise_generator(config.seed)
        else:
            if resume["method_state"] is None or resume["noise_rng_state"] is None:
                raise RuntimeError(
                    f"run {resume['run_id']} has {self.t} evaluations but no stored state to resume from"
                )
            self.method = Method.from_state(resume["method_state"], history=(resume["X"], resume["y"]))
            self.noise_rng = generator_from_state(resume["noise_rng_state"])

    @property
    def complete(self) -> bool:
        """The budget is spent, or the method finished before it (``Method.done``)."""
        return self.t >= self.config.budget or self.method.done

    def step(self) -> Evaluation:
        """Ask, evaluate (failures recorded, see "Failure policy"), tell; the evaluation ``t``."""
        t0 = time.perf_counter()
        x = self.method.ask()
        t1 = time.perf_counter()
        y, f, error = _evaluate(self.problem, x, self.noise_rng)
        t2 = time.perf_counter()
        self.method.tell(x, y)
        regret = None
        if f is not None and self.problem.optimum_value is not None:
            regret = _finite_or_none(self.problem.regret(f))
        evaluation = Evaluation(
            t=self.t,
            x=x,
            y=y,
            f=f,
            regret=regret,
            failed=y is None,
            error=error,
            ask_seconds=t1 - t0,
            eval_seconds=t2 - t1,
        )
        self.t += 1
        return evaluation

    def states(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(method state without history, noise-generator state)`` after the last evaluation."""
        return self.method.state_dict(include_history=False), generator_state(self.noise_rng)


def _evaluation_data(ev: Evaluation) -> dict[str, Any]:
    """An evaluation as plain data for the driver (``Evaluation(**data)`` gives it back)."""
    return {
        "t": int(ev.t),
        "x": [float(v) for v in np.asarray(ev.x, dtype=float).reshape(-1)],
        "y": ev.y,
        "f": ev.f,
        "regret": ev.regret,
        "failed": bool(ev.failed),
        "error": ev.error,
        "ask_seconds": float(ev.ask_seconds),
        "eval_seconds": float(ev.eval_seconds),
    }


def _execute(
    config_dict: dict[str, Any],
    resume: dict[str, Any],
    plugins: Sequence[str],
    emit: Callable[[dict[str, Any], dict[str, Any], dict[str, Any], float], Any],
    *,
    chunk_seconds: float = math.inf,
) -> dict[str, Any]:
    """Execute a run, or a chunk of it, where the store is not available (worker side).

    Imports ``plugins``, rebuilds the run from ``resume`` and executes evaluations until the
    run is complete or ``chunk_seconds`` have passed since the call began (at least one
    evaluation). After each evaluation calls ``emit(evaluation_data, method_state,
    noise_rng_state, seconds)``, ``seconds`` counted from the call's start; an exception
    raised by ``emit`` propagates.

    Returns
    -------
    dict
        ``end``: ``"done"`` (the run is complete; ``diagnostics`` holds the method's),
        ``"more"`` (the chunk is over) or ``"error"`` (``error``: the one-line description,
        ``traceback``, ``during``: ``"build"`` or ``"run"``); ``seconds``: time since the start.
        A :class:`KeyboardInterrupt` (and other :class:`BaseException`) propagates.
    """
    start = time.perf_counter()

    def outcome(end: str, **fields: Any) -> dict[str, Any]:
        return {"end": end, "seconds": time.perf_counter() - start, **fields}

    def failure(exc: Exception, during: str) -> dict[str, Any]:
        return outcome("error", error=_describe(exc), traceback=traceback.format_exc(limit=-3), during=during)

    try:
        import_plugins(plugins)
        execution = _Execution(RunConfig(**config_dict), resume)
    except Exception as exc:
        return failure(exc, "build")
    n_executed = 0
    while True:
        try:
            if execution.complete:
                return outcome("done", diagnostics=execution.method.diagnostics())
            if n_executed > 0 and time.perf_counter() - start >= chunk_seconds:
                return outcome("more")
            evaluation = execution.step()
            method_state, noise_rng_state = execution.states()
        except Exception as exc:
            return failure(exc, "run")
        n_executed += 1
        emit(_evaluation_data(evaluation), method_state, noise_rng_state, time.perf_counter() - start)


# ---------------------------------------------------------------------------- many runs
@dataclass
class RunSummary:
    """Outcome of :func:`run_many`.

    Attributes
    ----------
    results : list of RunResult
        One per distinct configuration that did not end with an error, in the order given
        (finished now, already finished, or running elsewhere).
    errors : list of (RunConfig, str)
        Runs that ended with an error (their status in the store is ``"failed"``).
    interrupted : list of (RunConfig, str)
        Runs stopped from outside before they ended: their worker process died (killed, out
        of memory) or was interrupted, or Dask gave up their task after losing its workers
        (a task lost with one worker is rescheduled and its run goes on). Their stored
        evaluations are kept (status ``"failed"``, error ``"interrupted: ..."``) and the
        next call resumes them; see "Workers" and "Dask" in the module docstring.
    wall_seconds : float
        Wall time of the call.
    """

    results: list[RunResult] = field(default_factory=list)
    errors: list[tuple[RunConfig, str]] = field(default_factory=list)
    interrupted: list[tuple[RunConfig, str]] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def n_skipped(self) -> int:
        """Runs that were already finished."""
        return sum(r.skipped for r in self.results)

    @property
    def n_finished(self) -> int:
        """Runs finished by this call (skipped ones not included)."""
        return sum(r.status == "finished" and not r.skipped and not r.running_elsewhere for r in self.results)

    @property
    def n_failed(self) -> int:
        """Runs that ended with an error."""
        return len(self.errors)

    @property
    def n_interrupted(self) -> int:
        """Runs stopped from outside (see :attr:`interrupted`)."""
        return len(self.interrupted)

    @property
    def running_elsewhere(self) -> list[RunResult]:
        """Runs left alone because another live process owns them."""
        return [r for r in self.results if r.running_elsewhere]

    @property
    def n_running_elsewhere(self) -> int:
        """Number of :attr:`running_elsewhere` runs."""
        return len(self.running_elsewhere)

    @property
    def run_ids(self) -> list[int]:
        """Store ids of every run in :attr:`results`."""
        return [r.run_id for r in self.results]

    def __str__(self) -> str:
        elsewhere = f", {self.n_running_elsewhere} running elsewhere" if self.n_running_elsewhere else ""
        interrupted = f", {self.n_interrupted} interrupted" if self.n_interrupted else ""
        return (
            f"{len(self.results) + self.n_failed + self.n_interrupted} runs: {self.n_finished} finished now, "
            f"{self.n_skipped} already finished, {self.n_failed} failed{interrupted}{elsewhere} "
            f"({self.wall_seconds:.1f} s)"
        )


def _run_chunk(
    config_dict: dict[str, Any],
    resume: dict[str, Any],
    plugins: Sequence[str],
    chunk_seconds: float,
    blas_threads: int | None,
) -> dict[str, Any]:
    """Dask task: execute a chunk of a run away from the store and return it to the driver.

    Parameters
    ----------
    config_dict : dict
        ``RunConfig.to_dict()`` of the run.
    resume : dict
        :func:`_resume_point` of the run, as the driver has stored it.
    plugins : sequence of str
        Modules to import first (a no-op for modules already imported).
    chunk_seconds : float
        Return after this many seconds of work (at least one evaluation).
    blas_threads : int or None
        BLAS thread limit while the chunk runs (as in the driver's worker processes).

    Returns
    -------
    dict
        The outcome of :func:`_execute` (``end``, ``seconds``, ...) plus ``evaluations`` (a
        list of plain evaluation records), ``method_state`` and ``noise_rng_state`` after the
        last of them (None without evaluations) and ``evaluated_seconds``, the time from the
        task's start to the end of the last evaluation.
    """
    chunk: dict[str, Any] = {"evaluations": [], "method_state": None, "noise_rng_state": None,
                             "evaluated_seconds": 0.0}

    def keep(evaluation: dict[str, Any], method_state: dict[str, Any], noise_rng_state: dict[str, Any],
             seconds: float) -> None:
        chunk["evaluations"].append(evaluation)
        chunk.update(method_state=method_state, noise_rng_state=noise_rng_state, evaluated_seconds=seconds)

    with limit_blas_threads(blas_threads):
        outcome = _execute(config_dict, resume, plugins, keep, chunk_seconds=chunk_seconds)
    return {**outcome, **chunk}


def _describe_config(c: RunConfig) -> str:
    return f"{c.problem_label} / {c.label} / seed {c.seed}"


class _EvaluationProgress:
    """Evaluations executed by one :func:`run_many` call, over its runs, on a :class:`Progress`.

    Each run contributes at most its remaining budget. When a run ends short of it (failed,
    running elsewhere), the rest is removed from the total, so the bar ends at 100%.
    """

    def __init__(self, bar: Progress, remaining: dict[int, int]) -> None:
        self.bar = bar
        self.remaining = remaining
        self.done = dict.fromkeys(remaining, 0)
        self.open = set(remaining)
        self.n_runs, self.n_ended = len(remaining), 0

    @property
    def active(self) -> bool:
        return self.bar.mode != "off"

    def runs_text(self) -> str:
        return f"[{self.n_ended}/{self.n_runs} runs]"

    def set_done(self, run_id: int, n: int, postfix: str | None = None) -> None:
        """Evaluations of ``run_id`` done by this call so far."""
        if run_id not in self.open:
            return
        n = max(0, min(int(n), self.remaining[run_id]))
        delta = n - self.done[run_id]
        if delta > 0 or postfix is not None:
            self.done[run_id] = max(n, self.done[run_id])
            self.bar.update(max(delta, 0), postfix=postfix)

    def end(self, run_id: int) -> None:
        """The run is over for this call; what it did not execute leaves the total."""
        if run_id not in self.open:
            return
        self.open.discard(run_id)
        self.n_ended += 1
        unused = self.remaining[run_id] - self.done[run_id]
        if unused:
            self.bar.set_total(self.bar.total - unused)
        self.bar.update(0, postfix=self.runs_text())


def run_many(
    store: RunStore | str | os.PathLike[str],
    configs: Iterable[RunConfig],
    *,
    workers: int = 1,
    progress: bool = True,
    dask_address: str | None = None,
    stale_after: float = STALE_AFTER_SECONDS,
    blas_threads: int | None = 1,
    plugins: Sequence[str] | None = None,
    dask_chunk_seconds: float = DASK_CHUNK_SECONDS,
) -> RunSummary:
    """Execute many runs, skipping finished ones and resuming interrupted ones.

    Only this process (the driver) opens the store: worker processes and Dask tasks send
    their evaluations back and the driver writes them, so the workers need no access to the
    store's file (see "Workers" and "Dask" in the module docstring). Every run gives the same
    points and values whichever way it is executed.

    Parameters
    ----------
    store : RunStore or path
        The store (created if needed). Any store works with workers and Dask, even
        ``":memory:"``, since only this process writes it.
    configs : iterable of RunConfig
        Runs to execute; duplicates are executed once.
    workers : int, default 1
        1 runs in this process; more starts that many worker processes (``spawn`` start
        method), each executing one run at a time and sending every evaluation back as soon
        as it is computed. A run whose worker process dies is recorded as interrupted (what
        it sent is stored) and the others go on (see "Workers" in the module docstring).
        Ignored with ``dask_address``.
    progress : bool, default True
        Show progress on stderr, counted in evaluations: the total is the sum of the
        remaining budgets of the unfinished runs. On a terminal a bar (tqdm if installed,
        else one line redrawn in place, with the best value of the current run when
        ``workers=1``); otherwise (CI logs, files) one line per 10%. With several workers
        the count moves at every evaluation, on Dask at every chunk.
    dask_address : str, optional
        Address of a ``dask.distributed`` scheduler (e.g. ``"tcp://host:8786"``); every run
        becomes a sequence of Dask tasks, each executing about ``dask_chunk_seconds`` of it
        and returning its evaluations, which this process stores. The workers need hdbo and
        the ``plugins`` installed, not the store. A task lost with its worker is rescheduled
        by Dask and resumes from what is stored. Needs ``pip install hdbo[dask]``.
    stale_after : float, default STALE_AFTER_SECONDS
        Seconds without a heartbeat after which a claim of another host is stale (see
        :func:`run_one`).
    blas_threads : int or None, default 1
        Most BLAS threads per run (see :func:`hdbo._threads.blas_threads`): the default
        gives every worker one thread, which is fastest for matrices of this size when
        several runs share the cores. ``None`` leaves the BLAS settings alone.
    plugins : sequence of str, optional
        Modules that register the problems and methods of ``configs`` and that every worker
        process or Dask task imports before its first run (default: those loaded by
        :func:`hdbo.experiments.plugins.load_plugins` in this process). They must be
        importable there: a spawned worker has this process's ``sys.path``; a Dask worker
        needs them installed (or sent with ``client.upload_file``).
    dask_chunk_seconds : float, default DASK_CHUNK_SECONDS
        With Dask, a task returns its evaluations after this many seconds of work (at least
        one evaluation per task), so a lost worker costs at most about that much work plus
        one evaluation. ``0`` returns every evaluation at once; ``math.inf`` executes whole
        runs in one task each.

    Returns
    -------
    RunSummary
        Runs found running under another live process are in ``results`` with
        ``running_elsewhere=True`` (not errors); runs whose worker died are in
        ``interrupted``.

    Raises
    ------
    ValueError
        ``workers < 1`` or ``dask_chunk_seconds < 0``.
    TypeError
        An element of ``configs`` is not a :class:`RunConfig`.
    ImportError
        ``dask_address`` given but dask.distributed is not installed.
    KeyboardInterrupt
        Passed through (pending runs are cancelled; interrupted runs stay resumable).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if (
        isinstance(dask_chunk_seconds, bool)
        or not isinstance(dask_chunk_seconds, (int, float))
        or not dask_chunk_seconds >= 0
    ):
        raise ValueError(f"dask_chunk_seconds must be a number >= 0, got {dask_chunk_seconds!r}")
    plugins = tuple(loaded_plugins() if plugins is None else plugins)
    import_plugins(plugins)  # checks the names; a no-op for modules already imported
    own_store = not isinstance(store, RunStore)
    store_obj = RunStore(store) if own_store else store
    start = time.perf_counter()
    try:
        unique: dict[tuple[Any, ...], RunConfig] = {}
        for c in configs:
            if not isinstance(c, RunConfig):
                raise TypeError(f"configs must hold RunConfig objects, got {type(c).__name__}")
            unique.setdefault(c.key(), c)
        todo: list[RunConfig] = []
        summary = RunSummary()
        finished: dict[tuple[Any, ...], RunResult] = {}
        run_ids: dict[tuple[Any, ...], int] = {}
        remaining: dict[int, int] = {}
        for key, c in unique.items():
            rec = store_obj.find_run(c)
            if rec is not None and rec.status == "finished":
                finished[key] = _result_from_store(store_obj, rec, skipped=True)
                continue
            rec = rec if rec is not None else store_obj.get_or_create_run(c)
            todo.append(c)
            run_ids[key] = rec.id
            remaining[rec.id] = max(0, c.budget - rec.n_evaluations)
        bar = Progress(sum(remaining.values()), enabled=progress, desc="hdbo", unit="eval")
        tracker = _EvaluationProgress(bar, remaining)
        done: dict[tuple[Any, ...], RunResult] = {}
        batch = _Batch(store_obj, todo, run_ids, done, summary, tracker, stale_after, tuple(plugins))
        try:
            with limit_blas_threads(blas_threads):
                if dask_address is not None:
                    _run_dask(batch, dask_address, chunk_seconds=float(dask_chunk_seconds), blas_threads=blas_threads)
                elif workers == 1 or len(todo) <= 1:
                    if todo:  # this process computes: keep its freed arrays (hdbo._malloc)
                        tune_malloc()
                    for c in todo:
                        _run_serial(store_obj, c, run_ids[c.key()], done, summary, tracker, stale_after)
                else:
                    _run_pool(batch, workers)
        finally:
            bar.close()
        for key in unique:
            if key in finished:
                summary.results.append(finished[key])
            elif key in done:
                summary.results.append(done[key])
        summary.wall_seconds = time.perf_counter() - start
        return summary
    finally:
        if own_store:
            store_obj.close()


@dataclass
class _Batch:
    """The runs :func:`run_many` hands to an executor (:func:`_run_pool`, :func:`_run_dask`).

    Attributes
    ----------
    store : RunStore
        Where every evaluation is stored.
    todo : list of RunConfig
        The runs to execute or resume, in order.
    run_ids : dict
        Store id of each run, by :meth:`RunConfig.key`.
    done : dict
        Filled by the executor: the result of each run it finished, by key.
    summary : RunSummary
        Filled by the executor with the runs that failed or were interrupted.
    tracker : _EvaluationProgress
        Progress, counted in evaluations.
    stale_after : float
        Seconds after which another owner's claim on a run counts as stale.
    plugins : tuple of str
        Plugin modules the worker processes import.
    """

    store: RunStore
    todo: list[RunConfig]
    run_ids: dict[tuple[Any, ...], int]
    done: dict[tuple[Any, ...], RunResult]
    summary: RunSummary
    tracker: _EvaluationProgress
    stale_after: float
    plugins: tuple[str, ...] = ()


def _run_serial(
    store: RunStore,
    config: RunConfig,
    run_id: int,
    done: dict[tuple[Any, ...], RunResult],
    summary: RunSummary,
    tracker: _EvaluationProgress,
    stale_after: float,
) -> None:
    """One run in this process, progress after every evaluation with the run's best value."""
    best = {"f": -math.inf, "regret": math.inf, "n": 0}
    name = _describe_config(config)

    def on_evaluation(ev: Evaluation) -> None:
        best["n"] += 1
        if ev.f is not None:
            best["f"] = max(best["f"], ev.f)
        if ev.regret is not None:
            best["regret"] = min(best["regret"], ev.regret)
        if math.isfinite(best["regret"]):
            shown = f"regret {best['regret']:.4g}"
        elif math.isfinite(best["f"]):
            shown = f"best f {best['f']:.4g}"
        else:
            shown = "no success yet"
        tracker.set_done(run_id, int(best["n"]), postfix=f"{tracker.runs_text()} {name}: {shown}")

    try:
        done[config.key()] = run_one(store, config, callback=on_evaluation if tracker.active else None,
                                     stale_after=stale_after)
    except Exception as exc:
        summary.errors.append((config, _describe(exc)))
    tracker.end(run_id)


# ---------------------------------------------------------------------------- runs executed elsewhere
@dataclass
class _Job:
    """A run the driver has claimed and has executed elsewhere; the driver stores what comes back.

    Attributes
    ----------
    config : RunConfig
    run_id : int
    owner : RunOwner
        The claim under which the evaluations are written (the worker process executing the
        run, or the driver for Dask).
    resumed_from : int
        Evaluations stored when this call claimed the run.
    n_stored : int
        Evaluations stored now.
    wall_before : float
        Wall seconds of the run before its current execution (a worker run or a Dask chunk).
    """

    config: RunConfig
    run_id: int
    owner: RunOwner
    resumed_from: int
    n_stored: int
    wall_before: float

    def store(
        self,
        store: RunStore,
        evaluations: Sequence[dict[str, Any]],
        method_state: dict[str, Any],
        noise_rng_state: dict[str, Any],
        seconds: float,
    ) -> None:
        """Append evaluations (plain records) and the state after the last, in one transaction.

        Raises :class:`ClaimLostError` (nothing written) when another process took the run over.
        """
        store.append_evaluations(
            self.run_id,
            [Evaluation(**e) for e in evaluations],
            method_state=method_state,
            noise_rng_state=noise_rng_state,
            wall_seconds=self.wall_before + seconds,
            owner=self.owner,
        )
        self.n_stored += len(evaluations)

    def end(
        self,
        store: RunStore,
        outcome: dict[str, Any],
        done: dict[tuple[Any, ...], RunResult],
        summary: RunSummary,
    ) -> bool:
        """Record the end of an execution (:func:`_execute`'s outcome); whether the run is over.

        ``"done"`` finishes the run, ``"error"`` fails it as :func:`run_one` would (the error,
        followed by ``(after k of T evaluations)`` when it happened during the run) and lists
        it in ``summary.errors``; after ``"more"`` the run goes on.
        """
        wall = self.wall_before + float(outcome["seconds"])
        self.wall_before = wall
        if outcome["end"] == "more":
            return False
        if outcome["end"] == "done":
            store.finish_run(self.run_id, diagnostics=outcome["diagnostics"], wall_seconds=wall)
            done[self.config.key()] = _result_from_store(
                store, store.get_run(self.run_id), resumed_from=self.resumed_from
            )
            return True
        text = outcome["error"]
        if outcome["during"] == "run":
            text = f"{text} (after {self.n_stored} of {self.config.budget} evaluations)"
        store.fail_run(self.run_id, text, wall_seconds=wall, owner=self.owner)
        summary.errors.append((self.config, f"{outcome['error']}\n{outcome['traceback']}"))
        return True

    def taken_over(self, store: RunStore, done: dict[tuple[Any, ...], RunResult]) -> None:
        """Another process took the run over (our claim was judged stale): leave it to that process."""
        now = store.get_run(self.run_id)
        done[self.config.key()] = _result_from_store(
            store, now, resumed_from=self.resumed_from, elsewhere=now.owner, running_elsewhere=True
        )


def _claim_job(
    store: RunStore, config: RunConfig, run_id: int, owner: RunOwner, stale_after: float
) -> _Job | RunResult:
    """Claim a run in the name of ``owner`` before it is executed elsewhere.

    Returns the :class:`_Job`, or the :class:`RunResult` of a run that is finished or that
    another live process owns (nothing is changed then). A new run gets its initial
    noise-generator state, as in :func:`run_one`.
    """
    claim = store.claim_run(run_id, owner=owner, stale_after=stale_after)
    rec = claim.record
    if not claim.acquired:
        if rec.status == "finished":
            return _result_from_store(store, rec, skipped=True)
        return _result_from_store(store, rec, resumed_from=rec.n_evaluations, elsewhere=claim.owner,
                                  running_elsewhere=True)
    if rec.n_evaluations == 0:
        store.start_run(run_id, noise_rng_state=generator_state(noise_generator(config.seed)))
    return _Job(config, run_id, owner, rec.n_evaluations, rec.n_evaluations, rec.wall_seconds)


# ---------------------------------------------------------------------------- local worker processes
def _run_pool(batch: _Batch, workers: int) -> None:
    """Runs in ``workers`` spawned processes, one run at a time each (see "Workers" above).

    This process claims each run in the name of the worker process it hands it to, sends it
    the run's configuration and stored state, and stores every evaluation the worker sends
    back. A worker that dies takes only its own run down: what it sent is stored, the run is
    recorded as interrupted and not retried by this call, a new process takes the dead
    one's place while runs are left, and the other workers go on. When this process is
    interrupted (Ctrl-C), busy workers get ``_STOP_GRACE_SECONDS`` to answer (a Ctrl-C on a
    terminal interrupts them too), then they are terminated and their runs recorded as
    interrupted.
    """
    store, todo, run_ids = batch.store, batch.todo, batch.run_ids
    done, summary, tracker = batch.done, batch.summary, batch.tracker
    ctx = get_context("spawn")
    queue = list(todo)[::-1]  # the next run is at the end
    pool: list[_PoolWorker] = []
    spawns = min(workers, len(queue)) + len(queue)  # bounded: each replacement follows a loss
    try:
        while True:
            n_busy = sum(w.job is not None for w in pool)
            while len(pool) < min(workers, n_busy + len(queue)) and spawns > 0:
                pool.append(_PoolWorker(ctx))
                spawns -= 1
            if not pool:  # worker processes keep dying before taking a run
                for config in queue[::-1]:
                    text = _record_interrupted(store, run_ids[config.key()], config, "no worker process left")
                    summary.interrupted.append((config, text))
                    tracker.end(run_ids[config.key()])
                return
            for w in pool:
                while w.job is None and not w.retired and queue:
                    config = queue.pop()
                    claimed = _claim_job(store, config, run_ids[config.key()], w.owner, batch.stale_after)
                    if isinstance(claimed, RunResult):  # finished or running elsewhere meanwhile
                        done[config.key()] = claimed
                        tracker.end(claimed.run_id)
                        continue
                    w.start(claimed, _resume_point(store, claimed.run_id), batch.plugins)
            busy = [w for w in pool if w.job is not None]
            if not busy:
                return
            wait_for_ready([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=_POLL_SECONDS)
            for w in busy:
                _serve(store, w, done, summary, tracker)
            for w in pool:
                if w.job is None and not w.retired and not w.process.is_alive():  # died between two runs
                    w.retire(grace=0.0)
            pool = [w for w in pool if not w.retired]
    except BaseException:
        deadline = time.monotonic() + _STOP_GRACE_SECONDS
        for w in pool:
            w.stop(grace=max(0.0, deadline - time.monotonic()))
        for w in pool:
            job = w.job
            if job is None:
                continue
            try:  # store what it sent (best effort: the run stays resumable anyway)
                _serve(store, w, done, summary, tracker, gone_reason="stopped with hdbo")
            except Exception:
                pass
            if w.job is not None:
                try:
                    _record_interrupted(store, job.run_id, job.config, "stopped with hdbo", owner=job.owner)
                except Exception:
                    pass
        raise
    finally:
        for w in pool:
            w.retire(grace=5.0)


def _serve(
    store: RunStore,
    w: _PoolWorker,
    done: dict[tuple[Any, ...], RunResult],
    summary: RunSummary,
    tracker: _EvaluationProgress,
    *,
    gone_reason: str | None = None,
) -> None:
    """Store what worker ``w`` sent about its run; settle the run if it ended or the worker died.

    ``gone_reason`` replaces the exit status in the message of a run whose worker is gone.
    """
    job = w.job
    if job is None:
        return
    messages, gone = w.receive()
    for kind, *payload in messages:
        if kind == "evaluation":
            evaluation, method_state, noise_rng_state, seconds = payload
            try:
                job.store(store, [evaluation], method_state, noise_rng_state, seconds)
            except ClaimLostError:  # judged stale and taken over: leave the run, retire the worker
                job.taken_over(store, done)
                w.job = None
                w.retire(grace=0.0)
                tracker.end(job.run_id)
                return
            tracker.set_done(job.run_id, job.n_stored - job.resumed_from, postfix=tracker.runs_text())
        elif kind == "end":
            job.end(store, payload[0], done, summary)
            w.job = None
            tracker.end(job.run_id)
            return
        else:  # "lost": the worker was interrupted and ends
            text = _record_interrupted(store, job.run_id, job.config, payload[0], owner=job.owner)
            summary.interrupted.append((job.config, text))
            w.job = None
            w.retire(grace=1.0)
            tracker.end(job.run_id)
            return
    if gone:
        w.process.join(5.0)
        reason = gone_reason or f"worker process {w.process.pid} {_exit_text(w.process.exitcode)}"
        text = _record_interrupted(store, job.run_id, job.config, reason, owner=job.owner)
        summary.interrupted.append((job.config, text))
        w.job = None
        w.retire(grace=1.0)
        tracker.end(job.run_id)


class _PoolWorker:
    """A worker process of :func:`_run_pool`, the connection to it and the run it executes."""

    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_pool_worker_main, args=(child, os.getpid()), name="hdbo-worker")
        self.process.start()
        child.close()  # so that the worker's death reads as end-of-file here
        self.job: _Job | None = None
        self.retired = False
        #: The claim under which the driver stores the runs this process executes.
        self.owner = RunOwner(RunOwner.current().host, int(self.process.pid))

    def start(self, job: _Job, resume: dict[str, Any], plugins: Sequence[str]) -> None:
        """Send a run; a worker that died meanwhile is noticed by :meth:`receive`."""
        self.job = job
        try:
            self.conn.send((job.config.to_dict(), resume, tuple(plugins)))
        except OSError:
            pass

    def receive(self) -> tuple[list[tuple[Any, ...]], bool]:
        """The messages the worker has sent so far, and whether it is gone (dead or unreachable).

        Liveness is looked at first, so the messages of a worker found dead are all there. A
        connection that cannot be read (closed, or a message cut by a signal in the worker)
        counts as gone.
        """
        alive = self.process.is_alive()
        messages = []
        try:
            while self.conn.poll():
                messages.append(self.conn.recv())
        except Exception:  # EOFError, OSError, a truncated pickle
            alive = False
        return messages, not alive

    def stop(self, grace: float) -> None:
        """End the process: an idle one is asked to leave; after ``grace`` s terminate, then kill."""
        if self.process.is_alive() and self.job is None:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(grace)
        for end in (self.process.terminate, self.process.kill):
            if self.process.is_alive():
                end()
                self.process.join(2.0)

    def retire(self, grace: float) -> None:
        """:meth:`stop` the process and close the connection (once)."""
        if self.retired:
            return
        self.stop(grace)
        self.conn.close()
        self.retired = True


def _exit_text(code: int | None) -> str:
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            return f"was killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _record_interrupted(
    store: RunStore, run_id: int, config: RunConfig, reason: str, *, owner: RunOwner | None = None
) -> str:
    """Record a run whose worker was lost as interrupted; return the message (one line).

    The run keeps its stored evaluations and becomes ``"failed"`` with the error
    ``"interrupted: <reason> (after k of T evaluations)"``, unless another process owns it
    now: the update is conditional on the claim of ``owner`` (by default the stored owner,
    if it is no longer alive). The next call resumes the run.
    """
    rec = store.get_run(run_id)
    text = f"interrupted: {reason} (after {rec.n_evaluations} of {config.budget} evaluations)"
    if owner is None and rec.owner is not None and not rec.owner.is_alive():
        owner = rec.owner
    if owner is not None and rec.status == "running":
        store.fail_run(run_id, text, owner=owner)
    return text


def _pool_worker_main(conn: Any, parent_pid: int) -> None:
    """Main function of a worker process of :func:`_run_pool`; it never opens the store.

    Receives ``(config_dict, resume, plugins)`` (see :func:`_resume_point`), executes the
    run with :func:`_execute`, sends ``("evaluation", evaluation, method_state,
    noise_rng_state, seconds)`` after every evaluation and ``("end", outcome)`` at the end;
    ``None`` or a closed connection ends it. After a KeyboardInterrupt it sends ``("lost",
    why)`` and ends. It ends with its parent (see :func:`_exit_with_parent`).
    """
    _exit_with_parent(parent_pid)
    tune_malloc()  # this process only computes runs (hdbo._malloc)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if task is None:
            return
        config_dict, resume, plugins = task
        sent = [0]
        start = time.perf_counter()

        def send(evaluation: dict[str, Any], method_state: dict[str, Any], noise_rng_state: dict[str, Any],
                 seconds: float) -> None:
            conn.send(("evaluation", evaluation, method_state, noise_rng_state, seconds))
            sent[0] += 1

        try:
            outcome = _execute(config_dict, resume, plugins, send)
        except KeyboardInterrupt:
            conn.send(("lost", f"worker process {os.getpid()} was interrupted (KeyboardInterrupt)"))
            return
        except BaseException as exc:  # SystemExit from a plugin or problem, ...
            outcome = {"end": "error", "seconds": time.perf_counter() - start, "error": _describe(exc),
                       "traceback": traceback.format_exc(limit=-3), "during": "run" if sent[0] else "build"}
        conn.send(("end", outcome))


def _exit_with_parent(parent_pid: int, *, use_prctl: bool = True) -> None:
    """End this process as soon as its parent process ``parent_pid`` dies.

    On Linux the kernel kills it when its parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``
    through ctypes). Everywhere, a daemon thread also checks every ``_PARENT_POLL_SECONDS``
    that the parent is alive and ends the process with ``os._exit`` otherwise. Either way
    the run it was executing keeps its stored evaluations (each one is written in one
    transaction) and the next call resumes it.

    Parameters
    ----------
    parent_pid : int
        ``os.getpid()`` of the parent, taken before starting this process.
    use_prctl : bool, default True
        False leaves only the thread (to test it).
    """
    if use_prctl and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the thread below still works
            pass
    if not _parent_alive(parent_pid):  # the parent died before prctl took effect
        os._exit(_ORPHAN_EXIT_CODE)

    def watch() -> None:
        while _parent_alive(parent_pid):
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(_ORPHAN_EXIT_CODE)

    threading.Thread(target=watch, name="hdbo-parent-watch", daemon=True).start()


def _parent_alive(parent_pid: int) -> bool:
    """Whether the parent process still lives (POSIX: this process has not been re-parented)."""
    if os.name == "posix":
        return os.getppid() == parent_pid
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


# ---------------------------------------------------------------------------- Dask
def _run_dask(
    batch: _Batch,
    address: str,
    *,
    chunk_seconds: float = DASK_CHUNK_SECONDS,
    blas_threads: int | None = 1,
) -> None:
    """Runs as chains of Dask tasks (:func:`_run_chunk`); this process stores what they return.

    Every run is claimed in the name of this process and its first chunk submitted; each
    returned chunk is stored in one transaction and the next one submitted from what is
    stored, with a higher priority than first chunks. A task whose workers died too often
    (``KilledWorker``) or that the scheduler cancelled leaves its run interrupted; when this
    process is interrupted, the pending tasks are cancelled and their runs recorded as
    interrupted.
    """
    store, todo, run_ids = batch.store, batch.todo, batch.run_ids
    done, summary, tracker = batch.done, batch.summary, batch.tracker
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:
        raise ImportError(
            "running on a Dask cluster needs dask.distributed: pip install 'hdbo[dask]'"
        ) from exc
    if not todo:
        return
    me = RunOwner.current()
    jobs: dict[Any, _Job] = {}  # future -> the run it executes a chunk of

    def submit(client: Any, job: _Job, *, first: bool) -> Any:
        resume = _resume_point(store, job.run_id)
        return client.submit(
            _run_chunk, job.config.to_dict(), resume, batch.plugins, chunk_seconds, blas_threads,
            key=f"hdbo-run-{job.run_id}-from-{resume['n_done']}-{uuid.uuid4().hex}",
            priority=0 if first else 1,
        )

    with Client(address) as client:
        try:
            pending = as_completed()
            for config in todo:
                claimed = _claim_job(store, config, run_ids[config.key()], me, batch.stale_after)
                if isinstance(claimed, RunResult):  # finished or running elsewhere meanwhile
                    done[config.key()] = claimed
                    tracker.end(claimed.run_id)
                    continue
                future = submit(client, claimed, first=True)
                jobs[future] = claimed
                pending.add(future)
            for future in pending:
                job = jobs[future]
                if _settle_chunk(store, future, job, done, summary, tracker):
                    tracker.end(job.run_id)
                else:
                    following = submit(client, job, first=False)
                    jobs[following] = job
                    pending.add(following)
                del jobs[future]
        except BaseException:
            for future, job in jobs.items():
                future.cancel()
                try:  # a no-op for a run that is already settled
                    _record_interrupted(store, job.run_id, job.config, "stopped with hdbo", owner=job.owner)
                except Exception:  # best effort: the run stays resumable anyway
                    pass
            raise


def _settle_chunk(
    store: RunStore,
    future: Any,
    job: _Job,
    done: dict[tuple[Any, ...], RunResult],
    summary: RunSummary,
    tracker: _EvaluationProgress,
) -> bool:
    """Store a finished chunk of ``job``; whether the run is over (finished, failed, interrupted)."""
    try:
        outcome = future.result()
    except Exception as exc:  # the task itself did not complete
        names = {cls.__name__ for cls in type(exc).__mro__}
        if "KilledWorker" in names:  # its workers kept dying
            reason = "the Dask workers executing it died (KilledWorker)"
        elif "CancelledError" in names:
            reason = f"its Dask task was cancelled ({_describe(exc)})"
        else:
            text = _describe(exc)
            if isinstance(exc, ImportError):
                text += " (on a Dask worker: hdbo and the plugins must be installed on every worker)"
            store.fail_run(job.run_id, f"{text} (after {job.n_stored} of {job.config.budget} evaluations)",
                           owner=job.owner)
            summary.errors.append((job.config, text))
            return True
        text = _record_interrupted(store, job.run_id, job.config, reason, owner=job.owner)
        summary.interrupted.append((job.config, text))
        return True
    if outcome["evaluations"]:
        try:
            job.store(store, outcome["evaluations"], outcome["method_state"], outcome["noise_rng_state"],
                      outcome["evaluated_seconds"])
        except ClaimLostError:  # judged stale and taken over: the new owner goes on
            job.taken_over(store, done)
            return True
        tracker.set_done(job.run_id, job.n_stored - job.resumed_from, postfix=tracker.runs_text())
    return job.end(store, outcome, done, summary)
