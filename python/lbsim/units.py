"""Quantities written with their unit, as scenario files write them: times
("500ns", "20us"), rates ("400Gbps") and amounts of data ("8MiB", "101pkt",
"1.5bdp", "20%"). Parsed by the engine's own parser
(``lbsim_core::scenario::units``), so Python reads every unit exactly as a
scenario does; a bad one raises :class:`lbsim.errors.UnitError` with the
engine's message.

>>> parse_rate("400Gbps")
400000000000
>>> parse_time("20us"), parse_time_us("1.5ms")
(20000000, 1500.0)
>>> parse_bytes("8MiB"), parse_amount("1.5bdp")
(8388608, ('bdp', 1.5))
"""

from __future__ import annotations

from . import _core
from .errors import UnitError

__all__ = ["parse_time", "parse_time_us", "parse_rate", "parse_amount", "parse_bytes"]


def parse_time(text: str) -> int:
    """A time in integer picoseconds (the engine's clock): ``"20us"`` -> 20_000_000."""
    return _core.parse_time(text)


def parse_time_us(text: str) -> float:
    """A time in microseconds, the unit of every time in lbsim's tables: ``"1.5ms"`` -> 1500.0."""
    return _core.parse_time(text) / 1e6


def parse_rate(text: str) -> int:
    """A rate in integer bits per second: ``"400Gbps"`` -> 400_000_000_000."""
    return _core.parse_rate(text)


def parse_amount(text: str) -> tuple[str, int | float]:
    """An amount of data as ``(kind, value)``: ``("bytes", int)`` for ``"8MiB"``,
    ``"4096B"`` or ``"4096"``; ``("pkt", float)`` for ``"101pkt"`` (full packets);
    ``("bdp", float)`` for ``"1.5bdp"``; ``("percent", float)`` for ``"20%"``.
    Packets and BDPs become bytes only within a scenario (its MTU and BDP)."""
    return _core.parse_amount(text)


def parse_bytes(text: str) -> int:
    """An amount written in bytes (``"8MiB"``, ``"64KB"``, ``"4096"``) as an int;
    raises :class:`UnitError` for packets, BDPs and percentages, which are
    bytes only within a scenario."""
    kind, value = _core.parse_amount(text)
    if kind != "bytes":
        raise UnitError(f'expected an amount in bytes such as "8MiB"; got "{text}" ({kind})')
    return int(value)
