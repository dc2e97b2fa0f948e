"""Parameter sweeps: the cross product of a grid of overrides, run on a process
pool, any ``concurrent.futures.Executor`` or a Dask cluster.

A sweep directory::

    OUT/sweep.json          the base scenario, the grid, the lbsim version
    OUT/index.parquet       one row per grid point: run_id, status, error,
                            path, attempts, the grid values, headline metrics
    OUT/runs/<run_id>/      a run directory (see lbsim.results), or
                            error.json for a run that failed

``run_id`` is the run key: a hash of the resolved scenario, the files it reads
and the lbsim version. A run directory is complete once its summary.json
exists (runs are written to a temporary folder and renamed into place), so the
directory itself is the record of what is finished: run the same sweep again
and only missing or failed runs execute. Workers only compute; the process that
started the sweep writes every file.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import multiprocessing
import os
import shutil
import signal
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _worker
from ._toml import value_text
from .errors import LbsimError, ScenarioError
from .progress import CountProgress, wants_progress
from .results import Result, _write_atomic, is_run_dir, load, tables_from_raw, write_run_dir
from .scenario import Scenario, ScenarioLike, as_scenario

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sweep", "SweepResult", "load_sweep", "expand_grid", "default_workers", "dask_executor"]

_INDEX_EVERY_S = 2.0
#: Short runs go to the workers in batches of about this many seconds of
#: work, so a task's fixed cost (a pool's round trip, ~8 ms of Dask in the
#: driver) is small against its runs ...
_BATCH_TARGET_S = 0.5
#: ... and at most 1/_BATCH_SPREAD of what is left to submit per worker, so
#: batches shrink to single runs towards the end and the workers finish together.
_BATCH_SPREAD = 4


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not Linux
        return max(os.cpu_count() or 1, 1)


def _check_grid(grid: Mapping[str, Any]) -> None:
    """Each grid value must be a collection of values: a string would be iterated per character."""
    for k, v in grid.items():
        if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
            raise LbsimError(
                f"grid key {k!r}: expected a list of values, got {type(v).__name__} {v!r} "
                f"(for one value write [{v!r}])"
            )


def expand_grid(grid: Mapping[str, Iterable[Any]]) -> list[dict[str, Any]]:
    """The cross product of a grid, in order (the last key varies fastest).

    >>> expand_grid({"lb.kind": ["ecmp", "ops"], "seed": range(2)})
    [{'lb.kind': 'ecmp', 'seed': 0}, {'lb.kind': 'ecmp', 'seed': 1}, {'lb.kind': 'ops', 'seed': 0}, {'lb.kind': 'ops', 'seed': 1}]
    """
    keys = list(grid)
    _check_grid(grid)
    values = [list(grid[k]) for k in keys]
    for k, v in zip(keys, values):
        if not v:
            raise ValueError(f"grid key {k!r} has no values")
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def dask_executor(address: str | None = None, workers: int | None = None) -> tuple[cf.Executor, Any]:
    """A ``concurrent.futures`` executor backed by Dask ``distributed``: a
    client of the scheduler at ``address`` (``tcp://host:8786``), or of a new
    ``LocalCluster`` with ``workers`` single-threaded worker processes.
    Returns ``(executor, client)``; close the client when done. Needs
    ``pip install "lbsim[dask]"``, and lbsim installed on every worker."""
    try:
        import distributed
    except ImportError:
        raise LbsimError(
            'the dask backend needs Dask distributed: pip install "lbsim[dask]" (or pip install ".[dask]")'
        ) from None
    dd: Any = distributed  # untyped library
    if address:
        client = dd.Client(address)
    else:
        cluster = dd.LocalCluster(
            n_workers=workers or default_workers(),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = dd.Client(cluster)
    return client.get_executor(), client


@dataclass
class _Point:
    params: dict[str, Any]
    scenario: Scenario | None = None
    key: str | None = None
    error: str | None = None


@dataclass
class _RunState:
    key: str
    scenario: Scenario
    params: dict[str, Any]
    #: The resolved scenario and the files it reads, as hashed into the key.
    toml: str
    inputs: list[tuple[str, str, Path]]
    status: str = "pending"
    error: str | None = None
    attempts: int = 0
    summary: dict[str, Any] | None = None
    points: list[_Point] = field(default_factory=list)
    #: Run in a task of its own (its batch took a worker down).
    alone: bool = False


def _read_json(p: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _complete_run(d: Path, key: str) -> bool:
    """Whether ``d`` holds this run whole: its summary and metadata parse, the
    metadata names this run's key, and every file a run writes is there (each
    table a Parquet file whose last bytes are Parquet's end marker). A resumed
    sweep reruns anything less instead of reporting a half-written run."""
    if not is_run_dir(d) or _read_json(d / "summary.json") is None:
        return False
    meta = _read_json(d / "run.json")
    if meta is None or meta.get("key") != key:
        return False
    for name in ("flows.parquet", "drops.parquet"):
        try:
            with open(d / name, "rb") as f:
                f.seek(-4, os.SEEK_END)
                if f.read(4) != b"PAR1":
                    return False
        except OSError:
            return False
    return True


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return value_text(v)


class _Sweep:
    def __init__(
        self,
        base: Scenario,
        grid: Mapping[str, Iterable[Any]],
        out: Path,
        progress: bool,
        retry_failed: bool,
        max_memory: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.max_memory = max_memory
        self.timeout = timeout
        self.base = base
        _check_grid(grid)
        self.grid = {k: list(v) for k, v in grid.items()}
        self.out = out
        self.runs_dir = out / "runs"
        self.progress = progress
        self.retry_failed = retry_failed
        self.points = [_Point(p) for p in expand_grid(self.grid)]
        self.runs: dict[str, _RunState] = {}
        self.last_index_write = 0.0
        self.stats = {"points": len(self.points), "runs": 0, "already_done": 0, "ran": 0, "ok": 0, "failed": 0, "invalid": 0}

    # ---- planning -------------------------------------------------------

    def plan(self) -> list[_RunState]:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        for pt in self.points:
            s = self.base.with_overrides(pt.params)
            try:
                pt.key, toml, inputs = s._keyed()
            except ScenarioError as e:
                pt.error = str(e)
                self.stats["invalid"] += 1
                continue
            pt.scenario = s
            st = self.runs.get(pt.key)
            if st is None:
                st = self.runs[pt.key] = _RunState(pt.key, s, pt.params, toml, inputs)
            st.points.append(pt)
        todo = []
        for key, st in self.runs.items():
            d = self.runs_dir / key
            if _complete_run(d, key):
                st.status = "done"
                meta = _read_json(d / "run.json") or {}
                st.attempts = int(meta.get("attempt", 1))
                st.summary = _read_json(d / "summary.json")
                self.stats["already_done"] += 1
                continue
            err = _read_json(d / "error.json")
            if err is not None:
                st.status, st.error = "failed", str(err.get("error"))
                st.attempts = int(err.get("attempt", 1))
                if not self.retry_failed:
                    continue
                st.status = "pending"
            todo.append(st)
        self.stats["runs"] = len(self.runs)
        meta = {
            "lbsim_version": _core_version(),
            "git_commit": _git_commit(),
            "base_scenario": self.base.text,
            "base_source": self.base.source,
            "base_overrides": self.base.overrides,
            "grid": {k: [_jsonable(v) for v in vs] for k, vs in self.grid.items()},
        }
        _write_atomic(self.out / "sweep.json", (json.dumps(meta, indent=2) + "\n").encode())
        # The index is written by execute(), once the first runs are under way
        # (its first write imports pyarrow, a few hundred ms).
        return todo

    def task(self, st: _RunState) -> dict[str, Any]:
        files = {}
        for key, text, path in st.inputs:
            try:
                files[key] = (text, path.read_bytes())
            except OSError as e:
                raise ScenarioError(key, f"cannot read {path}: {e.strerror or e}") from None
        return {
            "key": st.key,
            "toml": st.toml,
            "files": files,
            "max_memory": self.max_memory,
            "timeout": self.timeout,
        }

    # ---- recording ------------------------------------------------------

    def record(self, st: _RunState, reply: dict[str, Any] | None, error: str | None = None) -> None:
        d = self.runs_dir / st.key
        self.stats["ran"] += 1
        if reply is not None and reply.get("ok"):
            raw = reply["raw"]
            tmp = self.runs_dir / f".tmp-{st.key}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            write_run_dir(
                tmp,
                scenario_toml=st.toml,
                summary=raw["summary_json"],
                tables=tables_from_raw(raw),
                meta={
                    "lbsim_version": _core_version(),
                    "git_commit": _git_commit(),
                    "key": st.key,
                    "params": _jsonable(st.params),
                    "attempt": st.attempts,
                    "stop_reason": raw["stop_reason"],
                    "packets_in_network": raw["packets_in_network"],
                    "counters": json.loads(raw["counters_json"]),
                    "host": reply.get("host"),
                    "worker_seconds": reply.get("worker_seconds"),
                },
            )
            if d.exists():
                shutil.rmtree(d)
            os.rename(tmp, d)
            st.status, st.error = "done", None
            st.summary = json.loads(raw["summary_json"])
            self.stats["ok"] += 1
        else:
            st.status = "failed"
            st.error = error or (reply or {}).get("error") or "unknown error"
            d.mkdir(parents=True, exist_ok=True)
            body = {"error": st.error, "attempt": st.attempts, "params": _jsonable(st.params)}
            if reply is not None:
                body["host"] = reply.get("host")
            _write_atomic(d / "error.json", (json.dumps(body, indent=2) + "\n").encode())
            self.stats["failed"] += 1
        if time.monotonic() - self.last_index_write > _INDEX_EVERY_S:
            self.write_index()

    def write_index(self) -> None:
        import pyarrow as pa

        from .results import _arrow_from_values, _parquet_bytes

        rows: list[dict[str, Any]] = []
        for pt in self.points:
            st = self.runs.get(pt.key) if pt.key else None
            s = (st.summary if st else None) or {}
            row: dict[str, Any] = {
                "run_id": pt.key,
                "status": st.status if st else "failed",
                "error": (st.error if st else pt.error),
                "path": f"runs/{pt.key}" if st and st.status == "done" else None,
                "attempts": st.attempts if st else 0,
            }
            for k in self.grid:
                row[k] = pt.params[k]
            for m in ("max_fct_us", "mean_fct_us", "p99_fct_us", "unfinished_flows", "wall_seconds"):
                row[m] = s.get(m)
            row["drops_congestion"] = (s.get("drops") or {}).get("congestion")
            rows.append(row)
        columns: dict[str, Any] = {}
        names = list(rows[0]) if rows else ["run_id", "status", "error", "path", "attempts"]
        for name in names:
            values = [r[name] for r in rows]
            if name in self.grid:
                kinds = {type(v) for v in values}
                if len(kinds) != 1 or not kinds <= {str, int, float, bool}:
                    values = [value_text(v) for v in values]
            types = {
                "run_id": pa.string(),
                "status": pa.string(),
                "error": pa.string(),
                "path": pa.string(),
                "attempts": pa.int64(),
                "max_fct_us": pa.float64(),
                "mean_fct_us": pa.float64(),
                "p99_fct_us": pa.float64(),
                "unfinished_flows": pa.int64(),
                "wall_seconds": pa.float64(),
                "drops_congestion": pa.int64(),
            }
            kind = types.get(name)
            if kind is None:  # a grid column: one Python type by now (see above)
                kind = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}[type(values[0])]
                if kind == pa.int64() and not all(-(2**63) <= v < 2**63 for v in values):
                    columns[name] = pa.array(values)  # as before: pyarrow picks (uint64) or refuses
                    continue
            columns[name] = _arrow_from_values(values, kind)
        _write_atomic(self.out / "index.parquet", _parquet_bytes(pa.table(columns)))
        self.last_index_write = time.monotonic()

    # ---- execution ------------------------------------------------------

    def execute(
        self,
        todo: list[_RunState],
        executor: cf.Executor | None,
        workers: int | None,
        started: _StartedPool | None = None,
    ) -> None:
        """Run ``todo`` on ``executor``, or on the pool ``started`` (from
        :func:`_start_pool`, owned from here on), or on a new process pool."""
        if started is not None:
            executor = started.pool
        if not todo:
            if started is not None:
                _stop_pool(started.pool)
            self.write_index()
            return
        owned = executor is None or started is not None
        n = workers or default_workers()
        window = 2 * n if owned or workers else 64
        if executor is None:
            executor = _process_pool(n)
        elif not isinstance(executor, cf.Executor) and hasattr(executor, "get_executor"):
            # A dask.distributed Client.
            client: Any = executor
            try:
                window = max(2 * sum(client.nthreads().values()), 4)
            except Exception:  # noqa: BLE001 - only a sizing hint
                pass
            executor = client.get_executor()
        bar = CountProgress(len(todo), "sweep") if self.progress and wants_progress() else None
        queue = list(reversed(todo))
        inflight: dict[cf.Future[Any], list[_RunState]] = {}
        batcher = _Batcher(max(window // 2, 1))
        done = failed = 0
        indexed = False
        try:
            if started is not None and not started.ready():
                # A worker could not start: begin again with a fresh pool (its
                # first run then records why, as without the early start).
                _stop_pool(started.pool)
                executor = _process_pool(n)
            while queue or inflight:
                while queue and len(inflight) < window:
                    batch: list[_RunState] = []
                    tasks: list[dict[str, Any]] = []
                    size = batcher.size(len(queue))
                    while queue and len(batch) < size:
                        st = queue.pop()
                        if st.alone and batch:
                            queue.append(st)
                            break
                        try:
                            task = self.task(st)
                        except ScenarioError as e:
                            st.attempts += 1
                            self.record(st, None, str(e))
                            failed += 1
                            continue
                        st.attempts += 1
                        batch.append(st)
                        tasks.append(task)
                        if st.alone:
                            break
                    if not batch:
                        continue
                    fut: cf.Future[Any]
                    with _sigint_blocked():  # a worker may start here: see _sigint_blocked
                        if len(tasks) == 1:
                            fut = executor.submit(_worker.run_task, tasks[0])
                        else:
                            fut = executor.submit(_worker.run_tasks, tasks)
                    inflight[fut] = batch
                if not indexed:
                    self.write_index()  # every point pending, or failed before it ran
                    indexed = True
                if not inflight:
                    continue
                finished, _ = cf.wait(list(inflight), return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    maybe = inflight.pop(fut, None)
                    if maybe is None:  # from a broken pool, already requeued
                        continue
                    batch = maybe
                    try:
                        reply = fut.result()
                    except KeyboardInterrupt:
                        raise
                    except cf.process.BrokenProcessPool as e:
                        requeue: list[_RunState] = []
                        if owned and len(batch) > 1:
                            # Which of the batch's runs took the worker down is
                            # unknown: each runs again alone, as if never batched.
                            for st in batch:
                                st.alone = True
                            requeue = batch
                        else:
                            for st in batch:
                                self.record(st, None, f"worker process died: {e}")
                                failed += 1
                        if owned:
                            _stop_pool(executor)
                            executor = _process_pool(n)
                            for st2 in itertools.chain(requeue, *inflight.values()):
                                queue.append(st2)
                                st2.attempts -= 1
                            inflight.clear()
                        continue
                    except BaseException as e:  # noqa: BLE001 - a failed run is recorded, the sweep goes on
                        for st in batch:
                            self.record(st, None, f"{type(e).__name__}: {e}")
                            failed += 1
                        continue
                    replies: list[dict[str, Any]] = [reply] if len(batch) == 1 else reply
                    for st, r in zip(batch, replies, strict=True):
                        batcher.observe(r)
                        self.record(st, r)
                        if r.get("ok"):
                            done += 1
                        else:
                            failed += 1
                if bar:
                    bar.update(done + failed, failed)
        except BaseException:
            for fut in inflight:
                fut.cancel()
            if owned:
                _stop_pool(executor)
                owned = False
            raise
        finally:
            if bar:
                bar.close()
            if owned:
                executor.shutdown(wait=True)
            self.write_index()


class _Batcher:
    """How many runs the next task takes: guided self-scheduling (a share of
    what is left per worker, shrinking to one) capped by a target duration
    from the run times seen so far. One run per task until a run has been
    timed, and whenever runs are longer than the target."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.seconds = 0.0
        self.timed = 0

    def observe(self, reply: Mapping[str, Any]) -> None:
        s = reply.get("worker_seconds")
        if isinstance(s, (int, float)):
            self.seconds += float(s)
            self.timed += 1

    def size(self, remaining: int) -> int:
        if not self.timed:
            return 1
        mean = self.seconds / self.timed
        by_time = int(_BATCH_TARGET_S / mean) if mean > 0 else remaining
        return max(1, min(by_time, remaining // (_BATCH_SPREAD * self.workers)))


def _core_version() -> str:
    from . import _core

    return _core.__version__


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Hold off Ctrl-C while a pool may start a worker process. A worker is
    born with the signal mask of the thread that starts it, so it cannot be
    interrupted before its initializer ignores SIGINT (it would print half a
    traceback as the driver ends it); a Ctrl-C in the window is delivered to
    the driver as soon as the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _git_commit() -> str | None:
    from . import _core

    return _core.git_commit or None


def _process_pool(n: int) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(
        max_workers=n, mp_context=multiprocessing.get_context("spawn"), initializer=_worker.ignore_sigint
    )


@dataclass
class _StartedPool:
    pool: cf.ProcessPoolExecutor
    warmups: list[cf.Future[int]]

    def ready(self) -> bool:
        """Wait until every worker has started; False if one could not."""
        cf.wait(self.warmups)
        return all(f.exception() is None for f in self.warmups)


def _start_pool(n: int) -> _StartedPool:
    """A process pool of ``n`` workers that start now, each on a no-op task:
    starting a Python process and importing lbsim takes a few hundred ms,
    which overlaps with the driver planning the sweep."""
    pool = _process_pool(n)
    with _sigint_blocked():  # a worker starts here: see _sigint_blocked
        warmups = [pool.submit(_worker.ready) for _ in range(n)]
    return _StartedPool(pool, warmups)


def _warm_up(executor: Any, workers: int | None) -> list[cf.Future[Any]]:
    """Give each worker of a caller's executor a no-op task now, while the
    sweep is planned (a Dask worker imports lbsim on its first task): one per
    worker when their number is known (``workers``, or a Dask Client's
    threads). Nobody waits for them; a failure here is only a lost head start."""
    n = workers
    try:
        if not isinstance(executor, cf.Executor) and hasattr(executor, "get_executor"):  # a Dask Client
            n = sum(executor.nthreads().values())
            executor = executor.get_executor()
        if not n:
            return []
        with _sigint_blocked():  # a pool may start a worker here: see _sigint_blocked
            return [executor.submit(_worker.ready, i) for i in range(n)]
    except Exception:  # noqa: BLE001 - the runs' own submissions report a broken executor
        return []


def _stop_pool(pool: cf.Executor) -> None:
    """Stop a process pool now: cancel what is queued and end running workers
    (they only compute; the driver writes files, so nothing is left half-written)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
    # The pool's own thread joins the workers too: wait for it, so no worker
    # is left unreaped (it may have reaped one before our join could).
    if manager is not None:
        manager.join(timeout=5)


def sweep(
    scenario: ScenarioLike,
    grid: Mapping[str, Iterable[Any]],
    *,
    out: str | Path | None = None,
    executor: cf.Executor | Any | None = None,
    workers: int | None = None,
    progress: bool = True,
    retry_failed: bool = True,
    max_memory: int | str | None = None,
    timeout: float | None = None,
) -> SweepResult:
    """Run ``scenario`` once for every point of the cross product of ``grid``
    (dotted key -> values), e.g. ``{"lb.kind": ["ecmp", "ops", "reps"], "seed": range(5)}``.

    ``executor``: ``None`` for a local process pool (spawn start method) of
    ``workers`` processes (default: the cores available), any
    ``concurrent.futures.Executor``, or a Dask ``distributed.Client`` (see
    :func:`dask_executor`). Results land under ``out`` (default
    ``results/<scenario name>-sweep``) on this machine. Runs already finished
    there are not redone; runs that fail are recorded with their error (and
    retried next time unless ``retry_failed=False``) while the sweep goes on.

    ``max_memory`` (bytes or text such as ``"64GiB"``) refuses runs estimated
    to need more; ``timeout`` (seconds of wall clock) stops a run that takes
    longer and records it as failed, so one slow point cannot hold the sweep.
    The run key hashes every input file the scenario reads (a flows CSV, a
    CDF file), so a changed file is run again, never reused.

    Returns a :class:`SweepResult`; its ``stats`` say how many runs were
    already done, run now, and failed.
    """
    from .results import check_out_dir
    from .runner import memory_bytes

    base = as_scenario(scenario)
    if out is None:
        out = Path("results") / f"{base.name or 'sweep'}-sweep"
    if not (Path(out) / "index.parquet").is_file():
        check_out_dir(out)
    if timeout is not None and not timeout > 0:
        raise LbsimError(f"timeout must be a positive number of seconds, got {timeout!r}")
    sw = _Sweep(base, grid, Path(out), progress, retry_failed, memory_bytes(max_memory), timeout)
    # The workers start while the sweep is planned.
    started = _start_pool(workers or default_workers()) if executor is None else None
    warmups = _warm_up(executor, workers) if executor is not None else []
    try:
        todo = sw.plan()
    except BaseException:
        if started is not None:
            _stop_pool(started.pool)
        raise
    try:
        sw.execute(todo, executor, workers, started)
    finally:
        for f in warmups:  # held until here so Dask keeps them (finished long ago)
            f.cancel()
    result = SweepResult(sw.out)
    result.stats = dict(sw.stats)
    return result


class SweepResult:
    """A sweep directory. ``index`` is the index table (a DataFrame); the run
    directories load on demand."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / "index.parquet").is_file():
            raise LbsimError(f"{self.path} is not a sweep directory (no index.parquet)")
        #: Counts from the call that produced this object (empty when loaded).
        self.stats: dict[str, int] = {}

    @property
    def index(self) -> pd.DataFrame:
        """One row per grid point: run_id, status (done, failed, pending),
        error, path (relative to the sweep directory), attempts, the grid
        values, and headline metrics of finished runs."""
        import pandas as pd

        return pd.read_parquet(self.path / "index.parquet")

    @property
    def grid_keys(self) -> list[str]:
        meta = _read_json(self.path / "sweep.json") or {}
        return list((meta.get("grid") or {}).keys())

    def results(self) -> Iterator[tuple[dict[str, Any], Result]]:
        """``(grid values, Result)`` for every finished grid point."""
        idx = self.index
        keys = self.grid_keys
        for r in idx[idx["status"] == "done"].to_dict("records"):
            yield {k: r[k] for k in keys if k in r}, load(self.path / r["path"])

    def summaries(self) -> pd.DataFrame:
        """The index of finished runs joined with every scalar of their summaries."""
        import pandas as pd

        idx = self.index
        idx = idx[idx["status"] == "done"]
        rows = []
        for rel in idx["path"]:
            s = _read_json(self.path / rel / "summary.json") or {}
            flat = {k: v for k, v in s.items() if not isinstance(v, dict)}
            flat.update({f"drops_{k}": v for k, v in (s.get("drops") or {}).items()})
            rows.append(flat)
        extra = pd.DataFrame(rows, index=idx.index)
        keep = ["run_id", "path", *[k for k in self.grid_keys if k in idx.columns]]
        return pd.concat([idx[keep], extra], axis=1).reset_index(drop=True)

    def flows(self) -> pd.DataFrame:
        """Every finished run's flow table, with the run_id and grid values as columns."""
        import pandas as pd

        frames = []
        for params, res in self.results():
            df = res.flows.copy()
            df.insert(0, "run_id", res.key)
            for i, (k, v) in enumerate(params.items()):
                df.insert(1 + i, k, v)
            frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def _repr_html_(self) -> str:
        """What Jupyter shows: which load balancer won, every point in a
        sortable table (see :func:`lbsim.report.sweep_html`)."""
        from .report import sweep_html

        return sweep_html(self)

    def __repr__(self) -> str:
        return f"<SweepResult {str(self.path)!r}>"


def load_sweep(path: str | Path) -> SweepResult:
    """Open a sweep directory."""
    return SweepResult(path)
