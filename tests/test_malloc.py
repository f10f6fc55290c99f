from __future__ import annotations

import platform
import sys

import pytest

from hdbo import _malloc
from hdbo.experiments import runner


class FakeFunction:
    """A C function of the fake library: records its calls (and takes ``argtypes``)."""

    def __init__(self, result: int) -> None:
        self.calls: list[tuple[int, ...]] = []
        self.result = result

    def __call__(self, *args: int) -> int:
        self.calls.append(args)
        return self.result


class FakeLibc:
    """Stands in for ``ctypes.CDLL(None)``: records mallopt calls."""

    def __init__(self, *, glibc: bool = True, result: int = 1) -> None:
        self.mallopt = FakeFunction(result)
        if glibc:
            self.gnu_get_libc_version = FakeFunction(0)

    @property
    def calls(self) -> list[tuple[int, ...]]:
        return self.mallopt.calls


@pytest.fixture
def fresh(monkeypatch):
    """A process that has not tuned malloc yet, on Linux, with no malloc variables set."""
    monkeypatch.setattr(_malloc, "_done", False)
    monkeypatch.setattr(sys, "platform", "linux")
    for v in (*_malloc._USER_VARIABLES, "GLIBC_TUNABLES", "HDBO_MALLOC_TUNING"):
        monkeypatch.delenv(v, raising=False)
    libc = FakeLibc()
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: libc)
    return libc


def test_sets_trim_threshold_and_top_pad_once(fresh):
    assert _malloc.tune_malloc() is True
    assert fresh.calls == [(-3, _malloc.MMAP_THRESHOLD), (-1, _malloc.TRIM_THRESHOLD), (-2, _malloc.TOP_PAD)]
    assert _malloc.tune_malloc() is True
    assert len(fresh.calls) == 3  # once per process


@pytest.mark.parametrize("value", ["0", "off", "False", " no "])
def test_opt_out(fresh, monkeypatch, value):
    monkeypatch.setenv("HDBO_MALLOC_TUNING", value)
    assert _malloc.tune_malloc() is False
    assert fresh.calls == []


@pytest.mark.parametrize("variable, value", [("MALLOC_TRIM_THRESHOLD_", "100000"), ("MALLOC_TOP_PAD_", "0"),
                                              ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1")])
def test_user_settings_win(fresh, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    assert _malloc.tune_malloc() is False
    assert fresh.calls == []


def test_nothing_off_linux_or_off_glibc(fresh, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _malloc.tune_malloc() is False
    monkeypatch.setattr(sys, "platform", "linux")
    musl = FakeLibc(glibc=False)
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: musl)
    assert _malloc.tune_malloc() is False
    assert musl.calls == [] and fresh.calls == []


def test_failed_mallopt_is_reported_and_retried(fresh, monkeypatch):
    failing = FakeLibc(result=0)
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: failing)
    assert _malloc.tune_malloc() is False
    assert _malloc.tune_malloc() is False
    assert len(failing.calls) == 2  # the first parameter each time; not marked done


def test_real_process(monkeypatch):
    """On this machine's C library: True exactly on Linux with glibc (and callable twice)."""
    monkeypatch.setattr(_malloc, "_done", False)
    for v in (*_malloc._USER_VARIABLES, "GLIBC_TUNABLES", "HDBO_MALLOC_TUNING"):
        monkeypatch.delenv(v, raising=False)
    expected = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert _malloc.tune_malloc() is expected
    assert _malloc.tune_malloc() is expected


def test_run_many_tunes_only_when_it_runs(tmp_path, monkeypatch):
    from hdbo.experiments.store import RunConfig

    calls = []
    monkeypatch.setattr(runner, "tune_malloc", lambda: calls.append(1) or True)
    config = RunConfig(experiment="e", problem="levy", method="random", seed=0, budget=3,
                       problem_params={"dim": 2}, method_params={})
    assert runner.run_many(tmp_path / "s.db", [config], progress=False).n_finished == 1
    assert calls == [1]
    runner.run_many(tmp_path / "s.db", [config], progress=False)  # already finished: nothing to run
    assert calls == [1]
