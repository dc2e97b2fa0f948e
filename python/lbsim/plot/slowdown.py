"""Plots for traces and collectives:

- :func:`slowdown_per_bucket`: mean or p99 FCT slowdown per flow-size bucket,
  one line per group, in the style of ConWeave Figs. 12 and 13 (the x axis
  is the bucket's largest flow size; buckets hold equal numbers of flows).
- :func:`slowdown_cdf`: the CDF of slowdowns of the measured flows.
- :func:`collective_bars`: a collective's completion time per group.
- :func:`slowdown_figure`: mean and p99 per bucket side by side, saved.

Groups are as :func:`lbsim.plot.group` makes them (runs pooled per group).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import LbsimError
from ..fct import measured_flows, slowdown_by_size
from ..results import Result
from . import _figure_axes, style

__all__ = ["slowdown_per_bucket", "slowdown_cdf", "collective_bars", "slowdown_figure"]


def _size_label(b: float) -> str:
    for unit, scale in (("M", 1e6), ("K", 1e3)):
        if b >= scale:
            return f"{b / scale:.3g}{unit}"
    return f"{b:.0f}"


def slowdown_per_bucket(
    groups: Mapping[str, Sequence[Result]], stat: str = "mean", buckets: int = 20, ax: Any = None
) -> Any:
    """``stat`` (mean, p50, p95, p99, p999) slowdown per size bucket, one line per group."""
    with style.context():
        fig, ax = _figure_axes(ax)
        labels: list[str] = []
        for name, runs in groups.items():
            t = slowdown_by_size(runs, buckets)
            if stat not in t:
                raise LbsimError(f"unknown statistic {stat!r}; known: mean, p50, p95, p99, p999")
            ax.plot(t["bucket"], t[stat], marker="o", markersize=2.5, color=style.color(name), label=style.label(name))
            labels = labels or [_size_label(b) for b in t["max_size_bytes"]]
        ticks = sorted(set(range(0, buckets, max(1, buckets // 5))) | {buckets - 1})
        ax.set_xticks(ticks, [labels[i] for i in ticks] if labels else [])
        ax.set_xlabel("Flow size (bytes, equal-count buckets)")
        ax.set_ylabel(f"FCT slowdown ({'average' if stat == 'mean' else stat})")
        ax.set_ylim(bottom=1.0)
        style.legend(ax, loc="upper left")
    return fig


def slowdown_cdf(groups: Mapping[str, Sequence[Result]], ax: Any = None) -> Any:
    """CDF of the measured flows' slowdowns, one line per group (log x when
    the largest slowdown is 10 or more)."""
    with style.context():
        fig, ax = _figure_axes(ax)
        top = 1.0
        for name, runs in groups.items():
            s = np.sort(measured_flows(runs)["slowdown"].to_numpy(dtype=float))
            if len(s):
                ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post", color=style.color(name), label=style.label(name))
                top = max(top, float(s[-1]))
        if top >= 10:  # slowdowns are at least 1: a log axis only when they span a decade
            ax.set_xscale("log")
        ax.set_xlabel("FCT slowdown")
        ax.set_ylabel("Fraction of flows (CDF)")
        ax.set_ylim(0, 1.02)
        style.legend(ax, loc="lower right")
    return fig


def collective_bars(groups: Mapping[str, Sequence[Result]], ax: Any = None) -> Any:
    """A collective's completion time (µs) per group, the mean over its runs
    with their range; an unfinished collective is marked."""
    with style.context():
        fig, ax = _figure_axes(ax)
        names = list(groups)
        vals = [np.array([float(r.summary.get("collective_us") or np.nan) for r in groups[n]]) for n in names]
        means = np.array([np.nanmean(v) if np.isfinite(v).any() else np.nan for v in vals])
        x = np.arange(len(names))
        ax.bar(x, np.nan_to_num(means), color=[style.color(n) for n in names], width=0.6)
        for xi, m in zip(x, means):
            ax.annotate("unfinished" if np.isnan(m) else f"{m:.0f}", (xi, np.nan_to_num(m)),
                        textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
        ax.set_xticks(x, [style.label(n) for n in names])
        ax.set_ylabel("Collective completion time (µs)")
        ax.grid(False, axis="x")
    return fig


def slowdown_figure(groups: Mapping[str, Sequence[Result]], stem: str | Path, buckets: int = 20) -> list[Path]:
    """Mean and p99 slowdown per size bucket side by side (ConWeave Figs. 12–13), saved as PNG and PDF."""
    with style.context():
        fig, (a, b) = style.figure("wide", ncols=2)
        slowdown_per_bucket(groups, "mean", buckets, ax=a)
        slowdown_per_bucket(groups, "p99", buckets, ax=b)
        return style.save(fig, stem)
