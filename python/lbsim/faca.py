"""FaCa's measurements (FaCa §6-7) from a packet-level run: how evenly an
access switch's uplinks carry the traffic (the standard deviation of their
throughput, Fig. 6) and how evenly the sending RNICs get their share (the
gap between the fastest and the slowest, their standard deviation and mean,
Fig. 7), all over a steady window after the flows have settled; and how
much of the traffic into the core waits behind a standing queue over time
(Fig. 9b)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import LbsimError
from .results import Result

__all__ = ["port_throughput", "balance", "core_congestion"]


def port_throughput(r: Result, pattern: str, start_us: float, end_us: float) -> pd.Series:
    """Mean throughput (Gb/s on the wire) of each sampled port whose name
    matches the regular expression ``pattern``, over the buckets that end in
    (``start_us``, ``end_us``]."""
    ports = r.ports
    sel = ports[ports["port"].str.match(pattern) & (ports["time_us"] > start_us) & (ports["time_us"] <= end_us + 1e-9)]
    if sel.empty:
        raise LbsimError(f"no sampled port matches {pattern!r} in ({start_us:g}, {end_us:g}] us "
                         "(list them in observe.ports)")
    return sel.groupby("port")["gbps"].mean()


def balance(r: Result, switch: str = "t0_0", start_us: float = 1000.0, end_us: float | None = None) -> dict[str, float]:
    """FaCa Figs. 6-7 for one run: the population standard deviation of the
    throughput of ``switch``'s uplinks (``s0_std_gbps``), and over the hosts
    under it that send, their NICs' mean throughput, its gap (max − min) and
    standard deviation (``rnic_*``), in Gb/s over (``start_us``, ``end_us``]
    (``end_us`` defaults to the run's last bucket)."""
    end = float(r.ports["time_us"].max()) if end_us is None else end_us
    up = port_throughput(r, rf"^{switch}->t1_\d+$", start_us, end)
    senders = sorted({int(s) for s in r.flows["src"]})
    nic_names = {f"h{h}->{switch}" for h in senders}
    nics = port_throughput(r, rf"^h\d+->{switch}$", start_us, end)
    nics = nics[nics.index.isin(nic_names)]
    if nics.empty:
        raise LbsimError(f"no sending host's NIC under {switch} was sampled (list them in observe.ports)")
    v = nics.to_numpy(dtype=float)
    return {
        "s0_std_gbps": float(np.std(up.to_numpy(dtype=float))),
        "s0_max_gbps": float(up.max()),
        "s0_min_gbps": float(up.min()),
        "rnic_mean_gbps": float(v.mean()),
        "rnic_gap_gbps": float(v.max() - v.min()),
        "rnic_std_gbps": float(np.std(v)),
    }


def core_congestion(r: Result, threshold_bytes: int | None = None) -> pd.DataFrame:
    """FaCa Fig. 9b for one run: per sampling bucket (``time_us``, its end), the
    bytes the leaves sent up into the core (``bytes``), those sent by uplinks
    whose queue reached ``threshold_bytes`` in the bucket (``congested_bytes``)
    and their share (``congested_share``, NaN when nothing was sent).
    ``threshold_bytes`` defaults to the scenario's ECN marking threshold
    (``queue.ecn_kmin``): traffic that met a queue where marking starts."""
    from .units import parse_bytes

    if threshold_bytes is None:
        threshold_bytes = parse_bytes(str(r.params["queue"]["ecn_kmin"]))
    ports = r.ports
    up = ports[ports["port"].str.match(r"^t0_\d+->t1_\d+$")]
    if up.empty:
        raise LbsimError("the run sampled no leaf uplinks (list the leaves, e.g. \"t0_0\", in observe.ports)")
    frame = up.assign(congested=np.where(up["queue_max_bytes"] >= threshold_bytes, up["tx_bytes"], 0))
    out = frame.groupby("time_us").agg(bytes=("tx_bytes", "sum"), congested_bytes=("congested", "sum")).reset_index()
    total = out["bytes"].to_numpy(dtype=float)
    share = np.divide(out["congested_bytes"].to_numpy(dtype=float), total, out=np.full(len(out), np.nan), where=total > 0)
    return out.assign(congested_share=share)
