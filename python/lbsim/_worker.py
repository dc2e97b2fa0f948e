"""What a sweep worker runs. Kept small and importable on any machine that has
lbsim installed (a process-pool child or a Dask worker): it takes plain data,
returns plain data, and never touches the driver's file system."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from . import _core

__all__ = ["ignore_sigint", "ready", "run_task", "run_tasks"]


class _Deadline:
    """A progress callback that cancels the run once its wall-clock time is up."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = False
        self.now_us = 0.0

    def __call__(self, now_us: float, *_: object) -> bool:
        self.now_us = now_us
        if time.monotonic() > self.end:
            self.expired = True
        return not self.expired


def ignore_sigint() -> None:
    """A pool worker's initializer (here, not in lbsim.sweep: a worker imports
    the module of its initializer, and lbsim.sweep brings numpy and rich).
    Ctrl-C goes to the whole process group; the driver handles it and stops
    the workers itself (see lbsim.sweep._stop_pool), so they never pick up
    another task or print tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ready(_: int = 0) -> int:
    """A no-op task that starts a worker process (and imports lbsim there)
    ahead of its first run. The argument only tells calls apart: Dask runs
    identical calls once."""
    return os.getpid()


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one resolved scenario.

    ``task``: ``key``, ``toml`` (the resolved scenario), ``files`` (the
    content of files it reads, by scenario key: ``(path text, bytes)``; they
    are written to a temporary folder here so workers need no shared file
    system), and optionally ``max_memory`` (bytes) and ``timeout`` (seconds of
    wall clock, after which the run is cancelled and reported failed). Returns ``{"ok": True, "raw": <lbsim._core.run output>, ...}`` or
    ``{"ok": False, "error": "..."}``; only an interrupt propagates.
    """
    t0 = time.perf_counter()
    info = {"key": task["key"], "host": socket.gethostname(), "pid": os.getpid()}
    try:
        files = sorted(task.get("files", {}).items())
        # A temporary folder only for a scenario that reads files.
        with tempfile.TemporaryDirectory(prefix="lbsim-") if files else contextlib.nullcontext("") as tmp:
            overrides: list[tuple[str, str]] = []
            if files:
                from ._toml import literal  # tomli_w: only for a scenario that reads files
            for i, (key, (name, data)) in enumerate(files):
                target = Path(tmp) / f"{i}_{Path(name).name}"
                target.write_bytes(data)
                overrides.append((key, literal(str(target))))
            timeout = task.get("timeout")
            watch = _Deadline(timeout) if timeout else None
            raw = _core.run(task["toml"], overrides, None, watch, 1 << 16, 0.0, max_memory=task.get("max_memory"))
            if watch is not None and watch.expired:
                return {
                    "ok": False,
                    "error": f"timed out: the run took longer than {timeout:g} s of wall clock "
                    f"(stopped at {watch.now_us:.1f} us of simulated time); raise timeout= / --timeout",
                    "error_key": None,
                    "worker_seconds": time.perf_counter() - t0,
                    **info,
                }
        return {"ok": True, "raw": raw, "worker_seconds": time.perf_counter() - t0, **info}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a failed run is data, the sweep goes on
        key = getattr(e, "key", None)
        text = str(e) if isinstance(key, str) else f"{type(e).__name__}: {e}"
        return {"ok": False, "error": text, "error_key": key, "worker_seconds": time.perf_counter() - t0, **info}


def run_tasks(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Several runs in one task (a sweep batches short runs so a task's fixed
    cost is spread over them): :func:`run_task`'s reply for each, in order. A
    failed run is a failed reply like any other; only an interrupt propagates."""
    return [run_task(t) for t in tasks]
