"""lbsim: a packet-level datacenter network simulator for load-balancing research.

>>> import lbsim
>>> s = lbsim.Scenario.load("scenarios/examples/permutation_128.toml")  # doctest: +SKIP
>>> r = lbsim.run(s.set("lb.kind", "reps"))                            # doctest: +SKIP
>>> r.summary["max_fct_us"], r.flows["fct_us"].mean()                  # doctest: +SKIP

The engine is Rust (``lbsim-core``); this package parses nothing itself: it
hands scenarios to the engine, and turns results into pandas tables, Parquet
files and plots.
"""

from __future__ import annotations

from . import _core, fct, report, theory, units
from .errors import LbsimError, ScenarioError, UnitError
from .flowlevel import FlowLevelResult, flow_level, load_flow_level
from .results import Result, load
from .runner import run
from .scenario import Scenario
from .sweep import SweepResult, load_sweep, sweep

__version__: str = _core.__version__

__all__ = [
    "FlowLevelResult",
    "LbsimError",
    "Result",
    "Scenario",
    "ScenarioError",
    "fct",
    "flow_level",
    "SweepResult",
    "__version__",
    "load",
    "load_flow_level",
    "load_sweep",
    "report",
    "run",
    "sweep",
    "theory",
    "UnitError",
    "units",
]
