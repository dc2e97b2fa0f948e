"""A run's report: what the run was (scenario, provenance), how it went (the
summary, unfinished flows first), and its distributions and time series."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import LbsimError
from ._common import (
    Cell,
    Column,
    Notes,
    Section,
    Table,
    Text,
    cell,
    figure,
    is_missing,
    lb_color,
    lb_label,
    lookup,
    num,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..results import Result

__all__ = ["RunPage", "run_page", "run_page_brief", "SUMMARY_LABELS", "flat_summary", "describe_scenario"]

#: How the report names each summary.json value (and its unit).
SUMMARY_LABELS: dict[str, str] = {
    "flows": "Flows (messages)",
    "finished_flows": "Finished flows",
    "unfinished_flows": "Unfinished flows",
    "measured_flows": "Measured flows (in the statistics)",
    "max_fct_us": "Max FCT: workload completion (µs)",
    "mean_fct_us": "Mean FCT (µs)",
    "p50_fct_us": "p50 FCT (µs)",
    "p99_fct_us": "p99 FCT (µs)",
    "mean_slowdown": "Mean FCT slowdown (× ideal)",
    "p99_slowdown": "p99 FCT slowdown (× ideal)",
    "collective_us": "Collective completion (µs)",
    "drops.congestion": "Drops: congestion (packets)",
    "drops.failure": "Drops: failure (packets)",
    "drops.trimmed": "Trimmed packets (header kept)",
    "retransmissions": "Retransmissions (packets)",
    "timeouts": "Retransmission timeouts",
    "packets_sent": "Packets sent",
    "packets_delivered": "Packets delivered",
    "ecn_marks": "ECN marks",
    "events": "Events simulated",
    "sim_end_us": "Simulated time (µs)",
    "wall_seconds": "Wall time (s)",
    "events_per_second": "Events per second",
    "base_rtt_us": "Base RTT (µs)",
    "bdp_bytes": "BDP (bytes)",
    "rto_us": "RTO (µs)",
    "queue_bytes": "Queue capacity (bytes)",
    "stopped_early": "Stopped early",
    "stop_reason": "Stop reason",
    "pfc_pauses": "PFC pause frames sent (refreshes included)",
    "pfc_resumes": "PFC resume frames sent",
    "rts_sent": "Requests-to-send sent (EQDS, timeout RTS)",
    "lbsim_version": "lbsim version",
}


def flat_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """summary.json's values with nested tables flattened (``drops.congestion``)."""
    out: dict[str, Any] = {}
    for k, v in summary.items():
        if isinstance(v, Mapping):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = v2
        else:
            out[k] = v
    return out


def describe_scenario(params: Mapping[str, Any]) -> str:
    """One line saying what was simulated: topology, workload, preset."""
    t = params.get("topology", {})
    w = params.get("workload", {})
    parts = []
    if t:
        rate = t.get("link_rate", "")
        over = t.get("oversubscription", 1)
        parts.append(
            f"{t.get('hosts', '?')}-host {t.get('tiers', '?')}-tier fat tree at {rate}"
            + (f", {over}:1 oversubscribed" if over not in (1, 1.0, None) else "")
        )
    if w:
        kind = str(w.get("kind", "?"))
        what = kind.replace("_", " ")
        if "size" in w and kind in ("permutation", "tornado", "incast") or "allreduce" in kind or kind == "alltoall":
            what = f"{w.get('size', '')} {what}"
        if kind == "trace":
            what = f"{w.get('cdf', '')} trace at load {w.get('load', '')}"
        if "ranks" in w:
            what = f"{what} over {w['ranks']} hosts"
        if kind in ("flows", "connection_matrix") and "file" in w:
            what = f"{what} from {PurePath(str(w['file'])).name}"
        parts.append(what)
    if params.get("failures"):
        n = len(params["failures"])
        parts.append(f"{n} failure entr{'y' if n == 1 else 'ies'}")
    parts.append(f"preset {params.get('preset', '?')}")
    return ", ".join(parts)


@dataclass
class Card:
    key: str
    label: str
    value: Any
    text: str
    unit: str = ""
    detail: str = ""


@dataclass
class Alert:
    title: str
    text: str
    table: Table | None = None
    bad: bool = False


@dataclass
class RunPage:
    """Everything a run's page shows."""

    title: str
    subtitle: str
    lb: str
    lb_label: str
    lb_color: str
    path: str
    warnings: list[Alert]
    cards: list[Card]
    summary_rows: list[tuple[str, str, Any]]  # key, label, value
    provenance: list[tuple[str, str]]
    scenario_toml: str
    sections: list[Section]
    notes: Notes = field(default_factory=Notes)

    @property
    def toc(self) -> list[tuple[str, str]]:
        return [("summary", "Summary"), ("provenance", "Scenario")] + [(s.id, s.title) for s in self.sections]


def _provenance(r: Result, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    from .. import _core

    s, m = r.summary, r.meta
    rows = [
        ("lbsim version", str(m.get("lbsim_version") or s.get("lbsim_version") or "unknown")),
        ("git commit", str(m.get("git_commit") or (_core.git_commit if r.path is None else "")
                           or "not known (lbsim was not built from a git checkout)")),
        ("run key", str(r.key or "–")),
        ("seed", str(params.get("seed", "–"))),
        ("load balancer", f"{lb_label(r.lb)} (lb.kind = {r.lb})"),
        ("stop reason", _stop_reason(r) or "–"),
        ("simulated time", f"{num(s.get('sim_end_us'))} µs"),
        ("events", (f"{num(s.get('events'))} in {num(s.get('wall_seconds'))} s wall time "
                    f"({num((s.get('events_per_second') or 0) / 1e6, 2)} M events/s)")),
    ]
    if m.get("host"):
        rows.append(("worker host", str(m["host"])))
    if m.get("worker_seconds") is not None:
        rows.append(("worker time", f"{num(m['worker_seconds'])} s"))
    if m.get("params"):
        rows.append(("sweep point", ", ".join(f"{k} = {v}" for k, v in m["params"].items())))
    if r.path is not None:
        rows.append(("results directory", str(r.path)))
    return rows


def _stop_reason(r: Result) -> str:
    return str(r.stop_reason or r.summary.get("stop_reason") or "")


def _cards(r: Result, ideal: float) -> list[Card]:
    s = r.summary
    d = s.get("drops") or {}
    mx, mean = s.get("max_fct_us"), s.get("mean_fct_us")
    cards = [
        Card(
            "finished_flows",
            "Flows finished",
            s.get("finished_flows"),
            f"{num(s.get('finished_flows'))} / {num(s.get('flows'))}",
            detail="all finished" if not s.get("unfinished_flows") else f"{num(s.get('unfinished_flows'))} unfinished",
        ),
        Card(
            "max_fct_us",
            "Workload completion (max FCT)",
            mx,
            num(mx, 2),
            "µs",
            f"{num(float(mx or 0) / ideal, 3)}× the ideal {num(ideal, 2)} µs" if ideal > 0 else "",
        )
        if not is_missing(mx)
        else Card("max_fct_us", "Workload completion (max FCT)", mx, "unfinished", "",
                  f"ideal {num(ideal, 2)} µs; some flows never finished"),
        Card("mean_fct_us", "Mean FCT", mean, num(mean, 2), "µs", f"p99 {num(s.get('p99_fct_us'), 2)} µs"),
    ]
    if s.get("collective_us") is not None:
        cards.append(Card("collective_us", "Collective completion", s["collective_us"], num(s["collective_us"], 2), "µs"))
    cards += [
        Card(
            "mean_slowdown",
            "FCT slowdown (mean)",
            s.get("mean_slowdown"),
            num(s.get("mean_slowdown"), 3),
            "×",
            f"p99 {num(s.get('p99_slowdown'), 3)}×",
        ),
        Card(
            "drops.congestion",
            "Drops (congestion)",
            d.get("congestion"),
            num(d.get("congestion")),
            "pkts",
            f"failure {num(d.get('failure'))}, trimmed {num(d.get('trimmed'))}",
        ),
        Card(
            "retransmissions",
            "Retransmissions",
            s.get("retransmissions"),
            num(s.get("retransmissions")),
            "pkts",
            f"timeouts {num(s.get('timeouts'))}",
        ),
    ]
    if s.get("pfc_pauses"):
        cards.append(
            Card("pfc_pauses", "PFC pauses", s["pfc_pauses"], num(s["pfc_pauses"]), "frames",
                 f"resumes {num(s.get('pfc_resumes'))}")
        )
    return cards


def _unfinished(r: Result) -> Alert | None:
    s = r.summary
    n = int(s.get("unfinished_flows") or 0)
    stop = _stop_reason(r)
    if n == 0 and stop in ("drained", ""):
        return None
    total = s.get("flows")
    deadlock = stop == "pfc_deadlock"
    why = {
        "horizon": f"the run reached its time limit (stop_at = {lookup(r.params, 'stop_at', '?')})",
        "cancelled": "the run was cancelled",
        "pfc_deadlock": "a PFC deadlock: no packet moved for "
        f"{lookup(r.params, 'queue.shared.deadlock_after', '?')} (queue.shared.deadlock_after) while pauses were "
        "in force, so the run was ended; the PFC table below lists the ports still paused",
        "no_progress": r.stop_note
        or "no progress: no data reached any receiver for stall_rtos RTOs while flows were unfinished, so the run was ended",
    }.get(stop, f"stop reason: {stop}" if stop else "")
    text = (
        f"{num(n)} of {num(total)} flows did not finish" + (f": {why}" if why else "") + ". "
        "FCT statistics and plots count finished flows only; the CDFs stop below 1."
        if n
        else f"The run stopped early ({why or stop}), though every flow had finished."
    )
    if r.packets_in_network:
        text += f" {num(r.packets_in_network)} packets were still in the network."
    table = None
    m = r.messages
    if "finished" in m and n:
        u = m[~m["finished"].astype(bool)]
        f = r.flows
        cols = ["message", "src", "dst", "size_bytes", "start_us"]
        rows = []
        for rec in u.head(10).to_dict("records"):
            sub = f[(f["message"] if "message" in f else f["id"]) == rec["message"]]
            rows.append(
                [cell(int(rec[c])) if c != "start_us" else cell(float(rec[c]), 2) for c in cols]
                + [cell(int(sub["retransmissions"].sum())), cell(int(sub["timeouts"].sum()))]
            )
        table = Table(
            "unfinished",
            [Column("message"), Column("src"), Column("dst"), Column("size (bytes)"), Column("start (µs)"),
             Column("retransmissions"), Column("timeouts")],
            rows,
            caption=f"The first {len(rows)} of {num(n)} unfinished messages." if n > len(rows) else "",
        )
    title = "PFC deadlock" if deadlock else "Unfinished flows" if n else "Run stopped early"
    return Alert(title, text, table, bad=deadlock)


def _distributions(r: Result, groups: dict[str, list[Result]], notes: Notes) -> Section:
    from ..plot import fct_cdf, style
    from ..plot.slowdown import slowdown_cdf

    def draw() -> Any:
        with style.context():
            fig, (a, b) = style.figure("wide", ncols=2)
            fct_cdf(groups, ax=a)
            try:
                slowdown_cdf(groups, ax=b)
            except LbsimError as e:
                b.set_axis_off()
                notes.add(f"slowdown CDF: {e}")
        return fig

    sec = Section(
        "distributions",
        "Completion times",
        "Left: every message's flow completion time (FCT); unfinished flows keep the CDF below 1. "
        "Right: the slowdown of each measured message, its FCT over its ideal (the message alone on its path "
        "of the idle network).",
    )
    f = figure(notes, "fct-cdf", "FCT and slowdown CDFs", "", draw)
    if f:
        sec.blocks.append(f)
    return sec


def _size_bins(r: Result, groups: dict[str, list[Result]], notes: Notes) -> Section | None:
    from ..fct import measured_flows, slowdown_by_size
    from ..plot import style
    from ..plot.slowdown import slowdown_per_bucket

    try:
        m = measured_flows(r)
    except LbsimError as e:
        notes.add(f"slowdown by flow size: {e}")
        return None
    sec = Section(
        "size-bins",
        "Slowdown by flow size",
        "Measured messages sorted by size and cut into buckets of equal count (ConWeave §4.1, REPS Fig. 4's trace "
        "panels); each bucket's largest size and its average, median and 99th-percentile slowdown.",
    )
    if len(m) == 0:
        sec.blocks.append(Text("No message was measured (none finished, or all fell in the warm-up or cool-down)."))
        return sec
    sizes = m["size_bytes"].to_numpy()
    # ConWeave's 20 buckets, with at least 10 messages in each.
    buckets = 1 if len(np.unique(sizes)) == 1 else max(1, min(20, len(m) // 10))
    t = slowdown_by_size(r, buckets)
    rows = [
        [cell(int(x["bucket"])), cell(int(x["max_size_bytes"])), cell(int(x["flows"])), cell(float(x["mean"]), 3),
         cell(float(x["p50"]), 3), cell(float(x["p99"]), 3)]
        for x in t.to_dict("records")
    ]
    table = Table(
        "size-bins-table",
        [Column("bucket"), Column("max size (bytes)"), Column("messages"), Column("avg slowdown"),
         Column("p50 slowdown"), Column("p99 slowdown")],
        rows,
        sortable=True,
    )
    if len(np.unique(sizes)) == 1:
        sec.intro = f"Every measured message is {num(int(sizes[0]))} bytes: one bucket."
    elif buckets < 4:
        sec.intro += f" {num(len(m))} measured messages make {buckets} bucket{'s' if buckets > 1 else ''} of 10 or more."
    else:

        def draw() -> Any:
            with style.context():
                fig, (a, b) = style.figure("wide", ncols=2)
                slowdown_per_bucket(groups, "mean", buckets, ax=a)
                slowdown_per_bucket(groups, "p99", buckets, ax=b)
            return fig

        f = figure(notes, "size-bins-plot", "Slowdown per size bucket", "Average (left) and p99 (right).", draw)
        if f:
            sec.blocks.append(f)
    sec.blocks.append(table)
    return sec


def _loss(r: Result, notes: Notes) -> Section:
    s = r.summary
    d = s.get("drops") or {}
    f = r.flows
    c = r.counters

    def col(name: str) -> Any:
        return f[name].sum() if name in f else None

    rows = [
        ("Drops: congestion (packets)", d.get("congestion")),
        ("Drops: failure (packets)", d.get("failure")),
        ("Trimmed packets (payload dropped, header delivered)", d.get("trimmed")),
        ("Retransmissions (packets)", s.get("retransmissions")),
        ("Retransmission timeouts", s.get("timeouts")),
        ("NACKs", int(col("nacks")) if col("nacks") is not None else c.get("nacks_sent")),
        ("ECN marks", s.get("ecn_marks")),
        ("Freeze entries (REPS)", int(col("freeze_entries")) if col("freeze_entries") is not None else None),
        ("Time frozen, all flows (µs)", float(col("frozen_us")) if col("frozen_us") is not None else None),
        ("Flows with a retransmission", int((f["retransmissions"] > 0).sum()) if "retransmissions" in f else None),
        ("Route updates (convergence after failures)", c.get("route_updates")),
    ]
    pfc = bool(lookup(r.params, "queue.shared.pfc", False)) or bool(s.get("pfc_pauses"))
    if pfc:
        rows += [("PFC pause frames sent (refreshes included)", s.get("pfc_pauses")),
                 ("PFC resume frames sent", s.get("pfc_resumes"))]
    table = Table(
        "loss-table",
        [Column("what", numeric=False), Column("count")],
        [[Cell(k), cell(v, 1 if isinstance(v, float) else None)] for k, v in rows],
    )
    sec = Section("loss", "Drops, retransmissions, timeouts, freezing" + (", PFC" if pfc else ""), blocks=[table])
    if "retransmissions" in f and (f["retransmissions"] > 0).any():
        top = f.sort_values(["retransmissions", "timeouts"], ascending=False).head(10)
        cols = [c for c in ("id", "src", "dst", "size_bytes", "fct_us", "slowdown", "retransmissions", "timeouts",
                            "drops", "freeze_entries") if c in top]
        sec.blocks.append(
            Table(
                "retx-table",
                [Column(c.replace("_", " ").replace(" us", " (µs)").replace(" bytes", " (bytes)")) for c in cols],
                [[cell(v.item() if hasattr(v, "item") else v, 2 if isinstance(v, float) else None) for v in rec]
                 for rec in top[cols].itertuples(index=False)],
                caption="The flows with the most retransmissions.",
                sortable=True,
            )
        )
    if "pfc" in r.table_names:
        sec.blocks.append(_pfc_table(r.table("pfc")))
    if "drops_series" in r.table_names and r.drops_series[["congestion", "failure"]].to_numpy().any():
        from ..plot import style
        from ..plot.timeseries import drops_over_time

        def draw() -> Any:
            with style.context():
                fig, ax = style.figure("wide")
                drops_over_time({r.lb: r}, ax)
            return fig

        fig = figure(notes, "drops-over-time", "Drops over time",
                     "Packets dropped per sampling bucket (observe.bucket): failure drops solid, congestion dashed.",
                     draw)
        if fig:
            sec.blocks.append(fig)
    return sec


#: How many ports the PFC table lists (those paused longest).
PFC_ROWS = 20


def _pfc_table(pfc: pd.DataFrame) -> Table:
    """The ports that sent or received PFC frames, paused longest first."""
    active = pfc[(pfc["pauses_sent"] > 0) | (pfc["pauses_received"] > 0) | (pfc["paused_classes_at_end"] > 0)]
    active = active.sort_values(["paused_classes_at_end", "paused_us", "pauses_sent"], ascending=False, kind="stable")
    shown = active.head(PFC_ROWS)
    rows = [
        [Cell(str(x["port"])), cell(int(x["pauses_sent"])), cell(int(x["resumes_sent"])),
         cell(int(x["pauses_received"])), cell(float(x["paused_us"]), 2),
         cell(", ".join(str(c) for c in range(8) if int(x["paused_classes_at_end"]) >> c & 1) or "–")]
        for x in shown.to_dict("records")
    ]
    more = f" The {len(shown)} of {len(active)} such ports paused longest." if len(active) > len(shown) else ""
    return Table(
        "pfc-table",
        [Column("port", numeric=False), Column("pauses sent"), Column("resumes sent"), Column("pauses received"),
         Column("paused (µs)"), Column("classes paused at the end", numeric=False)],
        rows,
        caption="PFC per port (pfc.parquet): pause and resume frames sent over its link (to pause the sender at "
        "the other end), pause frames it received, and how long it was paused (not allowed to send the lossless "
        "class)." + more,
        sortable=True,
    )


def port_stats(ports: pd.DataFrame) -> pd.DataFrame:
    """Per sampled port: bytes sent, mean rate, largest queue, share of its
    switch's sampled bytes, and the time it was down."""
    import pandas as pd

    rows = []
    end = float(ports["time_us"].max()) if len(ports) else 0.0
    for name, p in ports.groupby("port", sort=False):
        rows.append(
            {
                "port": str(name),
                "switch": _switch(str(name)),
                "tx_bytes": int(p["tx_bytes"].sum()),
                "mean_gbps": float(p["tx_bytes"].sum()) * 8 / (end * 1e3) if end > 0 else float("nan"),
                "queue_max_kib": float(p["queue_max_bytes"].max()) / 1024,
                "down_buckets": int((~p["up"].astype(bool)).sum()) if "up" in p else 0,
                "paused_us": float(p["paused_us"].sum()) if "paused_us" in p else 0.0,
            }
        )
    df = pd.DataFrame(rows)
    if len(df):
        total = df.groupby("switch")["tx_bytes"].transform("sum")
        df["share"] = df["tx_bytes"] / total.where(total > 0)
    return df


def _switch(port: str) -> str:
    return port.split("->", 1)[0] if "->" in port else port


def imbalance_series(ports: pd.DataFrame) -> pd.DataFrame:
    """Uplink imbalance per switch and bucket: the busiest sampled port's
    bytes over the mean of the switch's sampled ports that are up, minus one
    (0: perfectly even). Buckets where the ports sent nothing are left out."""
    import pandas as pd

    p = ports.assign(switch=[_switch(str(x)) for x in ports["port"]])
    if "up" in p:
        p = p[p["up"].astype(bool)]
    g = p.groupby(["switch", "time_us"])["tx_bytes"]
    out = pd.DataFrame({"max": g.max(), "mean": g.mean(), "ports": g.size()}).reset_index()
    out = out[(out["mean"] > 0) & (out["ports"] > 1)]
    out["imbalance"] = out["max"] / out["mean"] - 1.0
    return out[["switch", "time_us", "ports", "imbalance"]].reset_index(drop=True)


def _timeseries(r: Result, notes: Notes) -> Section | None:
    if "ports" not in r.table_names:
        return None
    from ..plot import style
    from ..plot.timeseries import port_utilization

    ports = r.ports
    if ports.empty:
        return None
    bucket = lookup(r.params, "observe.bucket", "?")
    sec = Section(
        "timeseries",
        "Ports over time",
        f"The sampled ports (observe.ports) per {bucket} bucket: utilization (solid, left axis) and the largest "
        "queue in the bucket (dotted, right axis); shading marks a port's failure windows.",
    )
    names = list(dict.fromkeys(ports["port"]))

    def draw_ports() -> Any:
        import matplotlib.pyplot as plt

        with style.context():
            fig, ax = plt.subplots(1, 1, figsize=(7.0, 3.0), layout="constrained")
            port_utilization(r, ax)
            style.legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=min(len(names), 6), fontsize=6)
        return fig

    f = figure(notes, "ports-plot", "Utilization and queue per port", "", draw_ports)
    if f:
        sec.blocks.append(f)
    imb = imbalance_series(ports)
    if len(imb):

        def draw_imb() -> Any:
            import matplotlib

            with style.context():
                fig, ax = style.figure("wide")
                switches = list(dict.fromkeys(imb["switch"]))
                cmap = matplotlib.colormaps["tab10"]
                for i, sw in enumerate(switches):
                    x = imb[imb["switch"] == sw]
                    ax.step(x["time_us"], 100 * x["imbalance"], where="pre", color=cmap(i % 10),
                            label=f"{sw} ({int(x['ports'].max())} ports)")
                ax.set_xlabel("Time (µs)")
                ax.set_ylabel("Uplink imbalance (%)")
                ax.set_ylim(bottom=0)
                style.legend(ax, loc="upper right")
            return fig

        f = figure(
            notes,
            "imbalance-plot",
            "Uplink imbalance",
            "Per bucket: the busiest sampled port of a switch over the mean of its sampled ports that are up, "
            "minus one (0 % is perfectly even).",
            draw_imb,
        )
        if f:
            sec.blocks.append(f)
    st = port_stats(ports)
    paused = bool(len(st)) and bool((st["paused_us"] > 0).any())
    sec.blocks.append(
        Table(
            "ports-table",
            [Column("port", numeric=False), Column("bytes sent"), Column("mean rate (Gb/s)"),
             Column("share of switch (%)"), Column("max queue (KiB)"), Column("buckets down")]
            + ([Column("paused by PFC (µs)")] if paused else []),
            [
                [Cell(str(x["port"])), cell(int(x["tx_bytes"])), cell(float(x["mean_gbps"]), 1),
                 cell(100 * float(x["share"]), 1), cell(float(x["queue_max_kib"]), 1), cell(int(x["down_buckets"]))]
                + ([cell(float(x["paused_us"]), 2)] if paused else [])
                for x in st.to_dict("records")
            ],
            sortable=True,
            caption="Over the whole run. Mean rate = bytes sent over the sampled time.",
        )
    )
    return sec


def _rtt(groups: dict[str, list[Result]], r: Result, notes: Notes) -> Section | None:
    if "rtt" not in r.table_names:
        return None
    from ..fct import percentile
    from ..plot.compare import rtt_cdf

    rtt = r.rtt["rtt_us"].to_numpy(dtype=float)
    sec = Section("rtt", "Round-trip times", "One sample per ACK (observe.rtt).")
    f = figure(notes, "rtt-cdf", "RTT CDF", "", lambda: rtt_cdf(groups), size="single")
    if f:
        sec.blocks.append(f)
    if len(rtt):
        p = percentile(rtt, [50.0, 99.0])
        sec.blocks.append(
            Table(
                "rtt-table",
                [Column("samples"), Column("min (µs)"), Column("p50 (µs)"), Column("p99 (µs)"), Column("max (µs)")],
                [[cell(len(rtt)), cell(float(rtt.min()), 2), cell(float(p[0]), 2), cell(float(p[1]), 2),
                  cell(float(rtt.max()), 2)]],
            )
        )
    return sec


def _failures(r: Result) -> Section | None:
    if "failures" not in r.table_names:
        return None
    fl = r.failures
    cols = list(fl.columns)
    return Section(
        "failures",
        "Failures",
        "The failures as the engine resolved them (a missing duration: down for the rest of the run).",
        [Table("failures-table", [Column(c.replace("_us", " (µs)"), numeric=c not in ("link", "kind")) for c in cols],
               [[cell(v.item() if hasattr(v, "item") else v) for v in rec] for rec in fl.itertuples(index=False)],
               sortable=True)],
    )


def _steps(r: Result) -> Section | None:
    if "steps" not in r.table_names:
        return None
    st = r.steps
    cols = list(st.columns)
    return Section(
        "steps",
        "Collective steps",
        f"Collective completion: {num(r.summary.get('collective_us'), 2)} µs.",
        [Table("steps-table", [Column(c.replace("_us", " (µs)")) for c in cols],
               [[cell(v.item() if hasattr(v, "item") else v, 2 if isinstance(v, float) else None) for v in rec]
                for rec in st.itertuples(index=False)], sortable=True)],
    )


def run_page(r: Result, *, label: str | None = None) -> RunPage:
    """Gather a run's page (loads its tables; draws its figures)."""
    notes = Notes()
    params = r.params
    lb = r.lb
    groups = {lb: [r]}
    ideal = r.ideal_fct_us
    flat = flat_summary(r.summary)
    summary_rows = [(k, SUMMARY_LABELS.get(k, k), v) for k, v in flat.items()]
    warnings = []
    w = _unfinished(r)
    if w:
        warnings.append(w)
    sections = [_distributions(r, groups, notes)]
    for sec in (_size_bins(r, groups, notes), _loss(r, notes), _timeseries(r, notes), _rtt(groups, r, notes),
                _failures(r), _steps(r)):
        if sec is not None:
            sections.append(sec)
    name = params.get("name") or (r.path.name if r.path else "run")
    return RunPage(
        title=label or f"{name} · {lb_label(lb)}",
        subtitle=describe_scenario(params),
        lb=lb,
        lb_label=lb_label(lb),
        lb_color=lb_color(lb),
        path=str(r.path) if r.path else "",
        warnings=warnings,
        cards=_cards(r, ideal),
        summary_rows=summary_rows,
        provenance=_provenance(r, params),
        scenario_toml=r.scenario_toml,
        sections=sections,
        notes=notes,
    )


def run_page_brief(r: Result) -> RunPage:
    """A run's page without figures or sections: the headline numbers, the
    unfinished-flows warning and the summary (for Jupyter)."""
    params = r.params
    w = _unfinished(r)
    name = params.get("name") or (r.path.name if r.path else "run")
    return RunPage(
        title=f"{name} · {lb_label(r.lb)}",
        subtitle=describe_scenario(params),
        lb=r.lb,
        lb_label=lb_label(r.lb),
        lb_color=lb_color(r.lb),
        path=str(r.path) if r.path else "",
        warnings=[w] if w else [],
        cards=_cards(r, r.ideal_fct_us),
        summary_rows=[(k, SUMMARY_LABELS.get(k, k), v) for k, v in flat_summary(r.summary).items()],
        provenance=_provenance(r, params),
        scenario_toml=r.scenario_toml,
        sections=[],
    )
