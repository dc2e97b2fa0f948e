"""Sweeps through the Python API: failures recorded, duplicates run once, results loadable."""

from __future__ import annotations

import concurrent.futures as cf
from pathlib import Path

import pandas as pd

import lbsim
from lbsim.sweep import expand_grid

from conftest import SMALL


def test_expand_grid_order() -> None:
    assert expand_grid({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"},
    ]


def test_failures_are_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    base = lbsim.Scenario.from_toml(SMALL)
    grid = {"topology.hosts": [16, 17, 32], "lb.kind": ["ops", "warp"]}
    # A thread pool is a concurrent.futures.Executor like any other.
    with cf.ThreadPoolExecutor(2) as ex:
        res = lbsim.sweep(base, grid, out=tmp_path / "sw", executor=ex, progress=False)
    idx = res.index
    assert len(idx) == 6
    done = idx[idx["status"] == "done"]
    assert sorted(done["topology.hosts"]) == [16, 32] and set(done["lb.kind"]) == {"ops"}
    failed = idx[idx["status"] == "failed"]
    assert len(failed) == 4
    # 17 hosts resolves but does not build (caught on the worker) ...
    built = failed[(failed["topology.hosts"] == 17) & (failed["lb.kind"] == "ops")]
    assert built["error"].str.contains("topology.hosts").all() and built["run_id"].notna().all()
    # ... an unknown variant does not even resolve.
    assert failed[failed["lb.kind"] == "warp"]["error"].str.contains("lb.kind").all()
    assert res.stats["ok"] == 2 and res.stats["failed"] == 1 and res.stats["invalid"] == 3
    assert (tmp_path / "sw/runs" / built["run_id"].iloc[0] / "error.json").is_file()

    # Loading: per-run results and a combined flow table with the grid values.
    loaded = lbsim.load_sweep(tmp_path / "sw")
    flows = loaded.flows()
    assert len(flows) == 16 + 32
    assert set(flows["topology.hosts"]) == {16, 32}
    summaries = loaded.summaries()
    assert set(summaries["flows"]) == {16, 32}
    for params, r in loaded.results():
        assert r.summary["flows"] == params["topology.hosts"] == len(r.flows)


def test_duplicate_points_run_once(tmp_path: Path) -> None:
    base = lbsim.Scenario.from_toml(SMALL)  # lb.kind is "reps" already
    res = lbsim.sweep(base, {"lb.kind": ["reps", "reps"]}, out=tmp_path / "sw", workers=1, progress=False)
    assert res.stats["points"] == 2 and res.stats["runs"] == 1 and res.stats["ok"] == 1
    idx = res.index
    assert idx["run_id"].nunique() == 1 and (idx["status"] == "done").all()


def test_run_key_tracks_input_file_content(tmp_path: Path) -> None:
    csv = tmp_path / "flows.csv"
    scen = tmp_path / "f.toml"
    scen.write_text('[topology]\nhosts = 16\n[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    csv.write_text("src,dst,size_bytes,start_us\n0,9,100000,0\n")
    k1 = lbsim.Scenario.load(scen).key()
    csv.write_text("src,dst,size_bytes,start_us\n0,9,200000,0\n")
    k2 = lbsim.Scenario.load(scen).key()
    assert k1 != k2
    # Workers get the file's content, not its path.
    res = lbsim.sweep(scen, {"seed": [1]}, out=tmp_path / "sw", workers=1, progress=False)
    (_, r), = list(res.results())
    assert r.flows["size_bytes"].tolist() == [200000]
    assert isinstance(res.index, pd.DataFrame)
