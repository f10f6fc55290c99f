"""The SQLite run store: identity of runs, exact round trips, one-transaction appends."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest
from _hdbo_test_problems import make_config
from numpy.testing import assert_array_equal

from hdbo.experiments.store import (
    SCHEMA_VERSION,
    ClaimLostError,
    Evaluation,
    RunConfig,
    RunOwner,
    RunStore,
    canonical_json,
)


def _ev(t: int, x, y, *, failed: bool = False, error: str | None = None) -> Evaluation:
    return Evaluation(
        t=t, x=x, y=y, f=y, regret=None if y is None else -y, failed=failed, error=error,
        ask_seconds=0.001, eval_seconds=0.002,
    )


def test_schema_version_and_wal(store):
    assert store.schema_version == SCHEMA_VERSION
    mode = store._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_same_config_is_the_same_run(store):
    a = store.get_or_create_run(make_config())
    b = store.get_or_create_run(make_config())
    assert a.id == b.id and a.status == "pending"
    # parameter order does not matter; values do
    c = store.get_or_create_run(make_config(problem_params={"dim": 3, "noise_std": 0.0}))
    d = store.get_or_create_run(make_config(problem_params={"noise_std": 0.0, "dim": 3}))
    assert c.id == d.id != a.id
    for other in (make_config(seed=1), make_config(budget=9), make_config(label="R"), make_config(experiment="e2"),
                  make_config(method_params={"x": 1})):
        assert store.get_or_create_run(other).id not in (a.id, c.id)
    assert len(store.list_runs()) == 7
    assert store.find_run(make_config(seed=99)) is None


def test_config_round_trip_and_defaults(store):
    cfg = make_config(method_params={"kernel": "se", "acq_budget": 50})
    assert cfg.label == "random"
    assert cfg.problem_label == "toy-quadratic(dim=3)"
    rec = store.get_or_create_run(cfg)
    assert rec.config == cfg
    assert RunConfig(**cfg.to_dict()) == cfg
    assert rec.hdbo_version


def test_config_validation():
    with pytest.raises(ValueError, match="budget must be > 0"):
        make_config(budget=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        make_config(seed=1.5)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        make_config(seed=-1)
    with pytest.raises(TypeError, match="problem_params must be a dict"):
        make_config(problem_params=[("dim", 3)])


def test_floats_round_trip_exactly(store):
    run = store.get_or_create_run(make_config())
    x = np.array([0.1, 1.0 / 3.0, np.nextafter(0.5, 1.0)])
    y = -np.pi * 1e-7
    store.append_evaluation(run.id, _ev(0, x, y), method_state={"v": 1.0 / 7.0}, noise_rng_state=None,
                            wall_seconds=0.5)
    ev = store.load_evaluations(run.id)
    assert_array_equal(ev.X[0], x)
    assert ev.y[0] == y and ev.f[0] == y and ev.regret[0] == -y
    assert store.get_run(run.id).method_state == {"v": 1.0 / 7.0}


def test_failed_evaluation_is_null(store):
    run = store.get_or_create_run(make_config())
    store.append_evaluation(run.id, _ev(0, [0.5, 0.5, 0.5], None, failed=True, error="boom"),
                            method_state={}, noise_rng_state=None, wall_seconds=0.1)
    store.append_evaluation(run.id, _ev(1, [0.2, 0.5, 0.5], 1.5), method_state={}, noise_rng_state=None,
                            wall_seconds=0.2)
    ev = store.load_evaluations(run.id)
    assert len(ev) == 2
    assert_array_equal(ev.failed, [True, False])
    assert np.isnan(ev.y[0]) and ev.y[1] == 1.5
    assert ev.errors == ["boom", None]
    raw = store._conn.execute("SELECT y FROM evaluations WHERE run_id = ? AND t = 0", (run.id,)).fetchone()[0]
    assert raw is None


def test_append_is_one_transaction(store):
    """A failing append (duplicate t) must not leave the new method state behind."""
    run = store.get_or_create_run(make_config())
    store.append_evaluation(run.id, _ev(0, [0.5] * 3, 1.0), method_state={"n": 1}, noise_rng_state={"s": 1},
                            wall_seconds=1.0)
    with pytest.raises(sqlite3.IntegrityError):
        store.append_evaluation(run.id, _ev(0, [0.1] * 3, 2.0), method_state={"n": 2}, noise_rng_state={"s": 2},
                                wall_seconds=2.0)
    rec = store.get_run(run.id)
    assert rec.method_state == {"n": 1} and rec.noise_rng_state == {"s": 1} and rec.wall_seconds == 1.0
    assert rec.n_evaluations == 1


def test_status_transitions_and_listing(store):
    a = store.get_or_create_run(make_config(seed=0))
    b = store.get_or_create_run(make_config(seed=1, experiment="other"))
    store.start_run(a.id, noise_rng_state={"k": 1})
    assert store.get_run(a.id).status == "running" and store.get_run(a.id).started_at is not None
    store.fail_run(a.id, "KeyboardInterrupt")
    assert store.get_run(a.id).status == "failed" and store.get_run(a.id).error == "KeyboardInterrupt"
    store.finish_run(b.id, diagnostics={"note": "ok"}, wall_seconds=3.0)
    rb = store.get_run(b.id)
    assert rb.status == "finished" and rb.diagnostics == {"note": "ok"} and rb.error is None
    assert [r.id for r in store.list_runs(status="finished")] == [b.id]
    assert [r.id for r in store.list_runs(experiment="exp")] == [a.id]
    assert [r.id for r in store.list_runs(ids=[b.id])] == [b.id]
    assert store.experiments() == ["exp", "other"]
    with pytest.raises(ValueError, match="status must be one of"):
        store.list_runs(status="done")
    with pytest.raises(KeyError, match="no run with id 999"):
        store.get_run(999)


def test_missing_store_without_create(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        RunStore(tmp_path / "nope.db", create=False)
    assert not (tmp_path / "nope.db").exists()


def test_two_connections_see_each_other(tmp_path):
    path = tmp_path / "shared.db"
    with RunStore(path) as s1, RunStore(path) as s2:
        run = s1.get_or_create_run(make_config())
        assert s2.get_or_create_run(make_config()).id == run.id
        s2.append_evaluation(run.id, _ev(0, [0.5] * 3, 1.0), method_state={}, noise_rng_state=None,
                             wall_seconds=0.1)
        assert s1.n_evaluations(run.id) == 1


def test_canonical_json_sorted_and_exact():
    assert canonical_json({"b": 1, "a": [0.1, 2]}) == '{"a":[0.1,2],"b":1}'
    v = 1.0 / 3.0
    assert json.loads(canonical_json({"v": v}))["v"] == v


def test_delete_run(store):
    run = store.get_or_create_run(make_config())
    store.append_evaluation(run.id, _ev(0, [0.5] * 3, 1.0), method_state={}, noise_rng_state=None, wall_seconds=0.1)
    store.delete_run(run.id)
    assert store.list_runs() == [] and store.n_evaluations(run.id) == 0
    assert store.get_or_create_run(make_config()).status == "pending"


def test_config_is_keyword_only():
    with pytest.raises(TypeError):
        RunConfig("exp", "p", "random", 0, 5)  # type: ignore[misc]


def test_count_evaluations(store):
    a = store.get_or_create_run(make_config(seed=0))
    b = store.get_or_create_run(make_config(seed=1))
    for t in range(3):
        store.append_evaluation(a.id, _ev(t, [0.5] * 3, 1.0), method_state={}, noise_rng_state=None,
                                wall_seconds=0.1)
    assert store.count_evaluations([a.id, b.id, 999]) == {a.id: 3, b.id: 0, 999: 0}
    assert store.count_evaluations([]) == {}


# ---------------------------------------------------------------------------- claims
def test_claim_rules(store):
    run = store.get_or_create_run(make_config())
    me = RunOwner.current()
    first = store.claim_run(run.id)
    assert first.acquired and first.owner.same_process(me) and first.previous_owner is None
    rec = store.get_run(run.id)
    assert rec.status == "running" and rec.owner.same_process(me) and rec.owner.heartbeat_at is not None
    assert store.claim_run(run.id).acquired  # the same process renews its claim

    other = RunOwner("other-host", 7)
    blocked = store.claim_run(run.id, owner=other)
    assert not blocked.acquired and blocked.owner.same_process(me)  # this process is alive
    assert store.get_run(run.id).owner.same_process(me)

    store._conn.execute("UPDATE runs SET owner_host = 'gone-host', heartbeat_at = ? WHERE id = ?",
                        (time.time() - 120, run.id))
    assert not store.claim_run(run.id, stale_after=300).acquired  # another host, heartbeat 2 min old
    taken = store.claim_run(run.id, stale_after=60)  # ... older than stale_after: taken over
    assert taken.acquired and taken.previous_owner.host == "gone-host" and taken.owner.same_process(me)

    store.finish_run(run.id, diagnostics={}, wall_seconds=1.0)
    done = store.claim_run(run.id, owner=other)
    assert not done.acquired and done.owner is None and done.record.status == "finished"
    assert store.get_run(run.id).owner is None
    with pytest.raises(KeyError, match="no run with id 999"):
        store.claim_run(999)


def test_append_checks_and_refreshes_the_claim(store):
    run = store.get_or_create_run(make_config())
    me = store.claim_run(run.id).owner
    store._conn.execute("UPDATE runs SET heartbeat_at = 0.0 WHERE id = ?", (run.id,))
    store.append_evaluation(run.id, _ev(0, [0.5] * 3, 1.0), method_state={"n": 1}, noise_rng_state=None,
                            wall_seconds=0.1, owner=me)
    assert store.get_run(run.id).owner.heartbeat_at > time.time() - 60
    thief = RunOwner("other-host", 7)
    store._conn.execute("UPDATE runs SET owner_host = ?, owner_pid = ? WHERE id = ?", (thief.host, thief.pid, run.id))
    with pytest.raises(ClaimLostError, match="no longer owned"):
        store.append_evaluation(run.id, _ev(1, [0.1] * 3, 2.0), method_state={"n": 2}, noise_rng_state=None,
                                wall_seconds=0.2, owner=me)
    rec = store.get_run(run.id)
    assert rec.n_evaluations == 1 and rec.method_state == {"n": 1}  # nothing written
    assert not store.fail_run(run.id, "interrupted", owner=me)  # not ours: left alone
    assert store.get_run(run.id).status == "running"
    assert store.fail_run(run.id, "interrupted", owner=thief)
    rec = store.get_run(run.id)
    assert rec.status == "failed" and rec.owner is None


def test_owner_liveness():
    now = time.time()
    assert RunOwner.current().is_alive()
    assert RunOwner("far-away", 1, heartbeat_at=now - 10).is_alive(now=now, stale_after=60)
    assert not RunOwner("far-away", 1, heartbeat_at=now - 100).is_alive(now=now, stale_after=60)
    assert not RunOwner("far-away", 1).is_alive()  # no heartbeat at all
    assert str(RunOwner("h", 12)) == "h:12"


# ---------------------------------------------------------------------------- schema versions
_SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, experiment TEXT NOT NULL, problem TEXT NOT NULL,
    problem_params TEXT NOT NULL, problem_label TEXT NOT NULL, method TEXT NOT NULL, label TEXT NOT NULL,
    method_params TEXT NOT NULL, seed INTEGER NOT NULL, budget INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'finished', 'failed')),
    created_at REAL NOT NULL, started_at REAL, finished_at REAL, wall_seconds REAL NOT NULL DEFAULT 0.0,
    method_state TEXT, noise_rng_state TEXT, diagnostics TEXT, error TEXT, hdbo_version TEXT NOT NULL,
    UNIQUE (experiment, problem, problem_params, method, label, method_params, seed, budget)
);
CREATE TABLE evaluations (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, t INTEGER NOT NULL, x TEXT NOT NULL,
    y REAL, f REAL, regret REAL, failed INTEGER NOT NULL DEFAULT 0, error TEXT, ask_seconds REAL NOT NULL,
    eval_seconds REAL NOT NULL, PRIMARY KEY (run_id, t)
);
CREATE INDEX runs_by_experiment ON runs (experiment, status);
INSERT INTO meta VALUES ('schema_version', '1'), ('created_at', '0.0');
"""


def _v1_store(path) -> None:
    """A store as hdbo wrote it before claims: one interrupted run of 3 evaluations (schema 1)."""
    from hdbo.experiments.runner import run_one

    cfg = make_config(budget=6)
    with RunStore(path.parent / "donor.db") as donor:  # a real run, copied row by row
        import _hdbo_test_problems as toy

        toy.TRIGGER["countdown"] = 4
        with pytest.raises(KeyboardInterrupt):
            run_one(donor, cfg)
        run = donor._conn.execute("SELECT * FROM runs").fetchone()
        evals = donor._conn.execute("SELECT * FROM evaluations").fetchall()
    con = sqlite3.connect(path)
    con.executescript(_SCHEMA_V1)
    v1_cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    con.execute(f"INSERT INTO runs ({', '.join(v1_cols)}) VALUES ({', '.join('?' * len(v1_cols))})",
                [run[c] for c in v1_cols])
    con.executemany("INSERT INTO evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [tuple(e) for e in evals])
    con.commit()
    con.close()


def test_old_store_is_migrated_on_open_and_resumes(tmp_path):
    from hdbo.experiments.runner import run_one

    path = tmp_path / "v1.db"
    _v1_store(path)
    with RunStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        cols = {r[1] for r in store._conn.execute("PRAGMA table_info(runs)")}
        assert {"owner_host", "owner_pid", "heartbeat_at"} <= cols
        (run,) = store.list_runs()
        assert run.status == "failed" and run.n_evaluations == 3 and run.owner is None
        result = run_one(store, run.config)
        assert result.status == "finished" and result.resumed_from == 3
    with RunStore(path) as again:  # opening a migrated store changes nothing
        assert again.schema_version == SCHEMA_VERSION and again.list_runs()[0].status == "finished"
    with RunStore(tmp_path / "fresh.db") as ref, RunStore(path) as migrated:  # resumed == uninterrupted
        run_one(ref, run.config)
        assert_array_equal(migrated.load_evaluations(run.id).X, ref.load_evaluations(ref.find_run(run.config).id).X)


def test_newer_store_is_refused(tmp_path):
    path = tmp_path / "future.db"
    RunStore(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(ValueError, match=f"schema version {SCHEMA_VERSION + 1}, this hdbo reads up to"):
        RunStore(path)


# ---------------------------------------------------------------------------- paths that are not stores (issue 17)
def _state(path):
    """Bytes and mtime of a file, or the listing of a folder: what must not change."""
    if path.is_dir():
        return sorted(p.name for p in path.iterdir())
    return (path.read_bytes(), path.stat().st_mtime_ns) if path.exists() else None


def _foreign_sqlite(path, *, with_meta: bool) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE runs (name TEXT, started TEXT, speed REAL)")
    con.execute("INSERT INTO runs VALUES ('morning', '06:00', 11.5)")
    if with_meta:  # even with an hdbo-like version row, the columns give it away
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.commit()
    con.close()


def _newer_store(path) -> None:
    RunStore(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()


BAD_STORES = {
    "a folder": (lambda p: p.mkdir(), "is a folder"),
    "under a file": (lambda p: None, "is a file, not a folder"),
    "text file": (lambda p: p.write_text("name,score\nada,3\n"), "is not an SQLite database"),
    "random bytes": (lambda p: p.write_bytes(np.random.default_rng(0).bytes(4096)), "is not an SQLite database"),
    "foreign runs table": (lambda p: _foreign_sqlite(p, with_meta=False), "not an hdbo store (no schema version"),
    "foreign runs columns": (lambda p: _foreign_sqlite(p, with_meta=True), "its 'runs' table has no column"),
    "newer schema": (_newer_store, f"has schema version {SCHEMA_VERSION + 1}, this hdbo reads up to"),
}


def bad_store(tmp_path, case):
    """The path of a store of kind ``case``, and the path whose state must not change."""
    make, match = BAD_STORES[case]
    if case == "under a file":
        (tmp_path / "notes.txt").write_text("a file, not a folder")
        return tmp_path / "notes.txt" / "sub" / "runs.db", tmp_path / "notes.txt", match
    path = tmp_path / "runs.db"
    make(path)
    time.sleep(0.01)  # an mtime written now would differ from the one recorded
    return path, path, match


@pytest.mark.parametrize("case", sorted(BAD_STORES))
@pytest.mark.parametrize("create", [True, False])
def test_paths_that_are_not_stores_are_refused_untouched(tmp_path, case, create):
    from hdbo.experiments.store import StoreError

    path, watched, match = bad_store(tmp_path, case)
    before, listing = _state(watched), sorted(p.name for p in tmp_path.iterdir())
    if case == "under a file" and not create:
        with pytest.raises(FileNotFoundError, match="does not exist"):
            RunStore(path, create=create)
    else:
        with pytest.raises(StoreError, match=re.escape(match)) as info:
            RunStore(path, create=create)
        assert isinstance(info.value, ValueError) and str(path) in str(info.value)
    assert _state(watched) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # no -wal, -shm or -journal left


def unwritable_folder(tmp_path):
    """A folder this process cannot create files in, also when it runs as root.

    Permission bits (0o500) stop other users; root ignores them, and then /proc is used, where
    nobody can create files. Fails (not skips) when neither works.
    """
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        (locked / "probe").write_text("x")
    except PermissionError:
        return locked
    (locked / "probe").unlink()
    locked.chmod(0o700)
    try:
        (Path("/proc") / "hdbo-probe").write_text("x")
    except OSError:
        return Path("/proc")
    pytest.fail("found no folder this process cannot write in")


def test_store_in_an_unwritable_folder_is_refused(tmp_path):
    from hdbo.experiments.store import StoreError

    folder = unwritable_folder(tmp_path)
    before = sorted(p.name for p in folder.iterdir()) if folder != Path("/proc") else None
    for path in (folder / "runs.db", folder / "sub" / "runs.db"):
        with pytest.raises(StoreError, match=re.escape(f"store '{path}' cannot be created")):
            RunStore(path)
        assert not path.exists()
    if before is not None:
        assert sorted(p.name for p in folder.iterdir()) == before
        folder.chmod(0o700)


def test_an_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    with RunStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION


def test_seed_and_budget_fit_in_a_store_integer():
    big = 2**63
    with pytest.raises(ValueError, match=r"RunConfig.budget must be > 0 and <= 2\*\*63 - 1 = 9223372036854775807"):
        make_config(budget=big)
    with pytest.raises(ValueError, match=r"RunConfig.seed must be >= 0 and <= 2\*\*63 - 1"):
        make_config(seed=big)
    with RunStore(":memory:") as store:  # the largest values do round-trip
        rec = store.get_or_create_run(make_config(seed=big - 1, budget=big - 1))
        assert (rec.config.seed, rec.config.budget) == (big - 1, big - 1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="zombie detection reads /proc (Linux)")
def test_pid_alive_treats_an_unreaped_process_as_dead():
    """A worker that exited but was not reaped yet (a zombie) owns nothing any more."""
    import os
    import subprocess
    import sys

    from hdbo.experiments.store import _pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert _pid_alive(os.getpid())
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until it has exited, without reaping it
        with open(f"/proc/{child.pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                break
        time.sleep(0.05)
    try:
        assert not _pid_alive(child.pid)
    finally:
        child.wait()
    assert not _pid_alive(child.pid)
