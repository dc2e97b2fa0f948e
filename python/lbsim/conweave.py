"""ConWeave's measurements (ConWeave §4.1.2-4.1.3, Table 4) from a run: the
throughput imbalance of each ToR's uplinks (Fig. 14), the reorder queues and
memory the ToRs sampled (Figs. 15-16) and the bandwidth of ConWeave's control
packets against the data (Table 4). :mod:`lbsim.plot.reorder` draws them."""

from __future__ import annotations

import numpy as np

from .errors import LbsimError
from .results import Result

__all__ = ["uplink_imbalance", "reorder_samples", "resume_errors", "control_overhead"]


def uplink_imbalance(r: Result, window_us: float = 100.0) -> np.ndarray:
    """Per ToR and window of ``window_us``: (max − min) / mean of the bytes its
    uplinks sent in the window (ConWeave Fig. 14, after CONGA); windows in
    which a ToR's uplinks sent nothing are left out. The port samples' bucket
    must divide the window."""
    ports = r.ports
    ups = ports[ports["port"].str.match(r"^t0_\d+->t1_\d+$")]
    if ups.empty:
        raise LbsimError("the run sampled no ToR uplinks (list the ToRs, e.g. \"t0_0\", in observe.ports)")
    times = np.sort(ups["time_us"].unique())
    bucket = float(times[0]) if len(times) == 1 else float(np.min(np.diff(times)))
    if window_us + 1e-9 < bucket:
        raise LbsimError(f"the ports were sampled every {bucket:g} us, longer than the {window_us:g} us window")
    frame = ups.assign(
        tor=ups["port"].str.split("->").str[0],
        window=np.ceil(ups["time_us"].to_numpy() / window_us - 1e-9).astype(int),
    )
    sums = frame.groupby(["tor", "window", "port"])["tx_bytes"].sum().unstack("port")
    per_tor = []
    for _, rows in sums.groupby(level="tor"):
        v = rows.dropna(axis=1, how="all").to_numpy(dtype=float)
        mean = v.mean(axis=1)
        keep = mean > 0
        per_tor.append((v.max(axis=1)[keep] - v.min(axis=1)[keep]) / mean[keep])
    return np.concatenate(per_tor) if per_tor else np.array([])


def reorder_samples(r: Result, gauge: str) -> np.ndarray:
    """Every sample of a switch policy gauge (``conweave.reorder_queues``:
    per ToR downlink; ``conweave.reorder_bytes``: per ToR)."""
    if "switch_lb_series" not in r.table_names:
        raise LbsimError("the run did not sample its switches (set observe.switch_lb = true)")
    s = r.table("switch_lb_series")
    return s.loc[s["gauge"] == gauge, "value"].to_numpy(dtype=float)


def resume_errors(r: Result) -> np.ndarray:
    """Every T_resume estimate's error (µs) at the arrival of the TAIL it
    waited for: the estimate without θ_resume_extra minus the arrival; below
    zero the queue would have been flushed early but for the extra term
    (ConWeave App. A, Fig. 21, which plots the opposite sign)."""
    if "switch_lb_records" not in r.table_names:
        raise LbsimError("the run recorded no T_resume estimates (no ConWeave flow was reordered)")
    t = r.table("switch_lb_records")
    return t.loc[t["record"] == "conweave.resume_error_us", "value"].to_numpy(dtype=float)


def control_overhead(r: Result, hosts_per_tor: int | None = None) -> dict[str, float]:
    """ConWeave's REPLY, CLEAR and NOTIFY bytes as a fraction of the data
    bytes (payload plus per-packet headers) of the flows that leave their
    rack, the only ones ConWeave steers (Table 4 puts their bandwidths beside
    the data's). ``hosts_per_tor``: the scenario's ``topology.hosts_per_tor``
    unless given."""
    counts = r.summary.get("switch_lb") or {}
    if "conweave.replies" not in counts:
        raise LbsimError("the run has no ConWeave counters (lb.kind = \"conweave\")")
    s = r.scenario
    if hosts_per_tor is None:
        try:
            hosts_per_tor = int(s["topology.hosts_per_tor"])
        except KeyError:
            raise LbsimError("pass hosts_per_tor: the scenario derives it from topology.radix") from None
    flows = r.flows
    inter = flows[(flows["src"] // hosts_per_tor) != (flows["dst"] // hosts_per_tor)]
    mtu, header = _bytes(s["packet.mtu"]), _bytes(s["packet.header"])
    payload = mtu - header
    sizes = inter["size_bytes"].to_numpy(dtype=float)
    data = float((sizes + np.ceil(sizes / payload) * header).sum())
    control = max(_bytes(s["packet.ack"]), 64)  # lb/conweave.rs: control packets of at least 64 B
    return {k: counts[f"conweave.{k}"] * control / data for k in ("replies", "clears", "notifies")}


def _bytes(text: str) -> int:
    t = str(text).strip()
    if not t.endswith("B") or not t[:-1].isdigit():
        raise LbsimError(f"expected a size in bytes like \"1048B\", got {text!r}")
    return int(t[:-1])
