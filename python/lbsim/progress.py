"""Progress bars on stderr (``rich.progress``): one for a run (fed by the
engine), one for a sweep.

Bars appear only on a terminal (or when ``LBSIM_PROGRESS=1`` forces them on;
``LBSIM_PROGRESS=0`` turns them off) and only once a job has taken longer
than ``delay`` seconds, so short runs and piped output stay quiet.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from rich.console import Console
from rich.filesize import pick_unit_and_suffix
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

__all__ = ["RunProgress", "CountProgress", "wants_progress"]

_OFF = ("0", "", "false", "no")


def wants_progress(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (stderr by default) is a terminal and
    ``LBSIM_PROGRESS`` is not ``0``. ``LBSIM_PROGRESS=1`` forces bars on."""
    env = os.environ.get("LBSIM_PROGRESS")
    if env is not None:
        return env not in _OFF
    s = stream if stream is not None else sys.stderr
    try:
        return s.isatty()
    except (AttributeError, ValueError):
        return False


def _console(stream: TextIO | None) -> Console:
    """A console on ``stream`` (stderr by default). Forced on by
    ``LBSIM_PROGRESS=1``, it draws as on a terminal wherever it writes."""
    env = os.environ.get("LBSIM_PROGRESS")
    forced = env is not None and env not in _OFF
    return Console(
        file=stream,
        stderr=stream is None,
        force_terminal=True if forced else None,
        highlight=False,
        markup=False,
        emoji=False,
    )


def _fmt_bytes(n: float) -> str:
    unit, suffix = pick_unit_and_suffix(int(n), ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], 1024)
    return f"{n:.0f} B" if unit == 1 else f"{n / unit:.1f} {suffix}"


def _fmt_rate(x: float) -> str:
    for scale, prefix in ((1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.1f} {prefix}"
    return f"{x:.0f} "


def _fmt_time_us(us: float) -> str:
    for unit, scale in (("s", 1e6), ("ms", 1e3)):
        if us >= scale:
            return f"{us / scale:g} {unit}"
    return f"{us:g} us"


def _text(fmt: str) -> TextColumn:
    return TextColumn(fmt, markup=False, table_column=Column(no_wrap=True))


class _InfoColumn(ProgressColumn):
    """The task's ``info`` field on one line, the column that gives way (cut
    short with an ellipsis) on a narrow terminal."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(min_width=10))

    def render(self, task: Task) -> Text:
        return Text(str(task.fields.get("info", "")), no_wrap=True, overflow="ellipsis")


class _Bar:
    """A rich Progress with one task, started (drawn) only after ``delay`` seconds."""

    def __init__(
        self, columns: list[ProgressColumn], label: str, total: float, stream: TextIO | None, delay: float,
        refresh_per_second: float | None,
    ) -> None:
        self.delay = delay
        self.t0 = time.monotonic()
        self.shown = False
        self.progress = Progress(
            *columns,
            console=_console(stream),
            auto_refresh=refresh_per_second is not None,
            refresh_per_second=refresh_per_second or 10,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.progress.add_task(label, total=total, info="")

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def update(self, completed: float, info: str) -> None:
        self.progress.update(self.task, completed=completed, info=info)
        if not self.shown:
            if self.elapsed() < self.delay:
                return
            self.progress.start()
            self.shown = True
        self.progress.refresh()

    def close(self) -> None:
        if self.shown:
            self.progress.refresh()
            self.progress.stop()
            self.shown = False


class RunProgress:
    """A progress bar for one run, called by the engine as
    ``bar(now_us, stop_at_us, events, flows_done, flows, delivered_bytes, total_bytes)``.

    The bar shows the larger of two fractions: payload bytes delivered
    against the workload's total, and simulated time against the horizon
    (``stop_at``); beside it flows finished, simulated time and events per
    second.
    """

    def __init__(self, label: str = "", *, stream: TextIO | None = None, delay: float = 1.0) -> None:
        self.label = label
        self.last: tuple[float, float, int, int, int, int, int] | None = None
        self._prev: tuple[float, int] | None = None
        self.rate = 0.0
        self.bar = _Bar(
            [
                _text("{task.description}"),
                BarColumn(bar_width=24),
                _text("{task.percentage:5.1f}%"),
                TimeElapsedColumn(),
                _InfoColumn(),
            ],
            label,
            1.0,
            stream,
            delay,
            None,
        )

    @property
    def fraction(self) -> float:
        """How far the run is, from 0 to 1: the larger of bytes delivered and simulated time."""
        if self.last is None:
            return 0.0
        now_us, stop_at_us, _, _, _, delivered, total = self.last
        frac = max(delivered / total if total else 0.0, now_us / stop_at_us if stop_at_us else 0.0)
        return min(max(frac, 0.0), 1.0)

    def __call__(
        self,
        now_us: float,
        stop_at_us: float,
        events: int,
        flows_done: int,
        flows: int,
        delivered_bytes: int = 0,
        total_bytes: int = 0,
    ) -> None:
        self.last = (now_us, stop_at_us, events, flows_done, flows, delivered_bytes, total_bytes)
        t = self.bar.elapsed()
        if self._prev is not None and t > self._prev[0]:
            self.rate = (events - self._prev[1]) / (t - self._prev[0])
        elif t > 0:
            self.rate = events / t
        self._prev = (t, events)
        self.bar.update(self.fraction, self._info())

    def _info(self) -> str:
        assert self.last is not None
        now_us, stop_at_us, _, flows_done, flows, delivered, total = self.last
        return (
            f"{_fmt_bytes(delivered)} of {_fmt_bytes(total)}  flows {flows_done}/{flows}  "
            f"sim {now_us:,.1f} us of {_fmt_time_us(stop_at_us)}  {_fmt_rate(self.rate)}ev/s"
        )

    def close(self) -> None:
        """End the bar (if it was ever shown), leaving its last state on screen."""
        self.bar.close()


class CountProgress:
    """A progress bar over a count of jobs (a sweep's runs): done of total,
    failed, elapsed time and the time remaining."""

    def __init__(
        self, total: int, label: str = "", *, stream: TextIO | None = None, delay: float = 1.0
    ) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.bar = _Bar(
            [
                _text("{task.description}"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                _text("runs{task.fields[info]}"),
                TimeElapsedColumn(),
                _text("eta"),
                TimeRemainingColumn(),
            ],
            label,
            float(total),
            stream,
            delay,
            2.0,
        )

    def update(self, done: int, failed: int = 0) -> None:
        """``done`` runs ended so far, ``failed`` of them failed."""
        self.done, self.failed = done, failed
        self.bar.update(done, f", {failed} failed" if failed else "")

    def close(self) -> None:
        self.bar.close()
