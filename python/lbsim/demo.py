"""``lbsim demo``: ECMP vs OPS vs REPS on a 128-host 400G fat tree, 8 MiB permutation."""

from __future__ import annotations

import math
import sys
from importlib import resources
from pathlib import Path
from typing import TextIO

from .results import Result
from .runner import run
from .scenario import Scenario

__all__ = ["demo", "demo_scenario", "LOAD_BALANCERS", "format_table"]

LOAD_BALANCERS = ("ecmp", "ops", "reps")


def demo_scenario() -> Scenario:
    """The demo scenario (also shipped as scenarios/examples/permutation_128.toml)."""
    text = resources.files("lbsim").joinpath("data/permutation_128.toml").read_text(encoding="utf-8")
    s = Scenario(text, source="permutation_128.toml")
    s.resolved()
    return s


def _fmt(v: float, spec: str) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def format_table(results: dict[str, Result]) -> str:
    """The demo's table: FCTs in us and relative to the ideal
    (:attr:`Result.ideal_fct_us`), drops, retransmissions, wall time."""
    from .plot import style

    head = f"{'':6} {'max FCT':>10} {'x ideal':>8} {'mean FCT':>10} {'x ideal':>8} {'drops':>7} {'retx':>7} {'wall':>6}"
    units = f"{'':6} {'(us)':>10} {'':>8} {'(us)':>10} {'':>8} {'(pkts)':>7} {'(pkts)':>7} {'(s)':>6}"
    lines = [head, units]
    for lb, r in results.items():
        s = r.summary
        ideal = r.ideal_fct_us
        mx = s.get("max_fct_us")
        mean = s.get("mean_fct_us")
        mx = float("nan") if mx is None else float(mx)
        mean = float("nan") if mean is None else float(mean)
        d = s.get("drops", {})
        drops = int(d.get("congestion", 0)) + int(d.get("failure", 0))
        lines.append(
            f"{style.label(lb):6} {_fmt(mx, '10.1f')} {_fmt(mx / ideal, '8.3f')} "
            f"{_fmt(mean, '10.1f')} {_fmt(mean / ideal, '8.3f')} {drops:7d} "
            f"{int(s.get('retransmissions', 0)):7d} {float(s.get('wall_seconds', 0)):6.2f}"
        )
    return "\n".join(lines)


def demo(out: str | Path = "results/demo", *, progress: bool = True, stream: TextIO | None = None) -> dict[str, Result]:
    """Run the demo: the demo scenario once per load balancer, each saved under
    ``out/<lb>``; print a table and write ``out/demo.png`` and ``out/demo.pdf``."""
    from .plot import summary_figure

    w = stream if stream is not None else sys.stdout
    out = Path(out)
    base = demo_scenario()
    facts = base.validate()
    size = base["workload.size"]
    w.write(
        f"lbsim demo: {facts['hosts']}-host {facts['tiers']}-tier fat tree at "
        f"{facts['link_rate_bps'] / 1e9:.0f} Gb/s, {size} permutation, preset {base['preset']}\n"
    )
    w.flush()
    results: dict[str, Result] = {}
    for lb in LOAD_BALANCERS:
        s = base.with_overrides({"lb.kind": lb})
        r = run(s, progress=progress, out=out / lb, label=lb)
        results[lb] = r
        sm = r.summary
        w.write(f"  {lb:5} done: {sm['finished_flows']}/{sm['flows']} flows, {sm['events']:,} events in {sm['wall_seconds']:.2f} s\n")
        w.flush()
    first = next(iter(results.values()))
    w.write(
        f"\nideal FCT = {first.ideal_fct_us:.1f} us: the engine's ideal of a {size} message alone on its "
        "path of the idle network (store and forward at every hop)\n\n"
    )
    w.write(format_table(results) + "\n\n")
    groups = {lb: [r] for lb, r in results.items()}
    written = summary_figure(groups, out / "demo", baseline="ideal")
    w.write(f"results: {out}/{{{','.join(results)}}}/  (scenario.toml, summary.json, flows.parquet)\n")
    w.write("plot:    " + ", ".join(str(p) for p in written) + "\n")
    return results
