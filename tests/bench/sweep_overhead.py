"""Measure what the sweep runner costs on top of the runs it executes.

A 100-point sweep of small runs (by default a 128-host 400 Gb/s permutation of
2 MiB, lb.kind x 25 seeds, about 50-100 ms of engine time each) runs through
``lbsim.sweep`` on:

- ``local1``: the default process pool with 1 worker,
- ``local2``: the default process pool with 2 workers,
- ``dask2``:  a Dask ``LocalCluster(n_workers=2, threads_per_worker=1,
  processes=True)`` made by ``lbsim.sweep.dask_executor``, passed in as the CLI
  passes it (``--backend dask --workers 2``),

each ``--repeat`` times into a new directory, modes interleaved, each in a new
Python process that has imported nothing but lbsim (as ``lbsim sweep`` starts:
the driver's first Parquet write imports pyarrow and pandas, counted). For each it
reports, with ``n`` workers, ``W`` the wall time of the ``sweep()`` call and
``R`` the sum over the runs of their own time:

    overhead = (n * W - R) / R

the worker time the runner adds per unit of run time: process start, imports,
scenario resolution and hashing, shipping tasks and results, writing run
directories and the index, and workers left idle (the tail of the sweep). It is
reported against two run times: the engine's own (``summary.wall_seconds``: the
simulation's event loop) and the worker's (``run.json`` ``worker_seconds``: the
whole ``_core.run`` call, also resolving and building the network and returning
the tables). For dask the cluster's start and stop (``cluster``) are timed on
their own, outside ``W``: a cluster outlives a sweep.

    python tests/bench/sweep_overhead.py [--repeat 3] [--modes local1,local2,dask2] [--compare OLD/python]

Also printed: ``drv cpu``, the CPU seconds of the process that called
``sweep()`` during the call (planning, shipping tasks, writing files), which on
a machine with no spare core is taken from the workers' runs; ``inproc``, the
same runs one after another in one process with nothing written; and ``ovh
cpu``, (driver CPU + pool workers' CPU - in-process runs' CPU) / in-process
runs' CPU. ``--compare DIR`` also runs each mode with lbsim imported from DIR
(an older ``python/`` folder with its ``_core`` extension), interleaved. The
sweeps are written under ``--dir`` (default results/sweep-overhead-bench, where
results go: file creation in /tmp can be far slower) and removed after.
See docs/performance-sweeps.md.

Not a pytest test: timings on a shared machine are too noisy to assert on.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# lbsim is imported in the functions, not here: a spawned pool or Dask worker
# imports this script (the parent's __main__) again, and should import no
# more than a worker of `lbsim sweep` does (whose __main__ imports lbsim.cli).
if TYPE_CHECKING:
    import lbsim


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_inproc(base: lbsim.Scenario, grid: dict[str, Any]) -> dict[str, float]:
    """The runs alone: the same engine call as a sweep worker makes, one after
    another in this process, nothing written."""
    from lbsim import _core
    from lbsim.sweep import expand_grid

    texts = [base.with_overrides(p).resolved() for p in expand_grid(grid)]
    engine = 0.0
    t0, c0 = time.perf_counter(), time.process_time()
    for text in texts:
        raw = _core.run(text, [], None, None, 1 << 16, 0.0)
        engine += json.loads(raw["summary_json"])["wall_seconds"]
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "engine": engine}


def run_once(mode: str, base: lbsim.Scenario, grid: dict[str, Any], out: Path) -> dict[str, float]:
    import lbsim
    from lbsim.sweep import dask_executor

    if mode == "inproc":
        return run_inproc(base, grid)
    n = int(mode[-1])
    cluster_s = 0.0
    client = None
    executor = None
    if mode.startswith("dask"):
        t0 = time.perf_counter()
        executor, client = dask_executor(None, n)
        cluster_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        c0 = time.process_time()
        k0 = children_cpu()
        res = lbsim.sweep(base, grid, out=out, executor=executor, workers=n, progress=False)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
        kids = children_cpu() - k0  # the pool's workers, joined by now (not a Dask cluster's)
    finally:
        if client is not None:
            t1 = time.perf_counter()
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
            cluster_s += time.perf_counter() - t1
    idx = res.index
    assert (idx["status"] == "done").all(), idx[idx["status"] != "done"]
    assert res.stats["ran"] == len(idx), res.stats
    engine = float(idx["wall_seconds"].sum())
    worker = sum(json.loads((out / p / "run.json").read_text())["worker_seconds"] for p in idx["path"])
    return {
        "wall": wall,
        "engine": engine,
        "worker": worker,
        "ovh_engine": (n * wall - engine) / engine,
        "ovh_worker": (n * wall - worker) / worker,
        "cluster": cluster_s,
        "driver_cpu": cpu,
        "workers_cpu": kids,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=128)
    ap.add_argument("--size", default="2MiB")
    ap.add_argument("--lbs", default="ecmp,ops,reps,plb")
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", default="local1,local2,dask2")
    ap.add_argument("--dir", type=Path, default=Path("results/sweep-overhead-bench"),
                    help="where the sweeps are written (and removed after): on the disk results go to")
    ap.add_argument("--keep", action="store_true", help="keep the sweep directories")
    ap.add_argument("--compare", type=Path, metavar="DIR",
                    help="also run each mode with lbsim imported from DIR (e.g. an older python/ folder), "
                    "interleaved, as old:MODE")
    ap.add_argument("--one", nargs=2, metavar=("MODE", "OUT"), help=argparse.SUPPRESS)  # a child: one sweep
    a = ap.parse_args()
    from lbsim.demo import demo_scenario

    base = demo_scenario().with_overrides({"topology.hosts": a.hosts, "workload.size": a.size})
    grid = {"lb.kind": a.lbs.split(","), "seed": list(range(1, a.seeds + 1))}
    if a.one:
        print(json.dumps(run_once(a.one[0], base, grid, Path(a.one[1]))))
        return
    child = [sys.executable, __file__, "--hosts", str(a.hosts), "--size", a.size, "--lbs", a.lbs, "--seeds", str(a.seeds)]
    points = len(a.lbs.split(",")) * a.seeds
    modes = ["inproc", *a.modes.split(",")]
    if a.compare:
        modes += [f"old:{m}" for m in a.modes.split(",")]
    print(f"{points} points: {a.hosts}-host permutation of {a.size}, lb.kind={a.lbs}, seeds 1..{a.seeds}")
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    work = a.dir
    work.mkdir(parents=True, exist_ok=True)
    try:
        for i in range(a.repeat):
            for mode in modes[i % len(modes) :] + modes[: i % len(modes)]:
                out = work / f"{mode}-{i}".replace(":", "-")
                shutil.rmtree(out, ignore_errors=True)
                env = dict(os.environ)
                if mode.startswith("old:"):
                    env["PYTHONPATH"] = str(a.compare.resolve())
                one = mode.removeprefix("old:")
                p = subprocess.run([*child, "--one", one, str(out)], stdout=subprocess.PIPE, text=True,
                                   check=True, env=env)
                r = json.loads(p.stdout.strip().splitlines()[-1])
                rows[mode].append(r)
                if mode == "inproc":
                    print(f"  {mode:7} rep {i}: wall {r['wall']:.2f} s, cpu {r['cpu']:.2f} s, engine {r['engine']:.2f} s", flush=True)
                    continue
                print(
                    f"  {mode:11} rep {i}: wall {r['wall']:.2f} s, runs {r['engine']:.2f} s engine / "
                    f"{r['worker']:.2f} s worker, overhead {100 * r['ovh_engine']:.1f} % / "
                    f"{100 * r['ovh_worker']:.1f} %, cpu {r['driver_cpu']:.2f} s driver + {r['workers_cpu']:.2f} s workers"
                    + (f", cluster start+stop {r['cluster']:.2f} s" if r["cluster"] else ""),
                    flush=True,
                )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    # CPU overhead: all the CPU the sweep used (driver and pool workers, their
    # start included) against the CPU of the same runs made in one process.
    base_cpu = statistics.median(r["cpu"] for r in rows["inproc"])
    for mode, rs in rows.items():
        for r in rs:
            if mode.removeprefix("old:").startswith("local"):
                r["ovh_cpu"] = (r["driver_cpu"] + r["workers_cpu"] - base_cpu) / base_cpu
    print(f"runs alone, in one process (median of {a.repeat}): {statistics.median(r['wall'] for r in rows['inproc']):.2f} s wall, "
          f"{base_cpu:.2f} s cpu")
    print(f"{'mode':11} {'wall s':>11} {'Σ engine s':>11} {'Σ worker s':>11} {'ovh/eng %':>11} "
          f"{'ovh/wrk %':>11} {'drv cpu s':>11} {'ovh cpu %':>11}  (min/median of {a.repeat})")
    for mode, rs in rows.items():
        if mode == "inproc":
            continue

        def mm(k: str, scale: float = 1.0, rs: list[dict[str, float]] = rs) -> str:
            xs = [r[k] * scale for r in rs if k in r]
            return f"{min(xs):.2f}/{statistics.median(xs):.2f}" if xs else "-"

        print(f"{mode:11} {mm('wall'):>11} {mm('engine'):>11} {mm('worker'):>11} {mm('ovh_engine', 100):>11} "
              f"{mm('ovh_worker', 100):>11} {mm('driver_cpu'):>11} {mm('ovh_cpu', 100):>11}"
              + (f"  cluster start+stop {mm('cluster')} s" if "dask" in mode else ""))


if __name__ == "__main__":
    main()
