"""Type stubs of the compiled bindings (crates/lbsim-py). Private: use the lbsim package."""

from collections.abc import Callable
from os import PathLike
from typing import Any

__version__: str

def resolve(text: str, overrides: list[tuple[str, str]] = ...) -> str: ...
def validate(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    base_dir: str | PathLike[str] | None = None,
) -> tuple[str, dict[str, Any]]: ...
def run(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    base_dir: str | PathLike[str] | None = None,
    progress: Callable[[float, float, int, int, int], object] | None = None,
    every: int = 65536,
    interval: float = 0.1,
) -> dict[str, Any]: ...
def preset_names() -> list[str]: ...
