"""Type stubs of the compiled bindings (crates/lbsim-py). Private: use the lbsim package."""

from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str
git_commit: str

def resolve(text: str, overrides: list[tuple[str, str]] = ...) -> str: ...
def validate(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    base_dir: str | PathLike[str] | None = None,
    max_memory: int | None = None,
) -> tuple[str, dict[str, Any]]: ...
def run(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    base_dir: str | PathLike[str] | None = None,
    # progress(now_us, stop_at_us, events, flows_done, flows, delivered_bytes, total_bytes)
    progress: Callable[[float, float, int, int, int, int, int], object] | None = None,
    every: int = 65536,
    interval: float = 0.1,
    max_memory: int | None = None,
) -> dict[str, Any]: ...

# The flow-level mode: {"scenario_toml", "summary_json", "tables": {"flows", "ports"}}
# (tables as run's: [(column, numpy dtype, data)]); bad input raises lbsim.ScenarioError.
def flow_level(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    base_dir: str | PathLike[str] | None = None,
    max_memory: int | None = None,
) -> dict[str, Any]: ...
def preset_names() -> list[str]: ...
def table_names() -> list[str]: ...
def foreign_entry(path: str | PathLike[str]) -> str | None: ...
def builtin_cdfs() -> list[str]: ...
def load_balancers() -> list[dict[str, str]]: ...

# The engine's unit parsers; bad text raises lbsim.errors.UnitError.
def parse_time(text: str) -> int: ...
def parse_rate(text: str) -> int: ...
def parse_amount(text: str) -> tuple[str, int | float]: ...

# The engine's nearest-rank percentile, one per p (in [0, 100]); NaNs left out.
def percentile(values: npt.NDArray[np.float64] | Sequence[float], ps: Sequence[float]) -> list[float]: ...

# Balls-into-bins models of REPS §5 and App. B-D (lbsim.theory). Bad
# arguments raise ValueError("param: message").
def theory_defaults(n: int) -> tuple[int, int]: ...
def theory_phase_two_start(n: int) -> list[int]: ...
def theory_ops(n: int, lam: float, steps: int, seed: int, record_loads: bool = False) -> dict[str, Any]: ...
def theory_recycled(
    n: int,
    tau: int,
    b: int,
    steps: int,
    seed: int,
    ack_every: int = 1,
    schedule: str = "immediate",
    initial_loads: list[int] | None = None,
    record_loads: bool = False,
) -> dict[str, Any]: ...
def theory_recycled_summaries(
    n: int,
    tau: int,
    b: int,
    steps: int,
    seeds: list[int],
    ack_every: int = 1,
    schedule: str = "immediate",
    initial_loads: list[int] | None = None,
) -> list[dict[str, Any]]: ...
def theory_evs(uplinks: int, flows: int, evs: int, seeds: list[int]) -> list[tuple[int, int, float, float]]: ...
