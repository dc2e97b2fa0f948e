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

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from . import _core
from .errors import LbsimError, ScenarioError, UnitError

# The rest of the public API loads on first use (PEP 562): a sweep worker
# imports lbsim._worker, which needs only the engine, not numpy, pandas, rich
# or the report and plot modules (a tenth of a second per worker start).
if TYPE_CHECKING:
    from . import fct, report, theory, units
    from .flowlevel import FlowLevelResult, flow_level, load_flow_level
    from .results import Result, load
    from .runner import run
    from .scenario import Scenario
    from .sweep import SweepResult, load_sweep, sweep

__version__: str = _core.__version__

#: Public name -> the submodule that defines it (None: the name is a submodule).
_LAZY: dict[str, str | None] = {
    "FlowLevelResult": "flowlevel",
    "flow_level": "flowlevel",
    "load_flow_level": "flowlevel",
    "Result": "results",
    "load": "results",
    "run": "runner",
    "Scenario": "scenario",
    "SweepResult": "sweep",
    "load_sweep": "sweep",
    "sweep": "sweep",
    "fct": None,
    "report": None,
    "theory": None,
    "units": None,
}

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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    where = _LAZY[name]
    if where is None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # Importing the submodule lbsim.sweep binds it on the package, where
        # lbsim.sweep is the function: keep the function (as the eager
        # package did, whose own import bound the function last).
        if name == "sweep" and isinstance(value, types.ModuleType):
            value = value.sweep
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
