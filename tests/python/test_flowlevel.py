"""The flow-level mode: ``lbsim.flow_level`` and ``lbsim flow-level``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import lbsim
from conftest import table_rows

# 16 hosts, 4 per ToR under 4 spines; a permutation under ECMP at 400 Gb/s.
SCENARIO = {
    "name": "fl",
    "seed": 3,
    "topology": {"hosts": 16, "radix": 8},
    "lb": {"kind": "ecmp"},
    "workload": {"kind": "permutation", "size": "1MiB"},
}


def test_api_tables_and_summary_agree(tmp_path: Path) -> None:
    r = lbsim.flow_level(SCENARIO)
    flows, ports, s = r.flows, r.ports, r.summary
    assert isinstance(flows, pd.DataFrame) and isinstance(ports, pd.DataFrame)
    assert len(flows) == s["flows"] == 16
    assert s["mode"] == "flow_level"
    # Every rate at most the line rate, and each port's throughput the sum of its flows' rates.
    assert (flows["rate_bps"] <= 400e9).all() and (flows["rate_bps"] > 0).all()
    load = {}
    for ids, rate in zip(flows["port_ids"], flows["rate_bps"]):
        for p in map(int, ids.split()):
            load[p] = load.get(p, 0.0) + rate
    for row in ports.itertuples():
        assert row.throughput_bps == pytest.approx(load.get(row.port, 0.0), rel=1e-12, abs=0)
        assert row.throughput_bps <= row.capacity_bps * (1 + 1e-12)
    assert s["total_rate_bps"] == pytest.approx(flows["rate_bps"].sum(), rel=1e-12)
    assert s["congested_flows"] == int(flows["congested"].sum())
    assert s["congestion_rate"] == s["congested_flows"] / 16
    up = ports[ports["class"] == "t0->t1"]["throughput_bps"]
    c = s["classes"]["t0->t1"]
    assert c["max_bps"] == up.max() and c["min_bps"] == up.min()
    assert c["drop_bps"] == up.max() - up.min()
    assert c["std_bps"] == pytest.approx(up.std(ddof=0), rel=1e-9)
    # Saved and loaded back: the same tables; lbsim.load refuses it by name.
    r.save(tmp_path / "out")
    back = lbsim.load_flow_level(tmp_path / "out")
    pd.testing.assert_frame_equal(back.flows, flows)
    pd.testing.assert_frame_equal(back.ports, ports)
    assert back.summary == s
    with pytest.raises(lbsim.LbsimError, match="load_flow_level"):
        lbsim.load(tmp_path / "out")
    # Deterministic: the same scenario gives the same frames.
    pd.testing.assert_frame_equal(lbsim.flow_level(SCENARIO).flows, flows)


def test_api_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(lbsim.ScenarioError) as e:
        lbsim.flow_level({**SCENARIO, "lb": {"kind": "reps"}})
    assert e.value.key == "lb.kind" and "ecmp" in str(e.value)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(lbsim.LbsimError, match="not an lbsim run"):
        lbsim.flow_level(SCENARIO, out=tmp_path / "busy")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"


def test_cli_round_trip(cli, tmp_path: Path) -> None:
    f = tmp_path / "fl.toml"
    f.write_text(lbsim.Scenario.from_dict(SCENARIO).resolved())
    p = cli("flow-level", str(f), "--set", "lb.kind=wcmp", "--out", "out", check=True)
    d = tmp_path / "out"
    summary = json.loads((d / "summary.json").read_text())
    flows = pd.read_parquet(d / "flows.parquet")
    ports = pd.read_parquet(d / "ports.parquet")
    assert (flows["lb"] == "wcmp").all() and len(flows) == summary["flows"] == 16
    assert len(ports) == len(lbsim.flow_level(SCENARIO).ports)
    rows = {r[0]: r for r in table_rows(p.stdout) if r and r[0] in summary["classes"]}
    assert rows["t0->t1"][4] == f"{summary['classes']['t0->t1']['drop_bps'] / 1e9:.2f}"
    assert f"congestion rate {summary['congestion_rate']:.4f}" in p.stdout
    # Equal uplinks: WCMP is ECMP flow by flow.
    api = lbsim.flow_level(SCENARIO).flows
    assert list(flows["path"]) == list(api["path"])
    # Rerun over the earlier result: replaced; a folder of other files: refused, untouched.
    cli("flow-level", str(f), "--out", "out", check=True)
    assert (pd.read_parquet(d / "flows.parquet")["lb"] == "ecmp").all()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("x")
    bad = cli("flow-level", str(f), "--out", "other")
    assert bad.returncode == 2 and "not an lbsim run" in bad.stderr
    bad = cli("flow-level", str(f), "--set", "lb.kind=ops")
    assert bad.returncode == 2 and "lb.kind" in bad.stderr and "ecmp" in bad.stderr
