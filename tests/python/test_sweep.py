"""Sweeps through the Python API: failures recorded, duplicates run once, results loadable."""

from __future__ import annotations

import concurrent.futures as cf
import json
import subprocess
import sys
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


def test_run_key_parts_come_from_one_resolution(tmp_path: Path) -> None:
    """Scenario._keyed (what a sweep plans with) agrees with key(), resolved()
    and input_file_keys(), and the key keeps its formula (sweep directories
    written before stay resumable)."""
    import hashlib

    (tmp_path / "flows.csv").write_text("src,dst,size_bytes,start_us\n0,9,100000,0\n")
    (tmp_path / "sizes.cdf").write_text("0 0\n1000 50\n20000 100\n")
    with_file = lbsim.Scenario.from_toml(
        '[topology]\nhosts = 16\n[workload]\nkind = "flows"\nfile = "flows.csv"\n', base_dir=tmp_path
    )
    with_cdf = lbsim.Scenario.from_toml(
        '[topology]\nhosts = 16\n[workload]\nkind = "trace"\ncdf = "sizes.cdf"\nload = 0.5\nduration = "20us"\n',
        base_dir=tmp_path,
    )
    builtin_cdf = lbsim.Scenario.from_toml(
        '[topology]\nhosts = 16\n[workload]\nkind = "trace"\ncdf = "websearch"\nload = 0.5\nduration = "20us"\n'
    )
    plain = lbsim.Scenario.from_toml(SMALL)
    assert [k for k, _, _ in with_file.input_file_keys()] == ["workload.file"]
    assert [k for k, _, _ in with_cdf.input_file_keys()] == ["workload.cdf"]
    assert builtin_cdf.input_file_keys() == [] and plain.input_file_keys() == []
    for s in (with_file, with_cdf, builtin_cdf, plain):
        key, text, inputs = s._keyed()
        assert (key, text, inputs) == (s.key(), s.resolved(), s.input_file_keys())
        h = hashlib.sha256(f"lbsim {lbsim.__version__}\n".encode() + text.encode())
        for k, name, path in sorted(inputs):
            tag = f"file {name} " if k == "workload.file" else f"{k} {name} "
            h.update(f"\n{tag}".encode() + hashlib.sha256(path.read_bytes()).digest())
        assert key == h.hexdigest()[:16]


def test_sweep_writes_each_points_resolved_scenario(tmp_path: Path) -> None:
    base = lbsim.Scenario.from_toml(SMALL)
    grid = {"lb.kind": ["ecmp", "ops"], "seed": [1, 2]}
    res = lbsim.sweep(base, grid, out=tmp_path / "sw", workers=2, progress=False)
    idx = res.index
    assert len(idx) == 4 and (idx["status"] == "done").all()
    for row in idx.to_dict("records"):
        s = base.with_overrides({k: row[k] for k in grid})
        assert row["run_id"] == s.key()
        assert (tmp_path / "sw" / row["path"] / "scenario.toml").read_text() == s.resolved()


def test_the_local_pool_is_stopped_whatever_the_sweep_does(tmp_path: Path, monkeypatch) -> None:
    """The pool's workers start before the sweep is planned: they are gone
    afterwards when there was nothing to run, and when planning failed."""
    import importlib
    import multiprocessing

    sweep_mod = importlib.import_module("lbsim.sweep")
    base = lbsim.Scenario.from_toml(SMALL)
    first = lbsim.sweep(base, {"seed": [1]}, out=tmp_path / "sw", workers=1, progress=False)
    assert first.stats["ran"] == 1
    assert multiprocessing.active_children() == []
    again = lbsim.sweep(base, {"seed": [1]}, out=tmp_path / "sw", workers=1, progress=False)
    assert again.stats["ran"] == 0 and again.stats["already_done"] == 1
    assert multiprocessing.active_children() == []

    def broken_plan(self):
        raise RuntimeError("plan failed")

    monkeypatch.setattr(sweep_mod._Sweep, "plan", broken_plan)
    try:
        lbsim.sweep(base, {"seed": [2]}, out=tmp_path / "sw", workers=1, progress=False)
    except RuntimeError as e:
        assert "plan failed" in str(e)
    else:
        raise AssertionError("the sweep did not fail")
    assert multiprocessing.active_children() == []


def test_a_pool_whose_worker_could_not_start_is_replaced(tmp_path: Path) -> None:
    import importlib

    sweep_mod = importlib.import_module("lbsim.sweep")
    sw = sweep_mod._Sweep(lbsim.Scenario.from_toml(SMALL), {"seed": [1, 2]}, tmp_path / "sw", False, True)
    todo = sw.plan()
    bad: cf.Future[int] = cf.Future()
    bad.set_exception(cf.process.BrokenProcessPool("a worker died while starting"))
    started = sweep_mod._StartedPool(sweep_mod._process_pool(1), [bad])
    sw.execute(todo, None, 1, started)
    assert started.pool._shutdown_thread  # the first pool was stopped ...
    assert sw.stats["ok"] == 2 and sw.stats["failed"] == 0  # ... and the runs made on a fresh one


def test_a_worker_makes_a_temporary_folder_only_for_input_files(tmp_path: Path, monkeypatch) -> None:
    import lbsim._worker as worker

    made: list[str] = []
    real = worker.tempfile.TemporaryDirectory

    def recording(*a, **k):
        d = real(*a, **k)
        made.append(d.name)
        return d

    monkeypatch.setattr(worker.tempfile, "TemporaryDirectory", recording)
    s = lbsim.Scenario.from_toml(SMALL)
    reply = worker.run_task({"key": s.key(), "toml": s.resolved(), "files": {}})
    assert reply["ok"] and made == []
    csv = "src,dst,size_bytes,start_us\n0,9,100000,0\n"
    flows = lbsim.Scenario.from_toml('[topology]\nhosts = 16\n[workload]\nkind = "flows"\nfile = "f.csv"\n')
    reply = worker.run_task(
        {"key": "k", "toml": flows.resolved(), "files": {"workload.file": ("f.csv", csv.encode())}}
    )
    assert reply["ok"] and len(made) == 1 and not Path(made[0]).exists()
    assert json.loads(reply["raw"]["summary_json"])["flows"] == 1


def test_a_callers_executor_gets_one_warm_up_per_worker(tmp_path: Path) -> None:
    """Each worker of a given executor (a Dask client's included) gets a no-op
    task while the sweep is planned, with distinct arguments: Dask would run
    identical calls once, on one worker."""
    import importlib

    sweep_mod = importlib.import_module("lbsim.sweep")

    class Recording(cf.ThreadPoolExecutor):
        def __init__(self) -> None:
            super().__init__(2)
            self.calls: list[tuple[str, tuple]] = []

        def submit(self, fn, /, *args, **kwargs):
            self.calls.append((fn.__name__, args))
            return super().submit(fn, *args, **kwargs)

    class FakeClient:  # what _warm_up uses of a distributed.Client
        def __init__(self, ex: cf.Executor) -> None:
            self.ex = ex

        def nthreads(self) -> dict[str, int]:
            return {"tcp://a": 1, "tcp://b": 1, "tcp://c": 1}

        def get_executor(self) -> cf.Executor:
            return self.ex

    with Recording() as ex:
        res = lbsim.sweep(lbsim.Scenario.from_toml(SMALL), {"seed": [1, 2]}, out=tmp_path / "sw", executor=ex,
                          workers=2, progress=False)
        assert res.stats["ok"] == 2
        assert ex.calls[:2] == [("ready", (0,)), ("ready", (1,))]
        assert [name for name, _ in ex.calls[2:]] == ["run_task", "run_task"]
        ex.calls.clear()
        warm = sweep_mod._warm_up(FakeClient(ex), None)
        assert [f.result() > 0 for f in warm] == [True] * 3
        assert ex.calls == [("ready", (0,)), ("ready", (1,)), ("ready", (2,))]
        assert sweep_mod._warm_up(ex, None) == []  # the number of workers unknown: none


class _Recording(cf.ThreadPoolExecutor):
    """A thread pool that records what is submitted: (function name, number of runs)."""

    def __init__(self, n: int = 2) -> None:
        super().__init__(n)
        self.calls: list[tuple[str, int]] = []

    def submit(self, fn, /, *args, **kwargs):
        runs = len(args[0]) if fn.__name__ == "run_tasks" else 1
        self.calls.append((fn.__name__, runs))
        return super().submit(fn, *args, **kwargs)


def _run_files(d: Path) -> dict[str, bytes]:
    """A sweep's files that do not hold timings, by path."""
    out = {}
    for p in sorted(d.glob("runs/*/*")):
        if p.name in ("run.json", "summary.json"):
            continue  # worker_seconds, wall_seconds
        out[str(p.relative_to(d))] = p.read_bytes()
    return out


def test_short_runs_are_batched_with_the_same_results(tmp_path: Path, monkeypatch) -> None:
    import importlib

    sweep_mod = importlib.import_module("lbsim.sweep")
    base = lbsim.Scenario.from_toml(SMALL)
    grid = {"lb.kind": ["ecmp", "reps"], "seed": list(range(1, 21))}
    with _Recording() as ex:
        batched = lbsim.sweep(base, grid, out=tmp_path / "batched", executor=ex, workers=2, progress=False)
        sizes = [k for name, k in ex.calls if name != "ready"]
    assert sum(sizes) == 40 and max(sizes) > 1  # short runs went several to a task ...
    assert sizes[-1] == 1  # ... and the last ones alone, so the workers finish together
    monkeypatch.setattr(sweep_mod, "_BATCH_TARGET_S", 0.0)  # one run per task
    with _Recording() as ex:
        single = lbsim.sweep(base, grid, out=tmp_path / "single", executor=ex, workers=2, progress=False)
        assert [name for name, _ in ex.calls if name != "ready"] == ["run_task"] * 40
    assert batched.stats == single.stats and batched.stats["ok"] == 40
    a, b = batched.index.drop(columns="wall_seconds"), single.index.drop(columns="wall_seconds")
    pd.testing.assert_frame_equal(a, b)
    files = _run_files(tmp_path / "batched")
    assert len(files) == 40 * 3 and files == _run_files(tmp_path / "single")
    for rel in a["path"]:
        meta = json.loads((tmp_path / "batched" / rel / "run.json").read_text())
        assert meta["worker_seconds"] > 0 and meta["attempt"] == 1


def test_a_failed_run_in_a_batch_leaves_its_batch_mates_done(tmp_path: Path, monkeypatch) -> None:
    import lbsim._worker as worker

    real = worker._core

    class Failing:  # the engine, failing the run of seed 17
        def __getattr__(self, name):
            return getattr(real, name)

        def run(self, toml, *a, **k):
            if "\nseed = 17\n" in toml:
                raise RuntimeError("boom")
            return real.run(toml, *a, **k)

    monkeypatch.setattr(worker, "_core", Failing())
    base = lbsim.Scenario.from_toml(SMALL)
    with _Recording() as ex:
        res = lbsim.sweep(base, {"seed": list(range(1, 41))}, out=tmp_path / "sw", executor=ex, workers=2,
                          progress=False)
        assert max(k for _, k in ex.calls) > 1
    assert res.stats["ok"] == 39 and res.stats["failed"] == 1
    idx = res.index
    bad = idx[idx["status"] == "failed"]
    assert list(bad["seed"]) == [17] and bad["error"].iloc[0] == "RuntimeError: boom"
    err = json.loads((tmp_path / "sw" / "runs" / bad["run_id"].iloc[0] / "error.json").read_text())
    assert err["error"] == "RuntimeError: boom" and err["params"] == {"seed": 17}
    assert (idx[idx["seed"] != 17]["status"] == "done").all() and (idx["attempts"] == 1).all()
    # Run again: only the failed point runs.
    monkeypatch.setattr(worker, "_core", real)
    again = lbsim.sweep(base, {"seed": list(range(1, 41))}, out=tmp_path / "sw", workers=1, progress=False)
    assert again.stats["already_done"] == 39 and again.stats["ran"] == 1 and again.stats["ok"] == 1


def test_a_batch_that_breaks_the_pool_runs_again_one_by_one(tmp_path: Path) -> None:
    """Which run of a batch took its worker down is unknown: each runs again
    alone (and none is recorded failed for it)."""
    import importlib

    sweep_mod = importlib.import_module("lbsim.sweep")

    class BreaksOnce(_Recording):
        def submit(self, fn, /, *args, **kwargs):
            if fn.__name__ == "run_tasks" and not any(name == "broken" for name, _ in self.calls):
                self.calls.append(("broken", len(args[0])))
                f: cf.Future = cf.Future()
                f.set_exception(cf.process.BrokenProcessPool("a worker died"))
                return f
            return super().submit(fn, *args, **kwargs)

    sw = sweep_mod._Sweep(lbsim.Scenario.from_toml(SMALL), {"seed": list(range(1, 31))}, tmp_path / "sw", False, True)
    todo = sw.plan()
    sw.runs_dir.mkdir(parents=True, exist_ok=True)
    pool = BreaksOnce()
    sw.execute(todo, None, 2, sweep_mod._StartedPool(pool, []))  # type: ignore[arg-type]
    broken = [k for name, k in pool.calls if name == "broken"]
    assert len(broken) == 1 and broken[0] > 1
    assert sw.stats["ok"] == 30 and sw.stats["failed"] == 0
    assert all(st.attempts == 1 for st in sw.runs.values())
    assert sum(st.alone for st in sw.runs.values()) == broken[0]


def test_batcher_sizes() -> None:
    from lbsim.sweep import _Batcher

    b = _Batcher(workers=2)
    assert b.size(100) == 1  # nothing timed yet
    b.observe({"worker_seconds": 0.05})
    assert b.size(100) == 10  # 0.5 s of 50 ms runs (100 // 8 = 12 allow it)
    assert b.size(40) == 5 and b.size(7) == 1  # a share of what is left per worker
    b.observe({"ok": False})  # no time: not counted
    b.observe({"worker_seconds": 2.95})  # runs longer than the target: one per task
    assert b.size(100) == 1


def test_a_sweep_driver_writes_without_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas on its first pa.array() call (hundreds of ms): a
    sweep's driver builds its Arrow arrays from buffers, and needs no pandas."""
    code = f"""
import concurrent.futures as cf, sys
import lbsim
base = lbsim.Scenario.from_toml({SMALL!r})
with cf.ThreadPoolExecutor(1) as ex:
    res = lbsim.sweep(base, {{"lb.kind": ["ecmp", "reps"]}}, out={str(tmp_path / "sw")!r}, executor=ex, progress=False)
assert res.stats["ok"] == 2, res.stats
assert "pandas" not in sys.modules, "the driver imported pandas"
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_small_tables_are_written_uncompressed_large_ones_with_zstd() -> None:
    """A run's small tables skip zstd, whose setup per column was most of a small file's cost
    (docs/performance-sweeps.md, third round); large ones keep it. Both read back the same."""
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lbsim.results import _COMPRESS_FROM_ROWS, _parquet_bytes

    for rows, codec in [(5, "UNCOMPRESSED"), (_COMPRESS_FROM_ROWS - 1, "UNCOMPRESSED"), (_COMPRESS_FROM_ROWS, "ZSTD")]:
        t = pa.table({"fct_us": np.arange(rows, dtype=np.float64), "lb": ["reps"] * rows})
        data = _parquet_bytes(t)
        f = pq.ParquetFile(io.BytesIO(data))
        assert f.metadata.row_group(0).column(0).compression == codec, rows
        assert f.read().equals(t)


def test_arrow_arrays_from_buffers_write_the_same_parquet() -> None:
    import numpy as np
    import pyarrow as pa

    from lbsim.results import _arrow_from_arrays, _arrow_from_values, _parquet_bytes

    cols = {
        "u": np.array([1, 2, 3, 2**40], np.uint64),
        "i": np.array([-1, 0, 7, 9], np.int32),
        "f": np.array([1.5, np.nan, -0.0, 3.0]),
        "b": np.array([True, False, True, True]),
        "s": np.array(["ecmp", "réps", "", None], dtype=object),
    }
    old = pa.table({
        "u": pa.array(cols["u"]), "i": pa.array(cols["i"]), "f": pa.array(cols["f"], mask=np.isnan(cols["f"])),
        "b": pa.array(cols["b"]), "s": pa.array(list(cols["s"]), pa.string()),
    })
    new = _arrow_from_arrays(cols)
    assert new.equals(old) and _parquet_bytes(new) == _parquet_bytes(old)
    values = {
        pa.string(): ["a", None, "ü", ""],
        pa.int64(): [1, None, -(2**62), 0],
        pa.uint64(): [0, 5, 2**63, 1],
        pa.float64(): [1.0, None, float("nan"), 2],
        pa.bool_(): [True, False, None, True],
    }
    for kind, vs in values.items():
        old_t, new_t = pa.table({"x": pa.array(vs, kind)}), pa.table({"x": _arrow_from_values(vs, kind)})
        assert _parquet_bytes(new_t) == _parquet_bytes(old_t), kind


def test_a_worker_imports_only_the_engine() -> None:
    """A pool or Dask worker imports lbsim._worker; lbsim's package loads the
    rest of its API on first use, so a worker starts without numpy, pandas,
    pyarrow, rich or the report and plot modules."""
    heavy = ["numpy", "pandas", "pyarrow", "rich", "matplotlib", "jinja2", "lbsim.report", "lbsim.plot", "lbsim.sweep"]
    code = f"import sys, lbsim._worker, lbsim.cli; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_a_pool_worker_starts_with_the_engine_only(tmp_path: Path) -> None:
    """The local pool's workers: their initializer lives in lbsim._worker too
    (a worker imports the module of its initializer; lbsim.sweep's would bring
    numpy and rich)."""
    script = tmp_path / "main.py"
    script.write_text(
        "import importlib\n"
        "if __name__ == '__main__':\n"
        "    sm = importlib.import_module('lbsim.sweep')\n"
        "    sp = sm._start_pool(1)\n"
        "    assert sp.ready()\n"
        "    mods = sp.pool.submit(eval, 'sorted(__import__(\"sys\").modules)').result()\n"
        "    sm._stop_pool(sp.pool)\n"
        "    print([m for m in mods if m.split('.')[0] in ('numpy', 'pandas', 'pyarrow', 'rich') or m == 'lbsim.sweep'])\n"
        "    print('lbsim._worker' in mods)\n"
    )
    out = subprocess.run([sys.executable, str(script)], check=True, capture_output=True, text=True).stdout
    assert out.split("\n")[:2] == ["[]", "True"], out


def test_the_lazy_package_keeps_its_public_names() -> None:
    code = """
import lbsim, types
import lbsim.sweep as sweep_attr               # as before: the package's sweep is the function
from lbsim.sweep import SweepResult
assert callable(lbsim.sweep) and not isinstance(lbsim.sweep, types.ModuleType), lbsim.sweep
assert sweep_attr is lbsim.sweep and SweepResult is lbsim.SweepResult
ns = {}
exec("from lbsim import *", ns)
assert set(lbsim.__all__) <= set(ns) and set(lbsim.__all__) <= set(dir(lbsim))
assert ns["Scenario"].__module__ == "lbsim.scenario" and isinstance(ns["report"], types.ModuleType)
assert lbsim.__version__ and lbsim.run.__module__ == "lbsim.runner"
try:
    lbsim.nonesuch
except AttributeError as e:
    assert "nonesuch" in str(e)
else:
    raise AssertionError("no AttributeError")
"""
    subprocess.run([sys.executable, "-c", code], check=True)
