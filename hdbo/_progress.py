"""One small progress display for :func:`hdbo.minimize` and the experiment runner.

:class:`Progress` picks its mode once, when it is created:

``"tqdm"``
    The stream is a terminal (or a Jupyter output) and tqdm is installed
    (``pip install hdbo[progress]``): a tqdm bar.
``"line"``
    The stream is a terminal and tqdm is not installed: one line rewritten in place with
    ``\\r``, at most every ``min_interval`` seconds.
``"log"``
    The stream is not a terminal (CI logs, a file): one complete line each time another
    ``log_every`` fraction of the total is done (every 10% by default) and a last line at
    :meth:`Progress.close` if anything changed since, so a log gets about ten lines,
    never a bar per update.
``"off"``
    Disabled, or nothing to do (``total == 0``).

Examples
--------
>>> import io
>>> log = io.StringIO()
>>> with Progress(4, desc="demo", unit="eval", stream=log, log_every=0.5) as bar:
...     for _ in range(4):
...         bar.update(postfix="best=1")
>>> print(log.getvalue(), end="")  # doctest: +ELLIPSIS
demo: 2/4 eval (50%) ... best=1
demo: 4/4 eval (100%) ... best=1
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TextIO

__all__ = ["Progress", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """Short human-readable duration.

    Parameters
    ----------
    seconds : float
        Duration; negative or non-finite values give ``"?"``.

    Returns
    -------
    str
        ``"42s"``, ``"3m05s"`` or ``"2h07m"``.

    Examples
    --------
    >>> format_seconds(42.4), format_seconds(185), format_seconds(7620)
    ('42s', '3m05s', '2h07m')
    """
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def _is_notebook(stream: Any) -> bool:
    """Jupyter's stderr is not a TTY but renders tqdm's notebook bar."""
    return type(stream).__module__.startswith("ipykernel")


class Progress:
    """Progress of ``total`` steps, shown on a stream (stderr by default).

    Parameters
    ----------
    total : int
        Number of steps expected (may be changed later with :meth:`set_total`).
    enabled : bool, default True
        False shows nothing (mode ``"off"``).
    desc : str, default ""
        Text in front of the counter.
    unit : str, default "it"
        Name of a step (``"eval"``, ``"run"``).
    stream : file-like, optional
        Where to write; default ``sys.stderr`` at construction time.
    log_every : float, default 0.1
        In ``"log"`` mode, a line each time this fraction of ``total`` is done.
    min_interval : float, default 0.1
        In ``"line"`` mode, seconds between redraws (the last step is always drawn).
    leave : bool, default True
        Keep the finished bar on screen (``"tqdm"`` mode).

    Raises
    ------
    ValueError
        ``total < 0`` or ``log_every`` not in (0, 1].

    Attributes
    ----------
    mode : {"tqdm", "line", "log", "off"}
        How progress is shown (see the module docstring).
    n : int
        Steps done so far.
    total : int
        Steps expected.
    """

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        desc: str = "",
        unit: str = "it",
        stream: TextIO | None = None,
        log_every: float = 0.1,
        min_interval: float = 0.1,
        leave: bool = True,
    ) -> None:
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ValueError(f"total must be an int >= 0, got {total!r}")
        if not 0.0 < log_every <= 1.0:
            raise ValueError(f"log_every must be in (0, 1], got {log_every!r}")
        self.total, self.n = total, 0
        self.desc, self.unit = desc, unit
        self.stream: Any = sys.stderr if stream is None else stream
        self.log_every, self.min_interval = float(log_every), float(min_interval)
        self.postfix = ""
        self._start = time.monotonic()
        self._last_draw = -math.inf
        self._width = 0
        self._next_log = self.log_every
        self._logged: tuple[int, int, str] = (0, total, "")  # (n, total, postfix) of the last log line
        self._bar: Any = None
        self._closed = False
        self.mode = "off"
        if not enabled or total == 0:
            return
        interactive = _is_tty(self.stream) or _is_notebook(self.stream)
        if interactive:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, desc=desc or None, unit=unit, file=self.stream, leave=leave,
                                 dynamic_ncols=True)
                self.mode = "tqdm"
                return
        self.mode = "line" if _is_tty(self.stream) else "log"

    # ------------------------------------------------------------------ updates
    def update(self, n: int = 1, *, postfix: str | None = None) -> None:
        """Count ``n`` more steps done and redraw if due.

        Parameters
        ----------
        n : int, default 1
            Steps to add (0 just updates the text).
        postfix : str, optional
            Text shown after the counter (e.g. ``"best=0.123"``); kept until replaced.
        """
        if postfix is not None:
            self.postfix = postfix
        self.n += int(n)
        if self.mode == "tqdm":
            if postfix is not None:
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.update(int(n))
        elif self.mode == "line":
            now = time.monotonic()
            if now - self._last_draw >= self.min_interval or self.n >= self.total:
                self._draw_line(now)
        elif self.mode == "log":
            self._maybe_log()

    def set_total(self, total: int) -> None:
        """Change the number of steps expected (e.g. when some work turned out not to be needed).

        Parameters
        ----------
        total : int
            New total, ``>= 0``.

        Raises
        ------
        ValueError
            ``total < 0``.
        """
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total!r}")
        self.total = int(total)
        if self.mode == "tqdm":
            self._bar.total = self.total
            self._bar.refresh()
        elif self.mode == "line":
            self._draw_line(time.monotonic())
        elif self.mode == "log":
            self._maybe_log()

    def close(self) -> None:
        """Finish the display: close the bar, end the line, or write the last log line.

        Calling it again does nothing.
        """
        if self._closed:
            return
        self._closed = True
        if self.mode == "tqdm":
            self._bar.close()
        elif self.mode == "line":
            self._draw_line(time.monotonic())
            self._write("\n")
        elif self.mode == "log" and (self.n, self.total, self.postfix) != self._logged:
            self._log_line()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ text
    def text(self) -> str:
        """The status line: ``"desc: n/total unit (pct%) elapsed, eta ... postfix"``.

        Returns
        -------
        str
            One line without a newline.
        """
        elapsed = time.monotonic() - self._start
        pct = 100.0 * self.n / self.total if self.total else 100.0
        parts = [f"{self.desc}: " if self.desc else "", f"{self.n}/{self.total} {self.unit} ({pct:.0f}%)",
                 f" {format_seconds(elapsed)}"]
        if 0 < self.n < self.total:
            parts.append(f", eta {format_seconds(elapsed / self.n * (self.total - self.n))}")
        if self.postfix:
            parts.append(f" {self.postfix}")
        return "".join(parts)

    def _write(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream never stops a run
            self.mode = "off"

    def _draw_line(self, now: float) -> None:
        self._last_draw = now
        line = self.text()
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self._write("\r" + line + " " * pad)

    def _maybe_log(self) -> None:
        if self.total <= 0 or (self.n, self.total) == self._logged[:2]:
            return
        if self.n / self.total >= self._next_log - 1e-12:
            self._log_line()
            done = self.n / self.total
            self._next_log = (math.floor(done / self.log_every + 1e-9) + 1) * self.log_every

    def _log_line(self) -> None:
        self._logged = (self.n, self.total, self.postfix)
        self._write(self.text() + "\n")
