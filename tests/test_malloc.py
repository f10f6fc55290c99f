from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from hdbo import _malloc


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
    assert fresh.calls == [(-3, 32 * 2**20), (-1, 256 * 2**20), (-2, 64 * 2**20)]
    assert _malloc.tune_malloc() is True
    assert len(fresh.calls) == 3  # once per process


@pytest.mark.parametrize("value", ["0", "off", "False", " no "])
def test_opt_out(fresh, monkeypatch, value):
    monkeypatch.setenv("HDBO_MALLOC_TUNING", value)
    assert _malloc.tune_malloc() is False
    assert fresh.calls == []


@pytest.mark.parametrize("variable, value", [
    ("MALLOC_TRIM_THRESHOLD_", "100000"), ("MALLOC_TOP_PAD_", "0"), ("MALLOC_MMAP_THRESHOLD_", "131072"),
    ("MALLOC_MMAP_MAX_", "0"), ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1"),
    ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=65536"),
])
def test_user_settings_win(fresh, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    assert _malloc.tune_malloc() is False
    assert fresh.calls == []


@pytest.mark.parametrize("variable, value", [("MALLOC_ARENA_MAX", "2"), ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0"),
                                              ("HDBO_MALLOC_TUNING", "1")])
def test_unrelated_settings_do_not_block(fresh, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    assert _malloc.tune_malloc() is True
    assert len(fresh.calls) == 3


def test_nothing_off_linux_or_off_glibc(fresh, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _malloc.tune_malloc() is False
    monkeypatch.setattr(sys, "platform", "linux")
    sizeof = _malloc.ctypes.sizeof
    monkeypatch.setattr(_malloc.ctypes, "sizeof", lambda t: 4)  # a 32-bit process
    assert _malloc.tune_malloc() is False
    monkeypatch.setattr(_malloc.ctypes, "sizeof", sizeof)
    musl = FakeLibc(glibc=False)
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: musl)
    assert _malloc.tune_malloc() is False
    assert musl.calls == [] and fresh.calls == []
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: fresh)
    assert _malloc.tune_malloc() is True  # the same process on 64-bit glibc


def test_refused_mmap_threshold_changes_nothing(fresh, monkeypatch):
    failing = FakeLibc(result=0)
    monkeypatch.setattr(_malloc.ctypes, "CDLL", lambda name: failing)
    assert _malloc.tune_malloc() is False
    assert _malloc.tune_malloc() is False
    assert failing.calls == [(-3, 32 * 2**20)] * 2  # stopped at the first; not marked done


GLIBC_64 = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc" and sys.maxsize > 2**32

PROBE = """
import ctypes, sys
from hdbo._malloc import tune_malloc
class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
tuned = tune_malloc()
before = libc.mallinfo2().hblks
block = libc.malloc(20 << 20)
mapped = libc.mallinfo2().hblks - before
libc.free(block)
print(int(tuned), mapped, libc.mallinfo2().keepcost)
"""


@pytest.mark.parametrize("opt_out", [False, True])
def test_effect_in_a_fresh_process(opt_out):
    """A 20 MB block comes from the heap and stays there after free (tuned), or is mapped
    (glibc's defaults in a fresh process); on other systems nothing is tuned."""
    env = {k: v for k, v in os.environ.items() if k not in (*_malloc._USER_VARIABLES, "GLIBC_TUNABLES")}
    env["HDBO_MALLOC_TUNING"] = "0" if opt_out else "1"
    glibc = GLIBC_64
    if not glibc:
        code = "from hdbo._malloc import tune_malloc; print(int(tune_malloc()))"
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split() == ["0"]
        return
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    tuned, mapped, keepcost = (int(v) for v in out.stdout.split())
    if opt_out:
        assert (tuned, mapped) == (0, 1)
    else:
        assert (tuned, mapped) == (1, 0)
        assert keepcost >= 20 << 20  # the freed block stays at the top of the heap


