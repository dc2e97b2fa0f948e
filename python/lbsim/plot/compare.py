"""Figures that set load balancers side by side across workloads or by
distribution:

- :func:`grouped_bars`: one group of bars per workload (incast, permutation,
  tornado), each bar a load balancer's value over the baseline's in the same
  group, as REPS Figs. 2, 4 and 18 show completion times normalised to ECMP;
- :func:`rtt_cdf`: the CDF of per-packet RTTs, one line per load balancer
  (ARCANE Figs. 2b-4b; beside :func:`lbsim.plot.fct_cdf` for Figs. 2a-4a).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..fct import percentile
from ..results import Result
from . import style

__all__ = ["grouped_bars", "rtt_cdf"]

#: Points a CDF line is drawn through: enough to look exact, few enough for a small PDF.
_CDF_POINTS = 1001


def grouped_bars(
    values: Mapping[tuple[str, str], float | None],
    baseline: str | None = "ecmp",
    ax: Any = None,
    what: str = "Completion time",
    log: bool = False,
    unit: str = "µs",
) -> Any:
    """Bars of ``values[(group, lb)]`` over ``values[(group, baseline)]``
    (the values themselves, in µs, with ``baseline=None``), one cluster per
    group (in first-seen order), load balancers in plotting order. A missing
    value (unfinished run) or a missing baseline is marked × rather than
    drawn. Returns the figure."""
    groups = list(dict.fromkeys(g for g, _ in values))
    lbs = style.sort_labels(sorted({lb for _, lb in values}))
    width = 0.8 / len(lbs)
    with style.context():
        if ax is None:
            fig, ax = style.figure("wide")
        else:
            style.apply(ax)
            fig = ax.figure
        for i, lb in enumerate(lbs):
            xs, ys, marks = [], [], []
            for gi, g in enumerate(groups):
                v = values.get((g, lb))
                ref = values.get((g, baseline)) if baseline is not None else 1.0
                x = gi - 0.4 + (i + 0.5) * width
                if v is None or ref is None or not np.isfinite(v) or not np.isfinite(ref) or ref <= 0:
                    marks.append(x)
                    continue
                xs.append(x)
                ys.append(v / ref)
            ax.bar(xs, ys, width=width * 0.9, color=style.color(lb), label=style.label(lb))
            for x in marks:
                ax.annotate("×", (x, 0), xycoords=("data", "axes fraction"), ha="center", va="bottom",
                            fontsize=8, color=style.color(lb))
        ax.set_xticks(range(len(groups)), [(g[:1].upper() + g[1:]).replace("_", " ") for g in groups])
        if baseline is None:
            ax.set_ylabel(f"{what} ({unit})" if unit else what)
        else:
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
            ax.set_ylabel(f"{what} / {style.label(baseline)}")
        if log:
            ax.set_yscale("log")
        ax.grid(False, axis="x")
        style.legend(ax, ncol=min(len(lbs), 5), fontsize=7, loc="upper left", bbox_to_anchor=(0, 1.25))
    return fig


def rtt_cdf(groups: Mapping[str, Sequence[Result]], ax: Any = None) -> Any:
    """The CDF of every RTT sample (``observe.rtt``) of each group on ``ax``
    (a new figure if None), drawn through lbsim's percentiles (the engine's
    nearest rank) at every 0.1 %; returns the figure."""
    with style.context():
        if ax is None:
            fig, ax = style.figure()
        else:
            style.apply(ax)
            fig = ax.figure
        for name, runs in groups.items():
            rtt = np.concatenate([r.rtt["rtt_us"].to_numpy(dtype=float) for r in runs])
            if len(rtt) == 0:
                continue
            q = np.linspace(0.0, 100.0, _CDF_POINTS)
            ax.plot(percentile(rtt, q), q / 100.0, color=style.color(name), label=style.label(name))
        ax.set_xlabel("Packet RTT (µs)")
        ax.set_ylabel("Fraction of packets (CDF)")
        ax.set_ylim(0, 1.02)
        style.legend(ax, loc="lower right")
    return fig
