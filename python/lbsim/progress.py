"""Progress bars on stderr: one for a run (fed by the engine), one for a sweep.

Bars appear only on a terminal and only once a job has taken longer than
``delay`` seconds, so short runs and piped output stay quiet.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TextIO

__all__ = ["RunProgress", "CountProgress", "wants_progress"]


def wants_progress(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (stderr by default) is a terminal and
    ``LBSIM_PROGRESS`` is not ``0``. ``LBSIM_PROGRESS=1`` forces bars on."""
    env = os.environ.get("LBSIM_PROGRESS")
    if env is not None:
        return env not in ("0", "", "false", "no")
    s = stream if stream is not None else sys.stderr
    try:
        return s.isatty()
    except (AttributeError, ValueError):
        return False


def _bar(frac: float, width: int) -> str:
    frac = min(max(frac, 0.0), 1.0)
    full = int(frac * width)
    return "#" * full + "-" * (width - full)


def _fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.1f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f} "


def _fmt_time_us(us: float) -> str:
    for unit, scale in (("s", 1e6), ("ms", 1e3)):
        if us >= scale:
            return f"{us / scale:g} {unit}"
    return f"{us:g} us"


class _Line:
    def __init__(self, stream: TextIO | None, delay: float) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.t0 = time.monotonic()
        self.shown = False
        self.last_len = 0

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def draw(self, text: str, force: bool = False) -> None:
        if not self.shown and not force and self.elapsed() < self.delay:
            return
        self.shown = True
        cols = shutil.get_terminal_size((100, 20)).columns
        text = text[: max(cols - 1, 20)]
        pad = max(self.last_len - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.last_len = len(text)

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


class RunProgress:
    """A progress bar for one run, called by the engine as
    ``bar(now_us, stop_at_us, events, flows_done, flows)``.

    The bar shows the larger of two fractions: flows completed and simulated
    time against the horizon (``stop_at``), plus events per second.
    """

    def __init__(self, label: str = "", *, stream: TextIO | None = None, delay: float = 1.0) -> None:
        self.label = label
        self.line = _Line(stream, delay)
        self.last: tuple[float, float, int, int, int] | None = None
        self._prev: tuple[float, int] | None = None
        self.rate = 0.0

    def __call__(self, now_us: float, stop_at_us: float, events: int, flows_done: int, flows: int) -> None:
        self.last = (now_us, stop_at_us, events, flows_done, flows)
        t = self.line.elapsed()
        if self._prev is not None and t > self._prev[0]:
            self.rate = (events - self._prev[1]) / (t - self._prev[0])
        elif t > 0:
            self.rate = events / t
        self._prev = (t, events)
        self.line.draw(self._text())

    def _text(self) -> str:
        assert self.last is not None
        now_us, stop_at_us, events, flows_done, flows = self.last
        frac = max(flows_done / flows if flows else 0.0, now_us / stop_at_us if stop_at_us else 0.0)
        label = f"{self.label} " if self.label else ""
        return (
            f"{label}[{_bar(frac, 24)}] {frac * 100:5.1f}%  flows {flows_done}/{flows}  "
            f"sim {now_us:,.1f} us of {_fmt_time_us(stop_at_us)}  {_fmt_rate(self.rate)}ev/s  "
            f"{self.line.elapsed():.1f} s"
        )

    def close(self) -> None:
        """End the bar's line (if it was ever shown)."""
        if self.line.shown and self.last is not None:
            self.line.draw(self._text())
        self.line.finish()


class CountProgress:
    """A progress bar over a count of jobs (a sweep's runs)."""

    def __init__(
        self, total: int, label: str = "", *, stream: TextIO | None = None, delay: float = 1.0
    ) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.line = _Line(stream, delay)

    def update(self, done: int, failed: int = 0) -> None:
        self.done, self.failed = done, failed
        self.line.draw(self._text())

    def _text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        t = self.line.elapsed()
        eta = t / self.done * (self.total - self.done) if self.done else float("nan")
        eta_s = f"  eta {eta:.0f} s" if self.done and self.done < self.total else ""
        fail = f"  {self.failed} failed" if self.failed else ""
        label = f"{self.label} " if self.label else ""
        return f"{label}[{_bar(frac, 24)}] {self.done}/{self.total} runs{fail}  {t:.1f} s{eta_s}"

    def close(self) -> None:
        if self.line.shown:
            self.line.draw(self._text())
        self.line.finish()
