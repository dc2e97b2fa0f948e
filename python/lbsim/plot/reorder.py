"""In-network reordering and load-balance efficiency, as ConWeave §4.1.2-4.1.3
measures them: the throughput imbalance of each ToR's uplinks (Fig. 14), the
reorder queues in use per ToR downlink (Fig. 15) and the reorder memory per
switch (Fig. 16), each as a CDF over samples.

Needs runs that sampled the ToRs' uplinks (``observe.ports`` naming the ToRs)
and, for the reordering panels, ``observe.switch_lb = true``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import LbsimError
from ..results import Result
from . import style

__all__ = ["uplink_imbalance", "reorder_samples", "reorder_figure"]


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


def _cdf(ax: Any, values: np.ndarray, **kw: Any) -> None:
    v = np.sort(values)
    ax.plot(v, np.arange(1, len(v) + 1) / max(len(v), 1), **kw)


def reorder_figure(groups: Mapping[str, Result], stem: str | Path) -> list[Path]:
    """Three CDF panels over runs named ``"<setting>/<lb>"``: uplink
    imbalance (every run), reorder queues per port and reorder memory per
    switch (the runs that sampled them). Saved as ``stem.png`` and ``.pdf``."""
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(v.split("/")[0] for v in groups))
    dashes = ["-", "--", ":", "-."]
    with style.context():
        fig, axes = plt.subplots(1, 3, figsize=(10.5, 2.8), layout="constrained")
        for ax in axes:
            style.apply(ax)
        for name, r in groups.items():
            setting, lb = name.split("/")
            kw = {"color": style.color(lb), "linestyle": dashes[settings.index(setting) % len(dashes)],
                  "label": f"{style.label(lb)} {setting}", "linewidth": 1.2}
            _cdf(axes[0], uplink_imbalance(r), **kw)
            if "switch_lb_series" in r.table_names:
                _cdf(axes[1], reorder_samples(r, "conweave.reorder_queues"), **kw)
                _cdf(axes[2], reorder_samples(r, "conweave.reorder_bytes") / 1e6, **kw)
        axes[0].set_xlabel("Uplink throughput imbalance (max − min) / mean")
        axes[1].set_xlabel("Reorder queues in use per ToR downlink")
        axes[2].set_xlabel("Reorder memory per ToR (MB)")
        for ax in axes:
            ax.set_ylabel("CDF")
        axes[0].legend(fontsize=6)
        return style.save(fig, stem)
