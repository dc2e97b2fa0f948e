"""Exceptions lbsim raises for problems a user can fix."""

from __future__ import annotations

__all__ = ["LbsimError", "ScenarioError", "UnitError"]


class LbsimError(Exception):
    """Base class of the errors lbsim reports to users (bad input, missing files)."""


class ScenarioError(LbsimError, ValueError):
    """A scenario is invalid. ``key`` is the dotted key at fault (``"lb.kind"``),
    or ``""`` when the problem is not tied to one key (a TOML syntax error).

    >>> str(ScenarioError("lb.kind", "unknown variant `magic`"))
    'lb.kind: unknown variant `magic`'
    """

    key: str
    message: str

    def __init__(self, key: str, message: str, source: str | None = None) -> None:
        super().__init__(key, message, source)
        self.key = key
        self.message = message
        self.source = source

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{self.key}: {self.message}" if self.key else f"{where}{self.message}"

    def with_source(self, source: str | None) -> ScenarioError:
        """The same error, saying which file (or other source) it came from."""
        return ScenarioError(self.key, self.message, source)


class UnitError(LbsimError, ValueError):
    """A quantity written with a unit ("400Gbps", "8MiB", "20us") that the
    engine's unit parser rejects; the message is the engine's.

    >>> str(UnitError('expected a rate with a unit (Mbps, Gbps, Tbps), such as "400Gbps"; got "fast"'))
    'expected a rate with a unit (Mbps, Gbps, Tbps), such as "400Gbps"; got "fast"'
    """

    message: str

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
