"""Progress bars (rich): when they show, and what they show."""

from __future__ import annotations

import io
import re

import pytest

import lbsim
from lbsim.progress import CountProgress, RunProgress, wants_progress

from conftest import SMALL

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def frames(text: str) -> list[str]:
    """The bar's successive drawings, colours and cursor moves removed."""
    return [f.strip() for f in ANSI.sub("", text).replace("\r", "\n").splitlines() if f.strip()]


def percents(text: str) -> list[float]:
    return [float(m) for f in frames(text) for m in re.findall(r"(\d+\.\d)%", f)]


def test_wants_progress_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "1")
    assert wants_progress(io.StringIO())
    monkeypatch.setenv("LBSIM_PROGRESS", "0")
    assert not wants_progress(io.StringIO())
    monkeypatch.delenv("LBSIM_PROGRESS")
    assert not wants_progress(io.StringIO())  # not a terminal


def test_run_bar_follows_delivered_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "1")
    monkeypatch.setenv("COLUMNS", "160")  # room for every field
    buf = io.StringIO()
    bar = RunProgress("reps", stream=buf, delay=0.0)
    mib = 1 << 20
    # A permutation: no flow finishes until the end and simulated time is a
    # sliver of the 1 s horizon, but bytes arrive steadily.
    for delivered in (0, 16 * mib, 64 * mib, 100 * mib):
        bar(50.0, 1e6, 1_000_000, 0, 16, delivered, 128 * mib)
        assert bar.fraction == max(delivered / (128 * mib), 50.0 / 1e6)
    # Simulated time against the horizon counts when it is further along.
    bar(900_000.0, 1e6, 2_000_000, 0, 16, 100 * mib, 128 * mib)
    assert bar.fraction == 0.9
    bar.close()
    text = buf.getvalue()
    # Each state once (a redraw repeats the last), in order.
    assert list(dict.fromkeys(percents(text))) == [0.0, 12.5, 50.0, 78.1, 90.0]
    assert "reps" in frames(text)[-1] and "flows 0/16" in frames(text)[-1] and "100.0 MiB of 128.0 MiB" in text
    assert "ev/s" in text and ANSI.sub("", text).endswith("\n")


def test_run_bar_waits_for_its_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "1")
    buf = io.StringIO()
    bar = RunProgress("reps", stream=buf, delay=60.0)
    bar(50.0, 1e6, 1000, 0, 16, 10, 100)
    bar.close()
    assert buf.getvalue() == ""


def test_a_real_run_ends_at_100_percent(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "1")
    monkeypatch.setattr(lbsim.runner, "RunProgress", lambda label: RunProgress(label, delay=0.0))
    s = lbsim.Scenario.from_toml(SMALL).set("workload.size", "4MiB")
    r = lbsim.run(s, label="reps")
    err = capsys.readouterr().err
    assert r.stop_reason == "drained"
    shown = percents(err)
    assert len(shown) >= 2 and shown == sorted(shown) and shown[-1] == 100.0
    assert "64.0 MiB of 64.0 MiB" in frames(err)[-1] and "flows 16/16" in frames(err)[-1]


def test_no_bar_unless_asked(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "0")
    monkeypatch.setattr(lbsim.runner, "RunProgress", lambda label: RunProgress(label, delay=0.0))
    lbsim.run(lbsim.Scenario.from_toml(SMALL))
    assert capsys.readouterr().err == ""


def test_sweep_bar_counts_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBSIM_PROGRESS", "1")
    buf = io.StringIO()
    bar = CountProgress(10, "sweep", stream=buf, delay=0.0)
    bar.update(3)
    bar.update(7, 2)
    bar.close()
    f = frames(buf.getvalue())
    assert any("3/10 runs" in x for x in f)
    assert "7/10 runs, 2 failed" in f[-1] and "eta" in f[-1]
