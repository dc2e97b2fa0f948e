"""ConWeave Figs. 14-16 as CDFs: the throughput imbalance of each ToR's
uplinks, the reorder queues in use per ToR downlink and the reorder memory per
switch (the measurements are :mod:`lbsim.conweave`'s).

Needs runs that sampled the ToRs' uplinks (``observe.ports`` naming the ToRs)
and, for the reordering panels, ``observe.switch_lb = true``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..conweave import reorder_samples, resume_errors, uplink_imbalance
from ..results import Result
from . import style

__all__ = ["reorder_figure", "resume_error_figure"]


def _cdf(ax: Any, values: np.ndarray, **kw: Any) -> None:
    v = np.sort(values)
    ax.plot(v, np.arange(1, len(v) + 1) / max(len(v), 1), **kw)


def reorder_figure(groups: Mapping[str, Result], stem: str | Path) -> list[Path]:
    """CDFs over runs named ``"<setting>/<lb>"``: on top the uplink imbalance,
    one panel per setting and a line per load balancer (Fig. 14); below the
    reorder queues per port and the reorder memory per switch, a line per
    setting of the runs that sampled them (Figs. 15-16). Saved as
    ``stem.png`` and ``.pdf``."""
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(v.split("/")[0] for v in groups))
    dashes = ["-", "--", ":", "-."]
    with style.context():
        fig = plt.figure(figsize=(2.7 * max(len(settings), 3), 5.4), layout="constrained")
        top, bottom = fig.subfigures(2, 1)
        imbalance = np.atleast_1d(top.subplots(1, len(settings), sharey=True))
        queues, memory = bottom.subplots(1, 2)
        for ax in [*imbalance, queues, memory]:
            style.apply(ax)
        for name, r in groups.items():
            setting, lb = name.split("/")
            ax = imbalance[settings.index(setting)]
            _cdf(ax, uplink_imbalance(r), color=style.color(lb), label=style.label(lb), linewidth=1.2)
            ax.set_title(setting, fontsize=8)
            if "switch_lb_series" in r.table_names:
                kw = {"color": style.color(lb), "linestyle": dashes[settings.index(setting) % len(dashes)],
                      "label": f"{style.label(lb)} {setting}", "linewidth": 1.2}
                _cdf(queues, reorder_samples(r, "conweave.reorder_queues"), **kw)
                _cdf(memory, reorder_samples(r, "conweave.reorder_bytes") / 1e6, **kw)
        for ax in imbalance:
            ax.set_xlabel("Uplink imbalance (max − min) / mean")
        imbalance[0].set_ylabel("CDF")
        style.legend(imbalance[0], fontsize=6)
        queues.set_xlabel("Reorder queues in use per ToR downlink")
        memory.set_xlabel("Reorder memory per ToR (MB)")
        for ax in (queues, memory):
            ax.set_ylabel("CDF")
        if queues.lines:
            style.legend(queues, fontsize=6)
        return style.save(fig, stem)


def resume_error_figure(groups: Mapping[str, Result], stem: str | Path) -> list[Path]:
    """The CDF of ConWeave's T_resume errors (µs, before θ_resume_extra; below
    zero the estimate came before the TAIL) of each run (ConWeave Fig. 21)."""
    with style.context():
        fig, ax = style.figure()
        for i, (name, r) in enumerate(groups.items()):
            _cdf(ax, resume_errors(r), color=style.color(name.split("/")[-1]),
                 linestyle=["-", "--", ":", "-."][i % 4], label=name.split("/")[0], linewidth=1.2)
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.set_xlabel("T_resume − TAIL arrival (µs)")
        ax.set_ylabel("CDF")
        style.legend(ax, fontsize=7)
        return style.save(fig, stem)
