"""Failures, time series and figure reproduction through the Python API."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import lbsim
from lbsim.plot.timeseries import timeseries_figure
from lbsim.reproduce import FIGURES, reproduce

#: 32 hosts, 2 tiers, radix 8: 8 ToRs of 4 hosts and 4 uplinks.
TREE = 'preset = "reps_artifact"\n[topology]\nhosts = 32\nradix = 8\n'


def test_port_series_counts_every_byte_a_lone_flow_sends(tmp_path: Path) -> None:
    size = 1_000_000
    (tmp_path / "one.csv").write_text(f"src,dst,size_bytes,start_us\n0,31,{size},0\n")
    s = lbsim.Scenario.from_toml(
        TREE + '[workload]\nkind = "flows"\nfile = "one.csv"\n[observe]\nports = ["h0->t0_0"]\nbucket = "1us"\n',
        base_dir=tmp_path,
    )
    r = lbsim.run(s, progress=False)
    p = r.ports
    payload, header = 4150 - 64, 64  # artifact preset: 4150 B packets, 64 B header
    packets = -(-size // payload)
    assert int(p["tx_bytes"].sum()) == size + packets * header
    # Back to back at line rate: every full bucket carries 400 Gbps (one packet's worth of rounding).
    last = p.loc[p["tx_bytes"] > 0, "time_us"].max()
    full = p[(p["time_us"] > 2) & (p["time_us"] < last)]
    assert len(full) > 10
    assert full["gbps"].between(400 - 4150 * 8 / 1e3, 400 + 4150 * 8 / 1e3).all()
    assert (p["rate_gbps"] == 400).all() and p["up"].all()


def test_failure_tables_round_trip_and_missing_tables_say_why(tmp_path: Path) -> None:
    s = lbsim.Scenario.from_toml(
        TREE
        + '[lb]\nkind = "ops"\n[workload]\nkind = "permutation"\nsize = "1MiB"\n'
        + '[observe]\nports = ["t0_0"]\ndrops = true\nrtt = true\nbucket = "5us"\nport_totals = true\n'
        + '[[failures]]\nlinks = "tor_uplinks"\nof = "t0_0"\ncount = 2\nat = "10us"\nduration = "30us"\n'
    )
    r = lbsim.run(s, progress=False, out=tmp_path / "run")
    assert set(r.table_names) == {"flows", "ports", "drops_series", "rtt", "failures", "port_totals"}
    f = r.failures
    assert len(f) == 2 and set(f["kind"]) == {"down"} and (f["start_us"] == 10).all()
    assert int(r.drops_series["failure"].sum()) == r.summary["drops"]["failure"] > 0
    assert len(r.rtt) > 0 and (r.rtt["rtt_us"] > 0).all()
    # Per port at the end: the queues' drops are the run's congestion drops; the sampled uplinks sent what they sampled.
    t = r.port_totals
    assert int(t["drops"].sum()) == r.summary["drops"]["congestion"]
    sampled = t[t["port"].isin(r.ports["port"].unique())]
    assert len(sampled) == 4 and int(sampled["tx_bytes"].sum()) == int(r.ports["tx_bytes"].sum())
    # A failed uplink is marked down in the samples of its failure window.
    down = r.ports.merge(f, left_on="port", right_on="link")
    inside = down[(down["time_us"] > 15) & (down["time_us"] < 40)]
    assert len(inside) and not inside["up"].any()
    back = lbsim.load(tmp_path / "run")
    assert set(back.table_names) == set(r.table_names)
    pd.testing.assert_frame_equal(back.ports, r.ports)
    pd.testing.assert_frame_equal(back.failures, r.failures)
    pd.testing.assert_frame_equal(back.port_totals, r.port_totals)
    plain = lbsim.run(lbsim.Scenario.from_toml(TREE), progress=False)
    with pytest.raises(lbsim.LbsimError, match="observe.ports"):
        plain.ports
    with pytest.raises(lbsim.LbsimError, match="observe.port_totals"):
        plain.port_totals


def test_mixed_flows_report_their_balancer() -> None:
    s = lbsim.Scenario.from_toml(TREE + '[workload]\nkind = "permutation"\nsize = "256KiB"\n')
    s.set("lb.mix", '[{kind = "ecmp", fraction = 0.5}]')
    f = lbsim.run(s, progress=False).flows
    assert (f["lb"] == "ecmp").sum() == 16 and (f["lb"] == "reps").sum() == 16


def test_bad_failure_names_its_key() -> None:
    s = lbsim.Scenario.from_toml(TREE + '[[failures]]\nlink = "t0_0->t5_5"\n')
    with pytest.raises(lbsim.ScenarioError) as e:
        s.validate()
    assert e.value.key == "failures[0].link"


def test_timeseries_figure_draws_each_run(tmp_path: Path) -> None:
    base = TREE + '[workload]\nkind = "permutation"\nsize = "512KiB"\n[observe]\nports = ["t0_0"]\ndrops = true\n'
    runs = {lb: lbsim.run(lbsim.Scenario.from_toml(base).set("lb.kind", lb), progress=False) for lb in ("ops", "reps")}
    paths = timeseries_figure(runs, tmp_path / "ts")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 10_000 for p in paths)


def test_reproduce_knows_its_figures(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    for fig in FIGURES.values():
        assert (repo / "scenarios" / fig.scenario).is_file(), fig.scenario
    with pytest.raises(lbsim.LbsimError, match="no figure"):
        reproduce("reps-fig99", out=tmp_path)
    d = reproduce("reps-fig03", out=tmp_path, scenarios=repo / "scenarios", progress=False, log=lambda _: None)
    table = pd.read_csv(d / "summary.csv").set_index("variant")
    # REPS Fig. 3: OPS is held to the slow uplink's pace; REPS is not.
    assert table.loc["reps", "max_fct_us"] < 0.7 * table.loc["ops", "max_fct_us"]
    assert (d / "reps-fig03.png").is_file() and (d / "ops" / "ports.parquet").is_file()


def test_reproduce_command_lists_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from lbsim.cli import main

    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in FIGURES) and "1400" in out
