"""Traces, collectives and slowdown statistics through the Python API."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import lbsim
from lbsim.fct import slowdown_by_bdp, slowdown_by_size
from lbsim.plot import group
from lbsim.plot.slowdown import collective_bars, slowdown_cdf, slowdown_figure

TREE = 'preset = "reps_artifact"\n[topology]\nhosts = 32\nradix = 8\n'
TRACE = TREE + '[workload]\nkind = "trace"\ncdf = "alistorage2019"\nload = 0.7\nduration = "200us"\nwarmup = "20us"\n'


@pytest.fixture(scope="module")
def trace_runs() -> list[lbsim.Result]:
    s = lbsim.Scenario.from_toml(TRACE)
    return [lbsim.run(s.set("lb.kind", lb), progress=False) for lb in ("ecmp", "reps")]


def test_bucket_statistics_agree_with_the_flow_table(trace_runs: list[lbsim.Result]) -> None:
    r = trace_runs[1]
    f = r.flows
    t = slowdown_by_size(r)
    m = f[f["measured"]].sort_values("size_bytes", kind="stable").reset_index(drop=True)
    assert len(m) > 100 and int(t["flows"].sum()) == len(m)
    assert not f["measured"].all(), "warm-up flows are left out"
    edges = [len(m) * i // 20 for i in range(21)]
    for i, row in t.iterrows():
        part = m.iloc[edges[i] : edges[i + 1]]
        s = np.sort(part["slowdown"].to_numpy())
        assert row["flows"] == len(part)
        assert row["max_size_bytes"] == part["size_bytes"].max()
        assert row["mean"] == pytest.approx(part["slowdown"].mean())
        # Nearest rank: the ceil(n·p/100)-th smallest.
        for col, p in (("p50", 50), ("p99", 99), ("p999", 99.9)):
            assert row[col] == s[max(math.ceil(len(s) * p / 100), 1) - 1]
    assert (t["p99"] >= t["p50"]).all() and (t["mean"] >= 1).all()
    b = slowdown_by_bdp(r)
    bdp = r.summary["bdp_bytes"]
    assert list(b["flows"]) == [int((m["size_bytes"] < bdp).sum()), int((m["size_bytes"] >= bdp).sum())]
    assert b.loc[1, "mean"] == pytest.approx(m.loc[m["size_bytes"] >= bdp, "slowdown"].mean())
    assert r.summary["measured_flows"] == len(m)
    assert r.summary["mean_slowdown"] == pytest.approx(m["slowdown"].mean())


def test_slowdown_plots(trace_runs: list[lbsim.Result], tmp_path: Path) -> None:
    g = group(trace_runs)
    written = slowdown_figure(g, tmp_path / "buckets")
    assert [p.name for p in written] == ["buckets.png", "buckets.pdf"]
    fig = slowdown_cdf(g)
    assert len(fig.axes[0].lines) == 2


def test_collective_steps_table_and_bars(tmp_path: Path) -> None:
    s = lbsim.Scenario.from_toml(TREE + '[workload]\nkind = "ring_allreduce"\nsize = "1MiB"\n')
    r = lbsim.run(s, progress=False)
    steps = r.steps
    assert list(steps["step"]) == list(range(62))
    assert (steps["flows"] == 32).all()
    # Consecutive steps overlap only through dependencies: each starts after the previous one began.
    assert (np.diff(steps["start_us"]) > 0).all()
    total = steps["end_us"].max() - steps["start_us"].min()
    assert r.summary["collective_us"] == pytest.approx(total)
    r.save(tmp_path / "run")
    again = lbsim.load(tmp_path / "run")
    assert again.steps.equals(steps)
    fig = collective_bars(group([r]))
    assert len(fig.axes[0].patches) == 1
    with pytest.raises(lbsim.LbsimError, match="not a collective"):
        lbsim.run(lbsim.Scenario.from_toml(TREE), progress=False).steps


def test_quick_trace_reproduction_orders_per_packet_ahead_of_ecmp(tmp_path: Path) -> None:
    """REPS §4.3.1 on WebSearch: per-packet spraying beats per-flow ECMP at every load
    (the quick version: 32 hosts, 300 µs of arrivals)."""
    import pandas as pd

    from lbsim.reproduce import reproduce

    repo = Path(__file__).resolve().parents[2]
    d = reproduce("reps-fig02-traces", out=tmp_path, scenarios=repo / "scenarios", progress=False,
                  log=lambda _: None, quick=True)
    assert d.name == "reps-fig02-traces-quick"
    t = pd.read_csv(d / "summary.csv").set_index("variant")
    for load in (0.4, 0.6, 0.8, 1.0):
        ecmp = t.loc[f"{load}/ecmp", "mean_slowdown"]
        for lb in ("ops", "reps"):
            assert t.loc[f"{load}/{lb}", "mean_slowdown"] < ecmp, (load, lb)
    assert (t["unfinished"] == 0).all()
    assert (d / "reps-fig02-traces.png").is_file() and (d / "reps-fig02-traces-buckets.png").is_file()
