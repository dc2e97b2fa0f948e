"""HTML reports (``lbsim report``, ``--report``, the demo's), opened in a real
headless Chromium: no console errors, no request leaving the file, every plot
rendered, the numbers on the page those of summary.json and index.parquet, and
a screenshot in results/screenshots/ for a person to look at."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import lbsim
from browser import Opened
from conftest import REPO

TRACE = """\
name = "trace"
seed = 3
[topology]
hosts = 16
[lb]
kind = "reps"
[workload]
kind = "trace"
cdf = "websearch"
load = 0.6
duration = "300us"
[observe]
ports = ["t0_0"]
bucket = "10us"
drops = true
rtt = true
"""


def flat(summary: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in summary.items():
        if isinstance(v, dict):
            out.update({f"{k}.{k2}": v2 for k2, v2 in v.items()})
        else:
            out[k] = v
    return out


def shown_number(text: str) -> float | None:
    """A number as the page shows it ("9,620,480.0", "1.026", "–") as a float."""
    t = text.replace(",", "").strip()
    if t in ("–", ""):
        return None
    return float(t)


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def assert_clean_page(o: Opened, min_images: int) -> list[dict[str, Any]]:
    """No console or script error, no network request, and at least
    ``min_images`` images, each decoded and drawn at a non-zero size."""
    assert o.problems() == []
    imgs = o.images()
    assert len(imgs) >= min_images, imgs
    for im in imgs:
        assert im["complete"] and im["natural"][0] > 0 and im["natural"][1] > 0, im
        assert im["shown"][0] > 100 and im["shown"][1] > 50, im
        assert im["kind"] in ("data:image/svg+xml", "data:image/png"), im
    return imgs


def assert_self_contained(html: str) -> None:
    """Nothing the page loads lives outside it (links to other reports are fine)."""
    assert not re.search(r"""(src|srcset)\s*=\s*["'](?!data:)""", html), "an image or script loads a file"
    assert not re.search(r"<link[^>]+href=[\"'](?!data:)", html), "a stylesheet or icon is linked"
    assert not re.search(r"url\((?!data:)", html) and "@import" not in html
    assert "<script src" not in html


def assert_summary_table(o: Opened, summary: dict[str, Any]) -> None:
    """Every value of summary.json is on the page, exactly (data-value) and as shown (to its decimals)."""
    expect = flat(summary)
    keys = o.data("#summary-table tr[data-key]", "data-key")
    values = o.data("#summary-table tr[data-key]", "data-value")
    shown = o.texts("#summary-table tr[data-key] td.value")
    assert keys == list(expect)
    for k, v, text in zip(keys, values, shown):
        assert json.loads(v) == expect[k], k
        want = expect[k]
        if isinstance(want, bool):
            assert text == ("yes" if want else "no")
        elif isinstance(want, (int, float)):
            assert shown_number(text) == pytest.approx(want, abs=0.51 * 10 ** -decimals(text)), (k, text)
        elif want is None:
            assert text == "–", k
        else:
            assert text == str(want)


def card(o: Opened, key: str) -> tuple[Any, str]:
    value = o.page.get_attribute(f'.card[data-key="{key}"]', "data-value")
    text = o.page.inner_text(f'.card[data-key="{key}"] .value')
    return json.loads(value or "null"), text


# ---- a run --------------------------------------------------------------


def test_run_report_in_browser(cli, tmp_path: Path, browser) -> None:
    (tmp_path / "trace.toml").write_text(TRACE)
    p = cli("run", "trace.toml", "--out", "tr", "--report", "--quiet", check=True)
    html_path = tmp_path / "tr" / "report.html"
    assert f"report:  {Path('tr') / 'report.html'}" in p.stdout
    html = html_path.read_text()
    assert_self_contained(html)
    summary = json.loads((tmp_path / "tr" / "summary.json").read_text())
    assert summary["unfinished_flows"] == 0 and summary["measured_flows"] >= 40
    with browser.open(html_path) as o:
        # CDFs, slowdown per size bucket, ports, imbalance, RTT.
        imgs = assert_clean_page(o, min_images=5)
        ids = o.data("figure", "id")
        assert {"fct-cdf", "size-bins-plot", "ports-plot", "imbalance-plot", "rtt-cdf"} <= set(ids), ids
        assert_summary_table(o, summary)
        # The headline cards say the same as summary.json.
        v, text = card(o, "max_fct_us")
        assert v == summary["max_fct_us"] and shown_number(text.split("µs")[0]) == pytest.approx(v, abs=0.005)
        v, text = card(o, "finished_flows")
        assert text == f"{summary['finished_flows']} / {summary['flows']}"
        assert o.page.locator(".alert").count() == 0  # every flow finished: no warning
        # The size buckets hold every measured message once.
        counts = [int(x.replace(",", "")) for x in o.texts("#size-bins-table tbody td:nth-child(3)")]
        assert sum(counts) == summary["measured_flows"] and len(counts) == min(20, summary["measured_flows"] // 10)
        # One row per sampled port, bytes as in ports.parquet.
        ports = pd.read_parquet(tmp_path / "tr" / "ports.parquet").groupby("port", sort=False)["tx_bytes"].sum()
        rows = [t.split("\t") for t in o.texts("#ports-table tbody tr")]
        assert {r[0]: int(r[1].replace(",", "")) for r in rows} == {str(k): int(v) for k, v in ports.items()}
        # Provenance and the scenario.
        provenance = o.page.inner_text("#provenance")
        assert "lbsim version" in provenance
        commit = json.loads((tmp_path / "tr" / "run.json").read_text())["git_commit"]
        assert commit == (lbsim._core.git_commit or None)
        assert (commit or "not known") in provenance
        assert 'cdf = "websearch"' in o.page.text_content("#provenance pre")
        shot = o.screenshot("run-report")
    assert shot.stat().st_size > 50_000
    assert len(imgs) == len(ids)
    # Built from this checkout (as the README and .ci/run do): the commit is one of its own.
    if (REPO / ".git").exists() and shutil.which("git"):
        assert commit and re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit), commit
        sha = commit.removesuffix("-dirty")
        assert subprocess.run(["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=REPO).returncode == 0, commit


def test_unfinished_flows_are_called_out_first(tmp_path: Path, browser) -> None:
    s = lbsim.Scenario.from_dict(
        {"seed": 1, "topology": {"hosts": 16}, "lb": {"kind": "ecmp"},
         "workload": {"kind": "permutation", "size": "256KiB"}, "stop_at": "8us"}
    )
    r = lbsim.run(s, progress=False, out=tmp_path / "unf")
    n, total = r.summary["unfinished_flows"], r.summary["flows"]
    assert 0 < n < total and r.stop_reason == "horizon"
    path = lbsim.report.report(tmp_path / "unf")
    assert path == tmp_path / "unf" / "report.html"
    with browser.open(path) as o:
        assert_clean_page(o, min_images=1)
        alert = o.page.locator(".alert").first
        assert alert.is_visible()
        text = alert.inner_text()
        assert f"{n} of {total} flows did not finish" in text and "stop_at = 8us" in text
        # It is the first thing after the header: above the headline numbers.
        assert alert.bounding_box()["y"] < o.page.locator(".cards").bounding_box()["y"]
        # The unfinished messages, listed (up to ten).
        listed = [int(x) for x in o.texts(".alert #unfinished tbody td:first-child")]
        m = r.messages
        assert listed == [int(x) for x in m[~m["finished"]]["message"].head(10)]
        assert card(o, "max_fct_us")[1] == "unfinished"
        assert_summary_table(o, r.summary)
        o.screenshot("run-report-unfinished")


PFC_INCAST = """\
name = "pfc-incast"
seed = 1
[topology]
hosts = 16
link_rate = "100Gbps"
[queue]
kind = "shared"
ecn_kmin = "100KB"
ecn_kmax = "400KB"
[queue.shared]
size = "2MiB"
egress_alpha = 1.0
egress_limits_lossless = false
data_class = 3
scheduling = "round_robin"
pfc = true
pfc_alpha = 0.0625
headroom = "60KB"
hysteresis = "2pkt"
pause_time = "5us"
deadlock_after = "1ms"
[lb]
kind = "ecmp"
[workload]
kind = "incast"
senders = 8
size = "1MiB"
[observe]
ports = ["t1_0"]
bucket = "10us"
"""


def test_pfc_is_reported(cli, tmp_path: Path, browser) -> None:
    (tmp_path / "pfc.toml").write_text(PFC_INCAST)
    cli("run", "pfc.toml", "--out", "pfc", "--report", "--quiet", check=True)
    d = tmp_path / "pfc"
    summary = json.loads((d / "summary.json").read_text())
    assert summary["pfc_pauses"] > 0 and summary["stop_reason"] == "drained" and summary["unfinished_flows"] == 0
    pfc = pd.read_parquet(d / "pfc.parquet")
    active = pfc[(pfc["pauses_sent"] > 0) | (pfc["pauses_received"] > 0)]
    assert 0 < len(active) <= 20
    with browser.open(d / "report.html") as o:
        assert_clean_page(o, min_images=2)
        assert_summary_table(o, summary)
        assert o.page.locator(".alert").count() == 0
        v, text = card(o, "pfc_pauses")
        assert v == summary["pfc_pauses"] and text.startswith(f"{summary['pfc_pauses']:,}")
        assert "PFC" in o.page.inner_text("#loss h2")
        # A row per port that sent or received a frame, paused longest first, as in pfc.parquet.
        rows = [t.split("\t") for t in o.texts("#pfc-table tbody tr")]
        got = {r[0]: (int(r[1]), int(r[2]), int(r[3]), float(r[4])) for r in rows}
        want = {x.port: (x.pauses_sent, x.resumes_sent, x.pauses_received, round(x.paused_us, 2))
                for x in active.itertuples()}
        assert got == want
        paused = [float(r[4]) for r in rows]
        assert paused == sorted(paused, reverse=True) and paused[0] > 0
        # The sampled ports' time paused, as in ports.parquet.
        header = o.texts("#ports-table thead th")
        i = header.index("paused by PFC (µs)")
        shown = {r[0]: float(r[i]) for r in (t.split("\t") for t in o.texts("#ports-table tbody tr"))}
        ports = pd.read_parquet(d / "ports.parquet").groupby("port")["paused_us"].sum()
        assert shown == {k: round(v, 2) for k, v in ports.items()} and max(shown.values()) > 0
        o.screenshot("run-report-pfc")
    # A run the PFC watchdog ended says so first, in red (the stop reason as run.json records it).
    meta = json.loads((d / "run.json").read_text())
    (d / "run.json").write_text(json.dumps({**meta, "stop_reason": "pfc_deadlock"}))
    html = lbsim.report.report(d).read_text()
    alert = re.search(r'<div class="alert bad" role="alert" data-alert="PFC deadlock">(.*?)</div>', html, re.DOTALL)
    assert alert and 'deadlock_after' in alert.group(1) and "1ms" in alert.group(1)


# ---- a sweep ------------------------------------------------------------


def test_sweep_report_in_browser(cli, small_file: Path, tmp_path: Path, browser) -> None:
    p = cli(
        "sweep", str(small_file), "--grid", "lb.kind=ecmp,reps", "--grid", "workload.size=64KiB,256KiB",
        "--grid", "seed=1,2", "--workers", "2", "--out", "sw", "--report", "--quiet", check=True,
    )
    report = tmp_path / "sw" / "report.html"
    assert f"report:  {Path('sw') / 'report.html'}" in p.stdout
    idx = pd.read_parquet(tmp_path / "sw" / "index.parquet")
    assert len(idx) == 8
    assert_self_contained(report.read_text())
    with browser.open(report) as o:
        assert_clean_page(o, min_images=1)
        assert "against-workload-size" in o.data("figure", "id")
        assert (lbsim._core.git_commit or "not known") in o.page.inner_text("#provenance")
        # One row per point, in the index's order, with its swept values.
        assert o.data("#points-table tbody tr", "data-run-id") == list(idx["run_id"])
        rows = [t.split("\t") for t in o.texts("#points-table tbody tr")]
        header = o.texts("#points-table thead th")
        col = {h: i for i, h in enumerate(header)}
        for row, rec in zip(rows, idx.to_dict("records")):
            assert row[col["lb.kind"]] == {"ecmp": "ECMP", "reps": "REPS"}[rec["lb.kind"]]
            assert row[col["workload.size"]] == rec["workload.size"] and row[col["seed"]] == str(rec["seed"])
        # Every point's numbers are its summary.json's.
        for run_id in idx["run_id"]:
            s = json.loads((tmp_path / "sw" / "runs" / run_id / "summary.json").read_text())
            for metric in ("max_fct_us", "mean_fct_us", "p99_fct_us", "p99_slowdown", "retransmissions"):
                v = o.page.get_attribute(f'tr[data-run-id="{run_id}"] td[data-metric="{metric}"]', "data-value")
                assert json.loads(v or "null") == s[metric], (run_id, metric)
        # Sorting: a click on a header sorts by that column, a second click reverses.
        i = col["max FCT (µs)"]
        th = o.page.locator("#points-table thead th").nth(i)

        def column() -> list[float]:
            return [float(x) for x in o.data(f"#points-table tbody td:nth-child({i + 1})", "data-sort")]

        th.click()
        assert column() == sorted(column()) and th.get_attribute("aria-sort") == "ascending"
        th.click()
        assert column() == sorted(column(), reverse=True) and th.get_attribute("aria-sort") == "descending"
        hrefs = o.data("#points-table tbody td:first-child a", "href")
        o.screenshot("sweep-report")
    # Each point links to its own report, whose numbers are that run's.
    assert len(hrefs) == 8
    target = (report.parent / hrefs[0]).resolve()
    assert target.is_file() and target.parent.name in set(idx["run_id"])
    with browser.open(target) as o:
        assert_clean_page(o, min_images=1)
        assert_summary_table(o, json.loads((target.parent / "summary.json").read_text()))
    # Written elsewhere: the links still reach the points' reports (kept, not redrawn, with --no-runs).
    before = target.stat().st_mtime_ns
    p = cli("report", "sw", "--out", "elsewhere/sweep.html", "--no-runs", check=True)
    assert p.stdout.strip() == str(Path("elsewhere") / "sweep.html")
    other = tmp_path / "elsewhere" / "sweep.html"
    links = re.findall(r'<td class="text [^"]*"[^>]*><a href="([^"]+)"', other.read_text())
    assert len(links) == 8 and all((other.parent / h).resolve().is_file() for h in links)
    assert target.stat().st_mtime_ns == before


def test_demo_report_says_which_scheme_won(cli, tmp_path: Path, browser) -> None:
    p = cli("demo", "--out", "demo", "--quiet", check=True, timeout=180)
    report = tmp_path / "demo" / "report.html"
    assert f"report:  {Path('demo') / 'report.html'}" in p.stdout
    with browser.open(report) as o:
        assert_clean_page(o, min_images=2)
        lbs = o.data("#by-lb-table tbody td:first-child", "data-lb")
        assert lbs == ["ecmp", "ops", "reps"]  # the plots' order and names
        means = {}
        for lb in lbs:
            s = json.loads((tmp_path / "demo" / lb / "summary.json").read_text())
            means[lb] = s["max_fct_us"]
            v = o.page.get_attribute(f'tr[data-name="{lb}"] td[data-metric="max_fct_us"]', "data-value")
            assert json.loads(v or "null") == s["max_fct_us"]
        best = min(means, key=means.__getitem__)
        winner = o.page.inner_text("#winner")
        assert winner.startswith(lbsim.plot.style.label(best)) and f"{means[best]:.1f} µs" in winner
        # The table's row per run links to that run's report.
        hrefs = o.data("#points-table tbody td:first-child a", "href")
        assert sorted(hrefs) == sorted(f"{lb}/report.html" for lb in lbs)
        o.screenshot("demo-report")
    for lb in lbs:
        assert (tmp_path / "demo" / lb / "report.html").is_file()


# ---- errors -------------------------------------------------------------


def _broken(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Broken results directories and a word the error must name."""
    s = lbsim.Scenario.from_dict({"topology": {"hosts": 16}, "workload": {"kind": "permutation", "size": "64KiB"}})
    good = lbsim.run(s, progress=False, out=tmp_path / "good").path
    assert good is not None
    import shutil

    def copy(name: str) -> Path:
        d = tmp_path / name
        shutil.copytree(good, d)
        return d

    cases: dict[str, tuple[Path, str]] = {}
    cases["missing"] = (tmp_path / "nowhere", "does not exist")
    (tmp_path / "empty").mkdir()
    cases["empty"] = (tmp_path / "empty", "is empty")
    d = copy("badjson")
    (d / "summary.json").write_text("{oops")
    cases["badjson"] = (d, "summary.json: not valid JSON")
    d = copy("noflows")
    (d / "flows.parquet").unlink()
    cases["noflows"] = (d, "missing flows.parquet")
    d = copy("badparquet")
    (d / "flows.parquet").write_bytes(b"not parquet")
    cases["badparquet"] = (d, "cannot read results")
    d = copy("badtoml")
    (d / "scenario.toml").write_text("[[oops")
    cases["badtoml"] = (d, "scenario.toml: not valid TOML")
    d = copy("notsummary")
    (d / "summary.json").write_text('{"flows": 3}')
    cases["notsummary"] = (d, "missing finished_flows")
    d = copy("halfrun")
    (d / "scenario.toml").unlink()
    cases["halfrun"] = (d, "incomplete run directory")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("hello")
    cases["other"] = (tmp_path / "other", "holds no lbsim results")
    cases["file"] = (good / "summary.json", "is not a directory")
    return cases


def test_broken_results_give_one_line_errors(cli, tmp_path: Path) -> None:
    for name, (path, words) in _broken(tmp_path).items():
        p = cli("report", str(path))
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, p.stderr)
        assert words in lines[0] and str(path.name) in lines[0], (name, lines[0])
        assert "Traceback" not in p.stderr and p.stdout == ""


def test_a_sweep_with_no_finished_point_is_an_error(cli, small_file: Path, tmp_path: Path) -> None:
    p = cli("sweep", str(small_file), "--grid", "workload.size=1MiB,2MiB", "--set", "topology.hosts=17",
            "--out", "bad", "--quiet")
    assert p.returncode != 0
    p = cli("report", "bad")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("error: ") and "none of the 2 points finished" in p.stderr
    assert "topology.hosts" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# ---- Jupyter ------------------------------------------------------------


def test_results_show_html_in_jupyter(small_file: Path, tmp_path: Path, browser) -> None:
    s = lbsim.Scenario.load(small_file)
    r = lbsim.run(s.with_overrides({"stop_at": "8us"}), progress=False)
    html = r._repr_html_()
    assert "did not finish" in html and 'data-key="finished_flows"' in html
    sw = lbsim.sweep(s, {"lb.kind": ["ecmp", "ops", "reps"]}, out=tmp_path / "sw", workers=2, progress=False)
    shtml = sw._repr_html_()
    page = tmp_path / "cells.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><body>{html}<hr>{shtml}</body>")
    with browser.open(page) as o:
        assert o.problems() == []
        v, text = card(o, "finished_flows")
        assert text == f"{r.summary['finished_flows']} / {r.summary['flows']}"
        assert o.page.locator(".alert").first.is_visible()
        assert o.data("#points-table tbody tr", "data-run-id") == list(sw.index["run_id"])
        o.screenshot("jupyter-cells")


def test_describe_scenario_names_collective_ranks_and_matrix_files() -> None:
    from lbsim.report.run import describe_scenario

    ring = {"workload": {"kind": "ring_allreduce", "size": "256000000B", "ranks": 64}}
    assert describe_scenario(ring).startswith("256000000B ring allreduce over 64 hosts")
    cm = {"workload": {"kind": "connection_matrix", "file": "/data/htsim/alltoall8.cm"}}
    assert describe_scenario(cm).startswith("connection matrix from alltoall8.cm")
