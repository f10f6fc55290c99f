"""Shared fixtures of the experiment tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The toy problems' module is importable (also in spawned worker processes, which copy sys.path).
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from hdbo.experiments.plugins import load_plugins  # noqa: E402
from hdbo.experiments.store import RunStore  # noqa: E402

# The toy problems are a plugin: registered here and in every worker process of run_many.
load_plugins(["_hdbo_test_problems"])


@pytest.fixture
def store(tmp_path: Path):
    """An empty store in a temporary file."""
    s = RunStore(tmp_path / "runs.db")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _reset_trigger():
    """No test leaves the KeyboardInterrupt trigger of the toy problems armed."""
    import _hdbo_test_problems

    _hdbo_test_problems.TRIGGER["countdown"] = None
    yield
    _hdbo_test_problems.TRIGGER["countdown"] = None
