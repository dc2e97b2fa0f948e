"""Plots of run results (matplotlib, Agg backend, PNG and PDF).

- :func:`fct_cdf`: the CDF of flow completion times, one line per load balancer.
- :func:`completion_bars`: the workload completion time (the largest FCT of a
  run) per load balancer, normalised to a baseline (a load balancer or
  ``"ideal"``: the engine's ideal of the run's largest message,
  :attr:`lbsim.Result.ideal_fct_us`).

Runs are grouped by a scenario key (``lb.kind`` unless told otherwise); runs
that share a group (seeds of one sweep) are pooled in the CDF and averaged in
the bars, with their range as error bars.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import LbsimError
from ..results import Result, is_run_dir, load
from . import style

__all__ = ["style", "collect", "group", "fct_cdf", "completion_bars", "plot_dirs"]


def collect(paths: Iterable[str | Path]) -> list[Result]:
    """Every run under ``paths``: run directories, sweep directories (their
    finished runs), or folders whose subfolders are run directories (as
    ``lbsim demo`` writes)."""
    from ..sweep import SweepResult

    results: list[Result] = []
    for raw in paths:
        p = Path(raw)
        if is_run_dir(p):
            results.append(load(p))
        elif (p / "index.parquet").is_file():
            results.extend(r for _, r in SweepResult(p).results())
        elif p.is_dir() and any(is_run_dir(c) for c in p.iterdir()):
            results.extend(load(c) for c in sorted(p.iterdir()) if is_run_dir(c))
        else:
            raise LbsimError(f"{p}: no runs here (expected a run or sweep directory)")
    return results


def _lookup(params: Mapping[str, Any], key: str) -> Any:
    node: Any = params
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise LbsimError(f"runs have no scenario key {key!r} to group by")
        node = node[part]
    return node


def group(results: Sequence[Result], by: str = "lb.kind") -> dict[str, list[Result]]:
    """Runs grouped by the value of a scenario key, groups in plotting order."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(str(_lookup(r.params, by)), []).append(r)
    return {k: groups[k] for k in style.sort_labels(list(groups))}


def _completion_us(r: Result) -> float:
    v = r.summary.get("max_fct_us")
    return float(v) if v is not None else float("nan")


def _figure_axes(ax: Any) -> tuple[Any, Any]:
    """A new styled figure, or the given axes styled, with their figure."""
    if ax is None:
        return style.figure()
    style.apply(ax)
    return ax.figure, ax


def fct_cdf(groups: Mapping[str, Sequence[Result]], ax: Any = None) -> Any:
    """Draw the FCT CDF of each group on ``ax`` (a new figure if None); returns the figure."""
    with style.context():
        fig, ax = _figure_axes(ax)
        for name, runs in groups.items():
            fct = np.concatenate([r.messages["fct_us"].to_numpy(dtype=float) for r in runs])
            total = len(fct)
            fct = np.sort(fct[~np.isnan(fct)])
            if total == 0:
                continue
            y = np.arange(1, len(fct) + 1) / total
            unfinished = total - len(fct)
            tag = f" ({unfinished} unfinished)" if unfinished else ""
            ax.step(fct, y, where="post", color=style.color(name), label=style.label(name) + tag)
        ax.set_xlabel("Flow completion time (µs)")
        ax.set_ylabel("Fraction of flows (CDF)")
        ax.set_ylim(0, 1.02)
        style.legend(ax, loc="lower right")
    return fig


def completion_bars(
    groups: Mapping[str, Sequence[Result]], baseline: str = "ecmp", ax: Any = None
) -> Any:
    """Bars of the workload completion time (largest FCT) per group, normalised
    to the ``baseline`` group's mean, or to each run's ideal with
    ``baseline="ideal"``. Returns the figure."""
    if baseline != "ideal" and baseline not in groups:
        raise LbsimError(
            f"baseline {baseline!r} is not among the runs ({', '.join(groups)}); "
            "choose one of them or 'ideal'"
        )
    if baseline == "ideal":
        ratios = {n: np.array([_completion_us(r) / r.ideal_fct_us for r in rs]) for n, rs in groups.items()}
        ylabel = "Workload completion time / ideal"
    else:
        base = np.array([_completion_us(r) for r in groups[baseline]])
        if not np.isfinite(base).any():
            raise LbsimError(
                f"baseline {baseline!r} has no completion time (its runs left flows unfinished); "
                "choose another baseline or 'ideal'"
            )
        ref = float(np.nanmean(base))
        ratios = {n: np.array([_completion_us(r) for r in rs]) / ref for n, rs in groups.items()}
        ylabel = f"Workload completion time / {style.label(baseline)}"
    with style.context():
        fig, ax = _figure_axes(ax)
        names = list(groups)
        x = np.arange(len(names))
        means = np.array([np.nanmean(v) if np.isfinite(v).any() else np.nan for v in ratios.values()])
        lo = means - np.array([np.nanmin(v) if np.isfinite(v).any() else np.nan for v in ratios.values()])
        hi = np.array([np.nanmax(v) if np.isfinite(v).any() else np.nan for v in ratios.values()]) - means
        has_range = any(len(v) > 1 for v in ratios.values())
        ax.bar(
            x,
            np.nan_to_num(means),
            color=[style.color(n) for n in names],
            yerr=np.vstack([lo, hi]) if has_range else None,
            capsize=3,
            width=0.6,
        )
        tops = means + (np.nan_to_num(hi) if has_range else 0)
        for xi, m, t in zip(x, means, tops):
            ax.annotate(
                "unfinished" if np.isnan(m) else f"{m:.2f}×",
                (xi, 0 if np.isnan(m) else t),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                fontsize=7,
            )
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks(x, [style.label(n) for n in names])
        ax.set_ylabel(ylabel)
        top = np.nanmax(means + np.nan_to_num(hi)) if np.isfinite(means).any() else 1.0
        ax.set_ylim(0, max(top, 1.0) * 1.15)
        ax.grid(False, axis="x")
    return fig


def plot_dirs(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    baseline: str | None = None,
    by: str = "lb.kind",
) -> list[Path]:
    """Plot the runs under ``paths`` into ``out``: ``fct_cdf`` and
    ``completion`` (each as PNG and PDF). ``baseline`` defaults to ECMP when
    present, else the first group. Returns the files written."""
    results = collect(paths)
    if not results:
        raise LbsimError("no finished runs to plot")
    if not any(int(r.summary.get("finished_flows") or 0) for r in results):
        reasons = sorted({str(r.stop_reason) for r in results if r.stop_reason})
        raise LbsimError(
            f"nothing to plot: no flow finished in the {len(results)} run(s)"
            + (f" (stopped: {', '.join(reasons)})" if reasons else "")
        )
    groups = group(results, by)
    if baseline is None:
        baseline = "ecmp" if "ecmp" in groups else next(iter(groups))
    out = Path(out)
    written = style.save(fct_cdf(groups), out / "fct_cdf")
    written += style.save(completion_bars(groups, baseline), out / "completion")
    return written


def summary_figure(groups: Mapping[str, Sequence[Result]], stem: str | Path, baseline: str = "ideal") -> list[Path]:
    """One wide figure: the FCT CDF beside the completion time bars."""
    with style.context():
        fig, (a, b) = style.figure("wide", ncols=2)
        fct_cdf(groups, ax=a)
        completion_bars(groups, baseline, ax=b)
        return style.save(fig, stem)
