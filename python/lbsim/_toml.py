"""Python values as TOML value text, the form the core takes for overrides."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["value_text", "dumps"]


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string (same escapes).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_key(k)} = {_literal(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def _key(k: object) -> str:
    text = str(k)
    if text and all(c.isalnum() or c in "-_" for c in text):
        return text
    return json.dumps(text)


def value_text(value: Any) -> str:
    """The text of an override value.

    Strings pass through unchanged and are read the way the command line reads
    ``--set key=value``: as TOML if they parse as a TOML value (``"3"`` is the
    integer 3, ``"true"`` a boolean), otherwise as a bare string (``"reps"``,
    ``"8MiB"``). Other values are written as TOML literals.
    """
    if isinstance(value, str):
        return value
    return _literal(value)


def dumps(table: Mapping[str, Any]) -> str:
    """A mapping as a TOML document (nested tables written inline, one key per line)."""
    return "".join(f"{_key(k)} = {_literal(v)}\n" for k, v in table.items())
