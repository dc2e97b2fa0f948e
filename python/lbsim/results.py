"""A run's results: in memory (:class:`Result`) and on disk (a run directory).

A run directory holds plain files any tool can read without lbsim:

=================  ==========================================================
``scenario.toml``  the fully resolved scenario (every value explicit)
``summary.json``   the engine's summary (FCT statistics, drops, events, ...)
``flows.parquet``  one row per message: times in us, retransmissions, drops...
``drops.parquet``  packets dropped by cause (congestion, failure, trimmed)
``run.json``       run metadata: lbsim version, run key, stop reason, counters
=================  ==========================================================

Unknown values (the finish time of an unfinished flow) are nulls in Parquet
and NaN in pandas.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import LbsimError
from .scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Result", "load", "ideal_fct_us", "parse_rate_bps", "RUN_FILES"]

RUN_FILES = ("scenario.toml", "summary.json", "flows.parquet", "drops.parquet", "run.json")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()


def _write_atomic(path: Path, data: bytes) -> None:
    """Write a file so readers see the old content or the new, never a part."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _parquet_bytes(table: pa.Table) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def flow_arrays(raw_columns: list[tuple[str, str, bytes]]) -> dict[str, np.ndarray]:
    """The flow table the bindings return (column, dtype, bytes) as numpy arrays."""
    return {name: np.frombuffer(buf, dtype=np.dtype(dtype)) for name, dtype, buf in raw_columns}


def _arrow_from_arrays(cols: Mapping[str, np.ndarray]) -> pa.Table:
    import pyarrow as pa

    arrays = {}
    for name, arr in cols.items():
        if arr.dtype.kind == "f":
            # NaN (unknown) becomes null, which pandas reads back as NaN and
            # polars as null.
            arrays[name] = pa.array(arr, mask=np.isnan(arr))
        else:
            arrays[name] = pa.array(arr)
    return pa.table(arrays)


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9, "Tbps": 1e12}


def parse_rate_bps(text: str) -> float:
    """``"400Gbps"`` -> 4e11 (the units scenario files use)."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", text)
    if not m or m.group(2) not in _RATE_UNITS:
        raise ValueError(f"not a rate: {text!r}")
    return float(m.group(1)) * _RATE_UNITS[m.group(2)]


def ideal_fct_us(size_bytes: float, link_rate_bps: float, base_rtt_us: float) -> float:
    """The ideal completion time of a message: its size at line rate plus one base RTT."""
    return size_bytes * 8 / link_rate_bps * 1e6 + base_rtt_us


class Result:
    """One run's results.

    Attributes: ``summary`` (dict, the engine's summary.json), ``counters``
    (network-wide packet counters), ``stop_reason`` (``"drained"``,
    ``"horizon"`` or ``"cancelled"``), ``key`` (the run key) and ``path`` (the
    run directory, once saved or when loaded). Tables: :attr:`flows` and
    :attr:`drops` (pandas DataFrames).
    """

    def __init__(
        self,
        *,
        scenario_toml: str,
        summary: dict[str, Any],
        counters: dict[str, Any],
        stop_reason: str,
        packets_in_network: int,
        flows: Mapping[str, np.ndarray] | None = None,
        key: str | None = None,
        path: Path | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.scenario_toml = scenario_toml
        self.summary = summary
        self.counters = counters
        self.stop_reason = stop_reason
        self.packets_in_network = packets_in_network
        self.key = key
        self.path = path
        self.meta: dict[str, Any] = dict(meta or {})
        self._flow_arrays = dict(flows) if flows is not None else None
        self._flows_df: pd.DataFrame | None = None

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], key: str | None = None) -> Result:
        """From the dict ``lbsim._core.run`` returns."""
        return cls(
            scenario_toml=raw["scenario_toml"],
            summary=json.loads(raw["summary_json"]),
            counters=json.loads(raw["counters_json"]),
            stop_reason=raw["stop_reason"],
            packets_in_network=int(raw["packets_in_network"]),
            flows=flow_arrays(raw["flows"]),
            key=key,
        )

    # ---- views ----------------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        """The resolved scenario this run simulated."""
        return Scenario(self.scenario_toml)

    @property
    def params(self) -> dict[str, Any]:
        """The resolved scenario as a nested dict."""
        return tomllib.loads(self.scenario_toml)

    @property
    def flows(self) -> pd.DataFrame:
        """One row per message: id, src, dst, size_bytes, start_us,
        receiver_finish_us, sender_finish_us, fct_us (NaN if unfinished),
        finished, retransmissions, timeouts, nacks, drops, explored_evs,
        recycled_evs, freeze_entries, frozen_us."""
        if self._flows_df is None:
            import pandas as pd

            if self._flow_arrays is not None:
                self._flows_df = pd.DataFrame({k: np.array(v) for k, v in self._flow_arrays.items()})
            elif self.path is not None:
                self._flows_df = pd.read_parquet(self.path / "flows.parquet")
            else:  # pragma: no cover - a Result always has one or the other
                raise LbsimError("this result has no flow table")
        return self._flows_df

    @property
    def drops(self) -> pd.DataFrame:
        """Packets dropped by cause: columns ``cause`` (congestion, failure,
        trimmed: trimmed packets lose their payload, not their header) and ``packets``."""
        import pandas as pd

        d = self.summary.get("drops", {})
        causes = ["congestion", "failure", "trimmed"]
        return pd.DataFrame({"cause": causes, "packets": [int(d.get(c, 0)) for c in causes]})

    @property
    def lb(self) -> str:
        """The load balancer this run used (``lb.kind``)."""
        return str(self.params["lb"]["kind"])

    @property
    def ideal_fct_us(self) -> float:
        """Size of the largest message at line rate plus one base RTT."""
        link = parse_rate_bps(self.params["topology"]["link_rate"])
        size = float(self.flows["size_bytes"].max()) if len(self.flows) else 0.0
        return ideal_fct_us(size, link, float(self.summary["base_rtt_us"]))

    # ---- files ----------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the run directory (see the module docstring) and return its path."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        write_run_dir(
            d,
            scenario_toml=self.scenario_toml,
            summary=self.summary,
            flows=self._flow_arrays if self._flow_arrays is not None else self.flows,
            meta=self._meta(),
        )
        self.path = d
        return d

    def _meta(self) -> dict[str, Any]:
        from . import __version__

        meta = {
            "lbsim_version": __version__,
            "key": self.key,
            "stop_reason": self.stop_reason,
            "packets_in_network": self.packets_in_network,
            "counters": self.counters,
        }
        meta.update({k: v for k, v in self.meta.items() if k not in meta})
        return meta

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<Result lb={self.lb} flows={s.get('finished_flows')}/{s.get('flows')} "
            f"max_fct_us={s.get('max_fct_us')} stop={self.stop_reason}"
            + (f" path={str(self.path)!r}" if self.path else "")
            + ">"
        )


def _summary_text(summary: Mapping[str, Any]) -> str:
    return json.dumps(summary, indent=2, allow_nan=False)


def write_run_dir(
    d: Path,
    *,
    scenario_toml: str,
    summary: Mapping[str, Any] | str,
    flows: Mapping[str, np.ndarray] | pd.DataFrame,
    meta: Mapping[str, Any],
) -> None:
    """Write a run directory's files (each atomically). ``summary`` may be the
    engine's summary.json text, written verbatim."""
    import pyarrow as pa

    if isinstance(flows, Mapping):
        table = _arrow_from_arrays(flows)
    else:
        table = pa.Table.from_pandas(flows, preserve_index=False).replace_schema_metadata(None)
    summary_dict = json.loads(summary) if isinstance(summary, str) else dict(summary)
    summary_text = summary if isinstance(summary, str) else _summary_text(summary)
    drops = summary_dict.get("drops", {})
    causes = ["congestion", "failure", "trimmed"]
    drops_table = pa.table(
        {
            "cause": pa.array(causes, pa.string()),
            "packets": pa.array([int(drops.get(c, 0)) for c in causes], pa.uint64()),
        }
    )
    _write_atomic(d / "scenario.toml", scenario_toml.encode())
    _write_atomic(d / "flows.parquet", _parquet_bytes(table))
    _write_atomic(d / "drops.parquet", _parquet_bytes(drops_table))
    _write_atomic(d / "run.json", (json.dumps(dict(meta), indent=2) + "\n").encode())
    # summary.json last: its presence marks a complete run directory.
    _write_atomic(d / "summary.json", (summary_text.rstrip() + "\n").encode())


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a complete run (its summary.json is written last)."""
    p = Path(path)
    return (p / "summary.json").is_file() and (p / "scenario.toml").is_file()


def load(path: str | Path) -> Result:
    """Load a run directory written by :func:`lbsim.run`, ``lbsim run`` or a
    sweep (``DIR/runs/<key>``). Tables load lazily. For a whole sweep use
    :func:`lbsim.load_sweep`."""
    p = Path(path)
    if not is_run_dir(p):
        if (p / "index.parquet").is_file():
            raise LbsimError(f"{p} is a sweep; load it with lbsim.load_sweep()")
        raise LbsimError(f"{p} is not a run directory (no summary.json and scenario.toml)")
    meta: dict[str, Any] = {}
    if (p / "run.json").is_file():
        meta = json.loads((p / "run.json").read_text())
    return Result(
        scenario_toml=(p / "scenario.toml").read_text(),
        summary=json.loads((p / "summary.json").read_text()),
        counters=dict(meta.get("counters", {})),
        stop_reason=str(meta.get("stop_reason", "")),
        packets_in_network=int(meta.get("packets_in_network", 0)),
        key=meta.get("key"),
        path=p,
        meta=meta,
    )
