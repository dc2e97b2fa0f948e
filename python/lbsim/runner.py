"""Run one scenario in this process."""

from __future__ import annotations

from pathlib import Path

from . import _core
from .errors import ScenarioError
from .progress import RunProgress, wants_progress
from .results import Result
from .scenario import ScenarioLike, as_scenario

__all__ = ["run", "PROGRESS_EVERY"]

#: The engine calls back every this many events (about 100 times a second at
#: 8 M events/s) to check for Ctrl-C and feed the progress bar.
PROGRESS_EVERY = 1 << 16


def run(
    scenario: ScenarioLike,
    progress: bool = True,
    *,
    out: str | Path | None = None,
    label: str | None = None,
) -> Result:
    """Run a scenario (a :class:`Scenario`, a scenario file path or a dict) to
    its end and return its :class:`Result`; with ``out``, also save it there.

    The engine runs with the GIL released. ``progress=True`` shows a progress
    bar on stderr for runs longer than about a second, when stderr is a
    terminal. Ctrl-C stops the engine cleanly and raises ``KeyboardInterrupt``.
    Raises :class:`lbsim.ScenarioError` (with the key at fault) for an invalid
    scenario.
    """
    s = as_scenario(scenario)
    bar = RunProgress(label if label is not None else _label(s)) if progress and wants_progress() else None
    try:
        raw = _core.run(s.text, s.overrides, s.base_dir, bar, PROGRESS_EVERY)
    except ScenarioError as e:
        raise s._err(e) from None
    finally:
        if bar is not None:
            bar.close()
    result = Result.from_raw(raw, key=s.key())
    if out is not None:
        result.save(out)
    return result


def _label(s: object) -> str:
    try:
        return str(s["lb.kind"])  # type: ignore[index]
    except Exception:  # noqa: BLE001 - only a label
        return ""
