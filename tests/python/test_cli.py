"""The ``lbsim`` command, through subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from conftest import kv_table, lbsim_command, table_rows


def test_run_writes_consistent_results(cli, small_file: Path, tmp_path: Path) -> None:
    p = cli("run", str(small_file), "--set", "workload.size=1MiB", "--set", "lb.kind=ecmp", "--out", "out", check=True)
    d = tmp_path / "out"
    assert f"results: out" in p.stdout
    printed = kv_table(p.stdout)
    flows = pd.read_parquet(d / "flows.parquet")
    summary = json.loads((d / "summary.json").read_text())
    assert (flows["size_bytes"] == 1 << 20).all()  # --set reached the engine
    assert len(flows) == summary["flows"] == 16
    assert flows["fct_us"].max() == summary["max_fct_us"]
    assert printed["flows finished"] == "16/16"
    assert printed["max FCT"] == f"{summary['max_fct_us']:.2f} us" and printed["p99 FCT"] == f"{summary['p99_fct_us']:.2f} us"
    assert printed["retransmissions"] == str(summary["retransmissions"])
    assert pl.read_parquet(d / "flows.parquet")["fct_us"].max() == summary["max_fct_us"]
    drops = pd.read_parquet(d / "drops.parquet").set_index("cause")["packets"]
    assert drops["congestion"] == summary["drops"]["congestion"] == flows["drops"].sum()
    assert 'kind = "ecmp"' in (d / "scenario.toml").read_text()
    assert 'size = "1MiB"' in (d / "scenario.toml").read_text()
    # Without --out: results/<scenario name>.
    cli("run", str(small_file), "--quiet", check=True)
    assert (tmp_path / "results/small/summary.json").is_file()


def test_run_a_baseline_kind_from_the_command_line(cli, small_file: Path, tmp_path: Path) -> None:
    cli("run", str(small_file), "--set", "lb.kind=plb", "--set", "lb.plb.congested_rounds=1", "--out", "plb", check=True)
    flows = pd.read_parquet(tmp_path / "plb" / "flows.parquet")
    assert (flows["lb"] == "plb").all() and flows["finished"].all()
    assert "congested_rounds = 1" in (tmp_path / "plb" / "scenario.toml").read_text()


def test_bad_key_is_named_without_traceback(cli, small_file: Path, tmp_path: Path) -> None:
    p = cli("run", str(small_file), "--set", "lb.kindd=ops")
    assert p.returncode == 2
    assert "lb.kindd" in p.stderr and "Traceback" not in p.stderr
    p = cli("validate", str(small_file), "--set", "topology.hosts=17")
    assert p.returncode == 2
    assert "topology.hosts" in p.stderr and "Traceback" not in p.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[lb]\nkind = "magic"\n')
    p = cli("validate", str(bad))
    assert p.returncode == 2 and "lb.kind" in p.stderr and "bad.toml" in p.stderr
    p = cli("run", "missing.toml")
    assert p.returncode == 2 and "missing.toml" in p.stderr and "Traceback" not in p.stderr
    p = cli("sweep", str(small_file), "--grid", "lb.kind=ecmp,warp")
    assert p.returncode != 0 and "lb.kind" in p.stdout + p.stderr and "Traceback" not in p.stderr


def test_validate_checks_without_running(cli, small_file: Path, tmp_path: Path) -> None:
    p = cli("validate", str(small_file), "--set", "topology.hosts=32", check=True)
    assert p.stdout.startswith("ok:") and "32 hosts" in p.stdout and "32 flows" in p.stdout
    assert not (tmp_path / "results").exists()


def _compare_sweeps(a: Path, b: Path) -> int:
    ia = pd.read_parquet(a / "index.parquet").sort_values("run_id").reset_index(drop=True)
    ib = pd.read_parquet(b / "index.parquet").sort_values("run_id").reset_index(drop=True)
    assert (ia["status"] == "done").all() and (ib["status"] == "done").all()
    assert ia["run_id"].tolist() == ib["run_id"].tolist()
    for run_id in ia["run_id"]:
        ra, rb = a / "runs" / run_id, b / "runs" / run_id
        pd.testing.assert_frame_equal(pd.read_parquet(ra / "flows.parquet"), pd.read_parquet(rb / "flows.parquet"))
        sa, sb = (json.loads((r / "summary.json").read_text()) for r in (ra, rb))
        for volatile in ("wall_seconds", "events_per_second"):
            sa.pop(volatile), sb.pop(volatile)
        assert sa == sb
        assert (ra / "scenario.toml").read_text() == (rb / "scenario.toml").read_text()
    return len(ia)


def _counts(stdout: str) -> dict[str, int]:
    """The sweep's summary table: grid points, distinct runs, already done, ran now, ok, failed."""
    t = kv_table(stdout)
    return {k: int(v) for k, v in t.items() if k in ("grid points", "distinct runs", "already done", "ran now", "ok", "failed", "invalid")}


def test_sweep_local_and_dask_agree(cli, small_file: Path, tmp_path: Path) -> None:
    grid = ["--grid", "lb.kind=ecmp,reps", "--grid", "seed=1,2", "--set", "workload.size=512KiB"]
    p = cli("sweep", str(small_file), *grid, "--workers", "2", "--out", "local", check=True)
    assert _counts(p.stdout) == {"grid points": 4, "distinct runs": 4, "already done": 0, "ran now": 4, "ok": 4, "failed": 0}
    p = cli("sweep", str(small_file), *grid, "--backend", "dask", "--workers", "2", "--out", "dask", check=True)
    assert _counts(p.stdout) == {"grid points": 4, "distinct runs": 4, "already done": 0, "ran now": 4, "ok": 4, "failed": 0}
    assert _compare_sweeps(tmp_path / "local", tmp_path / "dask") == 4
    idx = pd.read_parquet(tmp_path / "local/index.parquet")
    assert sorted(idx["lb.kind"]) == ["ecmp", "ecmp", "reps", "reps"]
    assert sorted(idx["seed"]) == [1, 1, 2, 2]
    # Seeds matter: ECMP with another seed hashes flows onto other paths.
    ecmp = idx[idx["lb.kind"] == "ecmp"]
    flows = [pd.read_parquet(tmp_path / "local" / p / "flows.parquet") for p in ecmp["path"]]
    assert not flows[0]["fct_us"].equals(flows[1]["fct_us"])


def test_sweep_resumes_after_kill(cli, tmp_path: Path) -> None:
    # Runs of ~0.3-0.6 s each (128 hosts, 8 MiB) on one worker, so there is
    # time to kill the sweep after the first run lands.
    f = tmp_path / "perm.toml"
    f.write_text('preset = "reps_artifact"\n[workload]\nkind = "permutation"\nsize = "8MiB"\n')
    args = ["sweep", str(f), "--grid", "lb.kind=ecmp,ops,reps", "--grid", "seed=1,2", "--workers", "1", "--out", "sw"]
    runs = tmp_path / "sw" / "runs"
    env = dict(os.environ, LBSIM_PROGRESS="0")
    proc = subprocess.Popen(
        [*lbsim_command(), *args], cwd=tmp_path, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 120
    done: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        # Not the driver's temporary folders (.tmp-*): pathlib's "*" matches dot-names too.
        done = sorted(p for p in runs.glob("[!.]*/summary.json")) if runs.exists() else []
        if done:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its pool, mid-sweep
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed"
    before = {p.parent.name: p.stat().st_mtime_ns for p in runs.glob("[!.]*/summary.json")}
    assert 1 <= len(before) < 6, before

    p = cli(*args, check=True)
    n = len(before)
    assert _counts(p.stdout) == {"grid points": 6, "distinct runs": 6, "already done": n, "ran now": 6 - n, "ok": 6 - n, "failed": 0}
    after = {q.parent.name: q.stat().st_mtime_ns for q in runs.glob("[!.]*/summary.json")}
    assert len(after) == 6
    for run_id, mtime in before.items():
        assert after[run_id] == mtime, f"{run_id} was recomputed"
    idx = pd.read_parquet(tmp_path / "sw" / "index.parquet")
    assert (idx["status"] == "done").all() and (idx["attempts"] == 1).all()
    assert not list(runs.glob(".tmp-*")), "temporary run folders left behind"
    # A third time: nothing to do.
    p = cli(*args, check=True)
    assert _counts(p.stdout) == {"grid points": 6, "distinct runs": 6, "already done": 6, "ran now": 0, "ok": 0, "failed": 0}


def test_demo_writes_table_and_plot(cli, tmp_path: Path) -> None:
    t0 = time.monotonic()
    p = cli("demo", "--out", "demo", check=True, timeout=120)
    elapsed = time.monotonic() - t0
    png = tmp_path / "demo" / "demo.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert (tmp_path / "demo" / "demo.pdf").read_bytes()[:5] == b"%PDF-"
    assert str(Path("demo") / "demo.png") in p.stdout
    rows = table_rows(p.stdout)
    head = next(r for r in rows if "max FCT (us)" in r)
    assert head == ["", "max FCT (us)", "x ideal", "mean FCT (us)", "x ideal", "drops (pkts)", "retx (pkts)", "wall (s)"]
    body = {r[0]: r for r in rows if r[0] in ("ECMP", "OPS", "REPS") and len(r) == len(head)}
    assert set(body) == {"ECMP", "OPS", "REPS"}
    ratio = {k: float(v[2]) for k, v in body.items()}  # max FCT / ideal
    line = next(x for x in p.stdout.splitlines() if x.startswith("ideal FCT = "))
    assert float(line.split()[3]) == pytest.approx(_ideal(tmp_path / "demo" / "ecmp"), abs=0.05)
    for lb, r in body.items():
        summary = json.loads((tmp_path / "demo" / lb.lower() / "summary.json").read_text())
        assert float(r[1]) == pytest.approx(summary["max_fct_us"], abs=0.05)
        assert float(r[1]) / float(r[2]) == pytest.approx(_ideal(tmp_path / "demo" / lb.lower()), rel=2e-3)
    assert all(r > 0.9 for r in ratio.values()), ratio
    # The demo's point: spraying beats ECMP's hash collisions on a permutation.
    assert ratio["REPS"] < ratio["ECMP"] and ratio["OPS"] < ratio["ECMP"]
    assert elapsed < 60


def _ideal(run_dir: Path) -> float:
    """The engine's ideal of a run's largest message."""
    return float(pd.read_parquet(run_dir / "flows.parquet")["ideal_fct_us"].max())


def test_plot_run_and_sweep_dirs(cli, small_file: Path, tmp_path: Path) -> None:
    cli("sweep", str(small_file), "--grid", "lb.kind=ecmp,ops,reps", "--workers", "2", "--out", "sw", check=True)
    p = cli("plot", "sw", "--baseline", "ecmp", check=True)
    for name in ("fct_cdf", "completion"):
        assert (tmp_path / "sw" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / "sw" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
        assert f"{name}.png" in p.stdout
    p = cli("plot", "sw", "--baseline", "warp")
    assert p.returncode == 2 and "warp" in p.stderr and "Traceback" not in p.stderr


def test_ctrl_c_stops_a_run_cleanly(tmp_path: Path) -> None:
    f = tmp_path / "long.toml"
    f.write_text('preset = "reps_artifact"\n[workload]\nkind = "permutation"\nsize = "512MiB"\n')
    env = dict(os.environ, LBSIM_PROGRESS="0")
    proc = subprocess.Popen(
        [*lbsim_command(), "run", str(f), "--out", "o"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(2.0)
    assert proc.poll() is None, "the run ended before the interrupt"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err


def test_ctrl_c_stops_a_sweep_and_its_workers(tmp_path: Path) -> None:
    f = tmp_path / "perm.toml"
    f.write_text('preset = "reps_artifact"\n[workload]\nkind = "permutation"\nsize = "32MiB"\n')
    env = dict(os.environ, LBSIM_PROGRESS="0")
    args = ["sweep", str(f), "--grid", "lb.kind=ecmp,ops,reps", "--grid", "seed=1,2", "--workers", "2", "--out", "sw"]
    proc = subprocess.Popen(
        [*lbsim_command(), *args], cwd=tmp_path, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(3.0)  # workers started and busy
    assert proc.poll() is None, "the sweep ended before the interrupt"
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, (out, err)
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(proc.pid)], capture_output=True, text=True).stdout
    # A zombie is dead; its state may carry flags ("ZN" under nice).
    alive = [line for line in ps.splitlines() if not line.split()[1].startswith("Z")]
    assert not alive, f"processes left running: {ps}"
    idx = pd.read_parquet(tmp_path / "sw" / "index.parquet")
    assert (idx["status"] != "done").any()
