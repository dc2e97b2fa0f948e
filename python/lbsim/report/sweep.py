"""A sweep's report (or a folder of runs, as ``lbsim demo`` writes): one
sortable row per point, which load balancer won, each metric against each
swept key with error bars across seeds, and a link to every point's report."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import LbsimError
from ._common import (
    Cell,
    Column,
    Figure,
    Notes,
    Section,
    Table,
    cell,
    check_run_dir,
    encode,
    lb_color,
    lb_label,
    lookup,
    num,
    read_json,
    reading,
)
from .run import describe_scenario

if TYPE_CHECKING:
    from ..results import Result

__all__ = ["SweepPage", "Point", "sweep_page", "METRICS"]

#: The metrics a sweep report compares: summary key (or derived name) -> axis label with unit.
METRICS: dict[str, str] = {
    "max_fct_us": "Workload completion (max FCT, µs)",
    "mean_fct_us": "Mean FCT (µs)",
    "p99_fct_us": "p99 FCT (µs)",
    "p99_slowdown": "p99 FCT slowdown (× ideal)",
    "drops": "Drops, congestion + failure (pkts)",
    "retransmissions": "Retransmissions (pkts)",
}
_FCT_METRICS = ("max_fct_us", "mean_fct_us", "p99_fct_us", "p99_slowdown", "collective_us", "x_ideal")


@dataclass
class Point:
    """One grid point (or one run of a folder)."""

    name: str
    params: dict[str, Any]
    status: str
    error: str | None = None
    run_id: str | None = None
    run_dir: Path | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    lb: str = ""
    ideal_us: float = float("nan")
    report_href: str | None = None
    _result: Result | None = None

    @property
    def done(self) -> bool:
        return self.status == "done" and self.run_dir is not None

    @property
    def unfinished(self) -> int:
        return int(self.summary.get("unfinished_flows") or 0)

    def metric(self, name: str) -> float:
        """A metric's value, NaN when unknown; FCT metrics are unknown for a run with unfinished flows."""
        if not self.done or (name in _FCT_METRICS and self.unfinished):
            return float("nan")
        s = self.summary
        if name == "drops":
            d = s.get("drops") or {}
            return float(int(d.get("congestion") or 0) + int(d.get("failure") or 0))
        if name == "x_ideal":
            mx = s.get("max_fct_us")
            return float(mx) / self.ideal_us if mx is not None and self.ideal_us > 0 else float("nan")
        v = s.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan")

    def result(self) -> Result:
        from ..results import load

        if self._result is None:
            assert self.run_dir is not None
            with reading(self.run_dir):
                self._result = load(self.run_dir)
        return self._result


@dataclass
class SweepPage:
    kind: str  # "sweep" or "runs"
    title: str
    subtitle: str
    path: str
    keys: list[str]
    points: list[Point]
    alerts: list[Any] = field(default_factory=list)
    cards: list[Any] = field(default_factory=list)
    winner: str = ""
    sections: list[Section] = field(default_factory=list)
    provenance: list[tuple[str, str]] = field(default_factory=list)
    scenario_text: str = ""
    notes: Notes = field(default_factory=Notes)
    table: Table | None = None
    failed: Table | None = None

    @property
    def toc(self) -> list[tuple[str, str]]:
        return (
            [("summary", "Summary")]
            + [(s.id, s.title) for s in self.sections]
            + [("points", "Every point")]
            + ([("failed", "Failed points")] if self.failed else [])
            + [("provenance", "Scenario")]
        )

    def finish(self) -> None:
        """Build the points table (after per-point reports got their links)."""
        self.table = _points_table(self)


# ---- loading ---------------------------------------------------------------


def _flat(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in params.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flat(v, key + "."))
        elif isinstance(v, list):
            out[key] = repr(v)
        else:
            out[key] = v
    return out


def _finish_point(pt: Point) -> None:
    """Read a finished point's summary, load balancer and ideal."""
    from ..results import load

    assert pt.run_dir is not None
    check_run_dir(pt.run_dir)
    with reading(pt.run_dir):
        pt.summary = read_json(pt.run_dir / "summary.json")
        r = load(pt.run_dir)
        pt._result = r
        if not pt.lb:
            pt.lb = r.lb
        pt.ideal_us = r.ideal_fct_us


def _load_sweep(p: Path) -> tuple[list[Point], list[str], dict[str, Any]]:
    import pandas as pd

    meta = read_json(p / "sweep.json") if (p / "sweep.json").is_file() else {}
    with reading(p / "index.parquet"):
        idx = pd.read_parquet(p / "index.parquet")
        idx["status"], idx["run_id"]
    keys = [k for k in (meta.get("grid") or {}) if k in idx.columns]
    if not keys:
        fixed = {"run_id", "status", "error", "path", "attempts", "max_fct_us", "mean_fct_us", "p99_fct_us",
                 "unfinished_flows", "wall_seconds", "drops_congestion"}
        keys = [c for c in idx.columns if c not in fixed]
    base_lb = ""
    try:
        base_lb = str(lookup(tomllib.loads(str(meta.get("base_scenario") or "")), "lb.kind", "") or "")
    except tomllib.TOMLDecodeError:
        pass
    points = []
    for i, row in enumerate(idx.to_dict("records")):
        params = {k: _py(row.get(k)) for k in keys}
        rel = row.get("path")
        status = str(row.get("status") or "failed")
        run_dir = p / str(rel) if status == "done" and isinstance(rel, str) else None
        lb = str(params["lb.kind"]) if "lb.kind" in params else ""
        pt = Point(
            name=", ".join(f"{k}={params[k]}" for k in keys) or str(row.get("run_id") or i),
            params=params,
            status=status,
            error=row.get("error") if isinstance(row.get("error"), str) else None,
            run_id=row.get("run_id") if isinstance(row.get("run_id"), str) else None,
            run_dir=run_dir,
            lb=lb,
        )
        if run_dir is not None:
            from ..results import is_run_dir

            if not is_run_dir(run_dir):
                pt.status, pt.error, pt.run_dir = "missing", f"{run_dir} is missing or incomplete", None
            else:
                _finish_point(pt)
        elif not pt.lb:
            pt.lb = base_lb
        points.append(pt)
    return points, keys, meta


def _py(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _load_folder(p: Path) -> tuple[list[Point], list[str], dict[str, Any]]:
    from ..results import is_run_dir

    dirs = [c for c in sorted(p.iterdir()) if c.is_dir() and is_run_dir(c)]
    points = []
    flats = []
    for d in dirs:
        pt = Point(name=d.name, params={}, status="done", run_dir=d)
        _finish_point(pt)
        points.append(pt)
        flats.append(_flat(pt.result().params))
    # The keys that differ between the runs play the swept keys.
    all_keys = list(dict.fromkeys(k for f in flats for k in f))
    keys = [k for k in all_keys if k != "name" and len({repr(f.get(k)) for f in flats}) > 1]
    for pt, f in zip(points, flats):
        pt.params = {k: f.get(k) for k in keys}
    from ..plot import style

    if keys == ["lb.kind"]:
        order = {n: i for i, n in enumerate(style.sort_labels([pt.lb for pt in points]))}
        points.sort(key=lambda pt: order[pt.lb])
    return points, keys, {}


# ---- figures ---------------------------------------------------------------


def _x_keys(keys: list[str], points: list[Point]) -> list[str]:
    return [
        k for k in keys if k not in ("lb.kind", "seed") and len({repr(pt.params.get(k)) for pt in points}) > 1
    ]


def _metrics(points: list[Point]) -> dict[str, str]:
    m = dict(METRICS)
    if any(pt.done and pt.summary.get("collective_us") is not None for pt in points):
        m = {"collective_us": "Collective completion (µs)", **m}
        m.pop("p99_slowdown", None)
    return m


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _series_stats(vals: list[float]) -> tuple[float, float, float, int]:
    a = np.array([v for v in vals if np.isfinite(v)], dtype=float)
    if len(a) == 0:
        return float("nan"), float("nan"), float("nan"), 0
    return float(a.mean()), float(a.min()), float(a.max()), len(a)


def _against_key(page: SweepPage, xkey: str, others: list[str]) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ..plot import style

    pts = [pt for pt in page.points if pt.done]
    xs_all: list[Any] = list(dict.fromkeys(pt.params.get(xkey) for pt in page.points))
    numeric = _numeric(xs_all)
    pos = {v: (float(v) if numeric else float(i)) for i, v in enumerate(xs_all)}
    span = [float(v) for v in xs_all] if numeric else []
    metrics = _metrics(page.points)
    lbs = style.sort_labels(sorted({pt.lb for pt in pts}))
    combos = list(dict.fromkeys(tuple(pt.params.get(o) for o in others) for pt in pts))
    styles: list[Any] = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v"]
    seeds = len({pt.params.get("seed") for pt in pts}) > 1
    with style.context():
        ncols = 3
        nrows = math.ceil(len(metrics) / ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(7.6, 2.3 * nrows + 0.5), layout="constrained")
        axes = np.atleast_1d(axes).ravel()
        handles: list[Any] = []
        for ax, (mname, mlabel) in zip(axes, metrics.items()):
            style.apply(ax)
            for lb in lbs:
                for ci, combo in enumerate(combos):
                    series = [pt for pt in pts if pt.lb == lb and tuple(pt.params.get(o) for o in others) == combo]
                    if not series:
                        continue
                    xv, mean, lo, hi = [], [], [], []
                    for x in xs_all:
                        m, a, b, n = _series_stats([pt.metric(mname) for pt in series if pt.params.get(xkey) == x])
                        if n:
                            xv.append(pos[x])
                            mean.append(m)
                            lo.append(m - a)
                            hi.append(b - m)
                    if not xv:
                        continue
                    ax.errorbar(
                        xv, mean, yerr=[lo, hi] if seeds else None, color=style.color(lb),
                        linestyle=styles[ci % len(styles)], marker=markers[ci % len(markers)], markersize=3.5,
                        capsize=2.5, linewidth=1.3,
                    )
            ax.set_ylabel(mlabel, fontsize=7.5)
            ax.set_xlabel(xkey, fontsize=7.5)
            if not numeric:
                ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all], fontsize=7)
            elif len(span) > 1 and min(span) > 0 and max(span) / min(span) >= 50:
                ax.set_xscale("log")
            ax.set_ylim(bottom=0)
        for ax in axes[len(metrics):]:
            ax.set_axis_off()
        for lb in lbs:
            for ci, combo in enumerate(combos):
                if not any(pt.lb == lb and tuple(pt.params.get(o) for o in others) == combo for pt in pts):
                    continue
                extra = ", ".join(f"{o}={v}" for o, v in zip(others, combo))
                handles.append(Line2D([], [], color=style.color(lb), linestyle=styles[ci % len(styles)],
                                      marker=markers[ci % len(markers)], markersize=3.5,
                                      label=style.label(lb) + (f" ({extra})" if extra else "")))
        fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 6), fontsize=7)
    cap = "One line per load balancer" + (", line style per value of " + ", ".join(others) if others else "") + "."
    if seeds:
        cap += " Points are the mean over seeds; error bars span the smallest to the largest seed."
    cap += " FCT metrics leave out runs with unfinished flows."
    return Figure(id=f"against-{_slug(xkey)}", title=f"Metrics against {xkey}", caption=cap, uri=encode(fig))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def _by_lb_bars(page: SweepPage) -> Figure:
    import matplotlib.pyplot as plt

    from ..plot import style

    pts = [pt for pt in page.points if pt.done]
    lbs = style.sort_labels(sorted({pt.lb for pt in pts}))
    metrics = _metrics(page.points)
    seeds = any(sum(1 for pt in pts if pt.lb == lb) > 1 for lb in lbs)
    with style.context():
        ncols = 3
        nrows = math.ceil(len(metrics) / ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(7.6, 2.2 * nrows), layout="constrained")
        axes = np.atleast_1d(axes).ravel()
        x = np.arange(len(lbs))
        for ax, (mname, mlabel) in zip(axes, metrics.items()):
            style.apply(ax)
            stats = [_series_stats([pt.metric(mname) for pt in pts if pt.lb == lb]) for lb in lbs]
            means = np.array([s[0] for s in stats])
            err = np.array([[s[0] - s[1] for s in stats], [s[2] - s[0] for s in stats]])
            ax.bar(x, np.nan_to_num(means), color=[style.color(lb) for lb in lbs], width=0.65,
                   yerr=np.nan_to_num(err) if seeds else None, capsize=2.5)
            for xi, m in zip(x, means):
                if np.isnan(m):
                    ax.annotate("×", (xi, 0), ha="center", va="bottom", fontsize=8)
            ax.set_xticks(x, [style.label(lb) for lb in lbs], fontsize=7, rotation=30 if len(lbs) > 4 else 0)
            ax.set_ylabel(mlabel, fontsize=7.5)
            ax.grid(False, axis="x")
        for ax in axes[len(metrics):]:
            ax.set_axis_off()
    cap = "Bars are the mean over the runs of each load balancer"
    cap += "; error bars span the smallest to the largest run." if seeds else "."
    cap += " × marks a load balancer whose runs did not all finish (FCT metrics leave those runs out)."
    return Figure(id="by-lb", title="Metrics per load balancer", caption=cap, uri=encode(fig))


def _pooled(page: SweepPage) -> Figure | None:
    from ..plot import completion_bars, fct_cdf, style

    groups: dict[str, list[Result]] = {}
    for pt in page.points:
        if pt.done:
            groups.setdefault(pt.lb, []).append(pt.result())
    groups = {k: groups[k] for k in style.sort_labels(list(groups))}
    if not groups:
        return None
    with style.context():
        fig, (a, b) = style.figure("wide", ncols=2)
        fct_cdf(groups, ax=a)
        completion_bars(groups, "ideal", ax=b)
    runs = max(len(v) for v in groups.values())
    cap = (
        "Left: the FCT CDF of every message, pooled over each load balancer's runs. Right: the workload completion "
        "time (largest FCT) over the ideal (the largest message alone on its path of the idle network)"
        + ("; bars are the mean over runs, error bars their range." if runs > 1 else ".")
    )
    return Figure(id="pooled", title="Completion times per load balancer", caption=cap, uri=encode(fig))


# ---- the summary -----------------------------------------------------------


def _by_lb_table(page: SweepPage) -> tuple[Table | None, str]:
    pts = [pt for pt in page.points if pt.done]
    from ..plot import style

    lbs = style.sort_labels(sorted({pt.lb for pt in pts}))
    if len(lbs) < 2:
        return None, ""
    cols = [("max_fct_us", "max FCT (µs)", 2), ("x_ideal", "× ideal", 3), ("mean_fct_us", "mean FCT (µs)", 2),
            ("p99_fct_us", "p99 FCT (µs)", 2), ("p99_slowdown", "p99 slowdown", 3), ("drops", "drops (pkts)", 0),
            ("retransmissions", "retx (pkts)", 0)]
    stats = {lb: {m: _series_stats([pt.metric(m) for pt in pts if pt.lb == lb]) for m, _, _ in cols} for lb in lbs}
    runs = {lb: sum(1 for pt in pts if pt.lb == lb) for lb in lbs}
    unfinished = {lb: sum(1 for pt in pts if pt.lb == lb and pt.unfinished) for lb in lbs}
    best: dict[str, str] = {}  # the best load balancer per column (lowest mean)
    ties: dict[str, set[str]] = {}  # every one within 0.1 % of it
    for m, _, _ in cols:
        vals = [(stats[lb][m][0], lb) for lb in lbs if np.isfinite(stats[lb][m][0])]
        if vals:
            low, best[m] = min(vals)
            ties[m] = {lb for v, lb in vals if v <= low * 1.001}
    rows = []
    for lb in lbs:
        row = [Cell(style.label(lb), sort=style.label(lb), swatch=style.color(lb), data={"lb": lb}),
               cell(runs[lb]), cell(unfinished[lb], cls="bad" if unfinished[lb] else "")]
        for m, _, dec in cols:
            mean, lo, hi, n = stats[lb][m]
            title = f"range {num(lo, dec)} – {num(hi, dec)} over {n} runs" if n > 1 else ""
            c = cell(mean if n else None, dec or None, title=title, cls="best" if lb in ties.get(m, ()) else "")
            if dec == 0 and n:
                c.text = num(mean, 0 if float(mean).is_integer() else 1)
            row.append(c)
        rows.append(row)
    table = Table(
        "by-lb-table",
        [Column("load balancer", numeric=False), Column("runs"), Column("unfinished runs", title="runs with unfinished flows")]
        + [Column(label) for _, label, _ in cols],
        rows,
        caption="Means over each load balancer's runs (hover a cell for the range); bold: the best value. "
        "FCT columns leave out runs with unfinished flows.",
        sortable=True,
    )
    winner = ""
    if "max_fct_us" in best:
        b = best["max_fct_us"]
        mean, _, _, n = stats[b]["max_fct_us"]
        xi = stats[b]["x_ideal"][0]
        ratio = {lb: stats[lb]["max_fct_us"][0] / mean for lb in lbs if np.isfinite(stats[lb]["max_fct_us"][0])}
        tied = [lb for lb in lbs if lb in ratio and ratio[lb] <= 1.001]
        names = " and ".join(style.label(lb) for lb in tied)
        # "Fastest" needs a rival that finished: alone, a balancer is only the one that finished.
        verdict = "completed the workload fastest" if len(ratio) > 1 else "was the only one to complete the workload"
        winner = (
            f"{names} {verdict}"
            + (" (within 0.1 % of each other)" if len(tied) > 1 else "")
            + f": {num(mean, 1)} µs"
            + (f" on average over {n} runs" if n > 1 else "")
            + (f", {num(xi, 2)}× the ideal" if np.isfinite(xi) else "")
            + "."
        )
        slower = sorted((r, lb) for lb, r in ratio.items() if lb not in tied)
        if slower:
            winner += " " + ", ".join(f"{style.label(lb)} took {num(r, 2)}×" for r, lb in slower) + " as long."
        dnf = [style.label(lb) for lb in lbs if lb not in ratio]
        if dnf:
            winner += " " + " and ".join(dnf) + " did not finish every run."
    return table, winner


def _winner_by_key(page: SweepPage, key: str) -> str:
    """Which load balancer completed the workload fastest at each value of ``key``."""
    pts = [pt for pt in page.points if pt.done]
    if len({pt.lb for pt in pts}) < 2:
        return ""
    parts = []
    for x in dict.fromkeys(pt.params.get(key) for pt in page.points):
        at = [pt for pt in pts if pt.params.get(key) == x]
        means = {lb: _series_stats([pt.metric("max_fct_us") for pt in at if pt.lb == lb]) for lb in _lb_order(at)}
        done = {lb: m[0] for lb, m in means.items() if m[3]}
        if not done:
            parts.append(f"at {key} = {x} no load balancer finished")
            continue
        low = min(done.values())
        best = [lb for lb, v in done.items() if v <= low * 1.001]
        alone = " (the only one that finished)" if len(done) == 1 else ""
        parts.append(f"at {x}: {' and '.join(lb_label(b) for b in best)} ({num(low, 1)} µs){alone}")
    return "Fastest workload completion (max FCT, mean over seeds) " + "; ".join(parts) + "."


def _points_table(page: SweepPage) -> Table:
    keys = page.keys
    metric_cols = [
        ("max_fct_us", "max FCT (µs)", 2),
        ("x_ideal", "× ideal", 3),
        ("mean_fct_us", "mean FCT (µs)", 2),
        ("p99_fct_us", "p99 FCT (µs)", 2),
        ("p99_slowdown", "p99 slowdown", 3),
        ("drops", "drops (pkts)", None),
        ("retransmissions", "retx (pkts)", None),
    ]
    cols = [Column("report" if page.kind == "sweep" else "run", numeric=False)]
    cols += [Column(k, numeric=False) for k in keys]
    cols += [Column("status", numeric=False), Column("finished", title="flows finished / flows")]
    cols += [Column(label) for _, label, _ in metric_cols] + [Column("wall (s)")]
    rows, data = [], []
    for i, pt in enumerate(page.points):
        name = (pt.run_id or pt.name) if page.kind == "sweep" else pt.name
        short = name[:8] if page.kind == "sweep" and pt.run_id else name
        link = Cell(short, sort=name, href=pt.report_href, title=pt.error or name)
        row = [link]
        for k in keys:
            v = pt.params.get(k)
            row.append(Cell(lb_label(str(v)) if k == "lb.kind" else ("–" if v is None else str(v)),
                            sort=_sort_param(v), swatch=lb_color(str(v)) if k == "lb.kind" else None))
        s = pt.summary
        status = pt.status if not (pt.done and pt.unfinished) else "unfinished"
        row.append(Cell(status, sort=status, cls="bad" if status != "done" else "", title=pt.error or ""))
        if pt.done:
            fin = f"{num(s.get('finished_flows'))}/{num(s.get('flows'))}"
            row.append(Cell(fin, sort=repr(float(s.get("finished_flows") or 0) / max(float(s.get("flows") or 1), 1)),
                            cls="bad" if pt.unfinished else ""))
        else:
            row.append(Cell("–"))
        for m, _, dec in metric_cols:
            if not pt.done:
                row.append(Cell("–"))
                continue
            raw = (s.get(m) if m in s else None) if m not in ("drops", "x_ideal") else pt.metric(m)
            if m in _FCT_METRICS and pt.unfinished and raw is not None:
                # Shown, but marked: the FCT of the flows that finished.
                c = cell(raw, dec, cls="bad", title="of the flows that finished")
            else:
                c = cell(int(raw) if m == "drops" and raw is not None and np.isfinite(raw) else raw, dec)
            c.data = {"metric": m, "value": _json(raw)}
            row.append(c)
        row.append(cell(s.get("wall_seconds")) if pt.done else Cell("–"))
        rows.append(row)
        data.append({"status": pt.status, "run-id": pt.run_id or "", "name": pt.name, "point": str(i)})
    return Table("points-table", cols, rows, sortable=True, row_data=data,
                 caption="Click a column to sort. The first column links to each point's own report.")


def _json(v: Any) -> str:
    from ._common import json_value

    if isinstance(v, float) and not np.isfinite(v):
        return "null"
    return json_value(v)


def _sort_param(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v))
    if isinstance(v, str):
        from ..units import parse_bytes

        try:
            return repr(float(parse_bytes(v)))
        except Exception:  # noqa: BLE001 - not an amount of bytes: sort as text
            return v
    return str(v)


# ---- the page --------------------------------------------------------------


def sweep_page(path: Path, *, figures: bool = True) -> SweepPage:
    """Gather a sweep directory's (or a folder of runs') page."""
    from .. import __version__

    p = Path(path)
    is_sweep = (p / "index.parquet").is_file()
    points, keys, meta = _load_sweep(p) if is_sweep else _load_folder(p)
    if not points:
        raise LbsimError(f"{p}: the sweep has no points" if is_sweep else f"{p}: no run directories")
    done = [pt for pt in points if pt.done]
    if not done:
        err = next((pt.error for pt in points if pt.error), None)
        raise LbsimError(
            f"{p}: none of the {len(points)} points finished"
            + (f" (first error: {' '.join(str(err).split())})" if err else "")
        )
    first = done[0].result()
    params = first.params
    name = (
        lookup(tomllib.loads(str(meta.get("base_scenario") or "")), "name", None) if meta.get("base_scenario") else None
    ) or params.get("name") or p.name
    page = SweepPage(
        kind="sweep" if is_sweep else "runs",
        title=f"{name}: {'sweep' if is_sweep else 'runs'} of {len(points)} point{'s' if len(points) != 1 else ''}"
        if is_sweep
        else f"{name}: {len(points)} runs compared",
        subtitle=describe_scenario(params)
        + ("; varied: " + ", ".join(f"{k} ({len({repr(pt.params.get(k)) for pt in points})} values)" for k in keys)
           if keys else ""),
        path=str(p),
        keys=keys,
        points=points,
    )
    # Alerts: failed points, unfinished runs.
    from .run import Alert

    failed = [pt for pt in points if not pt.done]
    if failed:
        page.alerts.append(
            Alert(f"{len(failed)} of {len(points)} points did not finish",
                  "They have no results; their errors are listed under Failed points. "
                  "Run the same sweep again to retry them.", bad=True)
        )
        page.failed = Table(
            "failed-table",
            [Column("point", numeric=False), Column("status", numeric=False), Column("error", numeric=False)],
            [[Cell(pt.name), Cell(pt.status), Cell(" ".join(str(pt.error or "").split()))] for pt in failed],
        )
    unf = [pt for pt in done if pt.unfinished]
    if unf:
        page.alerts.append(
            Alert(f"{len(unf)} of {len(done)} runs have unfinished flows",
                  "Their FCT metrics count only the flows that finished: the table marks them in red and the plots "
                  "leave them out. Points: " + "; ".join(pt.name for pt in unf[:8]) + (" …" if len(unf) > 8 else ""))
        )
    from .run import Card

    page.cards = [
        Card("points", "Points" if is_sweep else "Runs", len(points), num(len(points)), detail=f"{len(done)} finished"),
        Card("runs", "Load balancers", len({pt.lb for pt in done}),
             num(len({pt.lb for pt in done})), detail=", ".join(lb_label(x) for x in _lb_order(done))),
    ]
    seeds = {pt.params.get("seed") for pt in points if "seed" in pt.params}
    if seeds:
        page.cards.append(Card("seeds", "Seeds", len(seeds), num(len(seeds)), detail="error bars span them"))
    wall = sum(float(pt.summary.get("wall_seconds") or 0) for pt in done)
    page.cards.append(Card("wall", "Simulation time", wall, num(wall), "s", "engine wall time, all runs"))
    xkeys = _x_keys(keys, points)
    if not xkeys:
        table, page.winner = _by_lb_table(page)
        if table is not None:
            page.sections.append(Section("by-lb", "Which load balancer won", blocks=[table]))
    elif len(xkeys) == 1:
        page.winner = _winner_by_key(page, xkeys[0])
    if figures:
        sec = Section("plots", "Plots")
        if not xkeys:
            f = _pooled(page)
            if f:
                sec.blocks.append(f)
            if len({pt.lb for pt in done}) > 1 or len(done) > 1:
                sec.blocks.append(_by_lb_bars(page))
        for k in xkeys:
            sec.blocks.append(_against_key(page, k, [o for o in xkeys if o != k]))
        if sec.blocks:
            page.sections.append(sec)
    # Provenance.
    page.provenance = [
        ("lbsim version", str(meta.get("lbsim_version") or first.meta.get("lbsim_version") or __version__)),
        ("git commit", str(meta.get("git_commit") or first.meta.get("git_commit")
                           or "not known (lbsim was not built from a git checkout)")),
        ("directory", str(p)),
    ]
    if meta.get("grid"):
        page.provenance += [(f"grid: {k}", ", ".join(str(v) for v in vs)) for k, vs in meta["grid"].items()]
    if meta.get("base_source"):
        page.provenance.append(("base scenario file", str(meta["base_source"])))
    if meta.get("base_overrides"):
        page.provenance.append(("overrides (--set)", ", ".join(f"{k}={v}" for k, v in meta["base_overrides"])))
    page.scenario_text = str(meta.get("base_scenario") or "") or first.scenario_toml
    return page


def _lb_order(points: list[Point]) -> list[str]:
    from ..plot import style

    return style.sort_labels(sorted({pt.lb for pt in points}))
