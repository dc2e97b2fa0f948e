"""The one plotting style of lbsim: colours and names per load balancer, figure
sizes, fonts, and saving as PNG and PDF. Every lbsim plot goes through here.

>>> from lbsim.plot import style
>>> fig, ax = style.figure()                       # doctest: +SKIP
>>> ax.plot(x, y, color=style.color("reps"), label=style.label("reps"))  # doctest: +SKIP
>>> style.save(fig, "out/my_plot")                 # writes my_plot.png and my_plot.pdf  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import matplotlib

if os.environ.get("MPLBACKEND") is None:
    matplotlib.use("Agg")

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["RC", "ORDER", "context", "color", "label", "sort_labels", "figure", "save", "FORMATS"]

#: matplotlib settings applied to every lbsim figure.
RC: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.6,
    "legend.frameon": False,
    "savefig.bbox": "tight",
    "savefig.dpi": 200,
    "pdf.fonttype": 42,  # TrueType in PDFs, editable and accepted by paper templates
    "ps.fonttype": 42,
}

def _registry() -> list[dict[str, str]]:
    from .._core import load_balancers

    return load_balancers()


#: Known load balancers, in the order plots list them: the engine's registry
#: (``lbsim_core::lb::REGISTRY``, each balancer's own file gives its name,
#: label and colour), then the ideal.
ORDER: tuple[str, ...] = tuple(b["name"] for b in _registry()) + ("ideal",)

_COLORS = {b["name"]: b["color"] for b in _registry()} | {"ideal": "#2ca02c"}  # green
_CYCLE = ("#dbdb8d", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94")
_NAMES = {b["name"]: b["label"] for b in _registry()} | {"ideal": "ideal"}

#: Sizes in inches: one column and two columns of a two-column paper.
SIZES = {"single": (3.4, 2.4), "wide": (7.0, 2.6)}
FORMATS: tuple[str, ...] = ("png", "pdf")


def color(name: str) -> str:
    """The colour of a load balancer (or any other series name, stably)."""
    key = name.lower()
    if key in _COLORS:
        return _COLORS[key]
    return _CYCLE[sum(key.encode()) % len(_CYCLE)]


def label(name: str) -> str:
    """The display name of a load balancer: ``"reps"`` -> ``"REPS"``."""
    return _NAMES.get(name.lower(), name)


def sort_labels(names: Sequence[str]) -> list[str]:
    """Known load balancers first in :data:`ORDER`, then the rest alphabetically."""
    known = [n for n in ORDER if n in names]
    return known + sorted(n for n in names if n not in ORDER)


def context() -> Any:
    """A context in which matplotlib uses :data:`RC`; draw a whole figure in it::

        with style.context():
            fig, ax = style.figure()
            ...
            style.save(fig, "out/plot")
    """
    return matplotlib.rc_context(cast(Any, RC))


def figure(size: str = "single", ncols: int = 1) -> tuple[Figure, Any]:
    """A new figure in the lbsim style: ``size`` is ``"single"`` (one paper
    column) or ``"wide"`` (two columns). Returns ``(fig, ax)`` or, with
    ``ncols > 1``, ``(fig, axes)``. Call inside :func:`context`."""
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(cast(Any, RC)):
        fig, ax = plt.subplots(1, ncols, figsize=SIZES[size], layout="constrained")
    return fig, ax


def legend(ax: Any, **kwargs: Any) -> None:
    """A legend on ``ax`` (an axes or a figure) when something on it has a
    label; an empty run draws no line, and asking matplotlib for a legend of
    nothing only warns."""
    axes = ax.get_axes() if hasattr(ax, "get_axes") else [ax]
    if any(not h.get_label().startswith("_") for a in axes for h in a.get_legend_handles_labels()[0]):
        ax.legend(**kwargs)


def apply(ax: Axes) -> None:
    """Style an axes created outside :func:`figure`."""
    ax.grid(True, alpha=RC["grid.alpha"], linewidth=RC["grid.linewidth"])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def save(fig: Figure, stem: str | Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.pdf`` (creating folders), close it,
    and return the paths written."""
    import matplotlib.pyplot as plt

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    with matplotlib.rc_context(cast(Any, RC)):
        for fmt in formats:
            p = stem.with_name(f"{stem.name}.{fmt}")
            fig.savefig(p, format=fmt, metadata={"Software": "lbsim"} if fmt == "png" else None)
            paths.append(p)
    plt.close(fig)
    return paths
