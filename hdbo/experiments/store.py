"""A SQLite store for experiment runs and their evaluations, safe for several writer processes.

One file holds every run of every experiment. A run is identified by its
:class:`RunConfig` (experiment, problem and its parameters, method, label and its
parameters, seed, budget): asking the store for the same configuration again returns the
same row, which is how reruns skip finished work and resume interrupted runs.

Tables
------
``meta``
    ``key``, ``value``: the schema version, the creation time of the file and, for a
    migrated file, the time of the migration.
``runs``
    One row per run: the configuration (parameters as canonical JSON), ``status`` in
    ``{"pending", "running", "finished", "failed"}``, timestamps, cumulative wall seconds,
    the latest ``Method.state_dict(include_history=False)`` and noise-generator state (JSON),
    the method's diagnostics (JSON), an error text, the hdbo version that wrote it, and the
    claim of the process executing it: ``owner_host``, ``owner_pid``, ``heartbeat_at``.
``evaluations``
    One row per evaluation ``(run_id, t)`` with ``t = 0, 1, ...``: the point ``x`` (JSON,
    user units, exactly as told), the observation ``y`` (NULL if the evaluation failed), the
    noise-free value ``f`` and regret (NULL when unknown), a ``failed`` flag, the error
    message, and the seconds spent in ``ask`` and in the objective.

Writing an evaluation and the method state it produced is one transaction
(:meth:`RunStore.append_evaluation`; :meth:`RunStore.append_evaluations` stores a chunk of
evaluations and the state after the last one), so a process killed at any moment leaves a
run whose stored state matches its stored history. Values are stored as SQLite REAL (IEEE doubles)
and JSON written with ``repr`` floats, so they round-trip exactly. Nothing is pickled.

Claims
------
Several processes (or hosts sharing the file) may be asked to execute the same run. Before
executing a run a process *claims* it (:meth:`RunStore.claim_run`): in one transaction it
marks the run ``"running"`` with its :class:`RunOwner` (host name and process id) and a
heartbeat time, which every :meth:`RunStore.append_evaluation` refreshes. Another process
that finds the run ``"running"`` under a *live* owner leaves it alone. An owner is live when

* it runs on this host and its process id is alive (on Windows the heartbeat rule is used), or
* it runs on another host and its heartbeat is younger than ``stale_after`` seconds
  (:data:`STALE_AFTER_SECONDS` by default);

otherwise the claim is stale (the process was killed) and is taken over. An owner whose
claim was taken over notices at its next append (:class:`ClaimLostError`) and stops without
touching the run.

Schema versions
---------------
1: first version. 2: the claim columns of ``runs``. Opening an older file migrates it in
place (one transaction); a file of a newer version than this hdbo knows raises
:class:`StoreError`.

Files that are not stores
-------------------------
A store path is checked before anything is written: a folder, a path under a file, a
folder the user cannot write in, a file that is not SQLite (read from its first 16 bytes), an
SQLite file that is not an hdbo store (no ``meta`` schema version, or ``runs`` /
``evaluations`` tables without hdbo's columns) and a store of a newer schema version raise
:class:`StoreError` (a :class:`ValueError`) naming the path and the reason, and leave the
file exactly as it was.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..exceptions import HDBOError
from ..methods.registry import option_spellings
from ..utils import to_jsonable

__all__ = [
    "SCHEMA_VERSION",
    "RUN_STATUSES",
    "STALE_AFTER_SECONDS",
    "RunConfig",
    "RunRecord",
    "RunOwner",
    "RunClaim",
    "ClaimLostError",
    "StoreError",
    "Evaluation",
    "EvaluationArrays",
    "RunStore",
    "canonical_json",
    "default_problem_label",
    "hdbo_version",
]

#: Version of the file layout written by this hdbo (see "Schema versions" above).
SCHEMA_VERSION = 2
#: Largest seed or budget a store holds (SQLite INTEGER: a signed 64-bit integer).
MAX_INT64 = 2**63 - 1
_SQLITE_MAGIC = b"SQLite format 3\x00"
RUN_STATUSES = ("pending", "running", "finished", "failed")
#: A claim from another host whose heartbeat is older than this (seconds) is stale.
STALE_AFTER_SECONDS = 15 * 60.0
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
    owner_host      TEXT,
    owner_pid       INTEGER,
    heartbeat_at    REAL,
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

# Columns each schema version added to an existing table: version -> [(table, column, type)].
_ADDED_COLUMNS: dict[int, list[tuple[str, str, str]]] = {
    2: [("runs", "owner_host", "TEXT"), ("runs", "owner_pid", "INTEGER"), ("runs", "heartbeat_at", "REAL")],
}


class ClaimLostError(HDBOError, RuntimeError):
    """The run was taken over by another process (this process's claim was judged stale)."""


class StoreError(HDBOError, ValueError):
    """A path cannot be used as a store (the message names the path and why); nothing was written."""


# Columns of version 1 (the claim columns came with version 2, see _ADDED_COLUMNS).
_V1_COLUMNS: dict[str, frozenset[str]] = {
    "runs": frozenset(
        "id experiment problem problem_params problem_label method label method_params seed budget status "
        "created_at started_at finished_at wall_seconds method_state noise_rng_state diagnostics error "
        "hdbo_version".split()
    ),
    "evaluations": frozenset("run_id t x y f regret failed error ask_seconds eval_seconds".split()),
}


def canonical_json(obj: Any) -> str:
    """JSON text with sorted keys and no spaces, so equal parameters give equal text.

    Floats are written with ``repr`` (the shortest text that reads back to the same double).

    Parameters
    ----------
    obj : object
        JSON-serializable after :func:`hdbo.utils.to_jsonable` (NumPy scalars and arrays,
        tuples, dicts and lists of them).

    Returns
    -------
    str
        The JSON text.

    Raises
    ------
    TypeError
        ``obj`` holds something that has no JSON form.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [0.1, 2]})
    '{"a":[0.1,2],"b":1}'
    """
    return json.dumps(to_jsonable(obj), sort_keys=True, separators=(",", ":"))


def hdbo_version() -> str:
    """Version of the installed hdbo distribution.

    Returns
    -------
    str
        The distribution's version, else ``hdbo.__version__``, else ``"unknown"``.
    """
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


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Everything that identifies one run; equal configs are the same row in the store.

    Every field is keyword-only.

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

    Raises
    ------
    TypeError
        A field of the wrong type (the message names it).
    ValueError
        ``seed < 0`` or ``budget <= 0``, or either above ``2**63 - 1`` (:data:`MAX_INT64`,
        the largest integer SQLite stores).

    Examples
    --------
    >>> c = RunConfig(experiment="demo", problem="branin", method="random", seed=0, budget=20,
    ...               problem_params={"dim": 20})
    >>> c.label, c.problem_label
    ('random', 'branin(dim=20)')
    >>> RunConfig(**c.to_dict()) == c
    True
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
        if not 0 <= self.seed <= MAX_INT64:
            raise ValueError(f"RunConfig.seed must be >= 0 and <= 2**63 - 1 = {MAX_INT64}, got {self.seed}")
        if not 0 < self.budget <= MAX_INT64:
            raise ValueError(f"RunConfig.budget must be > 0 and <= 2**63 - 1 = {MAX_INT64}, got {self.budget}")
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
        """The identity of the run (the store's UNIQUE key).

        Returns
        -------
        tuple
            ``(experiment, problem, problem_params JSON, method, label, method_params JSON,
            seed, budget)`` with the parameters as :func:`canonical_json` text.
        """
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
        """JSON-serializable form.

        Returns
        -------
        dict
            Every field by name; ``RunConfig(**d)`` gives the config back.
        """
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
    """The report label of a problem configuration that has no label of its own.

    Parameters
    ----------
    problem : str
        Problem name.
    params : dict
        Problem parameters.

    Returns
    -------
    str
        ``"branin"`` without parameters, else e.g. ``"branin(dim=20, noise_std=0.1)"``
        (parameters sorted by name, values as JSON).
    """
    if not params:
        return problem
    inner = ", ".join(f"{k}={json.dumps(to_jsonable(v))}" for k, v in sorted(params.items()))
    return f"{problem}({inner})"


@dataclass(frozen=True)
class RunOwner:
    """The process that claimed a run: host name, process id and last heartbeat.

    Parameters
    ----------
    host : str
        ``socket.gethostname()`` of the owner.
    pid : int
        Process id on that host.
    heartbeat_at : float or None, default None
        Unix time of the claim or of the owner's latest evaluation (None when unknown).

    Examples
    --------
    >>> me = RunOwner.current()
    >>> me.is_alive()
    True
    >>> RunOwner("elsewhere", 1, heartbeat_at=0.0).is_alive()  # a heartbeat from 1970
    False
    """

    host: str
    pid: int
    heartbeat_at: float | None = None

    @classmethod
    def current(cls) -> "RunOwner":
        """This process.

        Returns
        -------
        RunOwner
            Host name and process id of the calling process, no heartbeat.
        """
        return cls(socket.gethostname(), os.getpid())

    def same_process(self, other: "RunOwner") -> bool:
        """Whether ``other`` is the same process (same host and pid; heartbeats ignored).

        Parameters
        ----------
        other : RunOwner

        Returns
        -------
        bool
        """
        return self.host == other.host and self.pid == other.pid

    def is_alive(self, *, now: float | None = None, stale_after: float = STALE_AFTER_SECONDS) -> bool:
        """Whether this owner is presumably still executing its run.

        Parameters
        ----------
        now : float, optional
            Current Unix time (default ``time.time()``).
        stale_after : float, default STALE_AFTER_SECONDS
            Age in seconds after which the heartbeat of an owner on another host is stale.

        Returns
        -------
        bool
            On this host (except on Windows): whether the process id is alive. Elsewhere:
            whether the heartbeat is younger than ``stale_after``.

        Notes
        -----
        A process id reused by an unrelated process after the owner died makes a stale
        claim look live on the same host; such a run is skipped until that process ends (or
        mark it failed with :meth:`RunStore.fail_run`).
        """
        if self.host == socket.gethostname() and sys.platform != "win32":
            return _pid_alive(self.pid)
        if self.heartbeat_at is None:
            return False
        now = time.time() if now is None else now
        return now - self.heartbeat_at < stale_after

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}"


def _prepare_store_file(path: str, *, create: bool) -> bool:
    """Check a store path before SQLite opens it; create an empty file if needed.

    Returns whether this call created the file (so that a failure later can remove it).
    Raises FileNotFoundError (missing, ``create=False``) or StoreError; writes nothing into
    an existing file.
    """
    p = Path(path)
    if p.is_dir():
        raise StoreError(f"store {path!r} is a folder; give the path of a store file (e.g. {str(p / 'runs.db')!r})")
    if p.exists():
        if not p.is_file():
            raise StoreError(f"store {path!r} is not a regular file")
        try:
            with p.open("rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise StoreError(f"store {path!r} cannot be read: {exc.strerror or exc}") from None
        if head and head != _SQLITE_MAGIC:
            raise StoreError(f"store {path!r} is not an SQLite database (hdbo stores are SQLite files); left untouched")
        return False
    if not create:
        raise FileNotFoundError(f"store {path!r} does not exist")
    for parent in [p.parent, *p.parent.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise StoreError(f"store {path!r} cannot be created: {str(parent)!r} is a file, not a folder")
            break
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"store {path!r} cannot be created: folder {str(p.parent)!r} cannot be made ({exc.strerror or exc})"
        ) from None
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:  # another process created it meanwhile
        return False
    except OSError as exc:
        raise StoreError(
            f"store {path!r} cannot be created in folder {str(p.parent)!r}: {exc.strerror or exc}"
        ) from None
    os.close(fd)
    return True


def _remove_new_file(path: str, created: bool) -> None:
    """Remove a store file (and SQLite's side files) that this process created and could not set up."""
    if not created:
        return
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            os.remove(name)
        except OSError:
            pass


def _check_layout(conn: sqlite3.Connection, path: str) -> int | None:
    """The schema version of an open SQLite file (None for an empty one), reading only.

    Raises StoreError for a file that is not an hdbo store or has a newer schema version.
    """
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    tables = {t for t in tables if not t.startswith("sqlite_")}
    if not tables:
        return None
    what = f"store {path!r} is an SQLite database but not an hdbo store"
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() if "meta" in tables else None
    if row is None:
        raise StoreError(f"{what} (no schema version; its tables: {', '.join(sorted(tables))}); left untouched")
    try:
        version = int(row[0])
    except (TypeError, ValueError):
        raise StoreError(f"{what} (schema version {row[0]!r} is not a number); left untouched") from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"store {path!r} has schema version {version}, this hdbo reads up to {SCHEMA_VERSION} (it was "
            f"written by a newer hdbo: upgrade hdbo to use it); left untouched"
        )
    if version < 1:
        raise StoreError(f"{what} (schema version {version}); left untouched")
    for table, columns in _V1_COLUMNS.items():
        if table not in tables:
            raise StoreError(f"{what} (no {table!r} table); left untouched")
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        needed = set(columns) | {col for v in range(2, version + 1) for t, col, _ in _ADDED_COLUMNS.get(v, []) if t == table}
        missing = sorted(needed - have)
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            raise StoreError(f"{what} (its {table!r} table has no column {shown}); left untouched")
    return version


def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (POSIX)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except OSError:
        return False
    # A process that has exited but not been reaped yet (a zombie, e.g. an orphaned worker
    # waiting for init) still answers signal 0; on Linux its /proc entry says so.
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True  # no /proc (not Linux) or the entry vanished: trust the signal test
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X")


@dataclass
class RunRecord:
    """One row of the ``runs`` table, JSON columns decoded.

    Attributes
    ----------
    id : int
        Row id of the run.
    config : RunConfig
        The run's identity.
    status : {"pending", "running", "finished", "failed"}
    created_at, started_at, finished_at : float or None
        Unix times (``started_at`` and ``finished_at`` are None until they happen).
    wall_seconds : float
        Wall time spent on the run, summed over sessions.
    method_state : dict or None
        Latest ``Method.state_dict(include_history=False)``.
    noise_rng_state : dict or None
        State of the observation-noise generator after the latest evaluation.
    diagnostics : dict or None
        ``Method.diagnostics()`` of a finished run.
    error : str or None
        Why the run failed (or was interrupted).
    hdbo_version : str
        Version of hdbo that created the row.
    n_evaluations : int
        Stored evaluations.
    owner : RunOwner or None
        The process that claimed the run (kept only while it is ``"running"``).
    """

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
    owner: RunOwner | None = None


@dataclass(frozen=True)
class RunClaim:
    """Outcome of :meth:`RunStore.claim_run`.

    Attributes
    ----------
    acquired : bool
        This process now owns the run and may execute it.
    record : RunRecord
        The run as it was right after the attempt (read in the same transaction), so the
        evaluations and state to resume from are those of the moment of the claim.
    owner : RunOwner or None
        Who owns the run now: the caller when ``acquired``, otherwise the live owner that
        prevented the claim (None when the run is already finished).
    previous_owner : RunOwner or None
        The stale owner that was replaced, when a claim was taken over.
    """

    acquired: bool
    record: RunRecord
    owner: RunOwner | None
    previous_owner: RunOwner | None = None


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
    "diagnostics, error, hdbo_version, owner_host, owner_pid, heartbeat_at"
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
    StoreError
        The path cannot be used as a store, and nothing was written: it is a folder, lies
        under a file, cannot be created (folder not writable) or read; the file is not SQLite,
        is an SQLite file that is not an hdbo store, or was written with a newer schema
        version than this hdbo understands. A :class:`ValueError`.

    Notes
    -----
    Each process must open its own :class:`RunStore` (SQLite connections are not shared
    across processes). Write transactions start with ``BEGIN IMMEDIATE`` and wait up to a
    minute for other writers. A file of an older schema version is migrated on opening
    (see the module docstring).

    Examples
    --------
    >>> with RunStore(":memory:") as store:
    ...     run = store.get_or_create_run(RunConfig(experiment="demo", problem="branin",
    ...                                              method="random", seed=0, budget=5))
    ...     claim = store.claim_run(run.id)
    ...     claim.acquired, store.get_run(run.id).status
    (True, 'running')
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = str(path)
        created = False if self.path == ":memory:" else _prepare_store_file(self.path, create=create)
        try:
            self._conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            _remove_new_file(self.path, created)
            raise StoreError(f"store {self.path!r} cannot be opened: {exc}") from None
        try:
            self._conn.row_factory = sqlite3.Row
            self._conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            # Read-only look first: a foreign or newer file is refused before anything is written
            # (even switching to WAL would rewrite its header).
            _check_layout(self._conn, self.path)
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._init_schema()
        except BaseException as exc:
            self._conn.close()
            _remove_new_file(self.path, created)
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
                raise StoreError(f"store {self.path!r} cannot be used: {exc}") from None
            raise

    # ------------------------------------------------------------------ plumbing
    def _init_schema(self) -> None:
        """Create the tables of a new file, or check the version of an existing one and migrate it."""
        with self._write() as c:
            version = _check_layout(c, self.path)  # again, under the write lock
            row = None if version is None else {"value": version}
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    c.execute(stmt)
            if row is None:
                c.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                c.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (repr(time.time()),))
                return
            for version in range(int(row["value"]) + 1, SCHEMA_VERSION + 1):
                for table, column, sql_type in _ADDED_COLUMNS.get(version, []):
                    have = {r["name"] for r in c.execute(f"PRAGMA table_info({table})")}
                    if column not in have:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}")
            if int(row["value"]) != SCHEMA_VERSION:
                c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                c.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('migrated_at', ?)", (repr(time.time()),)
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
        """Close the connection (the store cannot be used afterwards)."""
        self._conn.close()

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self.path!r})"

    @property
    def schema_version(self) -> int:
        """Schema version of the file (equals :data:`SCHEMA_VERSION` once opened)."""
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
            # options renamed since the row was written are read under their current names
            method_params=option_spellings(row["method"], json.loads(row["method_params"]))[0],
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
            owner=_owner(row),
        )

    def find_run(self, config: RunConfig) -> RunRecord | None:
        """The run with this configuration.

        Parameters
        ----------
        config : RunConfig

        Returns
        -------
        RunRecord or None
            None when the store has no such run.

        Notes
        -----
        A run stored before one of its method's options was renamed (e.g. line-bo's
        ``direction``, now ``line_direction``) is found under either name.
        """
        key = config.key()
        for params in option_spellings(config.method, config.method_params):
            row = self._conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE experiment = ? AND problem = ? AND problem_params = ? "
                "AND method = ? AND label = ? AND method_params = ? AND seed = ? AND budget = ?",
                (*key[:5], canonical_json(params), *key[6:]),
            ).fetchone()
            if row is not None:
                return self._record(row)
        return None

    def get_or_create_run(self, config: RunConfig) -> RunRecord:
        """The run with this configuration, created with status ``"pending"`` if new.

        Parameters
        ----------
        config : RunConfig

        Returns
        -------
        RunRecord
            The existing run, or the new one (no evaluations).

        Raises
        ------
        RuntimeError
            The row could not be read back (should not happen).
        """
        found = self.find_run(config)  # also under old option names (see find_run)
        if found is not None:
            return found
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

        Parameters
        ----------
        run_id : int

        Returns
        -------
        RunRecord

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
        """Runs ordered by id, optionally filtered.

        Parameters
        ----------
        experiment : str, optional
            Only runs of this experiment.
        status : str or sequence of str, optional
            Only runs with this status (or one of these).
        ids : sequence of int, optional
            Only runs with these ids.

        Returns
        -------
        list of RunRecord

        Raises
        ------
        ValueError
            A status that is not one of ``RUN_STATUSES``.
        """
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
        """Names of the experiments in the store.

        Returns
        -------
        list of str
            Sorted, without duplicates.
        """
        return [r[0] for r in self._conn.execute("SELECT DISTINCT experiment FROM runs ORDER BY experiment")]

    def claim_run(
        self,
        run_id: int,
        *,
        owner: RunOwner | None = None,
        stale_after: float = STALE_AFTER_SECONDS,
    ) -> RunClaim:
        """Atomically take ownership of a run before executing it.

        The run becomes ``"running"`` under ``owner`` with a fresh heartbeat, unless it is
        finished or ``"running"`` under another live owner (see :meth:`RunOwner.is_alive`).
        A claim of the same process is renewed; a stale one is taken over.

        Parameters
        ----------
        run_id : int
            The run.
        owner : RunOwner, optional
            Who claims it (default :meth:`RunOwner.current`).
        stale_after : float, default STALE_AFTER_SECONDS
            Heartbeat age (seconds) after which an owner on another host counts as gone.

        Returns
        -------
        RunClaim
            ``acquired`` tells whether the caller now owns the run; ``record`` is the run
            as of the claim (resume from its evaluations and state).

        Raises
        ------
        KeyError
            No run has that id.
        """
        me = RunOwner.current() if owner is None else owner
        now = time.time()
        previous: RunOwner | None = None
        with self._write() as c:
            row = c.execute(
                "SELECT status, owner_host, owner_pid, heartbeat_at FROM runs WHERE id = ?", (int(run_id),)
            ).fetchone()
            if row is None:
                raise KeyError(f"no run with id {run_id} in {self.path!r}")
            holder = _owner(row)
            if row["status"] == "finished":
                acquired = False
            elif row["status"] == "running" and holder is not None and not holder.same_process(me):
                acquired = not holder.is_alive(now=now, stale_after=stale_after)
                previous = holder if acquired else None
            else:
                acquired = True
            if acquired:
                c.execute(
                    "UPDATE runs SET status = 'running', error = NULL, started_at = COALESCE(started_at, ?), "
                    "owner_host = ?, owner_pid = ?, heartbeat_at = ? WHERE id = ?",
                    (now, me.host, int(me.pid), now, int(run_id)),
                )
        record = self.get_run(run_id)
        if acquired:
            return RunClaim(True, record, RunOwner(me.host, me.pid, now), previous)
        return RunClaim(False, record, holder if record.status != "finished" else None)

    def start_run(self, run_id: int, *, noise_rng_state: dict[str, Any] | None = None) -> None:
        """Mark a run ``"running"`` and store its initial noise-generator state.

        Ownership is not changed: use :meth:`claim_run` first when several processes may
        execute runs from this store.

        Parameters
        ----------
        run_id : int
            The run.
        noise_rng_state : dict, optional
            ``hdbo.utils.generator_state`` of the observation-noise generator before the first
            evaluation (kept as is when None).
        """
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
        owner: RunOwner | None = None,
    ) -> None:
        """Append one evaluation and save the method state it produced, in one transaction.

        Parameters
        ----------
        run_id : int
            The run.
        evaluation : Evaluation
            The evaluation; ``evaluation.x`` has shape (D,).
        method_state : dict
            ``Method.state_dict(include_history=False)`` after telling this evaluation.
        noise_rng_state : dict or None
            State of the observation-noise generator after this evaluation.
        wall_seconds : float
            Wall time of the run so far, over all sessions.
        owner : RunOwner, optional
            The claim this process holds; checked and its heartbeat refreshed in the same
            transaction. None appends without checking ownership.

        Raises
        ------
        ClaimLostError
            ``owner`` no longer owns the run (another process took it over); nothing is written.
        sqlite3.IntegrityError
            If evaluation ``t`` of this run already exists; nothing is written.
        """
        self.append_evaluations(
            run_id, [evaluation], method_state=method_state, noise_rng_state=noise_rng_state,
            wall_seconds=wall_seconds, owner=owner,
        )

    def append_evaluations(
        self,
        run_id: int,
        evaluations: Sequence[Evaluation],
        *,
        method_state: dict[str, Any],
        noise_rng_state: dict[str, Any] | None,
        wall_seconds: float,
        owner: RunOwner | None = None,
    ) -> None:
        """Append consecutive evaluations and the method state after the last, in one transaction.

        Used by the experiment runner's driver to store a chunk of evaluations computed by a
        Dask task: either all of them and the state they lead to are stored, or nothing.

        Parameters
        ----------
        run_id : int
            The run.
        evaluations : sequence of Evaluation
            The evaluations, in order (``t`` increasing); each ``x`` has shape (D,). An empty
            sequence stores only the state.
        method_state : dict
            ``Method.state_dict(include_history=False)`` after telling the last evaluation.
        noise_rng_state : dict or None
            State of the observation-noise generator after the last evaluation.
        wall_seconds : float
            Wall time of the run so far, over all sessions.
        owner : RunOwner, optional
            As in :meth:`append_evaluation`.

        Raises
        ------
        ClaimLostError
            ``owner`` no longer owns the run; nothing is written.
        sqlite3.IntegrityError
            If one of the evaluations' ``t`` already exists for this run; nothing is written.
        """
        rows = []
        for ev in evaluations:
            x = [float(v) for v in np.asarray(ev.x, dtype=float).reshape(-1)]
            rows.append((
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
            ))
        state_json = json.dumps(to_jsonable(method_state))
        noise_json = None if noise_rng_state is None else canonical_json(noise_rng_state)
        with self._write() as c:
            if owner is not None:
                cur = c.execute(
                    "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND status = 'running' "
                    "AND owner_host = ? AND owner_pid = ?",
                    (time.time(), int(run_id), owner.host, int(owner.pid)),
                )
                if cur.rowcount != 1:
                    raise ClaimLostError(f"run {run_id} is no longer owned by {owner} (taken over or finished)")
            c.executemany(
                "INSERT INTO evaluations (run_id, t, x, y, f, regret, failed, error, ask_seconds, eval_seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            c.execute(
                "UPDATE runs SET method_state = ?, noise_rng_state = ?, wall_seconds = ? WHERE id = ?",
                (state_json, noise_json, float(wall_seconds), int(run_id)),
            )

    def finish_run(self, run_id: int, *, diagnostics: dict[str, Any] | None, wall_seconds: float) -> None:
        """Mark a run ``"finished"``, store its diagnostics and release its claim.

        Parameters
        ----------
        run_id : int
            The run.
        diagnostics : dict or None
            ``Method.diagnostics()`` (JSON-serializable).
        wall_seconds : float
            Total wall time of the run over all sessions.
        """
        with self._write() as c:
            c.execute(
                "UPDATE runs SET status = 'finished', finished_at = ?, wall_seconds = ?, diagnostics = ?, "
                "error = NULL, owner_host = NULL, owner_pid = NULL WHERE id = ?",
                (time.time(), float(wall_seconds), json.dumps(to_jsonable(diagnostics or {})), int(run_id)),
            )

    def fail_run(
        self,
        run_id: int,
        error: str,
        *,
        wall_seconds: float | None = None,
        owner: RunOwner | None = None,
    ) -> bool:
        """Mark a run ``"failed"`` with an error text and release its claim (it stays resumable).

        Parameters
        ----------
        run_id : int
            The run.
        error : str
            Why it failed.
        wall_seconds : float, optional
            Wall time so far (kept as is when None).
        owner : RunOwner, optional
            Only fail the run if ``owner`` still owns it (a process whose claim was taken
            over must not fail the run its successor is executing). None: unconditionally.

        Returns
        -------
        bool
            Whether the run was marked failed.
        """
        sql = (
            "UPDATE runs SET status = 'failed', error = ?, wall_seconds = COALESCE(?, wall_seconds), "
            "owner_host = NULL, owner_pid = NULL WHERE id = ?"
        )
        args: tuple[Any, ...] = (str(error), wall_seconds, int(run_id))
        if owner is not None:
            sql += " AND owner_host = ? AND owner_pid = ?"
            args += (owner.host, int(owner.pid))
        with self._write() as c:
            return c.execute(sql, args).rowcount == 1

    def delete_run(self, run_id: int) -> None:
        """Remove a run and its evaluations (no error if it does not exist).

        Parameters
        ----------
        run_id : int
            The run.
        """
        with self._write() as c:
            c.execute("DELETE FROM evaluations WHERE run_id = ?", (int(run_id),))
            c.execute("DELETE FROM runs WHERE id = ?", (int(run_id),))

    # ------------------------------------------------------------------ evaluations
    def n_evaluations(self, run_id: int) -> int:
        """Number of stored evaluations of a run.

        Parameters
        ----------
        run_id : int

        Returns
        -------
        int
            0 for a run without evaluations or an unknown id.
        """
        row = self._conn.execute("SELECT COUNT(*) FROM evaluations WHERE run_id = ?", (int(run_id),)).fetchone()
        return int(row[0])

    def count_evaluations(self, run_ids: Sequence[int]) -> dict[int, int]:
        """Stored evaluations of several runs, in one pass (used to poll progress).

        Parameters
        ----------
        run_ids : sequence of int

        Returns
        -------
        dict of int -> int
            Run id -> number of evaluations (0 for runs without any).
        """
        ids = [int(i) for i in run_ids]
        counts = dict.fromkeys(ids, 0)
        for start in range(0, len(ids), 500):  # stay below SQLite's host-parameter limit
            chunk = ids[start : start + 500]
            rows = self._conn.execute(
                f"SELECT run_id, COUNT(*) FROM evaluations WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                "GROUP BY run_id",
                chunk,
            )
            counts.update({int(r[0]): int(r[1]) for r in rows})
        return counts

    def load_evaluations(self, run_id: int) -> EvaluationArrays:
        """The evaluations of a run, ordered by ``t``.

        Parameters
        ----------
        run_id : int

        Returns
        -------
        EvaluationArrays
            ``X`` of shape (n, D) and the per-evaluation arrays of shape (n,), NULL stored
            values as NaN; ``n = 0`` (and ``X`` of shape (0, 0)) for a run without evaluations.
        """
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


def _owner(row: sqlite3.Row) -> RunOwner | None:
    """The claim columns of a ``runs`` row as a :class:`RunOwner` (None when unclaimed)."""
    if row["owner_host"] is None or row["owner_pid"] is None:
        return None
    hb = row["heartbeat_at"]
    return RunOwner(str(row["owner_host"]), int(row["owner_pid"]), None if hb is None else float(hb))
