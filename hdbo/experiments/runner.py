"""Execute runs (one problem x one method x one seed x one budget) and resume interrupted ones.

A run is described by a :class:`~hdbo.experiments.store.RunConfig`. :func:`run_one`
executes it against a :class:`~hdbo.experiments.store.RunStore`, writing every evaluation
as it happens; :func:`run_many` executes a list of them serially, in a local process pool
or on a Dask cluster, skipping the finished ones.

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

Resume
------
A run whose status is not ``"finished"`` is resumed from its last stored evaluation: the
method is rebuilt with ``Method.from_state(state, history=(X, y))``, the noise generator from
its stored state, and the loop continues at ``t = n_done``. Because the state and the
evaluation it follows are written in one transaction, a resumed run gives exactly the trace
an uninterrupted run would have given.

Problems
--------
``config.problem`` is a name in the problem registry (``hdbo.problems.get``), or
``"package.module:factory"`` for a problem of your own: ``factory(seed=seed, **params)``
must return a :class:`~hdbo.problems.base.Problem`. The module must be importable by the
worker processes.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..methods import Method, make_method
from ..problems.base import Problem
from ..utils import generator_from_state, generator_state
from .store import Evaluation, RunConfig, RunRecord, RunStore

__all__ = [
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


# ---------------------------------------------------------------------------- problems
def resolve_problem(name: str) -> Callable[..., Problem]:
    """The factory building problem ``name``: the registry's ``get`` or a ``module:attr``.

    Raises
    ------
    ValueError
        ``module:attr`` that cannot be imported, or the problem registry is not available.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"problem must be a non-empty string, got {name!r}")
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        try:
            module = importlib.import_module(mod_name)
            factory = getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"problem factory {name!r} cannot be imported: {exc}") from None
        return factory
    try:
        from ..problems import get as registry_get
    except ImportError as exc:  # the registry is optional while the package is being built
        raise ValueError(f"the problem registry (hdbo.problems.get) is not available: {exc}") from None

    def factory(**kwargs: Any) -> Problem:
        return registry_get(name, **kwargs)

    return factory


def build_problem(config: RunConfig) -> Problem:
    """Build the problem instance of a run (the run seed seeds it unless params fix ``seed``)."""
    params = dict(config.problem_params)
    params.setdefault("seed", config.seed)
    problem = resolve_problem(config.problem)(**params)
    if not isinstance(problem, Problem):
        raise TypeError(f"problem {config.problem!r} built a {type(problem).__name__}, not a hdbo Problem")
    return problem


def method_seed(seed: int) -> int:
    """The seed given to the method of a run with this run seed (a stream apart from the problem's)."""
    return int(np.random.SeedSequence([int(seed), METHOD_STREAM]).generate_state(1)[0])


def noise_generator(seed: int) -> np.random.Generator:
    """The observation-noise generator of a run with this seed."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), NOISE_STREAM]))


def build_method(config: RunConfig, problem: Problem) -> Method:
    """Build the method of a run on the problem's bounds."""
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
        ``"finished"`` or ``"failed"``.
    n_evaluations : int
        Evaluations stored for the run (all of them, not only this session's).
    n_failed_evaluations : int
    resumed_from : int
        Number of evaluations that were already stored when this call started.
    skipped : bool
        The run was already finished; nothing was executed.
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


def _finite_or_none(v: Any) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _result_from_store(store: RunStore, run: RunRecord, *, resumed_from: int = 0, skipped: bool = False) -> RunResult:
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
    )


def run_one(store: RunStore, config: RunConfig) -> RunResult:
    """Execute, or resume, one run and store every evaluation as it happens.

    Parameters
    ----------
    store : RunStore
        Where the run lives (created on first use).
    config : RunConfig
        The run.

    Returns
    -------
    RunResult
        ``skipped=True`` if the run was already finished.

    Raises
    ------
    ValueError, TypeError
        Unknown problem/method or bad parameters (the run is marked ``"failed"``).
    KeyboardInterrupt
        Passed through after marking the run ``"failed"`` (resumable).
    Exception
        Any error of the method itself is stored with the run (status ``"failed"``) and
        re-raised. Errors of the objective do not stop the run (see the module docstring).
    """
    run = store.get_or_create_run(config)
    if run.status == "finished":
        return _result_from_store(store, run, skipped=True)

    session_start = time.perf_counter()
    wall_before = run.wall_seconds

    def wall() -> float:
        return wall_before + (time.perf_counter() - session_start)

    n_done = run.n_evaluations
    try:
        problem = build_problem(config)
        if n_done == 0:
            method = build_method(config, problem)
            noise_rng = noise_generator(config.seed)
            store.start_run(run.id, noise_rng_state=generator_state(noise_rng))
        else:
            if run.method_state is None or run.noise_rng_state is None:
                raise RuntimeError(f"run {run.id} has {n_done} evaluations but no stored state to resume from")
            ev = store.load_evaluations(run.id)
            y_hist = [None if bad else float(v) for v, bad in zip(ev.y, ev.failed, strict=True)]
            method = Method.from_state(run.method_state, history=(ev.X, y_hist))
            noise_rng = generator_from_state(run.noise_rng_state)
            store.start_run(run.id)
    except BaseException as exc:
        store.fail_run(run.id, _describe(exc), wall_seconds=wall())
        raise

    try:
        for t in range(n_done, config.budget):
            t0 = time.perf_counter()
            x = method.ask()
            t1 = time.perf_counter()
            y, f, error = _evaluate(problem, x, noise_rng)
            t2 = time.perf_counter()
            failed = y is None
            method.tell(x, y)
            regret = None
            if f is not None and problem.optimum_value is not None:
                regret = _finite_or_none(problem.regret(f))
            store.append_evaluation(
                run.id,
                Evaluation(
                    t=t,
                    x=x,
                    y=y,
                    f=f,
                    regret=regret,
                    failed=failed,
                    error=error,
                    ask_seconds=t1 - t0,
                    eval_seconds=t2 - t1,
                ),
                method_state=method.state_dict(include_history=False),
                noise_rng_state=generator_state(noise_rng),
                wall_seconds=wall(),
            )
        diagnostics = method.diagnostics()
    except BaseException as exc:
        done = store.n_evaluations(run.id)
        store.fail_run(run.id, f"{_describe(exc)} (after {done} of {config.budget} evaluations)", wall_seconds=wall())
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


# ---------------------------------------------------------------------------- many runs
@dataclass
class RunSummary:
    """Outcome of :func:`run_many`.

    Attributes
    ----------
    results : list of RunResult
        One per distinct configuration that could be started, in the order given.
    errors : list of (RunConfig, str)
        Runs that ended with an error (their status in the store is ``"failed"``).
    wall_seconds : float
    """

    results: list[RunResult] = field(default_factory=list)
    errors: list[tuple[RunConfig, str]] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def n_skipped(self) -> int:
        """Runs that were already finished."""
        return sum(r.skipped for r in self.results)

    @property
    def n_finished(self) -> int:
        """Runs finished by this call (skipped ones not included)."""
        return sum(r.status == "finished" and not r.skipped for r in self.results)

    @property
    def n_failed(self) -> int:
        """Runs that ended with an error."""
        return len(self.errors)

    @property
    def run_ids(self) -> list[int]:
        """Store ids of every run in :attr:`results`."""
        return [r.run_id for r in self.results]

    def __str__(self) -> str:
        return (
            f"{len(self.results) + self.n_failed} runs: {self.n_finished} finished now, {self.n_skipped} already "
            f"finished, {self.n_failed} failed ({self.wall_seconds:.1f} s)"
        )


def _run_in_worker(store_path: str, config_dict: dict[str, Any]) -> tuple[str, Any]:
    """Process-pool / Dask task: open the store, run, return ``("ok", RunResult)`` or ``("error", text)``."""
    config = RunConfig(**config_dict)
    with RunStore(store_path) as store:
        try:
            return "ok", run_one(store, config)
        except Exception as exc:  # reported back to the parent; the store already has it
            run = store.find_run(config)
            tb = traceback.format_exc(limit=-3)
            return "error", (run.id if run else None, f"{_describe(exc)}\n{tb}")


class _Progress:
    """tqdm bar if installed, else a one-line stderr counter; silent if not a TTY."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done = total, 0
        self.enabled = enabled and total > 0 and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self._bar = None
        if self.enabled:
            try:
                from tqdm.auto import tqdm

                self._bar = tqdm(total=total, unit="run", dynamic_ncols=True)
            except ImportError:
                self._bar = None

    def update(self, text: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(1)
        else:
            sys.stderr.write(f"\r[{self.done}/{self.total}] {text[:70]:<70}")
            sys.stderr.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _describe_config(c: RunConfig) -> str:
    return f"{c.problem_label} / {c.label} / seed {c.seed}"


def run_many(
    store: RunStore | str | os.PathLike[str],
    configs: Iterable[RunConfig],
    *,
    workers: int = 1,
    progress: bool = True,
    dask_address: str | None = None,
) -> RunSummary:
    """Execute many runs, skipping finished ones and resuming interrupted ones.

    Parameters
    ----------
    store : RunStore or path
        The store. With ``workers > 1`` or Dask, each worker opens the file itself, so it
        must be a file (not ``":memory:"``).
    configs : iterable of RunConfig
        Runs to execute; duplicates are executed once.
    workers : int, default 1
        1 runs in this process; more uses a ``ProcessPoolExecutor`` with the ``spawn``
        start method.
    progress : bool, default True
        Show a progress bar on stderr (only when it is a TTY; tqdm if installed).
    dask_address : str, optional
        Address of a ``dask.distributed`` scheduler; the runs become Dask tasks (the workers
        must see the same store file). Needs ``pip install hdbo[dask]``.

    Returns
    -------
    RunSummary

    Raises
    ------
    ValueError
        ``workers < 1``, or a ``":memory:"`` store with several workers or Dask.
    ImportError
        ``dask_address`` given but dask.distributed is not installed.
    KeyboardInterrupt
        Passed through (pending runs are cancelled; interrupted runs stay resumable).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
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
        for key, c in unique.items():
            rec = store_obj.find_run(c)
            if rec is not None and rec.status == "finished":
                finished[key] = _result_from_store(store_obj, rec, skipped=True)
            else:
                todo.append(c)
        bar = _Progress(len(todo), progress)
        done: dict[tuple[Any, ...], RunResult] = {}
        try:
            if dask_address is not None:
                _run_dask(store_obj.path, todo, dask_address, done, summary, bar)
            elif workers == 1 or len(todo) <= 1:
                for c in todo:
                    try:
                        done[c.key()] = run_one(store_obj, c)
                    except Exception as exc:
                        summary.errors.append((c, _describe(exc)))
                    bar.update(_describe_config(c))
            else:
                _run_pool(store_obj.path, todo, workers, done, summary, bar)
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


def _check_file_store(path: str) -> None:
    if path == ":memory:":
        raise ValueError("an in-memory store cannot be shared with worker processes; give a file path")


def _run_pool(
    path: str,
    todo: Sequence[RunConfig],
    workers: int,
    done: dict[tuple[Any, ...], RunResult],
    summary: RunSummary,
    bar: _Progress,
) -> None:
    _check_file_store(path)
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context("spawn")) as pool:
        futures: dict[Future[tuple[str, Any]], RunConfig] = {
            pool.submit(_run_in_worker, path, c.to_dict()): c for c in todo
        }
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    _collect(futures[fut], fut.result(), done, summary)
                    bar.update(_describe_config(futures[fut]))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _collect(
    config: RunConfig, outcome: tuple[str, Any], done: dict[tuple[Any, ...], RunResult], summary: RunSummary
) -> None:
    kind, payload = outcome
    if kind == "ok":
        done[config.key()] = payload
    else:
        summary.errors.append((config, payload[1]))


def _run_dask(
    path: str,
    todo: Sequence[RunConfig],
    address: str,
    done: dict[tuple[Any, ...], RunResult],
    summary: RunSummary,
    bar: _Progress,
) -> None:
    _check_file_store(path)
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:
        raise ImportError(
            "running on a Dask cluster needs dask.distributed: pip install 'hdbo[dask]'"
        ) from exc
    if not todo:
        return
    path = os.path.abspath(path)
    with Client(address) as client:
        futures = {
            client.submit(_run_in_worker, path, c.to_dict(), pure=False): c for c in todo
        }
        for fut in as_completed(list(futures)):
            config = futures[fut]
            try:
                _collect(config, fut.result(), done, summary)
            except Exception as exc:  # the task itself died (worker lost, ...)
                summary.errors.append((config, _describe(exc)))
            bar.update(_describe_config(config))
