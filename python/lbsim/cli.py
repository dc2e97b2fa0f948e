"""The ``lbsim`` command.

    lbsim run FILE [--set key=value]... [--out DIR] [--quiet]
    lbsim sweep FILE --grid key=v1,v2 ... [--set key=value]... [--backend local|dask]
                [--address tcp://HOST:PORT] [--workers N] [--out DIR] [--quiet]
    lbsim plot DIR... [--out DIR] [--baseline LB|ideal] [--by KEY]
    lbsim validate FILE [--set key=value]...
    lbsim flow-level FILE [--set key=value]... [--out DIR]
    lbsim report DIR [--out FILE] [--no-runs]
    lbsim demo [--out DIR] [--quiet]
    lbsim theory ops|recycled|coalescing|evs [options] [--out DIR]   (see lbsim.theory_cli)

User errors (a bad scenario key, a missing file) print one message and exit
with status 2; an interrupted command exits with 130.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import LbsimError

__all__ = ["main"]

EXIT_USER = 2
EXIT_FAILED_RUNS = 1
EXIT_INTERRUPTED = 130


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value.strip()


def _typed(text: str) -> Any:
    """A grid value as the engine will read it: TOML if it parses as a scalar
    ("3", "true", "1.5"), else the bare string ("reps", "8MiB")."""
    try:
        v = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    return v if isinstance(v, (int, float, bool, str)) else text


def _grid(items: Sequence[tuple[str, str]]) -> dict[str, list[Any]]:
    grid: dict[str, list[Any]] = {}
    for key, values in items:
        vals = [_typed(v.strip()) for v in values.split(",") if v.strip()]
        if not vals:
            raise LbsimError(f"--grid {key}= has no values")
        grid.setdefault(key, []).extend(vals)
    return grid


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(
        prog="lbsim",
        description="Packet-level datacenter network simulator for load-balancing research.",
    )
    p.add_argument("--version", action="version", version=f"lbsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_set(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--set",
            dest="sets",
            action="append",
            default=[],
            type=_key_value,
            metavar="KEY=VALUE",
            help="override a scenario key, e.g. --set lb.kind=ops --set workload.size=1MiB",
        )

    def add_memory(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--max-memory",
            metavar="SIZE",
            help="refuse a run estimated to need more memory than this, e.g. 64GiB (default 8GiB)",
        )

    sp = sub.add_parser("run", help="run a scenario and write its results")
    sp.add_argument("file", type=Path, metavar="FILE")
    add_set(sp)
    add_memory(sp)
    sp.add_argument(
        "--out", type=Path, help="results directory (default results/<scenario name>; an earlier run there is replaced)"
    )
    sp.add_argument("--report", action="store_true", help="also write an HTML report (DIR/report.html)")
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    sp = sub.add_parser("sweep", help="run the cross product of a grid of overrides")
    sp.add_argument("file", type=Path, metavar="FILE")
    sp.add_argument(
        "--grid",
        action="append",
        default=[],
        type=_key_value,
        metavar="KEY=V1,V2",
        help="a key and its values, e.g. --grid lb.kind=ecmp,ops,reps --grid seed=1,2,3",
    )
    add_set(sp)
    sp.add_argument("--backend", choices=("local", "dask"), default="local")
    sp.add_argument("--address", help="Dask scheduler (tcp://host:8786); default: a LocalCluster")
    sp.add_argument("--workers", type=int, help="worker processes (default: the cores here)")
    sp.add_argument("--out", type=Path, help="sweep directory (default results/<scenario name>-sweep)")
    sp.add_argument("--no-retry", action="store_true", help="do not rerun runs that failed before")
    add_memory(sp)
    sp.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="wall-clock limit per run; a run that takes longer fails"
    )
    sp.add_argument(
        "--report", action="store_true", help="also write an HTML report (DIR/report.html, and one per run)"
    )
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    sp = sub.add_parser("plot", help="plot run or sweep directories")
    sp.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    sp.add_argument("--out", type=Path, help="where to write plots (default: the DIR, or results/plots)")
    sp.add_argument("--baseline", help="normalise completion times to this load balancer, or 'ideal'")
    sp.add_argument("--by", default="lb.kind", help="scenario key to group runs by (default lb.kind)")

    sp = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a run, a sweep or a folder of runs",
        description="Write one self-contained HTML file (plots and script inlined: it opens offline) "
        "reporting on a run directory, a sweep directory, or a folder of run directories (as lbsim demo "
        "writes), and print its path. A sweep's report links to a report per run, written beside each run.",
    )
    sp.add_argument("dir", type=Path, metavar="DIR", help="a run directory, a sweep directory or a folder of runs")
    sp.add_argument("--out", type=Path, help="the HTML file to write (default DIR/report.html)")
    sp.add_argument("--no-runs", action="store_true", help="for a sweep: no per-run reports")

    sp = sub.add_parser("validate", help="parse and check a scenario without running it")
    sp.add_argument("file", type=Path, metavar="FILE")
    add_set(sp)
    add_memory(sp)

    sp = sub.add_parser(
        "flow-level",
        help="no packets: each flow on its ECMP/WCMP/FaCa path at its max-min fair rate",
        description="Flow-level mode (docs/flow-level.md): every flow of the workload is persistent, sits on the "
        "path its load balancer (ECMP, WCMP or FaCa) gives it in the packet-level engine, and gets its max-min "
        "fair rate over the link capacities; message sizes and start times do not apply (workload.size may be "
        "left out). Writes scenario.toml, flows.parquet, ports.parquet and summary.json.",
    )
    sp.add_argument("file", type=Path, metavar="FILE")
    add_set(sp)
    add_memory(sp)
    sp.add_argument(
        "--out",
        type=Path,
        help="results directory (default results/<scenario name>-flow-level; an earlier result there is replaced)",
    )

    sp = sub.add_parser("demo", help="ECMP vs OPS vs REPS on a 128-host 400G fat tree")
    sp.add_argument("--out", type=Path, default=Path("results/demo"))
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    sp = sub.add_parser("reproduce", help="run a paper figure's variants and draw it (from the repository root)")
    sp.add_argument("figures", nargs="*", metavar="NAME", help="figures such as reps-fig06 (see --list)")
    sp.add_argument("--list", action="store_true", help="list the figures and what each paper reports")
    sp.add_argument("--out", type=Path, default=Path("results/reproduce"))
    sp.add_argument("--scenarios", type=Path, default=Path("scenarios"), help="where the scenarios/ folder is")
    sp.add_argument("--quick", action="store_true", help="a smaller version that runs in seconds (what CI runs)")
    sp.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs already in the output folder whose resolved scenario and lbsim version match "
        "(after adding variants; not after changing the engine without a version bump)",
    )
    sp.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    from .theory_cli import add_parser as add_theory_parser

    add_theory_parser(sub)
    return p


def _load(file: Path, sets: Sequence[tuple[str, str]]) -> Any:
    from .scenario import Scenario

    s = Scenario.load(file)
    for k, v in sets:
        s.set(k, v)
    s.resolved()
    return s


def _print_summary(r: Any) -> None:
    from ._tables import console, fmt, kv_table

    s = r.summary
    d = s.get("drops", {})
    rows = [
        ("flows finished", f"{s['finished_flows']}/{s['flows']}"),
        ("max FCT", f"{fmt(s['max_fct_us'], '.2f')} us"),
        ("mean FCT", f"{fmt(s['mean_fct_us'], '.2f')} us"),
        ("p99 FCT", f"{fmt(s['p99_fct_us'], '.2f')} us"),
        ("drops", f"congestion {d.get('congestion', 0)}, failure {d.get('failure', 0)}, trimmed {d.get('trimmed', 0)}"),
        ("retransmissions", str(s["retransmissions"])),
        ("timeouts", str(s["timeouts"])),
        ("events", f"{s['events']:,} in {s['wall_seconds']:.2f} s ({s['events_per_second'] / 1e6:.2f} M/s)"),
    ]
    if r.stop_reason != "drained":
        rows.append(("stopped", str(r.stop_reason)))
    console().print(kv_table(rows, title=f"{r.lb}"))
    if r.stop_note:
        print(f"stopped early: {r.stop_note}", file=sys.stderr)
    for w in s.get("warnings", []):
        console().print(f"[yellow]warning:[/yellow] {w}")


def _cmd_run(a: argparse.Namespace) -> int:
    from .runner import run

    s = _load(a.file, a.sets)
    out = a.out or Path("results") / (s.name or a.file.stem)
    r = run(s, progress=not a.quiet, out=out, max_memory=a.max_memory)
    _print_summary(r)
    print(f"results: {out}")
    if a.report:
        from .report import run_report

        print(f"report:  {run_report(r)}")
    return 0


def _cmd_report(a: argparse.Namespace) -> int:
    from .report import report

    print(report(a.dir, a.out, runs=not a.no_runs))
    return 0


def _cmd_validate(a: argparse.Namespace) -> int:
    s = _load(a.file, a.sets)
    facts = s.validate(max_memory=a.max_memory)
    print(
        f"ok: {a.file}: {facts['hosts']} hosts, {facts['tiers']} tiers at "
        f"{facts['link_rate_bps'] / 1e9:g} Gb/s, {facts['flows']} flows, lb {s['lb.kind']}, "
        f"base RTT {facts['base_rtt_us']:.2f} us, RTO {facts['rto_us']:.2f} us, "
        f"about {facts['memory_bytes'] / 2**20:.0f} MiB"
    )
    return 0


def _cmd_flow_level(a: argparse.Namespace) -> int:
    from ._tables import console, fmt, table
    from .flowlevel import flow_level

    s = _load(a.file, a.sets)
    out = a.out or Path("results") / f"{s.name or a.file.stem}-flow-level"
    r = flow_level(s, out=out, max_memory=a.max_memory)
    sm = r.summary
    print(
        f"flows {sm['flows']}  rate min {sm['min_rate_bps'] / 1e9:.2f} / mean {sm['mean_rate_bps'] / 1e9:.2f} / "
        f"max {sm['max_rate_bps'] / 1e9:.2f} Gb/s  congestion rate {sm['congestion_rate']:.4f} "
        f"({sm['congested_flows']} flows)"
    )
    t = table("link class", "ports", "max Gb/s", "min Gb/s", "Drop Gb/s", "std Gb/s")
    for cls, c in sm["classes"].items():
        t.add_row(
            cls,
            str(c["ports"]),
            *(fmt(c[k] / 1e9, ".2f") for k in ("max_bps", "min_bps", "drop_bps", "std_bps")),
        )
    console().print(t)
    print(f"results: {out}")
    return 0


def _cmd_sweep(a: argparse.Namespace) -> int:
    from .sweep import dask_executor, sweep

    if not a.grid:
        raise LbsimError("sweep needs at least one --grid key=v1,v2")
    s = _load(a.file, a.sets)
    grid = _grid(a.grid)
    out = a.out or Path("results") / f"{s.name or a.file.stem}-sweep"
    client = None
    executor = None
    if a.backend == "dask":
        executor, client = dask_executor(a.address, a.workers)
    elif a.address:
        raise LbsimError("--address needs --backend dask")
    try:
        res = sweep(
            s,
            grid,
            out=out,
            executor=executor,
            workers=a.workers,
            progress=not a.quiet,
            retry_failed=not a.no_retry,
            max_memory=a.max_memory,
            timeout=a.timeout,
        )
    finally:
        if client is not None:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
    st = res.stats
    from ._tables import console, kv_table

    rows = [
        ("grid points", str(st["points"])),
        ("distinct runs", str(st["runs"])),
        ("already done", str(st["already_done"])),
        ("ran now", str(st["ran"])),
        ("ok", str(st["ok"])),
        ("failed", str(st["failed"])),
    ]
    if st["invalid"]:
        rows.append(("invalid", str(st["invalid"])))
    console().print(kv_table(rows, title="sweep"))
    idx = res.index
    bad = idx[idx["status"] != "done"]
    for row in bad.head(10).to_dict("records"):
        print(f"  {_problem(row)}", file=sys.stderr)
    print(f"index:   {out / 'index.parquet'}")
    print(f"results: {out / 'runs'}")
    if a.report:
        from .report import sweep_report

        try:
            print(f"report:  {sweep_report(out)}")
        except LbsimError as e:
            print(f"error: no report: {e}", file=sys.stderr)
    return EXIT_FAILED_RUNS if len(bad) else 0


def _problem(row: dict[str, Any]) -> str:
    """One index row that is not done, in words (its error may be missing: NaN)."""
    params = ", ".join(f"{k}={v}" for k, v in row.items() if k not in _INDEX_FIELDS)
    err = row.get("error")
    status = str(row.get("status") or "failed")
    # Missing cells of the index read as NaN, which is truthy: test for text.
    run_id = row.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        run_id, status = "-", "invalid" if status == "failed" else status  # no run: its scenario was refused
    if not isinstance(err, str) or not err:
        err = "not run yet (the sweep was interrupted; run it again)" if status == "pending" else "no error recorded"
    return f"{status} {run_id} ({params}): {err}"


_INDEX_FIELDS = {
    "run_id",
    "status",
    "error",
    "path",
    "attempts",
    "max_fct_us",
    "mean_fct_us",
    "p99_fct_us",
    "unfinished_flows",
    "wall_seconds",
    "drops_congestion",
}


def _cmd_plot(a: argparse.Namespace) -> int:
    from .plot import plot_dirs

    out = a.out or (a.dirs[0] if len(a.dirs) == 1 else Path("results/plots"))
    for p in plot_dirs(a.dirs, out, baseline=a.baseline, by=a.by):
        print(p)
    return 0


def _cmd_demo(a: argparse.Namespace) -> int:
    from .demo import demo

    demo(a.out, progress=not a.quiet)
    return 0


def _cmd_reproduce(a: argparse.Namespace) -> int:
    from .reproduce import FIGURES, reproduce

    if a.list or not a.figures:
        from ._tables import console, table

        t = table("figure", "scenario", "what the paper reports", numeric=False)
        for name, fig in FIGURES.items():
            t.add_row(name, fig.scenario, fig.paper)
        console().print(t)
        return 0
    for name in a.figures:
        d = reproduce(name, out=a.out, scenarios=a.scenarios, progress=not a.quiet, quick=a.quick, resume=a.resume)
        print(f"{name}: {d}")
    return 0


def _cmd_theory(a: argparse.Namespace) -> int:
    from .theory_cli import run as run_theory

    return run_theory(a)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from .errors import ScenarioError

    args = _parser().parse_args(argv)
    commands = {
        "run": _cmd_run,
        "sweep": _cmd_sweep,
        "plot": _cmd_plot,
        "validate": _cmd_validate,
        "flow-level": _cmd_flow_level,
        "demo": _cmd_demo,
        "theory": _cmd_theory,
        "reproduce": _cmd_reproduce,
        "report": _cmd_report,
    }
    try:
        return commands[args.command](args)
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    except LbsimError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USER
    except KeyboardInterrupt:
        hint = " (rerun the same command to resume)" if args.command == "sweep" else ""
        print(f"\ninterrupted{hint}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except OSError as e:
        # A path the user gave that cannot be read or written (a file where a folder is
        # needed, no permission, a full disk): one line naming it, not a traceback.
        where = f"{e.filename}: " if e.filename else ""
        why = e.strerror or str(e)
        if isinstance(e, (FileExistsError, NotADirectoryError)):
            why = "a file is in the way where a folder is needed"
        print(f"error: {where}{why}", file=sys.stderr)
        return EXIT_USER


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
