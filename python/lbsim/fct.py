"""FCT slowdown statistics by flow size, as ConWeave reports them (§4.1,
Figs. 12, 13 and 17; its ``fctAnalysis.py``), for load balancers judged on
datacenter traces.

- :func:`slowdown_by_size`: the measured flows sorted by size and cut into 20
  buckets of equal count; per bucket its largest size and the mean, p50, p95,
  p99 and p99.9 slowdown.
- :func:`slowdown_by_bdp`: the same statistics for flows under one BDP and
  for flows of one BDP or more.

Flows are the workload's messages (``Result.messages``): a message split
into subflows counts once. Only messages the run marks ``measured`` count:
finished, not started in the
warm-up, not finished after the cool-down (``workload.warmup``,
``workload.cooldown``). Percentiles are the engine's nearest rank
(:func:`percentile`, the rule of ``summary.json``; see docs/model-choices.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt

from . import _core
from .errors import LbsimError

if TYPE_CHECKING:
    import pandas as pd

    from .results import Result

__all__ = ["STATS", "percentile", "slowdown_by_size", "slowdown_by_bdp", "measured_flows"]

#: The statistics each row reports, with their percentile in % (None: the mean).
STATS: dict[str, float | None] = {"mean": None, "p50": 50.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}


@overload
def percentile(values: npt.ArrayLike, p: float) -> float: ...
@overload
def percentile(values: npt.ArrayLike, p: Sequence[float] | np.ndarray) -> np.ndarray: ...
def percentile(values: npt.ArrayLike, p: float | Sequence[float] | np.ndarray) -> float | np.ndarray:
    """The ``p``-th percentile (``p`` in %, from 0 to 100) of ``values`` (any
    order), by the engine's rule (``lbsim_core::metrics::percentile``, the one
    ``summary.json`` uses): nearest rank, the smallest value with at least p %
    of the values at or below it, i.e. ``sorted[ceil(n · p / 100) - 1]`` (the
    first value for p = 0). NaN values are left out; NaN if none is left.
    With a sequence of p's, an array of as many percentiles.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50), percentile([1.0, 2.0, 3.0, 4.0], [25, 99])
    (2.0, array([1., 4.]))
    """
    arr = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if isinstance(p, (int, float, np.integer, np.floating)):
        return float(_core.percentile(arr, [float(p)])[0])
    ps = [float(x) for x in np.asarray(p, dtype=np.float64).ravel()]
    return np.array(_core.percentile(arr, ps), dtype=np.float64)


def _stats(slowdowns: np.ndarray) -> dict[str, float]:
    s = np.sort(slowdowns)
    ps = [q for q in STATS.values() if q is not None]
    values = iter(percentile(s, ps).tolist())
    return {
        name: (float(s.mean()) if len(s) else float("nan")) if q is None else next(values)
        for name, q in STATS.items()
    }


def measured_flows(runs: Result | Iterable[Result]) -> pd.DataFrame:
    """The measured flows of one run or several (pooled, e.g. the seeds of a
    sweep), as messages: a message split into subflows counts once, with its
    own slowdown (last subflow's arrival against the whole message's ideal)."""
    import pandas as pd

    from .results import Result

    runs = [runs] if isinstance(runs, Result) else list(runs)
    frames = []
    for r in runs:
        f = r.messages
        if "measured" not in f:
            raise LbsimError("these results predate slowdown statistics; run them again")
        frames.append(f[f["measured"]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def slowdown_by_size(runs: Result | Iterable[Result], buckets: int = 20) -> pd.DataFrame:
    """One row per size bucket: ``bucket``, ``flows``, ``max_size_bytes`` and :data:`STATS`."""
    import pandas as pd

    f = measured_flows(runs)
    if len(f) < buckets:
        raise LbsimError(f"{len(f)} measured flows cannot fill {buckets} buckets")
    order = np.argsort(f["size_bytes"].to_numpy(), kind="stable")
    size = f["size_bytes"].to_numpy()[order]
    slow = f["slowdown"].to_numpy(dtype=float)[order]
    n = len(f)
    rows = []
    for i in range(buckets):
        lo, hi = int(i * n / buckets), int((i + 1) * n / buckets)
        rows.append({"bucket": i, "flows": hi - lo, "max_size_bytes": int(size[hi - 1]), **_stats(slow[lo:hi])})
    return pd.DataFrame(rows)


def slowdown_by_bdp(runs: Result | Iterable[Result], bdp_bytes: float | None = None) -> pd.DataFrame:
    """Two rows, ``<1BDP`` and ``>=1BDP`` (ConWeave's short and long flows):
    ``group``, ``flows`` and :data:`STATS`. The BDP defaults to the run's
    (``summary["bdp_bytes"]``: the host rate times the longest path's base RTT)."""
    import pandas as pd

    from .results import Result

    runs = [runs] if isinstance(runs, Result) else list(runs)
    if bdp_bytes is None:
        bdps = {float(r.summary["bdp_bytes"]) for r in runs}
        if len(bdps) != 1:
            raise LbsimError(f"runs differ in BDP ({sorted(bdps)}); pass bdp_bytes")
        bdp_bytes = bdps.pop()
    f = measured_flows(runs)
    short = f["size_bytes"].to_numpy() < bdp_bytes
    slow = f["slowdown"].to_numpy(dtype=float)
    rows = [
        {"group": "<1BDP", "flows": int(short.sum()), **_stats(slow[short])},
        {"group": ">=1BDP", "flows": int((~short).sum()), **_stats(slow[~short])},
    ]
    return pd.DataFrame(rows)
