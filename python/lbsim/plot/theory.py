"""Plots of the balls-into-bins models (:mod:`lbsim.theory`), in the style of
REPS Figs. 13, 14, 16 and 17, plus the distribution of Theorem 5.1's
convergence constant.

Each function takes the table the matching :mod:`lbsim.theory` function
returns and returns a matplotlib figure; save it with :func:`lbsim.plot.style.save`.

>>> from lbsim import theory
>>> from lbsim.plot import style, theory as tplot
>>> style.save(tplot.max_load_over_time(theory.ops_sweep()), "out/fig13")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..fct import percentile
from . import style

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "max_load_over_time",
    "queues_over_time",
    "evs_imbalance",
    "coalescing_over_time",
    "convergence_cdf",
]


def _ramp(name: str, count: int) -> list[Any]:
    """``count`` colours from a sequential colormap (dark to light avoided at the ends)."""
    import matplotlib

    cmap = matplotlib.colormaps[name]
    return [cmap(x) for x in np.linspace(0.35, 0.95, max(count, 1))]


def _bin_colour(i: int) -> Any:
    """A qualitative colour per bin, the same in every panel."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return cmap(i % 10)


def _tau_line(ax: Any, tau: float) -> None:
    ax.axhline(tau, color="black", linewidth=0.9, linestyle="--", label=f"τ = {tau:g}")


def max_load_over_time(df: pd.DataFrame) -> Figure:
    """Fig. 13: the maximum load over time, one line per number of bins n
    (the mean over seeds, their range shaded when there are several).
    ``df`` is :func:`lbsim.theory.ops_sweep`'s table."""
    with style.context():
        fig, ax = style.figure()
        ns = sorted(int(v) for v in df["n"].unique())
        for n, colour in zip(ns, _ramp("viridis", len(ns))):
            g = df[df["n"] == n].pivot_table(index="step", columns="seed", values="max_load")
            x = g.index.to_numpy()
            ax.plot(x, g.mean(axis=1).to_numpy(), color=colour, linewidth=1.2, label=f"n = {n}")
            if g.shape[1] > 1:
                ax.fill_between(x, g.min(axis=1).to_numpy(), g.max(axis=1).to_numpy(), color=colour, alpha=0.2, linewidth=0)
        lam = df.attrs.get("lam")
        ax.set_title(f"Batched balls-into-bins (OPS), λ = {lam:g}" if lam is not None else "Batched balls-into-bins (OPS)")
        ax.set_xlabel("Step")
        ax.set_ylabel("Maximum load (balls)")
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        style.legend(ax, loc="upper left")
    return fig


def queues_over_time(df: pd.DataFrame) -> Figure:
    """Fig. 14: every bin's queue over time, OPS (left) beside the recycled
    model (right), with the threshold τ. ``df`` is :func:`lbsim.theory.queues`'s table."""
    tau = float(df.attrs["tau"])
    with style.context():
        fig, axes = style.figure("wide", ncols=2)
        top = max(float(df["load"].max()), tau) * 1.08 + 1
        titles = {"ops": "OPS (oblivious spraying)", "recycled": "Recycled balls (REPS)"}
        for ax, model in zip(axes, ("ops", "recycled")):
            g = df[df["model"] == model]
            bins = sorted(int(v) for v in g["bin"].unique())
            for b in bins:
                colour = _bin_colour(b)
                s = g[g["bin"] == b]
                ax.plot(s["step"].to_numpy(), s["load"].to_numpy(), color=colour, linewidth=1.0, label=f"bin {b}")
            _tau_line(ax, tau)
            ax.set_title(f"{titles[model]}, n = {len(bins)}")
            ax.set_xlabel("Step")
            ax.set_ylim(0, top)
            ax.set_xlim(left=0)
        axes[0].set_ylabel("Queue length (balls)")
        style.legend(axes[1], loc="upper right", ncols=2, fontsize=7)
    return fig


def _box_stats(d: np.ndarray) -> dict[str, Any]:
    """A box for ``Axes.bxp``: quartiles by lbsim's percentile (the engine's
    nearest rank), whiskers at the furthest values within 1.5 IQR of the box
    (matplotlib's default rule)."""
    q1, med, q3 = percentile(d, [25.0, 50.0, 75.0]).tolist()
    iqr = q3 - q1
    inside = d[(d >= q1 - 1.5 * iqr) & (d <= q3 + 1.5 * iqr)]
    return {
        "q1": q1,
        "med": med,
        "q3": q3,
        "whislo": float(inside.min()) if len(inside) else q1,
        "whishi": float(inside.max()) if len(inside) else q3,
        "mean": float(d.mean()),
        "fliers": np.array([]),
    }


def evs_imbalance(df: pd.DataFrame) -> Figure:
    """Fig. 16: the distribution of the load imbalance (max/mean − 1) over
    seeds against the entropy space size (boxes: quartiles and median,
    whiskers within 1.5 IQR), one panel per number of flows, with the 1 % and
    10 % marks of App. B. ``df`` is :func:`lbsim.theory.evs`'s table."""
    flows = sorted(int(v) for v in df["flows"].unique())
    uplinks = int(df["uplinks"].iloc[0])
    with style.context():
        fig, axes = style.figure("wide" if len(flows) > 1 else "single", ncols=len(flows))
        axes = np.atleast_1d(axes)
        for ax, f in zip(axes, flows):
            g = df[df["flows"] == f]
            sizes = sorted(int(v) for v in g["evs"].unique())
            data = [100 * g.loc[g["evs"] == e, "imbalance"].to_numpy(dtype=float) for e in sizes]
            pos = np.log2(sizes)
            ax.bxp(
                [_box_stats(d) for d in data],
                positions=pos,
                widths=0.6,
                showfliers=False,
                patch_artist=True,
                boxprops={"facecolor": style.color("ops"), "alpha": 0.5, "linewidth": 0.6},
                medianprops={"color": "black", "linewidth": 0.8},
                whiskerprops={"linewidth": 0.6},
                capprops={"linewidth": 0.6},
            )
            ax.plot(pos, [d.mean() for d in data], color=style.color("ops"), marker="o", markersize=2.5, linewidth=0.9, label="mean")
            for mark in (1, 10):
                ax.axhline(mark, color="black", linestyle="--" if mark == 10 else ":", linewidth=0.8)
            ax.set_yscale("log")
            ax.set_xticks(pos, [f"$2^{{{int(p)}}}$" for p in pos], fontsize=6)
            ax.set_xlabel("Entropy values per flow (EVS size)")
            ax.set_title(f"{f} flow{'s' if f != 1 else ''}, {uplinks} uplinks")
        axes[0].set_ylabel("Load imbalance (%)")
        style.legend(axes[0], loc="upper right")
    return fig


def coalescing_over_time(df: pd.DataFrame) -> Figure:
    """Fig. 17: the maximum load over time of the recycled model with k:1
    ACK coalescing, one line per k, against OPS at full load, with τ.
    ``df`` is :func:`lbsim.theory.coalescing`'s table."""
    tau = float(df.attrs["tau"])
    with style.context():
        fig, ax = style.figure()
        ks = sorted(int(v) for v in df.loc[df["model"] == "recycled", "ack_every"].dropna().unique())
        o = df[df["model"] == "ops"]
        if len(o):
            ax.plot(o["step"].to_numpy(), o["max_load"].to_numpy(), color=style.color("ops"), linewidth=1.0, label="OPS")
        for k, colour in zip(ks, _ramp("Reds", len(ks))[::-1]):
            s = df[(df["model"] == "recycled") & (df["ack_every"] == k)]
            ax.plot(s["step"].to_numpy(), s["max_load"].to_numpy(), color=colour, linewidth=1.0, label=f"REPS {k}:1")
        _tau_line(ax, tau)
        ax.set_yscale("log")
        ax.set_xlabel("Step")
        ax.set_ylabel("Maximum load (balls)")
        ax.set_title(f"ACK coalescing, n = {df.attrs.get('n')}")
        ax.set_xlim(left=0)
        style.legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return fig


def convergence_cdf(df: pd.DataFrame) -> Figure:
    """The distribution (CDF over seeds) of Theorem 5.1's constant
    c = steps to converge / (n ln n), one line per n; runs that did not
    converge keep the CDF below 1. ``df`` is :func:`lbsim.theory.convergence`'s table."""
    with style.context():
        fig, ax = style.figure()
        ns = sorted(int(v) for v in df["n"].unique())
        for n, colour in zip(ns, _ramp("viridis", len(ns))):
            c = df.loc[df["n"] == n, "c"].to_numpy(dtype=float, na_value=np.nan)
            total = len(c)
            c = np.sort(c[np.isfinite(c)])
            if total == 0 or len(c) == 0:
                continue
            ax.step(c, np.arange(1, len(c) + 1) / total, where="post", color=colour, label=f"n = {n}")
        ax.axhline(0.95, color="black", linestyle=":", linewidth=0.8)
        ax.set_xlabel("Steps to converge / (n ln n)")
        ax.set_ylabel("Fraction of seeds (CDF)")
        ax.set_ylim(0, 1.02)
        ax.set_xlim(left=0)
        init = df.attrs.get("initial", "empty")
        ax.set_title(f"Recycled balls-into-bins, start: {init}")
        style.legend(ax, loc="lower right")
    return fig
