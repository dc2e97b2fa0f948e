"""A run's results: in memory (:class:`Result`) and on disk (a run directory).

A run directory holds plain files any tool can read without lbsim:

=================  ==========================================================
``scenario.toml``  the fully resolved scenario (every value explicit)
``summary.json``   the engine's summary (FCT statistics, drops, events, ...)
``flows.parquet``  one row per transport flow: times in us, retransmissions, drops...
``drops.parquet``  packets dropped by cause (congestion, failure, trimmed)
``run.json``       run metadata: lbsim version and git commit, run key, stop reason, counters
=================  ==========================================================

and, when the scenario asks for them (``[observe]``, ``[[failures]]``):

========================  ===================================================
``messages.parquet``      one row per message, when some were split into subflows
``steps.parquet``         a collective's steps: first start, last arrival
``ports.parquet``         per sampled port and bucket: bytes sent, Gbps, queue
``drops_series.parquet``  packets dropped per cause per bucket
``rtt.parquet``           one RTT sample per ACK: flow, time_us, rtt_us
``failures.parquet``      the failures as resolved: link, kind, start, duration
``faca_paths.parquet``    FaCa's path load estimates over time (docs/faca.md)
``port_totals.parquet``   per port at the end: sent, queue drops, largest queue
========================  ===================================================

Unknown values (the finish time of an unfinished flow) are nulls in Parquet
and NaN in pandas.

The workload's flows are *messages*; the engine runs *transport flows*. They
are the same unless ``lb.kind = "subflows"`` splits a message over several
transport flows (REPS §4.1's MPTCP baseline). The summary always counts
messages; :attr:`Result.messages` is the message-level table either way.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .errors import LbsimError
from .scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Result", "load", "check_out_dir", "RUN_FILES", "OPTIONAL_TABLES"]

RUN_FILES = ("scenario.toml", "summary.json", "flows.parquet", "drops.parquet", "run.json")
#: Tables a run writes only when its scenario asks for them: every table the engine can write besides
#: ``flows`` (tests/python/test_hardening.py holds this list to the engine's, ``lbsim._core.table_names()``,
#: so a new table is never dropped on load or save).
OPTIONAL_TABLES = ("messages", "steps", "ports", "drops_series", "rtt", "failures", "switch_lb_series", "switch_lb_records",
                   "faca_paths", "port_totals", "pfc", "buffers")

#: The message table's columns (derived from the flow table when no message was split).
MESSAGE_COLUMNS = (
    "message",
    "src",
    "dst",
    "size_bytes",
    "lb",
    "step",
    "subflows",
    "start_us",
    "receiver_finish_us",
    "fct_us",
    "ideal_fct_us",
    "slowdown",
    "measured",
    "finished",
)

Columns = Mapping[str, np.ndarray]


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


#: Tables with fewer rows are written uncompressed: Parquet's own encodings already keep them
#: small (a 480-row flow table: 10.8 kB, 10.3 kB with zstd), and zstd's setup for each of their
#: columns cost a sweep's driver about 1 ms per table (docs/performance-sweeps.md).
_COMPRESS_FROM_ROWS = 10_000


def _parquet_bytes(table: pa.Table) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    compression = "zstd" if table.num_rows >= _COMPRESS_FROM_ROWS else "none"
    pq.write_table(table, sink, compression=compression)
    return bytes(sink.getvalue().to_pybytes())


def table_arrays(raw_columns: list[tuple[str, str, Any]]) -> dict[str, np.ndarray]:
    """A table the bindings return, ``[(column, dtype, bytes or list of str)]``, as numpy arrays."""
    return {
        name: np.array(data, dtype=object) if dtype == "str" else np.frombuffer(data, dtype=np.dtype(dtype))
        for name, dtype, data in raw_columns
    }


def tables_from_raw(raw: Mapping[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Every table of a raw run reply (``lbsim._core.run``), by name."""
    return {name: table_arrays(cols) for name, cols in raw["tables"].items()}


# Arrow arrays are built from their buffers, not with pa.array(): pa.array()
# imports pandas on its first call (a few hundred ms, and a sweep's driver
# needs no pandas to write its files). The Parquet files are the same.


def _validity(valid: np.ndarray) -> tuple[Any, int]:
    """An Arrow validity bitmap (None when every value is valid) and the null count."""
    import pyarrow as pa

    nulls = int(valid.size - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def _strings(values: list[str | None]) -> pa.Array:
    import pyarrow as pa

    encoded = [b"" if v is None else v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    valid, nulls = _validity(np.array([v is not None for v in values], bool))
    return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded)), valid, nulls)


def _arrow_array(arr: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A numeric or boolean numpy array as Arrow; ``valid`` marks the non-null values."""
    import pyarrow as pa

    bitmap, nulls = _validity(valid) if valid is not None else (None, 0)
    if arr.dtype.kind == "b":
        data = pa.py_buffer(np.packbits(arr, bitorder="little"))
    else:
        data = pa.py_buffer(np.ascontiguousarray(arr))
    return pa.Array.from_buffers(pa.from_numpy_dtype(arr.dtype), len(arr), [bitmap, data], nulls)


def _arrow_from_values(values: list[Any], kind: pa.DataType) -> pa.Array:
    """Python values (None is null) as an Arrow array of type ``kind``:
    string, int64, uint64, float64 or bool (as ``pa.array(values, kind)``)."""
    import pyarrow as pa

    if kind == pa.string():
        return _strings(values)
    valid = np.array([v is not None for v in values], bool)
    dtype = np.dtype(kind.to_pandas_dtype())
    arr = np.array([dtype.type(0) if v is None else v for v in values], dtype)
    return _arrow_array(arr, valid)


def _arrow_from_arrays(cols: Columns) -> pa.Table:
    import pyarrow as pa

    arrays = {}
    for name, arr in cols.items():
        if arr.dtype.kind == "O":
            arrays[name] = _strings(list(arr))
        elif arr.dtype.kind == "f":
            # NaN (unknown) becomes null, which pandas reads back as NaN and
            # polars as null.
            arrays[name] = _arrow_array(arr, ~np.isnan(arr))
        else:
            arrays[name] = _arrow_array(arr)
    return pa.table(arrays)


def load_frame(arrays: Mapping[str, Columns] | None, path: Path | None, name: str) -> pd.DataFrame | None:
    """Table ``name`` of a result: from the engine's arrays when it has them,
    else from ``path/name.parquet``; None when neither holds it."""
    import pandas as pd

    if arrays and name in arrays:
        return pd.DataFrame({k: np.array(v) for k, v in arrays[name].items()})
    if path is not None and (path / f"{name}.parquet").is_file():
        return pd.read_parquet(path / f"{name}.parquet")
    return None


class Result:
    """One run's results.

    Attributes: ``summary`` (dict, the engine's summary.json), ``counters``
    (network-wide packet counters), ``stop_reason`` (``"drained"``,
    ``"horizon"``, ``"cancelled"``, ``"no_progress"``: flows were stuck, or
    ``"pfc_deadlock"``: PFC pauses held everything; see :attr:`stop_note`), ``key`` (the run key) and ``path`` (the
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
        tables: Mapping[str, Columns] | None = None,
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
        self._arrays: dict[str, Columns] = dict(tables or {})
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], key: str | None = None) -> Result:
        """From the dict ``lbsim._core.run`` returns."""
        return cls(
            scenario_toml=raw["scenario_toml"],
            summary=json.loads(raw["summary_json"]),
            counters=json.loads(raw["counters_json"]),
            stop_reason=raw["stop_reason"],
            packets_in_network=int(raw["packets_in_network"]),
            tables=tables_from_raw(raw),
            key=key,
            meta={"stop_note": raw["stop_note"]} if raw.get("stop_note") else None,
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
    def table_names(self) -> list[str]:
        """The tables this run has: ``flows`` and any of :data:`OPTIONAL_TABLES`."""
        if self._arrays:
            return list(self._arrays)
        if self.path is not None:
            return ["flows"] + [n for n in OPTIONAL_TABLES if (self.path / f"{n}.parquet").is_file()]
        return []

    def table(self, name: str) -> pd.DataFrame:
        """A table of this run by name (see the module docstring); raises
        :class:`LbsimError` when the run did not record it."""
        if name not in self._frames:
            frame = load_frame(self._arrays, self.path, name)
            if frame is not None:
                self._frames[name] = frame
            else:
                hint = {
                    "messages": "no message was split into subflows; see Result.messages",
                    "ports": "list ports or switches in observe.ports",
                    "drops_series": "set observe.drops = true",
                    "rtt": "set observe.rtt = true",
                    "switch_lb_series": "set observe.switch_lb = true",
                    "faca_paths": "set observe.host_lb = true with lb.kind = \"faca\"",
                    "port_totals": "set observe.port_totals = true",
                    "pfc": "no PFC frame was sent (queue.kind = \"shared\" with queue.shared.pfc = true)",
                    "buffers": "set observe.buffers = true with queue.kind = \"shared\"",
                    "failures": "the scenario has no [[failures]]",
                    "steps": "the workload is not a collective",
                }.get(name, "")
                raise LbsimError(f"this run has no {name!r} table" + (f" ({hint})" if hint else ""))
        return self._frames[name]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per transport flow: id, message (the message it carries:
        its own id unless the message was split into subflows), src, dst,
        size_bytes, lb, step (within a collective), start_us,
        receiver_finish_us, sender_finish_us, fct_us (NaN if unfinished),
        ideal_fct_us (alone on the idle network), slowdown (max(1,
        fct/ideal)), measured (counted by the statistics), finished,
        retransmissions, timeouts, nacks, drops, explored_evs, recycled_evs,
        freeze_entries, frozen_us."""
        return self.table("flows")

    @property
    def messages(self) -> pd.DataFrame:
        """One row per message, what the summary counts: message, src, dst,
        size_bytes, lb, step, subflows (transport flows that carried it),
        start_us, receiver_finish_us (its last flow's arrival), fct_us,
        ideal_fct_us (the whole message alone on one path), slowdown,
        measured, finished (every flow finished). Without subflows these are
        the flow table's rows."""
        if "messages" in self.table_names:
            return self.table("messages")
        f = self.flows
        m = f.assign(message=f["message"] if "message" in f else f["id"], subflows=np.uint32(1))
        return m[list(MESSAGE_COLUMNS)].reset_index(drop=True)

    @property
    def steps(self) -> pd.DataFrame:
        """A collective's steps: step, flows, bytes, start_us (first start),
        end_us (last arrival), duration_us."""
        return self.table("steps")

    @property
    def ports(self) -> pd.DataFrame:
        """Sampled ports per bucket (``observe.ports``): time_us (bucket end),
        port, tx_bytes, gbps, rate_gbps, queue_bytes (at the bucket end),
        queue_max_bytes, up."""
        return self.table("ports")

    @property
    def port_totals(self) -> pd.DataFrame:
        """Every port at the end (``observe.port_totals``): port, from, to,
        tx_bytes, tx_packets, drops (for want of room), pushed_out (of
        those, waiting packets a full queue gave up for an arrival),
        max_queue_bytes. Losses on failed links are not a queue's."""
        return self.table("port_totals")

    @property
    def drops_series(self) -> pd.DataFrame:
        """Drops per bucket (``observe.drops``): time_us, congestion, failure, trimmed."""
        return self.table("drops_series")

    @property
    def rtt(self) -> pd.DataFrame:
        """RTT samples (``observe.rtt``): flow, time_us, rtt_us."""
        return self.table("rtt")

    @property
    def failures(self) -> pd.DataFrame:
        """The failures as resolved: entry, link, kind, start_us, duration_us
        (NaN: permanent), every_us (NaN: once)."""
        return self.table("failures")

    @property
    def drops(self) -> pd.DataFrame:
        """Packets dropped by cause: columns ``cause`` (congestion, failure,
        trimmed: trimmed packets lose their payload, not their header) and ``packets``."""
        import pandas as pd

        d = self.summary.get("drops", {})
        causes = ["congestion", "failure", "trimmed"]
        return pd.DataFrame({"cause": causes, "packets": [int(d.get(c, 0)) for c in causes]})

    @property
    def stop_note(self) -> str | None:
        """Why the run stopped early, in words, when the engine's no-progress
        guard (``stop_reason == "no_progress"``) or PFC deadlock watchdog
        (``"pfc_deadlock"``) stopped it; else None."""
        note = self.meta.get("stop_note")
        return str(note) if note else None

    @property
    def lb(self) -> str:
        """The load balancer this run used (``lb.kind``)."""
        return str(self.params["lb"]["kind"])

    @property
    def ideal_fct_us(self) -> float:
        """The ideal workload completion time: the largest of the engine's
        per-message ideals (the ``ideal_fct_us`` column of :attr:`messages`:
        each message alone on its path of the idle network, store and forward
        at every hop; see docs/model-choices.md). NaN without messages."""
        m = self.messages
        return float(m["ideal_fct_us"].max()) if len(m) else float("nan")

    # ---- files ----------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the run directory (see the module docstring) and return its path.

        An earlier run in ``directory`` is replaced as a whole (the new run is
        written to a sibling folder that then takes its place), so no table of
        the old run is left beside the new ones. A directory holding anything
        else is left alone: :class:`LbsimError`."""
        d = Path(directory)
        check_out_dir(d)
        tables = self._arrays or {n: self.table(n) for n in self.table_names}
        meta = self._meta()
        tmp = _sibling(d, "tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            write_run_dir(tmp, scenario_toml=self.scenario_toml, summary=self.summary, tables=tables, meta=meta)
            replace_dir(tmp, d)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.path, self.meta = d, meta  # as load() would see it
        return d

    def _meta(self) -> dict[str, Any]:
        from . import __version__

        meta = {
            "lbsim_version": __version__,
            "git_commit": _core.git_commit or None,
            "key": self.key,
            "stop_reason": self.stop_reason,
            "packets_in_network": self.packets_in_network,
            "counters": self.counters,
        }
        meta.update({k: v for k, v in self.meta.items() if k not in meta})
        return meta

    def _repr_html_(self) -> str:
        """What Jupyter shows: the headline numbers, unfinished flows, the summary
        (see :func:`lbsim.report.result_html`)."""
        from .report import result_html

        return result_html(self)

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


_DROP_CAUSES = ("congestion", "failure", "trimmed")


@functools.lru_cache(maxsize=64)
def _drops_parquet(packets: tuple[int, ...]) -> bytes:
    """drops.parquet for these counts: the same few (often all zero) recur
    over a sweep, and a Parquet file costs about 1 ms to make, whatever its size."""
    import pyarrow as pa

    return _parquet_bytes(
        pa.table(
            {
                "cause": _arrow_from_values(list(_DROP_CAUSES), pa.string()),
                "packets": _arrow_from_values(list(packets), pa.uint64()),
            }
        )
    )


def write_run_dir(
    d: Path,
    *,
    scenario_toml: str,
    summary: Mapping[str, Any] | str,
    tables: Mapping[str, Columns | pd.DataFrame],
    meta: Mapping[str, Any],
) -> None:
    """Write a run directory's files: ``tables`` holds ``flows`` and any
    optional tables. ``summary`` may be the engine's summary.json text,
    written verbatim. ``d`` is a new folder of the caller's that is renamed
    into place once written (``Result.save``, a sweep), so the files are
    written directly, not each through a temporary file."""
    import pyarrow as pa

    def arrow(t: Columns | pd.DataFrame) -> pa.Table:
        if isinstance(t, Mapping):
            return _arrow_from_arrays(t)
        return pa.Table.from_pandas(t, preserve_index=False).replace_schema_metadata(None)

    summary_dict = json.loads(summary) if isinstance(summary, str) else dict(summary)
    summary_text = summary if isinstance(summary, str) else _summary_text(summary)
    drops = summary_dict.get("drops", {})
    packets = tuple(int(drops.get(c, 0)) for c in _DROP_CAUSES)
    (d / "scenario.toml").write_bytes(scenario_toml.encode())
    for name, t in tables.items():
        (d / f"{name}.parquet").write_bytes(_parquet_bytes(arrow(t)))
    (d / "drops.parquet").write_bytes(_drops_parquet(packets))
    (d / "run.json").write_bytes((json.dumps(dict(meta), indent=2) + "\n").encode())
    # summary.json last: its presence marks a complete run directory.
    (d / "summary.json").write_bytes((summary_text.rstrip() + "\n").encode())


def _sibling(d: Path, what: str) -> Path:
    return d.parent / f".{d.name}.{what}-{os.getpid()}"


def replace_dir(new: Path, d: Path) -> None:
    """Put the directory ``new`` in ``d``'s place, removing what ``d`` held."""
    if not d.exists():
        os.rename(new, d)
        return
    old = _sibling(d, "old")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(d, old)
    try:
        os.rename(new, d)
    except BaseException:
        os.rename(old, d)
        raise
    shutil.rmtree(old, ignore_errors=True)


def check_out_dir(path: str | Path) -> None:
    """Raise :class:`LbsimError` unless a run's results can be written to
    ``path``: an empty directory, an earlier run (to be replaced), or a path
    that can be created where we may write. Checked before a run starts, so
    a bad output path costs no simulation."""
    d = Path(path)
    if d.exists():
        if not d.is_dir():
            raise LbsimError(f"cannot write results to {d}: it is a file, not a directory")
        if any(d.iterdir()) and not is_run_dir(d):
            raise LbsimError(
                f"cannot write results to {d}: it holds files that are not an lbsim run "
                "(choose a new or empty directory)"
            )
        # An earlier run is replaced whole: only if everything in it is lbsim's own.
        foreign = _core.foreign_entry(d)
        if foreign is not None:
            raise LbsimError(
                f"cannot write results to {d}: it holds an earlier run and {foreign}, which lbsim did not write "
                "and would delete with it (move it, or choose a new directory)"
            )
    at = d.parent
    while not at.exists():
        at = at.parent
    if not at.is_dir():
        raise LbsimError(f"cannot write results to {d}: {at} is a file, not a directory")
    try:
        probe = Path(tempfile.mkdtemp(prefix=".lbsim-probe-", dir=at))
    except OSError as e:
        raise LbsimError(f"cannot write results to {d}: {at}: {e.strerror or e}") from None
    probe.rmdir()


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
    from .flowlevel import is_flow_level_dir

    if is_flow_level_dir(p):
        raise LbsimError(f"{p} is a flow-level result; load it with lbsim.load_flow_level()")
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
