"""The public Python API: scenarios, runs, results, errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lbsim
from lbsim import _core

from conftest import SMALL


def small(**overrides: object) -> lbsim.Scenario:
    return lbsim.Scenario.from_toml(SMALL).with_overrides(overrides)


def test_tables_agree_with_summary() -> None:
    r = lbsim.run(small(**{"lb.kind": "ecmp", "workload.size": "1MiB"}), progress=False)
    f, s = r.flows, r.summary
    assert len(f) == s["flows"] == 16
    assert f["finished"].all() and s["unfinished_flows"] == 0
    assert f["fct_us"].max() == pytest.approx(s["max_fct_us"], rel=1e-12)
    assert f["fct_us"].mean() == pytest.approx(s["mean_fct_us"], rel=1e-9)
    # ECMP collides on this tree: drops happen, and the per-flow and
    # network-wide counts of drops and retransmissions agree.
    assert s["drops"]["congestion"] > 0
    assert int(f["drops"].sum()) == s["drops"]["congestion"] + s["drops"]["failure"]
    assert int(f["retransmissions"].sum()) == s["retransmissions"] == r.counters["retransmissions"]
    drops = r.drops.set_index("cause")["packets"]
    assert drops["congestion"] == s["drops"]["congestion"]
    assert (f["fct_us"] == f["receiver_finish_us"] - f["start_us"]).all()
    assert r.stop_reason == "drained"


def test_override_reaches_engine() -> None:
    base = lbsim.run(small(), progress=False)
    assert (base.flows["size_bytes"] == 256 * 1024).all()
    s = small().set("workload.size", "1MiB").set("lb.kind", "ops").set("seed", "7")
    r = lbsim.run(s, progress=False)
    assert (r.flows["size_bytes"] == 1 << 20).all()
    resolved = tomllib.loads(r.scenario_toml)
    assert resolved["lb"]["kind"] == "ops" and resolved["seed"] == 7
    assert r.key != base.key


def test_workload_override_without_workload_table() -> None:
    # The preset supplies [workload]; overriding one key keeps the others.
    s = lbsim.Scenario("[topology]\nhosts = 16\n").set("workload.size", "64KiB")
    assert s["workload.kind"] == "permutation"
    r = lbsim.run(s, progress=False)
    assert (r.flows["size_bytes"] == 64 * 1024).all()


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (lambda: lbsim.Scenario.from_dict({"lb": {"kind": "magic"}}), "lb.kind"),
        (lambda: small().set("topology.hostz", 3).resolved(), "topology.hostz"),
        (lambda: small().set("topology.link_latency", 500).resolved(), "topology.link_latency"),
        (lambda: small().set("topology.hosts", 17).validate(), "topology.hosts"),
        (lambda: lbsim.run(small().set("workload.senders", 3), progress=False), "workload.senders"),
        (lambda: small().set("lb.plb.congested_rounds", 0).resolved(), "lb.plb.congested_rounds"),
        (lambda: small().set("lb.bitmap.max_penalty", 256).resolved(), "lb.bitmap.max_penalty"),
    ],
)
def test_errors_name_the_key(make, key: str) -> None:
    with pytest.raises(lbsim.ScenarioError) as e:
        make()
    assert e.value.key == key
    assert key in str(e.value)


BASELINES = ("plb", "flowlet", "mprdma", "bitmap", "arcane")


def test_baseline_load_balancers_run_and_plot(tmp_path: Path) -> None:
    from lbsim.plot import style, summary_figure

    results = {lb: lbsim.run(small(**{"lb.kind": lb}), progress=False) for lb in ("ecmp", *BASELINES)}
    for lb, r in results.items():
        assert r.lb == lb and (r.flows["lb"] == lb).all()
        assert r.summary["unfinished_flows"] == 0
    # Every kind has its own display name and colour, and a known place in plots.
    names = [style.label(lb) for lb in results]
    assert len(set(names)) == len(names) and "PLB" in names and "ARCANE" in names
    assert len({style.color(lb) for lb in results}) == len(results)
    assert style.sort_labels(list(reversed(results))) == [lb for lb in style.ORDER if lb in results]
    written = summary_figure({lb: [r] for lb, r in results.items()}, tmp_path / "baselines")
    assert all(p.stat().st_size > 0 for p in written)


def test_error_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text("[queue]\ncapacityy = 3\n")
    with pytest.raises(lbsim.ScenarioError) as e:
        lbsim.Scenario.load(p)
    assert e.value.key == "queue.capacityy"
    assert str(e.value).startswith(str(p))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    r = lbsim.run(small(**{"lb.kind": "ops"}), progress=False)
    d = r.save(tmp_path / "run")
    assert sorted(p.name for p in d.iterdir()) == sorted(lbsim.results.RUN_FILES)
    back = lbsim.load(d)
    pd.testing.assert_frame_equal(back.flows, r.flows)
    assert back.summary == r.summary
    assert back.key == r.key and back.stop_reason == "drained"
    assert json.loads((d / "summary.json").read_text())["max_fct_us"] == r.summary["max_fct_us"]
    # The resolved scenario reproduces the run.
    again = lbsim.run(lbsim.Scenario.load(d / "scenario.toml"), progress=False)
    pd.testing.assert_frame_equal(again.flows, r.flows)
    assert again.key == r.key


def test_parquet_readable_without_lbsim(tmp_path: Path) -> None:
    # An unfinished flow (short horizon) gives NaN/null finish times.
    r = lbsim.run(small(stop_at="5us"), progress=False)
    assert r.stop_reason == "horizon" and not r.flows["finished"].any()
    d = r.save(tmp_path / "run")
    code = f"""
import sys
sys.modules["lbsim"] = None  # any import of lbsim fails
import pandas as pd, polars as pl, json
d = {str(d)!r}
f = pd.read_parquet(d + "/flows.parquet")
p = pl.read_parquet(d + "/flows.parquet")
drops = pl.read_parquet(d + "/drops.parquet")
s = json.load(open(d + "/summary.json"))
assert len(f) == len(p) == s["flows"] == 16, (len(f), len(p))
assert f["fct_us"].isna().all() and p["fct_us"].null_count() == 16
assert s["max_fct_us"] is None
assert drops.columns == ["cause", "packets"]
print("ok", list(p.columns)[:3])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ok ['id', 'message', 'src']" in out.stdout


def test_relative_file_resolves_against_scenario_folder(tmp_path: Path, monkeypatch) -> None:
    sub = tmp_path / "scen"
    sub.mkdir()
    (sub / "flows.csv").write_text("src,dst,size_bytes,start_us\n0,9,100000,0\n3,12,200000,1.5\n")
    (sub / "f.toml").write_text('[topology]\nhosts = 16\n[workload]\nkind = "flows"\nfile = "flows.csv"\n')
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    r = lbsim.run(sub / "f.toml", progress=False)
    assert r.flows["size_bytes"].tolist() == [100000, 200000]
    assert r.flows["start_us"].tolist() == [0.0, 1.5]
    # A dict scenario resolves relative paths against base_dir.
    s = lbsim.Scenario.from_dict(
        {"topology": {"hosts": 16}, "workload": {"kind": "flows", "file": "flows.csv"}}, base_dir=sub
    )
    assert lbsim.run(s, progress=False).flows["dst"].tolist() == [9, 12]


def test_progress_callback_and_cancel() -> None:
    text = lbsim.Scenario.from_toml(SMALL).set("workload.size", "4MiB").resolved()
    calls: list[tuple[float, float, int, int, int, int, int]] = []

    def record(*args: object) -> None:
        calls.append(args)  # type: ignore[arg-type]

    raw = _core.run(text, [], None, record, 1000, 0.0)
    assert raw["stop_reason"] == "drained"
    assert len(calls) > 10 and all(len(c) == 7 for c in calls)
    events = [c[2] for c in calls]
    assert events == sorted(events) and calls[-1][4] == 16
    assert all(0 <= c[0] <= c[1] for c in calls)
    # Payload bytes delivered grow to the workload's total (16 messages of 4 MiB).
    delivered = [c[5] for c in calls]
    assert delivered == sorted(delivered) and {c[6] for c in calls} == {16 * 4 << 20}
    assert 0 < delivered[len(delivered) // 2] < 16 * 4 << 20
    # The last call is the final state: everything delivered, every flow done.
    summary = json.loads(raw["summary_json"])
    assert calls[-1][5] == calls[-1][6] and calls[-1][3] == 16
    assert calls[-1][2] == summary["events"] and calls[-1][0] == pytest.approx(summary["sim_end_us"])

    def stop_early(now_us: float, *rest: object) -> bool:
        return now_us < 20.0

    raw = _core.run(text, [], None, stop_early, 1000, 0.0)
    assert raw["stop_reason"] == "cancelled"
    finished = np.frombuffer(dict((n, b) for n, _, b in raw["tables"]["flows"])["finished"], dtype=bool)
    assert not finished.all()


def test_gil_released_while_engine_runs() -> None:
    s = lbsim.Scenario.from_toml(SMALL).with_overrides({"topology.hosts": 64, "workload.size": "8MiB"})
    box: dict[str, lbsim.Result] = {}
    t = threading.Thread(target=lambda: box.setdefault("r", lbsim.run(s, progress=False)))
    t0 = time.perf_counter()
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    wall = time.perf_counter() - t0
    engine = box["r"].summary["wall_seconds"]
    assert engine > 0.05, "run too short to tell"
    # With the GIL held this thread would barely run during the engine's time.
    assert spins / wall > 100_000, (spins, wall)


def test_ideal_is_the_engines_largest_message_ideal() -> None:
    r = lbsim.run(small(), progress=False)
    m = r.messages
    assert r.ideal_fct_us == m["ideal_fct_us"].max()
    # Every message is 256 KiB, so every ideal is the same path length's; a
    # lone ECMP flow finishes in exactly its ideal, and nothing beats size at line rate.
    assert r.ideal_fct_us > 256 * 1024 * 8 / 400e3
    assert (r.flows["fct_us"] >= 256 * 1024 * 8 / 400e3).all()
    # Subflows: the message's ideal (the whole message alone), not a subflow's.
    s = lbsim.run(small(**{"lb.kind": "subflows"}), progress=False)
    assert s.ideal_fct_us == s.messages["ideal_fct_us"].max() > s.flows["ideal_fct_us"].max()
    # Mixed sizes: the largest message's ideal.
    mixed = lbsim.Scenario.from_toml(
        'preset = "reps_artifact"\n[topology]\nhosts = 16\n[workload]\nkind = "trace"\ncdf = "websearch"\n'
        'load = 0.5\nduration = "50us"\n'
    )
    t = lbsim.run(mixed, progress=False)
    assert t.messages["size_bytes"].nunique() > 1
    assert t.ideal_fct_us == t.messages["ideal_fct_us"].max()
    assert t.ideal_fct_us >= t.messages.loc[t.messages["size_bytes"].idxmax(), "ideal_fct_us"]


def test_package_data_matches_example_scenario() -> None:
    from importlib import resources

    repo = Path(__file__).resolve().parents[2]
    shipped = resources.files("lbsim").joinpath("data/permutation_128.toml").read_text()
    assert shipped == (repo / "scenarios/examples/permutation_128.toml").read_text()
    assert resources.files("lbsim").joinpath("py.typed").is_file()
    cargo = tomllib.loads((repo / "Cargo.toml").read_text())
    assert lbsim.__version__ == cargo["workspace"]["package"]["version"]
