"""Issue 20 (hardening), the Python side: each defect reproduced, then fixed.
The engine-side defects are in crates/lbsim-core/tests/hardening.rs."""

from __future__ import annotations

import concurrent.futures as cf
import os
import warnings
from pathlib import Path

import pytest

import lbsim
import lbsim.plot
from lbsim.errors import LbsimError, ScenarioError

from conftest import SMALL

#: All four uplinks of ToR t0_0 of a 32-host radix-8 tree fail for good: its hosts are cut off.
CUT_OFF = """\
stop_at = "1000000s"
preset = "reps_artifact"
[topology]
hosts = 32
radix = 8
[workload]
kind = "permutation"
size = "256KiB"
[[failures]]
links = "tor_uplinks"
of = "t0_0"
fraction = 1.0
allow_disconnect = true
at = "5us"
"""


def _cdf(path: Path, top: int) -> None:
    path.write_text(f"0 0\n1000 50\n{top} 100\n")


def test_sweep_resume_notices_a_changed_cdf_file(tmp_path: Path) -> None:
    """Defect 3: a custom CDF file's content is part of the run key (a flows CSV's already was)."""
    _cdf(tmp_path / "sizes.cdf", 20000)
    text = SMALL.replace(
        '[workload]\nkind = "permutation"\nsize = "256KiB"\n',
        '[workload]\nkind = "trace"\ncdf = "sizes.cdf"\nload = 0.5\nduration = "20us"\n',
    )
    (tmp_path / "t.toml").write_text(text)
    s = lbsim.Scenario.load(tmp_path / "t.toml")
    assert "sizes.cdf" in s.input_files()
    with cf.ThreadPoolExecutor(1) as ex:
        first = lbsim.sweep(s, {"seed": [1]}, out=tmp_path / "sw", executor=ex, progress=False)
        assert first.stats["ran"] == 1 and first.stats["ok"] == 1
        again = lbsim.sweep(s, {"seed": [1]}, out=tmp_path / "sw", executor=ex, progress=False)
        assert again.stats["already_done"] == 1 and again.stats["ran"] == 0
        _cdf(tmp_path / "sizes.cdf", 90000)
        changed = lbsim.sweep(s, {"seed": [1]}, out=tmp_path / "sw", executor=ex, progress=False)
    assert changed.stats["ran"] == 1 and changed.stats["already_done"] == 0
    # The worker ran the new file (shipped by content, not by path).
    flows = changed.flows()
    assert flows["size_bytes"].max() > 20000


def test_rerun_into_the_same_out_leaves_no_old_tables(tmp_path: Path) -> None:
    """Defect 4: the second run's directory holds only its own tables."""
    out = tmp_path / "run"
    observed = lbsim.Scenario.from_toml(SMALL).set("observe.ports", ["t0_0"]).set("lb.kind", "reps")
    lbsim.run(observed, progress=False, out=out)
    assert (out / "ports.parquet").is_file()
    lbsim.run(lbsim.Scenario.from_toml(SMALL).set("lb.kind", "ecmp"), progress=False, out=out)
    r = lbsim.load(out)
    assert r.lb == "ecmp" and "ports" not in r.table_names
    assert not (out / "ports.parquet").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run.")], "no temporary folder left"


def test_a_directory_of_other_files_is_not_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")
    with pytest.raises(LbsimError, match="not an lbsim run"):
        lbsim.run(lbsim.Scenario.from_toml(SMALL), progress=False, out=mine)
    assert (mine / "thesis.tex").read_text() == "precious"


@pytest.mark.parametrize("where", ["file", "under_file", "unwritable"])
def test_a_bad_out_fails_before_the_run(tmp_path: Path, small_file: Path, cli, where: str) -> None:
    """Defect 5: a clear error and exit 2, before simulating (the scenario here would take minutes)."""
    (tmp_path / "f").write_text("x")
    out = {"file": "f", "under_file": "f/run", "unwritable": "/proc/self/lbsim-run"}[where]
    slow = small_file.read_text().replace('size = "256KiB"', 'size = "1GiB"')
    small_file.write_text(slow)
    p = cli("run", str(small_file), "--out", out, "-q", "--max-memory", "64GiB", timeout=60)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: cannot write results to") and "Traceback" not in p.stderr, p.stderr


def test_a_binary_scenario_file_is_an_error_not_a_traceback(tmp_path: Path, cli) -> None:
    """Defect 6."""
    (tmp_path / "s.toml").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(LbsimError, match="not a scenario file"):
        lbsim.Scenario.load(tmp_path / "s.toml")
    p = cli("validate", "s.toml")
    assert p.returncode == 2 and "not a scenario file" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_stuck_flows_stop_early_with_the_reason(tmp_path: Path, cli) -> None:
    """Defect 7: a cut-off ToR with a horizon of 10^6 s stops at once, saying why."""
    r = lbsim.run(lbsim.Scenario.from_toml(CUT_OFF), progress=False, out=tmp_path / "r")
    assert r.stop_reason == "no_progress"
    assert r.stop_note and "no progress" in r.stop_note
    assert r.summary["unfinished_flows"] > 0
    assert lbsim.load(tmp_path / "r").stop_note == r.stop_note
    from lbsim.report import run_report

    assert r.stop_note in Path(run_report(r)).read_text(), "the report says why"
    (tmp_path / "cut.toml").write_text(CUT_OFF)
    p = cli("run", "cut.toml", "--out", "o", "-q")
    assert p.returncode == 0 and "stopped early: no progress" in p.stderr, p.stderr


def test_sweep_runs_have_a_wall_clock_limit(tmp_path: Path) -> None:
    """Defect 7: a per-run wall-clock limit; the slow run fails, the sweep goes on."""
    s = lbsim.Scenario.from_toml(SMALL)
    grid = {"workload.size": ["64KiB", "512MiB"]}
    with cf.ThreadPoolExecutor(1) as ex:
        res = lbsim.sweep(s, grid, out=tmp_path / "sw", executor=ex, progress=False, timeout=1.0, max_memory="64GiB")
    idx = res.index.set_index("workload.size")
    assert idx.loc["64KiB", "status"] == "done"
    assert idx.loc["512MiB", "status"] == "failed"
    assert "timed out" in idx.loc["512MiB", "error"]


def test_memory_limit_refuses_before_running(tmp_path: Path, cli) -> None:
    """Defect 1: the estimate refuses a run over --max-memory, naming the key, at once."""
    s = lbsim.Scenario.from_toml(SMALL).set("workload.size", "1TB")
    with pytest.raises(ScenarioError) as e:
        s.validate()
    assert e.value.key == "workload.size" and "GiB of memory" in e.value.message
    with pytest.raises(ScenarioError):
        lbsim.run(lbsim.Scenario.from_toml(SMALL), progress=False, max_memory="100KiB")
    assert lbsim.Scenario.from_toml(SMALL).validate()["memory_bytes"] > 0
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("validate", "s.toml", "--set", "workload.size=1TB")
    assert p.returncode == 2 and "workload.size" in p.stderr and "max-memory" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_grid_values_must_be_lists(tmp_path: Path) -> None:
    """Defect 8: a string was iterated per character ("reps" -> r, e, p, s)."""
    with pytest.raises(LbsimError, match=r"expected a list of values.*\['reps'\]"):
        lbsim.sweep(SMALL_SCENARIO(), {"lb.kind": "reps"}, out=tmp_path / "sw", progress=False)
    with pytest.raises(LbsimError, match="expected a list"):
        lbsim.sweep(SMALL_SCENARIO(), {"seed": 3}, out=tmp_path / "sw", progress=False)


def SMALL_SCENARIO() -> lbsim.Scenario:
    return lbsim.Scenario.from_toml(SMALL)


def test_flow_csv_with_a_byte_order_mark_runs(tmp_path: Path) -> None:
    (tmp_path / "f.csv").write_bytes("\ufeffsrc,dst,size_bytes,start_us\n0,1,5000,0\n".encode())
    s = lbsim.Scenario.from_toml('[topology]\nhosts = 16\n[workload]\nkind = "flows"\nfile = "f.csv"\n', base_dir=tmp_path)
    r = lbsim.run(s, progress=False)
    assert r.summary["finished_flows"] == 1


def test_plotting_runs_where_nothing_finished_says_so(tmp_path: Path) -> None:
    lbsim.run(lbsim.Scenario.from_toml(CUT_OFF).set("stop_at", "1us"), progress=False, out=tmp_path / "r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LbsimError, match="no flow finished"):
            lbsim.plot.plot_dirs([tmp_path / "r"], tmp_path / "plots")


def test_unclear_messages_are_clear(tmp_path: Path, cli) -> None:
    with pytest.raises(ScenarioError) as e:
        lbsim.Scenario.from_toml(SMALL).set("topology.uplinks_per_tor", 100).validate()
    assert e.value.key == "topology.uplinks_per_tor"
    with pytest.raises(ScenarioError) as e:
        lbsim.Scenario.from_toml(SMALL).set("seed", 2**64 - 1).resolved()
    assert "9223372036854775807" in e.value.message and "u64" not in e.value.message
    # A sweep's failed points print their error, never "nan"; unrun points say so.
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("sweep", "s.toml", "--grid", "topology.hosts=16,17", "-q")
    assert p.returncode == 1
    assert "nan" not in p.stderr and "topology.hosts" in p.stderr, p.stderr


def test_cli_max_memory_option(tmp_path: Path, cli) -> None:
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("run", "s.toml", "--max-memory", "100KiB", "-q", "--out", "o")
    assert p.returncode == 2 and "max-memory" in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "o")


# ---- Issue 45 (hardening, second round) ------------------------------------------------------------

#: A 16-to-1 incast on the lossless RDMA fabric (32 hosts: 2 ToRs of 16): its ToR pauses the senders.
PFC_INCAST = """\
preset = "rdma_lossless"
name = "pfc_small"
[topology]
hosts = 32
radix = 24
[workload]
kind = "incast"
size = "256KiB"
senders = 16
[observe]
buffers = true
bucket = "5us"
"""


def test_every_engine_table_is_loaded_and_saved() -> None:
    """Defect 4's class: the Python side knows every table the engine can write."""
    from lbsim.results import OPTIONAL_TABLES

    assert {"flows", "drops", *OPTIONAL_TABLES} == set(lbsim._core.table_names())


def test_pfc_tables_survive_load_save_and_report(tmp_path: Path, cli) -> None:
    """Defect 4: pfc.parquet and buffers.parquet were lost on load, so `lbsim report DIR` had no PFC
    section and save() of a loaded run left them behind."""
    r = lbsim.run(lbsim.Scenario.from_toml(PFC_INCAST), progress=False, out=tmp_path / "run")
    assert {"pfc", "buffers"} <= set(r.table_names)
    loaded = lbsim.load(tmp_path / "run")
    assert {"pfc", "buffers"} <= set(loaded.table_names)
    assert loaded.table("pfc")["pauses_sent"].sum() > 0
    loaded.save(tmp_path / "copy")
    assert (tmp_path / "copy" / "pfc.parquet").is_file() and (tmp_path / "copy" / "buffers.parquet").is_file()
    cli("report", str(tmp_path / "run"), check=True)
    html = (tmp_path / "run" / "report.html").read_text()
    assert "pfc.parquet" in html


def test_a_rerun_keeps_what_lbsim_did_not_write(tmp_path: Path, small_file: Path, cli) -> None:
    """Defect 9: a rerun into a run directory deleted a file the user had put there."""
    cli("run", str(small_file), "--out", "r", "-q", check=True)
    (tmp_path / "r" / "notes.txt").write_text("mine")
    p = cli("run", str(small_file), "--out", "r", "-q")
    assert p.returncode == 2 and "notes.txt" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert (tmp_path / "r" / "notes.txt").read_text() == "mine"
    with pytest.raises(LbsimError, match="notes.txt"):
        lbsim.run(lbsim.Scenario.load(small_file), progress=False, out=tmp_path / "r")
    # What lbsim wrote there (a report, the plots `lbsim plot DIR` draws) may be replaced.
    (tmp_path / "r" / "notes.txt").unlink()
    cli("report", "r", check=True)
    cli("plot", "r", check=True)
    cli("run", str(small_file), "--out", "r", "-q", check=True)


def test_sweep_resume_reruns_an_incomplete_run(tmp_path: Path) -> None:
    """Defect 9: resume trusted any directory with a summary.json and scenario.toml."""
    s = lbsim.Scenario.from_toml(SMALL)
    with cf.ThreadPoolExecutor(1) as ex:
        first = lbsim.sweep(s, {"seed": [1, 2]}, out=tmp_path / "sw", executor=ex, progress=False)
        assert first.stats["ok"] == 2
        runs = sorted((tmp_path / "sw" / "runs").iterdir())
        (runs[0] / "flows.parquet").unlink()
        (runs[1] / "drops.parquet").write_bytes(b"cut short")
        again = lbsim.sweep(s, {"seed": [1, 2]}, out=tmp_path / "sw", executor=ex, progress=False)
    assert again.stats["ran"] == 2 and again.stats["already_done"] == 0
    assert len(again.flows()) == 2 * 16


@pytest.mark.parametrize(
    "args",
    [("plot", "r", "--out", "afile"), ("report", "r", "--out", "afile/r.html")],
)
def test_cli_paths_give_one_line(tmp_path: Path, small_file: Path, cli, args: tuple[str, ...]) -> None:
    """Defect 9: a file where a folder is needed ended in a Python traceback."""
    cli("run", str(small_file), "--out", "r", "-q", check=True)
    (tmp_path / "afile").write_text("")
    p = cli(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().count("\n") == 0 and "afile" in p.stderr, p.stderr


def test_sweep_summary_and_report_say_what_happened(tmp_path: Path, cli) -> None:
    """Defect 10: an invalid point printed "failed nan"; a sweep report called a balancer the fastest
    when its only rival had not finished."""
    (tmp_path / "s.toml").write_text(SMALL)
    p = cli("sweep", "s.toml", "--grid", "lb.kind=ecmp,bogus", "-q", "--report", "--out", "sw")
    assert p.returncode == 1
    assert "nan" not in p.stderr and "invalid - (lb.kind=bogus)" in p.stderr, p.stderr
    html = (tmp_path / "sw" / "report.html").read_text()
    assert "completed the workload fastest" not in html


def test_flow_level_takes_a_memory_limit_and_needs_no_size(tmp_path: Path, cli) -> None:
    """Defect 5 and 10: flow-level mode had no --max-memory, and demanded workload.size."""
    (tmp_path / "s.toml").write_text('[topology]\nhosts = 16\n[lb]\nkind = "ecmp"\n[workload]\nkind = "permutation"\n')
    p = cli("flow-level", "s.toml", "--max-memory", "100KiB", "--out", "fl")
    assert p.returncode == 2 and "max-memory" in p.stderr and not (tmp_path / "fl").exists(), p.stderr
    p = cli("flow-level", "s.toml", "--out", "fl")
    assert p.returncode == 0, p.stderr
    assert lbsim.load_flow_level(tmp_path / "fl").summary["flows"] == 16
    assert "FaCa" in cli("flow-level", "--help").stdout
    p = cli("run", "s.toml", "--max-memory", "3 parsecs")
    assert p.returncode == 2 and "pkt" not in p.stderr and "GiB" in p.stderr, p.stderr


def test_reports_of_empty_runs_raise_no_warnings(tmp_path: Path) -> None:
    """Defect 10: matplotlib warned (a legend of nothing) on a run where no flow finished."""
    r = lbsim.run(lbsim.Scenario.from_toml(CUT_OFF).set("stop_at", "1us"), progress=False, out=tmp_path / "r")
    assert r.summary["finished_flows"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lbsim.report.report(tmp_path / "r")
