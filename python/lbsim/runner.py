"""Run one scenario in this process."""

from __future__ import annotations

from pathlib import Path

from . import _core
from .errors import LbsimError, ScenarioError, UnitError
from .progress import RunProgress, wants_progress
from .results import Result, check_out_dir
from .scenario import ScenarioLike, as_scenario

__all__ = ["run", "memory_bytes", "PROGRESS_EVERY"]

#: The engine calls back every this many events (about 100 times a second at
#: 8 M events/s) to check for Ctrl-C and feed the progress bar.
PROGRESS_EVERY = 1 << 16


def run(
    scenario: ScenarioLike,
    progress: bool = True,
    *,
    out: str | Path | None = None,
    label: str | None = None,
    max_memory: int | str | None = None,
) -> Result:
    """Run a scenario (a :class:`Scenario`, a scenario file path or a dict) to
    its end and return its :class:`Result`; with ``out``, also save it there.

    The engine runs with the GIL released. ``progress=True`` shows a progress
    bar on stderr for runs longer than about a second, when stderr is a
    terminal. Ctrl-C stops the engine cleanly and raises ``KeyboardInterrupt``.
    Raises :class:`lbsim.ScenarioError` (with the key at fault) for an invalid
    scenario, or one estimated to need more memory than ``max_memory`` (bytes,
    or text such as ``"64GiB"``; default 8 GiB), before anything runs; and
    :class:`lbsim.LbsimError` for an ``out`` that cannot be written, also
    before the run. A run whose flows are stuck (no data delivered for
    ``stall_rtos`` RTOs) stops early with ``stop_reason == "no_progress"``.
    """
    s = as_scenario(scenario)
    if out is not None:
        check_out_dir(out)
    limit = memory_bytes(max_memory)
    bar = RunProgress(label if label is not None else _label(s)) if progress and wants_progress() else None
    try:
        raw = _core.run(s.text, s.overrides, s.base_dir, bar, PROGRESS_EVERY, max_memory=limit)
    except ScenarioError as e:
        raise s._err(e) from None
    finally:
        if bar is not None:
            bar.close()
    result = Result.from_raw(raw, key=s.key())
    if out is not None:
        result.save(out)
    return result


def memory_bytes(limit: int | str | None) -> int | None:
    """A memory limit as bytes: an int, text with a unit ("64GiB"), or None (the engine's default)."""
    if limit is None or isinstance(limit, int):
        if isinstance(limit, int) and limit <= 0:
            raise LbsimError(f"max_memory must be positive, got {limit}")
        return limit
    units = "B, KiB, MiB, GiB, TiB, KB, MB, GB or TB"
    try:
        kind, value = _core.parse_amount(str(limit))
    except UnitError:
        kind, value = "", 0
    if kind != "bytes" or not value:
        raise LbsimError(f"max_memory must be an amount of memory such as '64GiB' ({units}), got {limit!r}")
    return int(value)


def _label(s: object) -> str:
    try:
        return str(s["lb.kind"])  # type: ignore[index]
    except Exception:  # noqa: BLE001 - only a label
        return ""
