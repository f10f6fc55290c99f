"""A SQLite store for experiment runs and their evaluations, safe for several writer processes.

One file holds every run of every experiment. A run is identified by its
:class:`RunConfig` (experiment, problem and its parameters, method, label and its
parameters, seed, budget): asking the store for the same configuration again returns the
same row, which is how reruns skip finished work and resume interrupted runs.

Tables
------
``meta``
    ``key``, ``value``: the schema version and the creation time of the file.
``runs``
    One row per run: the configuration (parameters as canonical JSON), ``status`` in
    ``{"pending", "running", "finished", "failed"}``, timestamps, cumulative wall seconds,
    the latest ``Method.state_dict(include_history=False)`` and noise-generator state (JSON),
    the method's diagnostics (JSON), an error text and the hdbo version that wrote it.
``evaluations``
    One row per evaluation ``(run_id, t)`` with ``t = 0, 1, ...``: the point ``x`` (JSON,
    user units, exactly as told), the observation ``y`` (NULL if the evaluation failed), the
    noise-free value ``f`` and regret (NULL when unknown), a ``failed`` flag, the error
    message, and the seconds spent in ``ask`` and in the objective.

Writing an evaluation and the method state it produced is one transaction
(:meth:`RunStore.append_evaluation`), so a process killed at any moment leaves a run whose
stored state matches its stored history. Values are stored as SQLite REAL (IEEE doubles)
and JSON written with ``repr`` floats, so they round-trip exactly. Nothing is pickled.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..utils import to_jsonable

__all__ = [
    "SCHEMA_VERSION",
    "RUN_STATUSES",
    "RunConfig",
    "RunRecord",
    "Evaluation",
    "EvaluationArrays",
    "RunStore",
    "canonical_json",
    "hdbo_version",
]

SCHEMA_VERSION = 1
RUN_STATUSES = ("pending", "running", "finished", "failed")
_BUSY_TIMEOUT_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    experiment      TEXT    NOT NULL,
    problem         TEXT    NOT NULL,
    problem_params  TEXT    NOT NULL,
    problem_label   TEXT    NOT NULL,
    method          TEXT    NOT NULL,
    label           TEXT    NOT NULL,
    method_params   TEXT    NOT NULL,
    seed            INTEGER NOT NULL,
    budget          INTEGER NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'running', 'finished', 'failed')),
    created_at      REAL    NOT NULL,
    started_at      REAL,
    finished_at     REAL,
    wall_seconds    REAL    NOT NULL DEFAULT 0.0,
    method_state    TEXT,
    noise_rng_state TEXT,
    diagnostics     TEXT,
    error           TEXT,
    hdbo_version    TEXT    NOT NULL,
    UNIQUE (experiment, problem, problem_params, method, label, method_params, seed, budget)
);
CREATE TABLE IF NOT EXISTS evaluations (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    t            INTEGER NOT NULL,
    x            TEXT    NOT NULL,
    y            REAL,
    f            REAL,
    regret       REAL,
    failed       INTEGER NOT NULL DEFAULT 0,
    error        TEXT,
    ask_seconds  REAL    NOT NULL,
    eval_seconds REAL    NOT NULL,
    PRIMARY KEY (run_id, t)
);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
"""


def canonical_json(obj: Any) -> str:
    """JSON text with sorted keys and no spaces, so equal parameters give equal text.

    Floats are written with ``repr`` (the shortest text that reads back to the same double).
    """
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"))


def hdbo_version() -> str:
    """Version of the installed hdbo distribution (``"unknown"`` when not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("hdbo")
    except (ImportError, PackageNotFoundError):
        import hdbo

        return str(getattr(hdbo, "__version__", "unknown"))


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _opt_float(v: float | None) -> float | None:
    """None for missing or non-finite values (stored as SQL NULL)."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class RunConfig:
    """Everything that identifies one run; equal configs are the same row in the store.

    Parameters
    ----------
    experiment : str
        Experiment name (a spec's ``name``; ``hdbo run`` uses ``"run"`` by default).
    problem : str
        Problem registry name, or ``"module:factory"`` for a user-defined problem factory.
    method : str
        Method registry name.
    seed : int
        Seeds the problem instance (unless ``problem_params`` fixes ``seed``), and through
        separate streams the method and the noise (see :mod:`hdbo.experiments.runner`).
    budget : int
        Number of evaluations.
    problem_params : dict
        Keyword arguments of the problem (``dim``, ``noise_std``, ``domain``, ...).
    method_params : dict
        Keyword arguments of the method.
    label : str, optional
        Name of the method configuration in reports (default: the method name).
    problem_label : str, optional
        Name of the problem configuration in reports (default: built from the name and
        parameters). Not part of the identity of the run.
    """

    experiment: str
    problem: str
    method: str
    seed: int
    budget: int
    problem_params: dict[str, Any] = field(default_factory=dict)
    method_params: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    problem_label: str = ""

    def __post_init__(self) -> None:
        for name in ("experiment", "problem", "method", "label", "problem_label"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"RunConfig.{name} must be a string, got {type(getattr(self, name)).__name__}")
        for name in ("seed", "budget"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"RunConfig.{name} must be an int, got {type(v).__name__}")
        if self.seed < 0:
            raise ValueError(f"RunConfig.seed must be >= 0, got {self.seed}")
        if self.budget <= 0:
            raise ValueError(f"RunConfig.budget must be > 0, got {self.budget}")
        for name in ("problem_params", "method_params"):
            if not isinstance(getattr(self, name), dict):
                raise TypeError(f"RunConfig.{name} must be a dict, got {type(getattr(self, name)).__name__}")
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "budget", int(self.budget))
        if not self.label:
            object.__setattr__(self, "label", self.method)
        if not self.problem_label:
            object.__setattr__(self, "problem_label", default_problem_label(self.problem, self.problem_params))

    def key(self) -> tuple[str, str, str, str, str, str, int, int]:
        """The identity of the run (the store's UNIQUE key)."""
        return (
            self.experiment,
            self.problem,
            canonical_json(self.problem_params),
            self.method,
            self.label,
            canonical_json(self.method_params),
            self.seed,
            self.budget,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form (inverse: ``RunConfig(**d)``)."""
        return {
            "experiment": self.experiment,
            "problem": self.problem,
            "method": self.method,
            "seed": self.seed,
            "budget": self.budget,
            "problem_params": to_jsonable(self.problem_params),
            "method_params": to_jsonable(self.method_params),
            "label": self.label,
            "problem_label": self.problem_label,
        }


def default_problem_label(problem: str, params: dict[str, Any]) -> str:
    """``"branin"`` or ``"branin(dim=20, noise_std=0.1)"``."""
    if not params:
        return problem
    inner = ", ".join(f"{k}={json.dumps(to_jsonable(v))}" for k, v in sorted(params.items()))
    return f"{problem}({inner})"


@dataclass
class RunRecord:
    """One row of the ``runs`` table, JSON columns decoded."""

    id: int
    config: RunConfig
    status: str
    created_at: float
    started_at: float | None
    finished_at: float | None
    wall_seconds: float
    method_state: dict[str, Any] | None
    noise_rng_state: dict[str, Any] | None
    diagnostics: dict[str, Any] | None
    error: str | None
    hdbo_version: str
    n_evaluations: int = 0


@dataclass(frozen=True)
class Evaluation:
    """One evaluation to append to a run.

    Parameters
    ----------
    t : int
        Index of the evaluation in the run (0-based).
    x : ndarray of shape (D,)
        The point, user units, exactly as told to the method.
    y : float or None
        Observation; None (or non-finite) if the evaluation failed.
    f : float or None
        Noise-free value, if known.
    regret : float or None
        ``optimum_value - f``, if known.
    failed : bool
        Whether the evaluation failed.
    error : str or None
        Error message of a failed evaluation.
    ask_seconds, eval_seconds : float
        Time spent in ``ask()`` and in the objective.
    """

    t: int
    x: Sequence[float] | NDArray[np.float64]
    y: float | None
    f: float | None
    regret: float | None
    failed: bool
    error: str | None
    ask_seconds: float
    eval_seconds: float


@dataclass
class EvaluationArrays:
    """The evaluations of one run as arrays (NaN where a value is NULL).

    Attributes
    ----------
    t : ndarray of shape (n,)
    X : ndarray of shape (n, D)
    y, f, regret : ndarray of shape (n,)
    failed : ndarray of bool, shape (n,)
    errors : list of (str or None), length n
    ask_seconds, eval_seconds : ndarray of shape (n,)
    """

    t: NDArray[np.int64]
    X: NDArray[np.float64]
    y: NDArray[np.float64]
    f: NDArray[np.float64]
    regret: NDArray[np.float64]
    failed: NDArray[np.bool_]
    errors: list[str | None]
    ask_seconds: NDArray[np.float64]
    eval_seconds: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.t.size)


_RUN_COLUMNS = (
    "id, experiment, problem, problem_params, problem_label, method, label, method_params, seed, budget, "
    "status, created_at, started_at, finished_at, wall_seconds, method_state, noise_rng_state, "
    "diagnostics, error, hdbo_version"
)


class RunStore:
    """Runs and evaluations in one SQLite file (WAL mode; several processes may write).

    Parameters
    ----------
    path : str or Path
        Database file (parent folders are created), or ``":memory:"``.
    create : bool, default True
        Create the file if it does not exist. With ``create=False`` a missing file raises
        :class:`FileNotFoundError` (used by ``hdbo report``).

    Raises
    ------
    FileNotFoundError
        ``create=False`` and the file does not exist.
    ValueError
        The file was written with a newer schema version than this hdbo understands.

    Notes
    -----
    Each process must open its own :class:`RunStore` (SQLite connections are not shared
    across processes). Write transactions start with ``BEGIN IMMEDIATE`` and wait up to a
    minute for other writers.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            p = Path(self.path)
            if not p.exists():
                if not create:
                    raise FileNotFoundError(f"store {self.path!r} does not exist")
                p.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._init_schema()

    # ------------------------------------------------------------------ plumbing
    def _init_schema(self) -> None:
        with self._write() as c:
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    c.execute(stmt)
            row = c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (repr(time.time()),))
            elif int(row["value"]) > SCHEMA_VERSION:
                raise ValueError(
                    f"store {self.path!r} has schema version {row['value']}, this hdbo reads up to {SCHEMA_VERSION}"
                )

    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> sqlite3.Connection:
            self.conn.execute("BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
            if exc_type is None:
                self.conn.execute("COMMIT")
            else:
                self.conn.execute("ROLLBACK")

    def _write(self) -> "RunStore._Tx":
        return RunStore._Tx(self._conn)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self.path!r})"

    @property
    def schema_version(self) -> int:
        """Schema version of the file."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row["value"])

    # ------------------------------------------------------------------ runs
    def _record(self, row: sqlite3.Row) -> RunRecord:
        config = RunConfig(
            experiment=row["experiment"],
            problem=row["problem"],
            method=row["method"],
            seed=int(row["seed"]),
            budget=int(row["budget"]),
            problem_params=json.loads(row["problem_params"]),
            method_params=json.loads(row["method_params"]),
            label=row["label"],
            problem_label=row["problem_label"],
        )
        n = self._conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id = ?", (row["id"],)).fetchone()[0]
        return RunRecord(
            id=int(row["id"]),
            config=config,
            status=row["status"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            wall_seconds=float(row["wall_seconds"]),
            method_state=_loads(row["method_state"]),
            noise_rng_state=_loads(row["noise_rng_state"]),
            diagnostics=_loads(row["diagnostics"]),
            error=row["error"],
            hdbo_version=row["hdbo_version"],
            n_evaluations=int(n),
        )

    def find_run(self, config: RunConfig) -> RunRecord | None:
        """The run with this configuration, or None."""
        row = self._conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE experiment = ? AND problem = ? AND problem_params = ? "
            "AND method = ? AND label = ? AND method_params = ? AND seed = ? AND budget = ?",
            config.key(),
        ).fetchone()
        return None if row is None else self._record(row)

    def get_or_create_run(self, config: RunConfig) -> RunRecord:
        """The run with this configuration, created with status ``"pending"`` if new."""
        with self._write() as c:
            c.execute(
                "INSERT OR IGNORE INTO runs (experiment, problem, problem_params, method, label, method_params, "
                "seed, budget, problem_label, status, created_at, hdbo_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                (*config.key(), config.problem_label, time.time(), hdbo_version()),
            )
        rec = self.find_run(config)
        if rec is None:  # cannot happen: the row was just inserted or already there
            raise RuntimeError(f"run {config} vanished from {self.path!r}")
        return rec

    def get_run(self, run_id: int) -> RunRecord:
        """The run with this id.

        Raises
        ------
        KeyError
            No run has that id.
        """
        row = self._conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (int(run_id),)).fetchone()
        if row is None:
            raise KeyError(f"no run with id {run_id} in {self.path!r}")
        return self._record(row)

    def list_runs(
        self,
        *,
        experiment: str | None = None,
        status: str | Sequence[str] | None = None,
        ids: Sequence[int] | None = None,
    ) -> list[RunRecord]:
        """Runs ordered by id, optionally filtered by experiment, status and ids."""
        where, args = [], []
        if experiment is not None:
            where.append("experiment = ?")
            args.append(experiment)
        if status is not None:
            statuses = [status] if isinstance(status, str) else list(status)
            bad = [s for s in statuses if s not in RUN_STATUSES]
            if bad:
                raise ValueError(f"status must be one of {RUN_STATUSES}, got {bad[0]!r}")
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            args.extend(statuses)
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._conn.execute(sql + " ORDER BY id", args).fetchall()
        recs = [self._record(r) for r in rows]
        if ids is not None:
            wanted = {int(i) for i in ids}
            recs = [r for r in recs if r.id in wanted]
        return recs

    def experiments(self) -> list[str]:
        """Names of the experiments in the store, sorted."""
        return [r[0] for r in self._conn.execute("SELECT DISTINCT experiment FROM runs ORDER BY experiment")]

    def start_run(self, run_id: int, *, noise_rng_state: dict[str, Any] | None = None) -> None:
        """Mark a run ``"running"`` (and store the initial noise-generator state if given)."""
        with self._write() as c:
            c.execute(
                "UPDATE runs SET status = 'running', error = NULL, started_at = COALESCE(started_at, ?), "
                "noise_rng_state = COALESCE(?, noise_rng_state) WHERE id = ?",
                (time.time(), None if noise_rng_state is None else canonical_json(noise_rng_state), int(run_id)),
            )

    def append_evaluation(
        self,
        run_id: int,
        evaluation: Evaluation,
        *,
        method_state: dict[str, Any],
        noise_rng_state: dict[str, Any] | None,
        wall_seconds: float,
    ) -> None:
        """Append one evaluation and save the method state it produced, in one transaction.

        Raises
        ------
        sqlite3.IntegrityError
            If evaluation ``t`` of this run already exists.
        """
        ev = evaluation
        x = [float(v) for v in np.asarray(ev.x, dtype=float).reshape(-1)]
        with self._write() as c:
            c.execute(
                "INSERT INTO evaluations (run_id, t, x, y, f, regret, failed, error, ask_seconds, eval_seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    int(run_id),
                    int(ev.t),
                    json.dumps(x),
                    None if ev.failed else _opt_float(ev.y),
                    _opt_float(ev.f),
                    _opt_float(ev.regret),
                    int(bool(ev.failed)),
                    ev.error,
                    float(ev.ask_seconds),
                    float(ev.eval_seconds),
                ),
            )
            c.execute(
                "UPDATE runs SET method_state = ?, noise_rng_state = ?, wall_seconds = ? WHERE id = ?",
                (
                    json.dumps(to_jsonable(method_state)),
                    None if noise_rng_state is None else canonical_json(noise_rng_state),
                    float(wall_seconds),
                    int(run_id),
                ),
            )

    def finish_run(self, run_id: int, *, diagnostics: dict[str, Any] | None, wall_seconds: float) -> None:
        """Mark a run ``"finished"`` and store its diagnostics and total wall seconds."""
        with self._write() as c:
            c.execute(
                "UPDATE runs SET status = 'finished', finished_at = ?, wall_seconds = ?, diagnostics = ?, "
                "error = NULL WHERE id = ?",
                (time.time(), float(wall_seconds), json.dumps(to_jsonable(diagnostics or {})), int(run_id)),
            )

    def fail_run(self, run_id: int, error: str, *, wall_seconds: float | None = None) -> None:
        """Mark a run ``"failed"`` with an error text (it stays resumable)."""
        with self._write() as c:
            c.execute(
                "UPDATE runs SET status = 'failed', error = ?, wall_seconds = COALESCE(?, wall_seconds) WHERE id = ?",
                (str(error), wall_seconds, int(run_id)),
            )

    def delete_run(self, run_id: int) -> None:
        """Remove a run and its evaluations."""
        with self._write() as c:
            c.execute("DELETE FROM evaluations WHERE run_id = ?", (int(run_id),))
            c.execute("DELETE FROM runs WHERE id = ?", (int(run_id),))

    # ------------------------------------------------------------------ evaluations
    def n_evaluations(self, run_id: int) -> int:
        """Number of stored evaluations of a run."""
        row = self._conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id = ?", (int(run_id),)).fetchone()
        return int(row[0])

    def load_evaluations(self, run_id: int) -> EvaluationArrays:
        """The evaluations of a run, ordered by ``t``, as arrays (NULL -> NaN)."""
        rows = self._conn.execute(
            "SELECT t, x, y, f, regret, failed, error, ask_seconds, eval_seconds FROM evaluations "
            "WHERE run_id = ? ORDER BY t",
            (int(run_id),),
        ).fetchall()

        def col(name: str) -> NDArray[np.float64]:
            return np.array([np.nan if r[name] is None else r[name] for r in rows], dtype=float)

        xs = [json.loads(r["x"]) for r in rows]
        dim = len(xs[0]) if xs else 0
        return EvaluationArrays(
            t=np.array([r["t"] for r in rows], dtype=np.int64),
            X=np.array(xs, dtype=float).reshape(len(rows), dim),
            y=col("y"),
            f=col("f"),
            regret=col("regret"),
            failed=np.array([bool(r["failed"]) for r in rows], dtype=bool),
            errors=[r["error"] for r in rows],
            ask_seconds=col("ask_seconds"),
            eval_seconds=col("eval_seconds"),
        )
