"""``lbsim demo``: ECMP vs OPS vs REPS on a 128-host 400G fat tree, 8 MiB permutation."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TextIO

from rich.table import Table

from ._tables import console, fmt, table
from .results import Result
from .runner import run
from .scenario import Scenario

__all__ = ["demo", "demo_scenario", "LOAD_BALANCERS", "results_table"]

LOAD_BALANCERS = ("ecmp", "ops", "reps")


def demo_scenario() -> Scenario:
    """The demo scenario (also shipped as scenarios/examples/permutation_128.toml)."""
    text = resources.files("lbsim").joinpath("data/permutation_128.toml").read_text(encoding="utf-8")
    s = Scenario(text, source="permutation_128.toml")
    s.resolved()
    return s


def results_table(results: dict[str, Result]) -> Table:
    """The demo's table: FCTs in us and relative to the ideal
    (:attr:`Result.ideal_fct_us`), drops, retransmissions, wall time."""
    from .plot import style

    t = table("", "max FCT (us)", "x ideal", "mean FCT (us)", "x ideal", "drops (pkts)", "retx (pkts)", "wall (s)")
    for lb, r in results.items():
        s = r.summary
        ideal = r.ideal_fct_us
        mx = s.get("max_fct_us")
        mean = s.get("mean_fct_us")
        mx = float("nan") if mx is None else float(mx)
        mean = float("nan") if mean is None else float(mean)
        d = s.get("drops", {})
        drops = int(d.get("congestion", 0)) + int(d.get("failure", 0))
        t.add_row(
            style.label(lb),
            fmt(mx, ".1f"),
            fmt(mx / ideal, ".3f"),
            fmt(mean, ".1f"),
            fmt(mean / ideal, ".3f"),
            str(drops),
            str(int(s.get("retransmissions", 0))),
            f"{float(s.get('wall_seconds', 0)):.2f}",
        )
    return t


def demo(out: str | Path = "results/demo", *, progress: bool = True, stream: TextIO | None = None) -> dict[str, Result]:
    """Run the demo: the demo scenario once per load balancer, each saved under
    ``out/<lb>``; print a table and write ``out/demo.png``, ``out/demo.pdf``
    and an HTML report, ``out/report.html`` (with ``out/<lb>/report.html``)."""
    from .plot import summary_figure

    c = console(stream)
    out = Path(out)
    base = demo_scenario()
    facts = base.validate()
    size = base["workload.size"]
    c.print(
        f"lbsim demo: {facts['hosts']}-host {facts['tiers']}-tier fat tree at "
        f"{facts['link_rate_bps'] / 1e9:.0f} Gb/s, {size} permutation, preset {base['preset']}",
        soft_wrap=True,
    )
    results: dict[str, Result] = {}
    for lb in LOAD_BALANCERS:
        s = base.with_overrides({"lb.kind": lb})
        r = run(s, progress=progress, out=out / lb, label=lb)
        results[lb] = r
        sm = r.summary
        c.print(
            f"  {lb:5} done: {sm['finished_flows']}/{sm['flows']} flows, {sm['events']:,} events in "
            f"{sm['wall_seconds']:.2f} s",
            soft_wrap=True,
        )
    first = next(iter(results.values()))
    c.print(
        f"\nideal FCT = {first.ideal_fct_us:.1f} us: the engine's ideal of a {size} message alone on its "
        "path of the idle network (store and forward at every hop)\n",
        soft_wrap=True,
    )
    c.print(results_table(results))
    groups = {lb: [r] for lb, r in results.items()}
    written = summary_figure(groups, out / "demo", baseline="ideal")
    from .report import sweep_report

    page = sweep_report(out)
    c.print(f"results: {out}/{{{','.join(results)}}}/  (scenario.toml, summary.json, flows.parquet)", soft_wrap=True)
    c.print("plot:    " + ", ".join(str(p) for p in written), soft_wrap=True)
    c.print(f"report:  {page}  (open it in a browser; one report per load balancer beside it)", soft_wrap=True)
    return results
