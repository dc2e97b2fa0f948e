"""Reports: one self-contained HTML file per run or sweep, for a browser.

- :func:`report`: the report of a run directory, a sweep directory, or a
  folder of run directories (as ``lbsim demo`` writes), written as
  ``report.html`` inside it (or ``out``); returns its path. A sweep's or a
  folder's report links to a report per run, written beside each run.
- :func:`run_report`, :func:`sweep_report`: the same for one kind.
- :func:`result_html`, :func:`sweep_html`: the short HTML summaries Jupyter
  shows for :class:`lbsim.Result` and :class:`lbsim.SweepResult`.

Every plot is drawn by :mod:`lbsim.plot` (one style: the same colour and name
per load balancer, labelled axes with units) and embedded in the page as SVG
(or PNG when large); the sortable tables' script is inlined too, so a report
opens offline and can be sent as one file. A results directory that is empty
or broken raises :class:`lbsim.LbsimError` with one line naming the problem.

>>> import lbsim
>>> lbsim.report.report("results/demo")           # doctest: +SKIP
PosixPath('results/demo/report.html')
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import LbsimError
from ._common import check_run_dir, reading, render

if TYPE_CHECKING:
    from ..results import Result
    from ..sweep import SweepResult

__all__ = ["report", "run_report", "sweep_report", "result_html", "sweep_html", "REPORT_NAME"]

#: The file name a report gets inside the directory it reports on.
REPORT_NAME = "report.html"


def _write(path: Path, html: str) -> Path:
    from ..results import _write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, html.encode("utf-8"))
    return path


def _out(directory: Path, out: str | Path | None) -> Path:
    if out is None:
        return directory / REPORT_NAME
    o = Path(out)
    if o.is_dir() or o.suffix.lower() not in (".html", ".htm"):
        return o / REPORT_NAME
    return o


def _load_run(path: Path) -> Result:
    from ..results import is_run_dir, load

    if not is_run_dir(path):
        raise LbsimError(f"{path} is not a run directory (no summary.json and scenario.toml)")
    check_run_dir(path)
    with reading(path):
        r = load(path)
        # Touch what every report reads, so a broken file fails here, in one line.
        r.params, r.summary["flows"], r.flows, r.messages
    return r


def run_html(r: Result, *, title: str | None = None) -> str:
    """The run report's HTML text."""
    from .run import run_page

    with reading(r.path or Path("run")):
        page = run_page(r, label=title)
    return render("run.html.j2", page=page, kind="run")


def run_report(run: Result | str | Path, out: str | Path | None = None) -> Path:
    """Write a run's report (``report.html`` in its directory unless ``out``
    says otherwise) and return its path. ``run`` is a run directory or a
    :class:`lbsim.Result` (one not saved needs ``out``)."""
    from ..results import Result

    if isinstance(run, Result):
        r = run
        if r.path is None and out is None:
            raise LbsimError("this result was not saved: pass out= (a file or folder for report.html)")
        base = r.path if r.path is not None else Path(".")
    else:
        base = Path(run)
        _check_exists(base)
        r = _load_run(base)
    return _write(_out(base, out), run_html(r))


def sweep_report(path: str | Path, out: str | Path | None = None, *, runs: bool = True) -> Path:
    """Write the report of a sweep directory, or of a folder of run
    directories, and (with ``runs``) each finished run's own report beside
    it, linked from the table (without ``runs``, the run reports already
    there are linked). Returns the report's path."""
    from .sweep import sweep_page

    p = Path(path)
    _check_exists(p)
    target = _out(p, out)
    page = sweep_page(p)
    for pt in page.points:
        if pt.run_dir is not None:
            rp = run_report(pt.run_dir) if runs else pt.run_dir / REPORT_NAME
            if rp.is_file():  # without runs, link the reports already there
                pt.report_href = os.path.relpath(rp, target.parent)
    page.finish()
    return _write(target, render("sweep.html.j2", page=page, kind="sweep"))


def _check_exists(p: Path) -> None:
    if not p.exists():
        raise LbsimError(f"{p} does not exist")
    if not p.is_dir():
        raise LbsimError(f"{p} is not a directory (give a run or sweep directory)")


def report(path: str | Path, out: str | Path | None = None, *, runs: bool = True) -> Path:
    """Write the report of ``path`` and return its file: a run directory gets a
    run report, a sweep directory (``index.parquet``) or a folder of run
    directories a sweep report (and, with ``runs``, one report per run).
    ``out`` is the file to write (or a folder for ``report.html``); by default
    ``report.html`` inside ``path``."""
    from ..results import is_run_dir

    p = Path(path)
    _check_exists(p)
    if is_run_dir(p):
        return run_report(p, out)
    if (p / "index.parquet").is_file():
        return sweep_report(p, out, runs=runs)
    children = [c for c in sorted(p.iterdir()) if c.is_dir()]
    if any(is_run_dir(c) for c in children):
        return sweep_report(p, out, runs=runs)
    if not any(p.iterdir()):
        raise LbsimError(f"{p} is empty: nothing to report (give a run or sweep directory)")
    if (p / "summary.json").exists() or (p / "scenario.toml").exists():
        missing = "scenario.toml" if (p / "summary.json").exists() else "summary.json"
        raise LbsimError(f"{p} is an incomplete run directory (no {missing})")
    if (p / "sweep.json").exists() or (p / "runs").is_dir():
        raise LbsimError(f"{p} is an incomplete sweep directory (no index.parquet)")
    raise LbsimError(f"{p} holds no lbsim results (no summary.json, index.parquet or run directories)")


def result_html(r: Result) -> str:
    """A short HTML summary of a run (what Jupyter shows for a Result)."""
    from .run import run_page_brief

    return render("fragment_run.html.j2", page=run_page_brief(r))


def sweep_html(sw: SweepResult) -> str:
    """A short HTML summary of a sweep (what Jupyter shows for a SweepResult)."""
    from .sweep import sweep_page

    page = sweep_page(sw.path, figures=False)
    page.finish()
    return render("fragment_sweep.html.j2", page=page)
