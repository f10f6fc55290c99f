"""Sweeps on a real Dask cluster on this machine, started and stopped by the tests.

A ``dask scheduler`` on 127.0.0.1 and two ``dask worker`` processes (one process, one thread
each), every one started from a folder of its own, none of them the store's. The workers
import a plugin that registers a slow, noisy problem and makes ``sqlite3.connect`` raise in
any worker process, so a worker that opened the store would fail its run: the driver alone
writes. One worker is killed (SIGKILL to its process group) while it executes a run resumed
from stored evaluations; Dask reschedules the task on the other worker, which resumes from
what the driver stored, and every run ends equal to a sequential sweep.

Every wait has a deadline and every process is killed in a ``finally``.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("dask.distributed")  # the only reason to skip

from numpy.testing import assert_array_equal  # noqa: E402

import hdbo  # noqa: E402
from hdbo.experiments.runner import run_many  # noqa: E402
from hdbo.experiments.store import RunConfig, RunStore  # noqa: E402

TIMEOUT = 120.0  # seconds; a deadline for waits that normally take a few seconds

PLUGIN_SOURCE = '''
"""Test plugin: a slow noisy bowl, and no SQLite in worker processes."""
import multiprocessing
import sqlite3
import time

import numpy as np
from hdbo.problems import Problem, register_problem
from hdbo.space import Box


def slow_bowl(*, dim=2, seed=0, delay=0.04, noise_std=0.05):
    """-||x - c||^2 on [0, 1]^dim (c from the seed, maximum 0), ``delay`` seconds per call."""
    center = np.random.default_rng(seed).uniform(0.2, 0.8, dim)

    def fun(X):
        time.sleep(delay)
        return -np.sum((X - center) ** 2, axis=1)

    return Problem(fun, Box.unit(dim), name="slow-bowl", optimum_value=0.0, optimizer=center,
                   noise_std=noise_std)


register_problem("{name}-slow-bowl", slow_bowl)


def _refuse(*args, **kwargs):
    raise RuntimeError("a worker process tried to open an SQLite database")


def _in_a_worker():
    """run_many's local workers and Dask workers (started by a nanny) are child processes, the
    driver (the test process) is not; a Dask worker without a nanny is found by get_worker."""
    if multiprocessing.parent_process() is not None:
        return True
    try:
        from distributed import get_worker

        get_worker()
    except Exception:
        return False
    return True


if _in_a_worker():
    sqlite3.connect = _refuse


def sqlite_refused():
    """Whether SQLite is refused in this process (asked of the workers by the test)."""
    try:
        sqlite3.connect(":memory:").close()
    except RuntimeError as exc:
        return str(exc)
    return ""
'''


# ---------------------------------------------------------------------------- helpers
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(plugin_folder: Path) -> dict[str, str]:
    """The environment of the cluster's processes: hdbo and the plugin importable, 1 BLAS thread."""
    env = dict(os.environ)
    repo = str(Path(hdbo.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(plugin_folder), repo, env.get("PYTHONPATH")) if p)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _start(args: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen:
    """``python -m dask ARGS`` (the ``dask`` command of this interpreter) in a session of its own."""
    cwd.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=os.name == "posix")


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL to the process and its children (its session), then reap it."""
    if proc.poll() is None:
        if os.name == "posix":
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True, check=False)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def _in_session(pid: int, proc: subprocess.Popen) -> bool:
    """Whether process ``pid`` belongs to the session started by ``proc``."""
    if os.name != "posix":
        import psutil

        return any(c.pid == pid for c in psutil.Process(proc.pid).children(recursive=True))
    try:
        return os.getsid(pid) == proc.pid
    except ProcessLookupError:
        return False


def _logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(folder.glob("*.log")))


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def cluster(tmp_path, write_plugin):
    """``(address, client, workers, plugin, folders)``: a scheduler and two workers on 127.0.0.1.

    ``workers`` maps the Popen of each ``dask worker`` command to its working folder.
    """
    plugin = write_plugin("hdbo_cluster_plugin", PLUGIN_SOURCE)
    env = _env(tmp_path / "plugins")
    logs = tmp_path / "logs"
    logs.mkdir()
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
                             "--idle-timeout", "300s"],
                            cwd=tmp_path / "scheduler", env=env, log=logs / "scheduler.log"))
        workers = {}
        for i in range(2):
            folder = tmp_path / f"worker{i}"
            proc = _start(["worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                           "--host", "127.0.0.1", "--name", f"w{i}", "--death-timeout", "60",
                           "--local-directory", str(tmp_path / f"scratch{i}")],
                          cwd=folder, env=env, log=logs / f"worker{i}.log")
            procs.append(proc)
            workers[proc] = folder
        client = distributed.Client(address, timeout=TIMEOUT)
        try:
            client.wait_for_workers(2, timeout=TIMEOUT)
            # the guard works: a task that opens SQLite on a worker fails
            probe = importlib.import_module(plugin).sqlite_refused
            answers = client.gather([client.submit(probe, key=f"probe-{i}", workers=[a])
                                     for i, a in enumerate(client.scheduler_info()["workers"])])
            assert answers == ["a worker process tried to open an SQLite database"] * 2
            yield address, client, workers, plugin, [tmp_path / "scheduler", *workers.values()]
        finally:
            client.close(timeout=30)
    finally:
        for proc in procs:
            _kill(proc)
        print(_logs(logs))  # shown by pytest when the test fails


def _configs(plugin: str) -> list[RunConfig]:
    """6 runs of GP-UCB (small options) on the slow bowl: about a second each."""
    return [RunConfig(experiment="cluster", problem=f"{plugin}-slow-bowl", method="gp-ucb", seed=s, budget=16,
                      problem_params={"dim": 2, "delay": 0.04, "noise_std": 0.05},
                      method_params={"n_init": 4, "acq_budget": 150})
            for s in range(6)]


def _assert_same_runs(path: Path, reference: Path, configs: list[RunConfig]) -> None:
    with RunStore(path) as a, RunStore(reference) as b:
        for cfg in configs:
            ra, rb = a.find_run(cfg), b.find_run(cfg)
            assert ra.status == rb.status == "finished" and ra.owner is None, (cfg.seed, ra.status, ra.error)
            ea, eb = a.load_evaluations(ra.id), b.load_evaluations(rb.id)
            assert len(ea) == len(eb) == cfg.budget
            assert_array_equal(ea.X, eb.X)  # bit for bit
            assert_array_equal(ea.y, eb.y)
            assert_array_equal(ea.f, eb.f)
            assert_array_equal(ea.failed, eb.failed)


# ---------------------------------------------------------------------------- tests
def test_sweep_survives_a_killed_worker_and_equals_a_sequential_sweep(tmp_path, cluster):
    address, client, workers, plugin, folders = cluster
    configs = _configs(plugin)
    reference = tmp_path / "sequential" / "runs.db"
    run_many(reference, configs, progress=False, plugins=[plugin])

    path = tmp_path / "store" / "sweep.db"
    outcome: dict[str, object] = {}

    def sweep() -> None:
        try:
            outcome["summary"] = run_many(path, configs, dask_address=address, progress=False, plugins=[plugin],
                                          dask_chunk_seconds=0.3)
        except BaseException as exc:  # reported by the test below
            outcome["error"] = exc

    thread = threading.Thread(target=sweep, daemon=True)
    thread.start()
    # The victim: a worker executing a chunk that resumes a run from stored evaluations.
    pids = client.run(os.getpid)  # worker address -> process id
    victim = None
    deadline = time.monotonic() + TIMEOUT
    while victim is None:
        assert thread.is_alive(), f"the sweep ended before a worker could be killed: {outcome}"
        assert time.monotonic() < deadline, "no resumed chunk seen running"
        for address_, keys in client.processing().items():
            resumed = [m for m in (re.match(r"hdbo-run-(\d+)-from-(\d+)-", str(k)) for k in keys) if m]
            if any(int(m.group(2)) > 0 for m in resumed):
                victim = address_, resumed
                break
        else:
            time.sleep(0.01)
    address_, _ = victim
    (proc,) = [p for p in workers if _in_session(pids[address_], p)]
    _kill(proc)

    thread.join(TIMEOUT)
    assert not thread.is_alive(), "the sweep did not end"
    assert "error" not in outcome, outcome
    summary = outcome["summary"]
    assert summary.n_finished == 6 and summary.n_failed == 0 and summary.n_interrupted == 0, (
        summary, summary.errors, summary.interrupted)
    # the killed worker stayed dead: its chunks were executed again by the other one
    assert len(client.scheduler_info()["workers"]) == 1
    _assert_same_runs(path, reference, configs)
    for folder in folders:  # nothing written where the cluster's processes run
        assert _files(folder) == [], folder


def test_dask_and_worker_processes_leave_the_store_to_the_driver(tmp_path, cluster):
    """Without a failure: whole runs (one task each) and --workers 2 give the sequential runs;
    no worker opens SQLite (the plugin makes that fail) nor writes in its folder."""
    address, client, workers, plugin, folders = cluster
    configs = _configs(plugin)[:2]
    reference = tmp_path / "sequential.db"
    run_many(reference, configs, progress=False, plugins=[plugin])
    on_dask = run_many(tmp_path / "dask.db", configs, dask_address=address, progress=False, plugins=[plugin],
                       dask_chunk_seconds=float("inf"))
    local = run_many(tmp_path / "local.db", configs, workers=2, progress=False, plugins=[plugin])
    for summary in (on_dask, local):
        assert summary.n_finished == 2 and summary.n_failed == 0, summary.errors
    _assert_same_runs(tmp_path / "dask.db", reference, configs)
    _assert_same_runs(tmp_path / "local.db", reference, configs)
    for folder in folders:
        assert _files(folder) == [], folder
