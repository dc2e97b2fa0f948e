"""The example notebook runs top to bottom (nbclient, a real Jupyter kernel),
and Jupyter shows lbsim's results as HTML in it."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

NOTEBOOK = REPO / "examples" / "sweep.ipynb"


def test_example_notebook_runs(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "data" in o and "text/html" in o["data"]]
    # The sweep, as Jupyter shows it: one row per point.
    sweep_html = next(h for h in html if 'data-report="sweep-brief"' in h)
    assert len(re.findall(r"<tr data-status=\"done\"", sweep_html)) == 9
    assert "completed the workload fastest" in sweep_html
    # The one run, as Jupyter shows it.
    assert any('data-report="run-brief"' in h for h in html)
    # The two plots are images.
    assert sum(1 for o in outputs if "data" in o and "image/png" in o["data"]) == 2
    # The report it wrote, whose path it printed.
    report = tmp_path / "results" / "notebook-sweep" / "report.html"
    assert report.is_file() and report.stat().st_size > 50_000
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "results/notebook-sweep/report.html" in printed
