"""Fault tests with real processes: SIGKILL at random points, a killed worker, a killed driver.

The ``hdbo`` command runs as a subprocess (``python -m hdbo.cli``); the test watches its
SQLite store through a read-only connection and sends SIGKILL at the moment it wants
(after k stored evaluations, to a process found as the owner of a run in the store). Every
wait polls with a generous deadline; nothing depends on a fixed sleep.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hdbo.experiments.runner import run_many
from hdbo.experiments.store import RunConfig, RunStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends POSIX signals (SIGKILL) to processes")

HDBO = [sys.executable, "-m", "hdbo.cli"]
TIMEOUT = 120.0  # seconds; a deadline for waits that normally take well under a second


# ---------------------------------------------------------------------------- helpers
def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([*HDBO, *args, "--no-progress"], cwd=cwd, env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out, err


def _run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    return _finish(_start(args, cwd))


def _query(path: Path, sql: str) -> list[tuple]:
    """Rows of a read-only query on a store another process is writing ([] before it exists)."""
    try:
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=10)
    except sqlite3.OperationalError:
        return []
    try:
        return con.execute(sql).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        con.close()


def _poll(condition, *, what: str, proc: subprocess.Popen | None = None, timeout: float = TIMEOUT):
    """Call ``condition()`` until it returns something truthy; fail if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            code, out, err = _finish(proc)
            pytest.fail(f"the hdbo process ended (exit {code}) before {what}:\n{out}\n{err}")
        time.sleep(0.002)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie waiting to be reaped counts as ended)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _parent_of(pid: int) -> int | None:
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return psutil.Process(pid).ppid()
        except psutil.NoSuchProcess:
            return None
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None


_TRACE_SQL = (
    "SELECT r.method, r.seed, r.status, e.t, e.x, e.y, e.f, e.failed FROM runs r "
    "JOIN evaluations e ON e.run_id = r.id ORDER BY r.method, r.seed, e.t"
)


def _traces(path: Path) -> list[tuple]:
    """(method, seed, status, t, x as stored, y, f, failed) of every evaluation of every run."""
    with RunStore(path):  # checks the file is a sound store
        pass
    return _query(path, _TRACE_SQL)


# ---------------------------------------------------------------------------- kill -9 at random points
METHODS = ("gp-ucb", "random", "add-gp-ucb")
BUDGET = 30
PROBLEM = ["--problem", "branin", "--noise-std", "0.05"]


def test_sigkill_at_random_points_resumes_to_the_uninterrupted_trace(tmp_path):
    """Three methods in one command, killed 6 times (2 points per method, drawn from a fixed
    seed) and resumed each time: the store ends equal, evaluation by evaluation, to a clean run's."""
    args = ["run", *PROBLEM, *[a for m in METHODS for a in ("--method", m)], "--budget", str(BUDGET)]
    code, _, err = _run([*args, "--store", "clean.db"], tmp_path)
    assert code == 0, err
    total = len(METHODS) * BUDGET

    rng = np.random.default_rng(2024)
    # Per method (the runs go one after the other): two points, at least 12 evaluations
    # before the run's end so that the kill lands while the command still runs.
    planned = sorted(int(i * BUDGET + k) for i in range(len(METHODS))
                     for k in rng.choice(np.arange(2, BUDGET - 12), size=2, replace=False))
    path = tmp_path / "killed.db"
    count_sql = "SELECT COUNT(*) FROM evaluations"
    landed = []
    for k in planned:
        stored_before = _query(path, count_sql)[0][0] if path.exists() else 0
        proc = _start([*args, "--store", "killed.db"], tmp_path)
        target = max(k, stored_before + 1)  # a late kill may have passed this point already
        _poll(lambda: (_query(path, count_sql) or [(0,)])[0][0] >= target, what=f"{target} evaluations", proc=proc)
        proc.send_signal(signal.SIGKILL)
        code, _, _ = _finish(proc)
        assert code == -signal.SIGKILL
        landed.append(_query(path, count_sql)[0][0])
    assert len(landed) == 6 and all(0 < n < total for n in landed)
    for i in range(len(METHODS)):  # every method's run was killed part-way at least once
        assert any(i * BUDGET < n < (i + 1) * BUDGET for n in landed), (i, landed)
    # killed: the run had no chance to record anything; its claim is a dead process's
    assert _query(path, "SELECT status, error FROM runs WHERE status NOT IN ('finished', 'pending')") == [
        ("running", None)]

    code, _, err = _run([*args, "--store", "killed.db"], tmp_path)
    assert code == 0, err
    clean, resumed = _traces(tmp_path / "clean.db"), _traces(path)
    assert len(clean) == total and {row[2] for row in clean} == {"finished"}
    assert resumed == clean


# ---------------------------------------------------------------------------- a worker killed
SWEEP = ["run", *PROBLEM, "--method", "gp-ucb", "--seeds", "3", "--budget", str(BUDGET)]


def test_killed_worker_is_reported_and_the_sweep_goes_on(tmp_path):
    """kill -9 of one ``--workers 2`` child: no traceback, the other runs finish, exit status 3
    with one line for the interrupted run; the same command then completes it exactly."""
    path = tmp_path / "sweep.db"
    proc = _start([*SWEEP, "--workers", "2", "--store", "sweep.db"], tmp_path)
    busy = ("SELECT r.id, r.seed, r.owner_pid, COUNT(e.t) FROM runs r JOIN evaluations e ON e.run_id = r.id "
            "WHERE r.status = 'running' GROUP BY r.id HAVING COUNT(e.t) >= 4")
    run_id, seed, pid, _ = _poll(lambda: _query(path, busy), what="a run with 4 evaluations", proc=proc)[0]
    assert _parent_of(pid) == proc.pid  # a worker process of this command
    os.kill(pid, signal.SIGKILL)
    code, out, err = _finish(proc)

    assert code == 3, err
    assert "Traceback" not in err and "BrokenProcessPool" not in err
    lines = [line for line in err.splitlines() if "interrupted:" in line]
    assert len(lines) == 1 and lines[0].startswith(
        f"  interrupted: branin(noise_std=0.05) / gp-ucb / seed {seed}: worker process {pid} was killed by "
        "signal 9 (SIGKILL) (after ")
    assert "3 runs: 2 finished now, 0 already finished, 0 failed, 1 interrupted" in err
    rows = _query(path, "SELECT id, status, error FROM runs ORDER BY id")
    assert [r[1] for r in rows if r[0] != run_id] == ["finished", "finished"]
    (status, error), = [(r[1], r[2]) for r in rows if r[0] == run_id]
    kept = _query(path, f"SELECT COUNT(*) FROM evaluations WHERE run_id = {run_id}")[0][0]
    assert status == "failed" and error.startswith(f"interrupted: worker process {pid} was killed by signal 9")
    assert 4 <= kept < BUDGET and error.endswith(f"(after {kept} of {BUDGET} evaluations)")
    assert lines[0].endswith(error.split("interrupted: ", 1)[1])

    code, _, err = _run([*SWEEP, "--workers", "2", "--store", "sweep.db"], tmp_path)
    assert code == 0 and "1 finished now, 2 already finished" in err, err
    code, _, err = _run([*SWEEP, "--store", "clean.db"], tmp_path)
    assert code == 0, err
    assert _traces(path) == _traces(tmp_path / "clean.db")


# ---------------------------------------------------------------------------- the driver killed
def test_workers_exit_when_the_driver_is_killed(tmp_path):
    path = tmp_path / "long.db"
    proc = _start(["run", *PROBLEM, "--method", "gp-ucb", "--seeds", "2", "--budget", "500",
                   "--workers", "2", "--store", "long.db"], tmp_path)
    busy = ("SELECT r.id, r.owner_pid FROM runs r JOIN evaluations e ON e.run_id = r.id "
            "WHERE r.status = 'running' GROUP BY r.id HAVING COUNT(e.t) >= 2")

    def both_busy() -> list[tuple] | None:
        rows = _query(path, busy)
        return rows if len(rows) == 2 else None

    owners = _poll(both_busy, what="both runs under way", proc=proc)
    pids = [pid for _, pid in owners]
    assert len(set(pids)) == 2 and all(_parent_of(pid) == proc.pid for pid in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=TIMEOUT)  # not communicate(): orphaned workers would hold its pipes open
    start = time.monotonic()
    try:
        _poll(lambda: all(_gone(pid) for pid in pids), what="the workers to exit", timeout=30)
    finally:
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
        proc.stdout.close()
        proc.stderr.close()
    assert time.monotonic() - start < 5.0
    with RunStore(path) as store:  # their runs are resumable: the claims of dead processes are taken over
        for run_id, _ in owners:  # (once init has reaped the orphans: a zombie's pid still exists)
            assert 2 <= store.n_evaluations(run_id) < 500
            _poll(lambda: store.claim_run(run_id).acquired, what=f"run {run_id} to be free", timeout=30)


def test_worker_thread_ends_an_orphaned_worker_without_prctl(tmp_path):
    """The portable fallback alone (no PR_SET_PDEATHSIG): the worker lives while its parent
    lives and ends within about a second after the parent is killed."""
    child = textwrap.dedent("""
        import os, time
        from hdbo.experiments.runner import _exit_with_parent
        _exit_with_parent(os.getppid(), use_prctl=False)
        print("ready", flush=True)
        time.sleep(120)
    """)
    middle = textwrap.dedent(f"""
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", {child!r}], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        print(p.pid, flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True, env=_env())
    try:
        pid = int(proc.stdout.readline())
        time.sleep(1.5)  # three checks of the parent: the worker must still run
        assert not _gone(pid) and _parent_of(pid) == proc.pid
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
    start = time.monotonic()
    _poll(lambda: _gone(pid), what="the orphaned worker to exit", timeout=30)
    assert time.monotonic() - start < 3.0


# ---------------------------------------------------------------------------- Dask: a lost worker
def test_lost_dask_worker_records_the_run_as_interrupted(tmp_path):
    """On a LocalCluster with no rescheduling (allowed-failures 0), a run whose Dask worker is
    killed mid-run ends as interrupted, keeping the evaluations the driver had stored; the
    other run finishes, and the next call resumes the interrupted one to the clean trace."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    path = tmp_path / "dask.db"
    # toy-slow sleeps 0.15 s per evaluation: a chunk seen running is still running when killed
    configs = [RunConfig(experiment="dask", problem="toy-slow", method="gp-ucb", seed=s, budget=10,
                         problem_params={"dim": 2, "delay": 0.15}, method_params={"n_init": 4, "acq_budget": 150})
               for s in (0, 1)]
    killed: list[int] = []
    stop = threading.Event()

    def kill_seed_0(client) -> None:
        pids = client.run(os.getpid)  # worker address -> process id
        sql = ("SELECT r.id FROM runs r JOIN evaluations e ON e.run_id = r.id "
               "WHERE r.seed = 0 GROUP BY r.id HAVING COUNT(e.t) >= 3")
        while not stop.is_set():
            rows = _query(path, sql)
            if rows:  # the worker executing a chunk of seed 0's run, and nothing else
                prefix = f"hdbo-run-{rows[0][0]}-from-"
                for address, keys in client.processing().items():
                    if keys and all(str(k).startswith(prefix) for k in keys):
                        os.kill(pids[address], signal.SIGKILL)
                        killed.append(pids[address])
                        return
            time.sleep(0.005)

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        thread = threading.Thread(target=kill_seed_0, args=(client,), daemon=True)
        thread.start()
        try:
            summary = run_many(path, configs, dask_address=cluster.scheduler_address, progress=False,
                               dask_chunk_seconds=0.0)
        finally:
            stop.set()
            thread.join(TIMEOUT)
    assert len(killed) == 1
    assert summary.n_finished == 1 and summary.n_failed == 0 and summary.n_interrupted == 1
    (config, text), = summary.interrupted
    assert config.seed == 0 and text.startswith("interrupted: the Dask workers executing it died (KilledWorker)")
    with RunStore(path) as store:
        rec = store.find_run(configs[0])
        assert rec.status == "failed" and rec.error == text and rec.owner is None
        assert 3 <= rec.n_evaluations < configs[0].budget
        assert store.find_run(configs[1]).status == "finished"
        resumed = run_many(store, configs, progress=False)  # the same call resumes it (here serially)
        assert resumed.n_finished == 1 and resumed.n_skipped == 1
        assert resumed.results[0].resumed_from == rec.n_evaluations
    run_many(tmp_path / "clean.db", configs, progress=False)
    assert _traces(path) == _traces(tmp_path / "clean.db")
