"""FaCa Figs. 6-7's measurements (lbsim.faca) on the production Clos scenario."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import lbsim
from lbsim.faca import balance, port_throughput

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "faca" / "production_clos.toml"


@pytest.fixture(scope="module")
def ecmp_run() -> lbsim.Result:
    return lbsim.run(lbsim.Scenario.load(SCENARIO).set("stop_at", "1500us"), progress=False)


def test_what_the_rnics_send_leaves_by_the_uplinks(ecmp_run: lbsim.Result) -> None:
    # Every sender's partner is under another access switch, and no flow ends under t0_0: in a
    # steady window the ten NICs' throughput is exactly what t0_0's uplinks carry, and no NIC
    # or uplink exceeds its 100 Gb/s (a bucket counts a packet when it starts on the wire: one
    # packet of 1 KiB more in a 50 us bucket is 0.17 Gb/s).
    nics = port_throughput(ecmp_run, r"^h\d+->t0_0$", 500.0, 1500.0)
    ups = port_throughput(ecmp_run, r"^t0_0->t1_\d+$", 500.0, 1500.0)
    assert len(nics) == 10 and len(ups) == 16
    assert nics.sum() == pytest.approx(ups.sum(), rel=0.01)
    assert nics.max() <= 100.2 and ups.max() <= 100.2
    b = balance(ecmp_run, start_us=500.0)
    assert b["rnic_mean_gbps"] == pytest.approx(nics.mean())
    assert b["rnic_gap_gbps"] == pytest.approx(nics.max() - nics.min())
    assert b["s0_max_gbps"] == pytest.approx(ups.max()) and b["s0_min_gbps"] == pytest.approx(ups.min())
    # 20 flows on 16 uplinks: ECMP cannot leave them all even.
    assert b["s0_std_gbps"] > 1.0


def test_balance_needs_the_ports_sampled(ecmp_run: lbsim.Result) -> None:
    with pytest.raises(lbsim.LbsimError, match="observe.ports"):
        balance(ecmp_run, switch="t0_3", start_us=500.0)


def test_fig8_flow_level_reproduction(tmp_path: Path) -> None:
    from lbsim.reproduce import reproduce

    repo = Path(__file__).resolve().parents[2]
    d = reproduce("faca-fig8", out=tmp_path, scenarios=repo / "scenarios", log=lambda _: None)
    table = pd.read_csv(d / "summary.csv")
    lb = table["variant"].str.split("/").str[1]
    assert len(table) == 40 and set(lb) == {"ecmp", "faca"}
    assert table["congestion_rate"].between(0.0, 1.0).all() and (table["flows"] == 20).all()
    # Flowing & Jumping with every earlier placement known congests fewer flows than ECMP's hash.
    assert table.loc[lb == "faca", "congestion_rate"].mean() < table.loc[lb == "ecmp", "congestion_rate"].mean()
    assert (d / "faca-fig8.png").is_file() and (d / "1_faca_1" / "flows.parquet").is_file()


def test_faca_logs_its_path_estimates() -> None:
    # FaCa's per-path load estimates over time (the faca_paths table): probes echo from 0 on,
    # each of the 20 flows is placed once, at its start, on a path of its source's table.
    r = lbsim.run(lbsim.Scenario.load(SCENARIO).set("stop_at", "1ms").set("lb.kind", "faca")
                 .set("observe.host_lb", True), progress=False)
    t = r.table("faca_paths")
    placed, probes = t[t["event"] == "placed"], t[t["event"] == "probe"]
    starts = r.flows.set_index("id")["start_us"]
    assert len(placed) == 20 and sorted(placed["time_us"]) == sorted(starts)
    assert placed["path"].str.startswith("t0_0->t1_").all() and (t["estimate"] >= 0).all()
    assert probes["time_us"].min() < placed["time_us"].min() and t["time_us"].is_monotonic_increasing
    # Each placement adds the flow's bytes in flight (capped at a BDP) to the path's estimate.
    assert (placed["estimate"] >= placed["sample"]).all() and (placed["sample"] > 0).all()
    assert r.summary["host_lb"]["faca.placed"] == 20
    # Not recorded unless asked (it grows with the probes), and asked only of a balancer that has it.
    quiet = lbsim.run(lbsim.Scenario.load(SCENARIO).set("stop_at", "300us").set("lb.kind", "faca"), progress=False)
    with pytest.raises(lbsim.LbsimError, match="observe.host_lb"):
        quiet.table("faca_paths")
    with pytest.raises(lbsim.ScenarioError, match="observe.host_lb"):
        lbsim.run(lbsim.Scenario.load(SCENARIO).set("observe.host_lb", True), progress=False)


def test_core_congestion_counts_the_uplinks_bytes() -> None:
    from lbsim.faca import core_congestion

    streams = SCENARIO.with_name("microbench_streams.toml")
    r = lbsim.run(lbsim.Scenario.load(streams).set("stop_at", "800us"), progress=False)
    c = core_congestion(r)
    up = r.ports[r.ports["port"].str.match(r"^t0_\d+->t1_\d+$")]
    assert len(up["port"].unique()) == 128 and c["bytes"].sum() == up["tx_bytes"].sum() > 0
    assert (c["congested_bytes"] <= c["bytes"]).all() and c["congested_share"].dropna().between(0, 1).all()
    # The threshold decides: every byte met a queue of at least 0 bytes, none one of 1 TB.
    every = core_congestion(r, threshold_bytes=0)
    assert (every["congested_bytes"] == every["bytes"]).all()
    assert core_congestion(r, threshold_bytes=10**12)["congested_bytes"].sum() == 0
    # The default is the scenario's ECN threshold (100 KB): in between.
    assert 0 <= c["congested_bytes"].sum() <= core_congestion(r, threshold_bytes=1)["congested_bytes"].sum()
