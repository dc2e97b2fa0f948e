"""The Rust command ``lbsim-cli`` (clap): errors, help, ``bench --json``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def lbsim_cli() -> Path:
    """The release binary, built if cargo is here (``cargo test --workspace --release`` builds it too)."""
    exe = REPO / "target" / "release" / "lbsim-cli"
    if shutil.which("cargo"):
        subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", "lbsim-cli"], cwd=REPO, check=True, timeout=1800
        )
    if not exe.is_file():
        pytest.skip("no cargo to build lbsim-cli")
    return exe


def run(exe: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["run", "--frobnicate", "x.toml"], "--frobnicate"),
        (["run", "missing.toml"], "missing.toml"),
        (["validate"], "<FILE>"),
        (["run", "x.toml", "--set", "lb.kind"], "key=value"),
        (["bench", "--hosts", "lots"], "--hosts"),
        (["bench", "--hosts", "32", "--size", "8 parsecs"], "workload.size"),
        (["bench", "--tiers", "4"], "--tiers"),
        (["bench", "--repeat", "0"], "--repeat"),
        # 4096 hosts do not fit 2 tiers of radix 64 (64 ToRs x 32 hosts): the core names the key.
        (["bench", "--hosts", "4096", "--tiers", "2"], "topology.hosts"),
        (["bench", "--hosts", "32", "--radix", "1"], "topology.radix"),
        (["bench", "--hosts", "32", "--radix", "lots"], "--radix"),
    ],
)
def test_errors_exit_2_with_one_line(lbsim_cli: Path, tmp_path: Path, args: list[str], named: str) -> None:
    p = run(lbsim_cli, *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("error: ") and named in p.stderr, p.stderr


def test_help(lbsim_cli: Path) -> None:
    p = run(lbsim_cli, "--help")
    assert p.returncode == 0 and all(cmd in p.stdout for cmd in ("run", "validate", "bench"))
    p = run(lbsim_cli, "bench", "--help")
    assert p.returncode == 0 and "--json" in p.stdout and "--size" in p.stdout


def test_run_and_validate(lbsim_cli: Path, small_file: Path, tmp_path: Path) -> None:
    p = run(lbsim_cli, "validate", str(small_file), "--set", "lb.kind=ops", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.startswith("ok"), p.stderr
    p = run(lbsim_cli, "run", str(small_file), "--set", "workload.size=64KiB", "--out", "o", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "results: o" in p.stdout and 'size = "64KiB"' in (tmp_path / "o" / "scenario.toml").read_text()


def test_bench_json(lbsim_cli: Path) -> None:
    p = run(lbsim_cli, "bench", "--json", "--hosts", "32", "--size", "64KiB")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.strip().splitlines()) == 1
    j = json.loads(p.stdout)
    fields = {"hosts", "lb", "size", "events", "wall_seconds", "events_per_second", "peak_rss_mb", "max_fct_us",
              "ideal_fct_us"}
    assert fields <= set(j)
    assert (j["hosts"], j["lb"], j["size"], j["size_bytes"]) == (32, "reps", "64KiB", 64 * 1024)
    assert j["events"] > 0 and j["wall_seconds"] > 0
    assert j["events_per_second"] == pytest.approx(j["events"] / j["wall_seconds"], rel=1e-9)
    assert j["peak_rss_mb"] is None or j["peak_rss_mb"] > 0
    # The engine's ideal of a lone 64 KiB message: at least its size at line rate, and
    # REPS on one idle ToR reaches it.
    assert j["ideal_fct_us"] > 64 * 1024 * 8 / 400e3
    assert j["max_fct_us"] == pytest.approx(j["ideal_fct_us"], rel=0.05)


def test_bench_hops_are_the_same_work_with_either_line_mode(lbsim_cli: Path) -> None:
    """`hops` counts packets put on links. The 32 hosts of a radix-64 tree share one ToR, so
    each of the 32 messages of 64 KiB (17 packets of 4086 B payload under the artifact preset)
    and each packet's ACK cross exactly 2 links: 32 x 34 x 2. Lazy lines drop events, not hops."""
    runs = {}
    for lines in ("lazy", "eager"):
        p = run(lbsim_cli, "bench", "--json", "--hosts", "32", "--size", "64KiB", "--lines", lines)
        assert p.returncode == 0, p.stderr
        runs[lines] = json.loads(p.stdout)
        assert runs[lines]["lines"] == lines
        assert runs[lines]["hops"] == 32 * (17 + 17) * 2
        assert runs[lines]["hops_per_second"] == pytest.approx(
            runs[lines]["hops"] / runs[lines]["wall_seconds"], rel=1e-9
        )
    assert runs["lazy"]["events"] < runs["eager"]["events"]


def test_bench_tiers_and_repeats(lbsim_cli: Path) -> None:
    """Beyond 2048 hosts the benchmark's tree has 3 tiers; repeated runs report the
    fastest and the median, and the same events (the engine is deterministic)."""
    p = run(lbsim_cli, "bench", "--json", "--hosts", "4096", "--size", "4KiB")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert (j["hosts"], j["tiers"], j["repeat"]) == (4096, 3, 1)
    # One packet per host, stored and forwarded: its ideal grows with the links it
    # crosses, 6 on a 3-tier tree against 4 on a 2-tier one; no flow beats it, and
    # random entropies collide at most a few packets deep.
    two_tier = json.loads(run(lbsim_cli, "bench", "--json", "--hosts", "64", "--size", "4KiB").stdout)
    assert j["ideal_fct_us"] == pytest.approx(1.5 * two_tier["ideal_fct_us"], rel=0.01)
    assert j["ideal_fct_us"] <= j["max_fct_us"] < 1.5 * j["ideal_fct_us"]
    p = run(lbsim_cli, "bench", "--json", "--hosts", "64", "--size", "64KiB", "--repeat", "3")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert (r["tiers"], r["repeat"]) == (2, 3)
    assert 0 < r["wall_seconds"] <= r["wall_seconds_median"]
    assert r["events_per_second"] == pytest.approx(r["events"] / r["wall_seconds"], rel=1e-9)
    single = json.loads(run(lbsim_cli, "bench", "--json", "--hosts", "64", "--size", "64KiB").stdout)
    assert (single["events"], single["max_fct_us"]) == (r["events"], r["max_fct_us"])


def test_bench_radix_decides_the_tiers(lbsim_cli: Path) -> None:
    """``--radix k`` builds the tree of k-port switches, and 2 tiers hold k^2/2 hosts: 128 hosts
    fit 2 tiers of radix 16 (16 ToRs of 8) but need 3 of radix 8; the 3-tier packet crosses 6
    links instead of 4, so its ideal completion time is 1.5 times as long."""
    runs = {}
    for radix in ("16", "8"):
        p = run(lbsim_cli, "bench", "--json", "--hosts", "128", "--size", "4KiB", "--radix", radix)
        assert p.returncode == 0, p.stderr
        runs[radix] = json.loads(p.stdout)
    assert [(r["radix"], r["tiers"]) for r in runs.values()] == [(16, 2), (8, 3)]
    assert runs["8"]["ideal_fct_us"] == pytest.approx(1.5 * runs["16"]["ideal_fct_us"], rel=0.01)
    # A 3-tier path has two more links, so every packet and every ACK makes more hops.
    assert runs["8"]["hops"] > runs["16"]["hops"]


def test_results_do_not_depend_on_huge_pages(lbsim_cli: Path) -> None:
    """lbsim-cli asks its allocator (mimalloc) for transparent huge pages unless the user's
    MIMALLOC_ALLOW_LARGE_OS_PAGES says otherwise (lbsim_core::alloc); where memory lives must
    not move a result. A 3-tier tree, so routing, queues and flows span many pages."""
    import os

    def bench(large: str | None) -> dict:
        env = {k: v for k, v in os.environ.items() if k != "MIMALLOC_ALLOW_LARGE_OS_PAGES"}
        if large is not None:
            env["MIMALLOC_ALLOW_LARGE_OS_PAGES"] = large
        args = [str(lbsim_cli), "bench", "--json", "--hosts", "4096", "--size", "16KiB"]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    default, small_pages = bench(None), bench("0")
    assert (default["events"], default["max_fct_us"]) == (small_pages["events"], small_pages["max_fct_us"])


def test_flow_level_matches_python(lbsim_cli: Path, small_file: Path, tmp_path: Path) -> None:
    """``lbsim-cli flow-level`` writes the same rates as ``lbsim.flow_level`` (CSV there, Parquet here);
    ``bench --case flow-level --json`` reports its flows; a balancer without a flow-level model exits 2."""
    import pandas as pd

    import lbsim

    p = run(lbsim_cli, "flow-level", str(small_file), "--set", "lb.kind=ecmp", "--out", "fl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = tmp_path / "fl"
    csv = pd.read_csv(d / "flows.csv")
    api = lbsim.flow_level(lbsim.Scenario.load(small_file).set("lb.kind", "ecmp"))
    assert list(csv["path"]) == list(api.flows["path"])
    assert (csv["rate_bps"].to_numpy() == api.flows["rate_bps"].to_numpy()).all()
    assert json.loads((d / "summary.json").read_text()) == api.summary
    assert len(pd.read_csv(d / "ports.csv")) == len(api.ports)
    p = run(lbsim_cli, "flow-level", str(small_file), cwd=tmp_path)
    assert p.returncode == 2 and "lb.kind" in p.stderr and "wcmp" in p.stderr, p.stderr
    p = run(lbsim_cli, "bench", "--case", "flow-level", "--hosts", "128", "--flows", "500", "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["case"] == "flow-level" and j["flows"] == 500 and 0 <= j["congestion_rate"] <= 1
