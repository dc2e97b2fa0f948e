"""Time-series plots of what a load balancer does at one switch, in the style
of REPS Figs. 1, 3, 6 and 19: each sampled port's utilization per bucket
(left axis, Gbps) with its queue depth (right axis), failure windows shaded,
and drops by cause over time.

Needs runs that recorded ``observe.ports`` (and ``observe.drops`` for
:func:`drops_over_time`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import LbsimError
from ..results import Result
from . import style

__all__ = ["port_utilization", "paused_share", "drops_over_time", "timeseries_figure"]


def _failure_windows(r: Result, end_us: float) -> dict[str, list[tuple[float, float]]]:
    """Down (or degraded, lossy) intervals per link name, from the failures table."""
    if "failures" not in r.table_names:
        return {}
    out: dict[str, list[tuple[float, float]]] = {}
    for row in r.failures.to_dict("records"):
        start, dur, every = float(row["start_us"]), float(row["duration_us"]), float(row["every_us"])
        spans = []
        t = start
        while t < end_us:
            spans.append((t, t + dur if np.isfinite(dur) else end_us))
            if not np.isfinite(every):
                break
            t += every
        out.setdefault(str(row["link"]), []).extend(spans)
    return out


def port_utilization(r: Result, ax: Any, title: str | None = None, queue: bool = True) -> None:
    """Utilization (Gbps per bucket) of every sampled port on ``ax``; with
    ``queue``, each port's largest queue in the bucket (KiB, dashed) on a
    twin axis. Failure windows of the sampled ports are shaded."""
    ports = r.ports
    if ports.empty:
        raise LbsimError("the run sampled no ports (set observe.ports)")
    style.apply(ax)
    names = list(dict.fromkeys(ports["port"]))
    end = float(ports["time_us"].max())
    windows = _failure_windows(r, end)
    twin = ax.twinx() if queue else None
    cmap = _port_colors(len(names))
    for i, name in enumerate(names):
        p = ports[ports["port"] == name]
        ax.step(p["time_us"], p["gbps"], where="pre", color=cmap[i], linewidth=1.0, label=name)
        if twin is not None:
            twin.step(
                p["time_us"], p["queue_max_bytes"] / 1024, where="pre", color=cmap[i], linewidth=0.7, linestyle=":"
            )
        for a, b in windows.get(name, []):
            ax.axvspan(a, b, color=cmap[i], alpha=0.12, linewidth=0)
    ax.set_xlabel("Time (µs)")
    ax.set_ylabel("Utilization (Gbps)")
    ax.set_ylim(bottom=0)
    if twin is not None:
        twin.set_ylabel("Max queue (KiB, dotted)")
        twin.set_ylim(bottom=0)
        twin.grid(False)
    if title:
        ax.set_title(title)


def paused_share(r: Result, ax: Any) -> None:
    """The share of each bucket every sampled port spent paused by PFC (0-1),
    one line per port in the colours of :func:`port_utilization`."""
    ports = r.ports
    style.apply(ax)
    names = list(dict.fromkeys(ports["port"]))
    cmap = _port_colors(len(names))
    for i, name in enumerate(names):
        p = ports[ports["port"] == name]
        bucket = np.diff(p["time_us"].to_numpy(), prepend=0.0)
        ax.step(p["time_us"], p["paused_us"] / bucket, where="pre", color=cmap[i], linewidth=1.0, label=name)
    ax.set_xlabel("Time (µs)")
    ax.set_ylabel("Share paused")
    ax.set_ylim(-0.02, 1.02)


def _paused(r: Result) -> bool:
    return "paused_us" in r.ports.columns and bool((r.ports["paused_us"] > 0).any())


def _port_colors(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def drops_over_time(groups: Mapping[str, Result], ax: Any) -> None:
    """Packets dropped per bucket, one line per run: failure drops solid,
    congestion drops dashed."""
    style.apply(ax)
    for name, r in groups.items():
        d = r.drops_series
        c = style.color(name)
        ax.step(d["time_us"], d["failure"], where="pre", color=c, label=f"{style.label(name)} failure")
        if d["congestion"].any():
            ax.step(
                d["time_us"], d["congestion"], where="pre", color=c, linestyle="--", label=f"{style.label(name)} congestion"
            )
    ax.set_xlabel("Time (µs)")
    ax.set_ylabel("Drops per bucket")
    style.legend(ax, loc="upper right")


def timeseries_figure(groups: Mapping[str, Result], stem: str | Path, drops: bool | None = None) -> list[Path]:
    """One panel per run (REPS Fig. 1 style: OPS above REPS), below each run
    whose sampled ports were paused by PFC the share of time they were, plus
    a drops panel when the runs recorded drops. Saved as ``stem.png`` and ``.pdf``."""
    import matplotlib.pyplot as plt

    names: Sequence[str] = list(groups)
    if drops is None:
        drops = all("drops_series" in r.table_names for r in groups.values())
    panels: list[tuple[str, str]] = []
    for name in names:
        panels.append((name, "rate"))
        if _paused(groups[name]):
            panels.append((name, "paused"))
    rows = len(panels) + (1 if drops else 0)
    with style.context():
        fig, axes = plt.subplots(rows, 1, figsize=(7.0, 2.1 * rows), layout="constrained", sharex=True)
        axes = np.atleast_1d(axes)
        for ax, (name, panel) in zip(axes, panels):
            r = groups[name]
            if panel == "paused":
                paused_share(r, ax)
                continue
            fct = r.summary.get("max_fct_us")
            extra = f", completion {fct:.0f} µs" if isinstance(fct, (int, float)) else ", unfinished"
            port_utilization(r, ax, title=f"{style.label(name)}{extra}")
        style.legend(axes[0], loc="lower left", ncols=4, fontsize=6)
        if drops:
            drops_over_time(groups, axes[-1])
        return style.save(fig, stem)
