"""What a sweep worker runs. Kept small and importable on any machine that has
lbsim installed (a process-pool child or a Dask worker): it takes plain data,
returns plain data, and never touches the driver's file system."""

from __future__ import annotations

import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from . import _core
from ._toml import literal

__all__ = ["run_task"]


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one resolved scenario.

    ``task``: ``key``, ``toml`` (the resolved scenario) and ``files`` (the
    content of files it reads, by the path text written in the scenario; they
    are written to a temporary folder here so workers need no shared file
    system). Returns ``{"ok": True, "raw": <lbsim._core.run output>, ...}`` or
    ``{"ok": False, "error": "..."}``; only an interrupt propagates.
    """
    t0 = time.perf_counter()
    info = {"key": task["key"], "host": socket.gethostname(), "pid": os.getpid()}
    try:
        with tempfile.TemporaryDirectory(prefix="lbsim-") as tmp:
            overrides: list[tuple[str, str]] = []
            for i, (name, data) in enumerate(sorted(task.get("files", {}).items())):
                target = Path(tmp) / f"{i}_{Path(name).name}"
                target.write_bytes(data)
                overrides.append(("workload.file", literal(str(target))))
            raw = _core.run(task["toml"], overrides, None, None)
        return {"ok": True, "raw": raw, "worker_seconds": time.perf_counter() - t0, **info}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a failed run is data, the sweep goes on
        key = getattr(e, "key", None)
        text = str(e) if isinstance(key, str) else f"{type(e).__name__}: {e}"
        return {"ok": False, "error": text, "error_key": key, **info}
