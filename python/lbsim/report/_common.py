"""What run and sweep reports share: number formatting, figures as data URIs,
the Jinja2 environment, and reading result files with one-line errors."""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import math
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import LbsimError

if TYPE_CHECKING:
    import jinja2
    from matplotlib.figure import Figure as MplFigure

T = TypeVar("T")

#: An SVG larger than this (a CDF of a million flows) is embedded as a PNG instead.
MAX_SVG_BYTES = 1_500_000
PNG_DPI = 160


# ---- numbers ---------------------------------------------------------------


def is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def num(v: Any, decimals: int | None = None) -> str:
    """A number as a report shows it: ``–`` when missing, integers with
    thousands separators, floats with ``decimals`` places (default: three
    places from 1 to 1000, one above, at least three significant digits below 1)."""
    import numbers

    import numpy as np

    if is_missing(v):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return f"{int(v):,}"
    if not isinstance(v, numbers.Real):
        return str(v)
    f = float(v)
    if math.isnan(f):
        return "–"
    if math.isinf(f):
        return "∞" if f > 0 else "−∞"
    if decimals is None:
        a = abs(f)
        if a == 0:
            return "0"
        if a >= 1000:
            decimals = 1
        elif a >= 1:
            decimals = 3
        else:
            decimals = max(3, 2 - int(math.floor(math.log10(a))))
    return f"{f:,.{decimals}f}"


def json_value(v: Any) -> str:
    """A value as JSON text, for ``data-value`` attributes tests and scripts read."""
    if isinstance(v, float) and math.isnan(v):
        return "null"
    return json.dumps(v)


def sort_key(v: Any) -> str:
    """A table cell's ``data-sort`` value: numbers as numbers, missing last."""
    if is_missing(v):
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        return repr(float(v))
    return str(v)


def now_text() -> str:
    return _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


# ---- figures ---------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A figure ready for a page: an image as a data URI, a title and a caption."""

    id: str
    title: str
    caption: str
    uri: str
    size: str = "wide"  # "single" (one paper column) or "wide"
    alt: str = ""


def encode(fig: MplFigure) -> str:
    """A matplotlib figure as a ``data:`` URI: SVG (text drawn as paths, so no
    font is needed to view it), or PNG when the SVG would be large. Closes the figure."""
    from typing import cast

    import matplotlib
    import matplotlib.pyplot as plt

    from ..plot import style

    rc = {**style.RC, "svg.fonttype": "path", "svg.hashsalt": "lbsim"}
    try:
        with matplotlib.rc_context(cast(Any, rc)):
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            data = buf.getvalue()
            if len(data) <= MAX_SVG_BYTES:
                return "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": "lbsim"})
            return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    finally:
        plt.close(fig)


@dataclass
class Notes:
    """Things a report could not show, and why (said on the page, not hidden)."""

    items: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.items.append(text)


def figure(
    notes: Notes, id: str, title: str, caption: str, draw: Callable[[], MplFigure], size: str = "wide"
) -> Figure | None:
    """Draw a figure; a plotting problem becomes a note on the page rather
    than a failed report."""
    try:
        fig = draw()
    except LbsimError as e:
        notes.add(f"{title}: {e}")
        return None
    return Figure(id=id, title=title, caption=caption, uri=encode(fig), size=size, alt=title)


# ---- files -----------------------------------------------------------------


def one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn a broken result file into one :class:`LbsimError` line naming it."""
    try:
        yield
    except LbsimError:
        raise
    except FileNotFoundError as e:
        raise LbsimError(f"{path}: missing {Path(e.filename).name if e.filename else 'file'}") from None
    except (OSError, ValueError, KeyError, TypeError, tomllib.TOMLDecodeError) as e:
        what = f"missing key {e}" if isinstance(e, KeyError) else one_line(str(e)) or type(e).__name__
        raise LbsimError(f"{path}: cannot read results ({what})") from None
    except Exception as e:  # noqa: BLE001 - pyarrow's errors are not all ValueErrors
        if type(e).__module__.startswith("pyarrow"):
            raise LbsimError(f"{path}: cannot read results ({one_line(str(e))})") from None
        raise


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except FileNotFoundError:
        raise LbsimError(f"{path}: missing") from None
    except ValueError as e:
        raise LbsimError(f"{path}: not valid JSON ({one_line(str(e))})") from None
    if not isinstance(value, dict):
        raise LbsimError(f"{path}: expected a JSON object")
    return value


#: What a run's summary.json must hold for a report.
SUMMARY_KEYS = ("flows", "finished_flows", "unfinished_flows", "max_fct_us", "mean_fct_us", "p99_fct_us")


def check_run_dir(path: Path) -> None:
    """Raise one clear :class:`LbsimError` line when a run directory lacks a
    file a report needs, or one of them cannot be parsed."""
    for name in ("scenario.toml", "summary.json", "flows.parquet"):
        if not (path / name).is_file():
            raise LbsimError(f"{path}: missing {name} (an incomplete run directory)")
    s = read_json(path / "summary.json")
    missing = [k for k in SUMMARY_KEYS if k not in s]
    if missing:
        raise LbsimError(f"{path / 'summary.json'}: missing {', '.join(missing)} (not a summary lbsim wrote)")
    try:
        tomllib.loads((path / "scenario.toml").read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise LbsimError(f"{path / 'scenario.toml'}: not valid TOML ({one_line(str(e))})") from None
    if (path / "run.json").is_file():
        read_json(path / "run.json")


def lookup(params: Mapping[str, Any], key: str, default: Any = None) -> Any:
    node: Any = params
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


# ---- templates -------------------------------------------------------------

_ENV: jinja2.Environment | None = None


def env() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        import jinja2

        e = jinja2.Environment(
            loader=jinja2.PackageLoader("lbsim.report", "templates"),
            autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
            trim_blocks=True,
            lstrip_blocks=True,
            undefined=jinja2.StrictUndefined,
        )
        e.filters["num"] = num
        e.filters["json_value"] = json_value
        e.filters["sort_key"] = sort_key
        _ENV = e
    return _ENV


def render(template: str, **context: Any) -> str:
    from .. import __version__

    return env().get_template(template).render(version=__version__, generated=now_text(), **context)


def lb_color(name: str) -> str:
    from ..plot import style

    return style.color(name)


def lb_label(name: str) -> str:
    from ..plot import style

    return style.label(name)


# ---- tables ----------------------------------------------------------------


@dataclass
class Cell:
    """A table cell: its text, the value it sorts by, and optionally a link,
    a CSS class, a tooltip and ``data-*`` attributes."""

    text: str
    sort: str = ""
    href: str | None = None
    cls: str = ""
    title: str = ""
    data: dict[str, str] = field(default_factory=dict)
    swatch: str | None = None  # a colour shown before the text (a load balancer's)


def cell(v: Any, decimals: int | None = None, **kw: Any) -> Cell:
    """A cell showing a value (a number, formatted by :func:`num`, or text)."""
    return Cell(text=num(v, decimals) if not isinstance(v, str) else v, sort=sort_key(v), **kw)


@dataclass
class Column:
    name: str
    numeric: bool = True
    title: str = ""


@dataclass
class Table:
    id: str
    columns: list[Column]
    rows: list[list[Cell]]
    caption: str = ""
    sortable: bool = False
    row_data: list[dict[str, str]] = field(default_factory=list)  # data-* per row


@dataclass
class Section:
    """A part of a page: a heading, an introduction and blocks (figures, tables, text)."""

    id: str
    title: str
    intro: str = ""
    blocks: list[Any] = field(default_factory=list)


@dataclass
class Text:
    text: str
    pre: bool = False
