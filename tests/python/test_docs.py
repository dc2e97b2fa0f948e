"""The documentation site builds with ``mkdocs build --strict`` (a broken link,
a page left out of the navigation or an unreadable docstring fails it), and
holds what it should: every page of docs/, every reproduction's plot, the API
reference from the docstrings."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_docs_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "WARNING" not in p.stderr, p.stderr
    assert not (site / "griffe_lbsim.py").exists()  # a build helper, not a page
    # Every Markdown page of docs/ is a page of the site.
    for md in (REPO / "docs").rglob("*.md"):
        rel = md.relative_to(REPO / "docs")
        html = rel.with_name("index.html") if rel.name == "README.md" else rel.with_suffix(".html")
        assert (site / html).is_file(), html
    # Every image a page shows is in the site, and each reproduction shows its plot.
    for page in site.rglob("*.html"):
        for src in re.findall(r'<img[^>]+src="([^"]+)"', page.read_text()):
            if not src.startswith(("data:", "http")):
                assert (page.parent / src).resolve().is_file(), (page, src)
    for rel in (REPO / "docs" / "reproductions").glob("reps-*.md"):
        page = (site / "reproductions" / rel.name).with_suffix(".html").read_text()
        assert re.search(r'<img[^>]+src="\.\./img/[^"]+\.png"', page), rel.name
    # The API reference comes from the docstrings, doctests as code and roles as code.
    api = (site / "api.html").read_text()
    for text in ("Write the report of", "Run a scenario", "One run's results", "nearest rank"):
        assert text in api, text
    assert '<span class="gp">&gt;&gt;&gt;' in api and ":class:" not in api and "doctest: +SKIP" not in api
