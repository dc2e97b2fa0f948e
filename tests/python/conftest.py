"""Shared fixtures: small scenarios (16 hosts) so the suite runs in a couple of
minutes on two cores, and a way to call the installed ``lbsim`` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SMALL = """\
name = "small"
seed = 1
[topology]
hosts = 16
[lb]
kind = "reps"
[workload]
kind = "permutation"
size = "256KiB"
"""


def lbsim_command() -> list[str]:
    """The console script next to this interpreter, else ``python -m lbsim``."""
    exe = Path(sys.executable).parent / "lbsim"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("lbsim")
    return [found] if found else [sys.executable, "-m", "lbsim"]


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


@pytest.fixture
def cli(tmp_path: Path):
    """Run ``lbsim ARGS`` in tmp_path; returns the CompletedProcess."""

    def call(*args: str, timeout: float = 300, check: bool = False) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, LBSIM_PROGRESS="0")
        p = subprocess.run(
            [*lbsim_command(), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
        if check and p.returncode != 0:
            raise AssertionError(f"lbsim {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    return call


def table_rows(text: str) -> list[list[str]]:
    """The rows of the tables ``lbsim`` prints (rich, piped): cells are
    separated by two spaces or more; rules and blank lines are left out."""
    import re

    rows = []
    for line in text.splitlines():
        if not line.strip() or set(line.strip()) <= set("─━-"):
            continue
        rows.append(re.split(r"\s{2,}", line.rstrip()))
    return rows


def kv_table(text: str) -> dict[str, str]:
    """A printed two-column table (name, value) as a dict."""
    return {r[0]: r[1] for r in table_rows(text) if len(r) == 2}


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (the system's, through Playwright) for the session;
    fails, saying how to install it, when there is none."""
    from browser import Browser

    b = Browser()
    yield b
    b.close()
