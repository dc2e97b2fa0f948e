"""Python values as TOML, written by tomli-w: whole documents (:func:`dumps`)
and the value text the core takes for overrides (:func:`value_text`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import tomli_w

__all__ = ["value_text", "literal", "dumps"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _scalar(value: Any) -> str:
    """One value on its own as tomli-w writes it (``v = <text>``)."""
    doc = tomli_w.dumps({"v": value})
    if not doc.startswith("v = ") or not doc.endswith("\n") or doc.count("\n") != 1:
        raise TypeError(f"cannot write {type(value).__name__} value {value!r} as a TOML value")
    return doc[len("v = ") : -1]


def _key(k: object) -> str:
    if not isinstance(k, str):
        raise TypeError(f"TOML keys are strings, got {type(k).__name__} {k!r}")
    return k if _BARE_KEY.fullmatch(k) else _scalar(k)


def literal(value: Any) -> str:
    """``value`` as TOML value text, on one line: strings quoted (``"reps"``
    -> ``'"reps"'``), tables inline (``{ a = 1 }``), arrays inline. Scalars
    (strings, numbers, booleans, dates) are written by tomli-w; arrays and
    tables are put together from them, so they stay values even where tomli-w
    would write a ``[table]`` section."""
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(k)} = {literal(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return _scalar(value)


def value_text(value: Any) -> str:
    """The text of an override value.

    Strings pass through unchanged and are read the way the command line reads
    ``--set key=value``: as TOML if they parse as a TOML value (``"3"`` is the
    integer 3, ``"true"`` a boolean), otherwise as a bare string (``"reps"``,
    ``"8MiB"``). Other values are written as TOML literals (:func:`literal`).
    """
    if isinstance(value, str):
        return value
    return literal(value)


def dumps(table: Mapping[str, Any]) -> str:
    """A mapping as a TOML document (tomli-w)."""
    return tomli_w.dumps(table)
