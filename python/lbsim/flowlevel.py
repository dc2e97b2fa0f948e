"""The flow-level mode: no packets. Every flow of the scenario's workload is
persistent (all start at 0 with an infinite backlog: sizes and start times
are ignored), sits on the path its load balancer gives it (ECMP or WCMP, the
same path the packet-level engine would give it), and gets its max-min fair
rate over the link capacities. See docs/flow-level.md.

>>> import lbsim
>>> r = lbsim.flow_level({"lb": {"kind": "ecmp"}})   # doctest: +SKIP
>>> r.summary["congestion_rate"], r.flows["rate_bps"].min()   # doctest: +SKIP

A saved result directory holds ``scenario.toml``, ``flows.parquet``,
``ports.parquet`` and ``summary.json`` (written last; its ``"mode"`` is
``"flow_level"``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .errors import LbsimError, ScenarioError
from .results import (
    _arrow_from_arrays,
    _parquet_bytes,
    _sibling,
    _write_atomic,
    check_out_dir,
    is_run_dir,
    load_frame,
    replace_dir,
    table_arrays,
)
from .runner import memory_bytes
from .scenario import Scenario, ScenarioLike, as_scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FlowLevelResult", "flow_level", "load_flow_level"]

#: The tables of a flow-level result.
TABLES = ("flows", "ports")


class FlowLevelResult:
    """A flow-level result: :attr:`flows` (one row per flow: src, dst, lb,
    rate_bps, hops, path, port_ids, bottleneck, congested) and :attr:`ports`
    (one row per link direction: name, class, capacity_bps, throughput_bps,
    utilization, flows) as pandas DataFrames, and :attr:`summary` (dict:
    rates, congestion rate, and per link class the ports' max, min, Drop and
    standard deviation)."""

    def __init__(
        self,
        *,
        scenario_toml: str,
        summary: dict[str, Any],
        arrays: Mapping[str, Mapping[str, np.ndarray]] | None = None,
        path: Path | None = None,
    ) -> None:
        self.scenario_toml = scenario_toml
        self.summary = summary
        self.path = path
        self._arrays = dict(arrays) if arrays is not None else None
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> FlowLevelResult:
        """From the dict ``lbsim._core.flow_level`` returns."""
        return cls(
            scenario_toml=raw["scenario_toml"],
            summary=json.loads(raw["summary_json"]),
            arrays={name: table_arrays(cols) for name, cols in raw["tables"].items()},
        )

    @property
    def scenario(self) -> Scenario:
        """The resolved scenario."""
        return Scenario(self.scenario_toml)

    def _table(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            frame = load_frame(self._arrays, self.path, name)
            if frame is None:  # pragma: no cover - a result always has one or the other
                raise LbsimError(f"no {name} table")
            self._frames[name] = frame
        return self._frames[name]

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow."""
        return self._table("flows")

    @property
    def ports(self) -> pd.DataFrame:
        """One row per port (link direction)."""
        return self._table("ports")

    def save(self, directory: str | Path) -> Path:
        """Write the result directory and return its path. As for a run, an
        earlier result there is replaced whole; a directory holding anything
        else is left alone (:class:`LbsimError`)."""
        import pyarrow as pa

        d = Path(directory)
        check_out_dir(d)
        tmp = _sibling(d, "tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            _write_atomic(tmp / "scenario.toml", self.scenario_toml.encode())
            for name in TABLES:
                if self._arrays is not None:
                    table = _arrow_from_arrays(self._arrays[name])
                else:
                    table = pa.Table.from_pandas(self._table(name), preserve_index=False)
                _write_atomic(tmp / f"{name}.parquet", _parquet_bytes(table))
            # summary.json last: its presence marks a complete result directory.
            _write_atomic(tmp / "summary.json", (json.dumps(self.summary, indent=2) + "\n").encode())
            replace_dir(tmp, d)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.path = d
        return d

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<FlowLevelResult {s.get('flows')} flows, mean rate {s.get('mean_rate_bps', 0) / 1e9:.2f} Gb/s, "
            f"congestion rate {s.get('congestion_rate', 0):.4f}>"
        )


def flow_level(
    scenario: ScenarioLike, *, out: str | Path | None = None, max_memory: int | str | None = None
) -> FlowLevelResult:
    """Compute a scenario's flows in the flow-level mode (a :class:`Scenario`,
    a scenario file path or a dict) and return its :class:`FlowLevelResult`;
    with ``out``, also save it there (checked before anything is computed).
    Raises :class:`lbsim.ScenarioError` naming the key for an invalid
    scenario, a balancer other than ECMP, WCMP or FaCa (``lb.kind``), failures
    (the mode has no time; give static rates with ``rate_overrides``), or a
    workload estimated to need more memory than ``max_memory`` (bytes or text
    such as ``"64GiB"``; default 8 GiB), before anything is built."""
    s = as_scenario(scenario)
    limit = memory_bytes(max_memory)
    if out is not None:
        check_out_dir(out)
    try:
        raw = _core.flow_level(s.text, s.overrides, s.base_dir, max_memory=limit)
    except ScenarioError as e:
        raise s._err(e) from None
    result = FlowLevelResult.from_raw(raw)
    if out is not None:
        result.save(out)
    return result


def is_flow_level_dir(path: str | Path) -> bool:
    """Whether ``path`` holds a complete flow-level result."""
    p = Path(path)
    if not is_run_dir(p):
        return False
    try:
        return json.loads((p / "summary.json").read_text()).get("mode") == "flow_level"
    except (OSError, ValueError):
        return False


def load_flow_level(path: str | Path) -> FlowLevelResult:
    """Load a directory written by :func:`flow_level` or ``lbsim flow-level``."""
    p = Path(path)
    if not is_flow_level_dir(p):
        raise LbsimError(f"{p} is not a flow-level result (no summary.json with mode \"flow_level\")")
    return FlowLevelResult(
        scenario_toml=(p / "scenario.toml").read_text(),
        summary=json.loads((p / "summary.json").read_text()),
        path=p,
    )
