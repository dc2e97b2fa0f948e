"""Tables the ``lbsim`` command prints, drawn by ``rich`` (the library of the
progress bars). On a terminal they fit its width; piped, rich writes them
without colours and wide enough that no cell wraps, one row per line with
columns separated by spaces, so ``grep`` and ``split()`` still work."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["console", "table", "kv_table", "frame_table", "render", "fmt"]

#: The width of a console that is not a terminal: wide enough for every lbsim table.
PIPE_WIDTH = 240


def console(file: TextIO | None = None) -> Console:
    """A console on ``file`` (stdout by default) that prints text as given (no markup)."""
    c = Console(file=file, highlight=False, markup=False, emoji=False)
    if not c.is_terminal:
        c.width = PIPE_WIDTH
    return c


def table(*columns: str, title: str | None = None, numeric: bool = True) -> Table:
    """An empty table with a header: the first column left-aligned, the others
    right-aligned (numbers), or left-aligned too without ``numeric``."""
    t = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title=title, title_justify="left", header_style="bold"
    )
    for i, name in enumerate(columns):
        t.add_column(name, justify="right" if i > 0 and numeric else "left")
    return t


def kv_table(rows: Iterable[tuple[str, str]], title: str | None = None) -> Table:
    """A two-column table of names and values, without a header."""
    t = Table(box=box.SIMPLE, show_edge=False, show_header=False, pad_edge=False, title=title, title_justify="left")
    t.add_column("what", justify="left")
    t.add_column("value", justify="left")
    for k, v in rows:
        t.add_row(k, v)
    return t


def fmt(v: Any, spec: str = "") -> str:
    """``v`` formatted with ``spec``; ``-`` for a missing value (None or NaN)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def frame_table(df: pd.DataFrame, float_spec: str = ".4g", title: str | None = None) -> Table:
    """A DataFrame as a table (no index): floats with ``float_spec``, missing values as ``-``."""
    import pandas as pd

    def cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return fmt(float(v), float_spec)
        if v is None or v is pd.NA:
            return "-"
        return str(v)

    t = table(*(str(c) for c in df.columns), title=title)
    for row in df.itertuples(index=False):
        t.add_row(*(cell(v) for v in row))
    return t


def render(t: Table) -> str:
    """A table as plain text (no colours), as it prints when piped."""
    buf = io.StringIO()
    Console(file=buf, width=PIPE_WIDTH, highlight=False, markup=False, emoji=False, color_system=None).print(t)
    return buf.getvalue().rstrip("\n")
