"""How the engine's cost grows with the network: runs ``lbsim-cli bench`` (the
REPS world's 400G permutation, radix 64: 2 tiers up to 2048 hosts, 3 beyond)
over host counts and message sizes, one JSON line per point, then writes the
table and the plot of docs/performance.md. Two points use switches of radix
128, which hold 8192 hosts on 2 tiers (the issue's "2 tiers where the radix
allows").

    python tests/bench/scale.py run --cli target/release/lbsim-cli --out scale.jsonl [--grid full|small]
    python tests/bench/scale.py report scale.jsonl --table table.md --plot scale.png

Points already in the output file are skipped, so an interrupted grid resumes.
Timings are the fastest of --repeat runs (default 3; 1 for the largest points):
the run loop's wall time, and the CPU time of building and running the network.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# (hosts, size, balancer, radix): the table of docs/performance.md.
# Cheap points first, so an interrupted grid still has a table.
GRIDS = {
    "small": [(h, "1MiB", "reps", 64) for h in (128, 512, 1024)],
    "full": [(h, "1MiB", "reps", 64) for h in (128, 512, 1024, 2048, 4096, 8192, 16384)]
    + [(h, "8MiB", "reps", 64) for h in (128, 1024, 2048)]
    + [(h, "1MiB", "ops", 64) for h in (1024, 8192)]
    + [(8192, "1MiB", "reps", 128)]
    + [(32768, "1MiB", "reps", 64), (32768, "1MiB", "ops", 64), (8192, "8MiB", "reps", 64), (8192, "8MiB", "ops", 64)]
    + [(8192, "8MiB", "reps", 128), (32768, "8MiB", "reps", 64)],
}


def _key(p: dict) -> tuple:
    # Files written before --radix existed hold radix-64 points.
    return (p["hosts"], p["size"], p["lb"], p.get("radix", 64))


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {_key(json.loads(line)) for line in out.read_text().splitlines() if line.strip()}
    for hosts, size, lb, radix in GRIDS[args.grid]:
        if (hosts, size, lb, radix) in done:
            continue
        # Big points run once: repeating a run of minutes costs more than the noise it would average out.
        repeat = args.repeat if hosts * (8 if size == "8MiB" else 1) < 16384 else 1
        cmd = [args.cli, "bench", "--hosts", str(hosts), "--size", size, "--lb", lb, "--radix", str(radix)]
        cmd += ["--repeat", str(repeat), "--json"]
        print(" ".join(cmd), file=sys.stderr, flush=True)
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(res.stderr, file=sys.stderr)
            return 1
        with out.open("a") as f:
            f.write(res.stdout.strip() + "\n")
    return 0


def report(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [json.loads(line) for line in Path(args.results).read_text().splitlines() if line.strip()]
    for p in points:
        p.setdefault("radix", 64)  # files written before --radix existed hold radix-64 points
    points.sort(key=lambda p: (p["lb"], p["size_bytes"], p["radix"], p["hosts"]))
    rows = [
        "| hosts | radix | tiers | message | balancer | lines | events | wall (s) | CPU (s) | events/s (M) "
        "| hops/s (M) | peak RSS (MB) | runs |",
        "|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        rows.append(
            f"| {p['hosts']} | {p['radix']} | {p['tiers']} | {p['size']} | {p['lb']} | {p['lines']} "
            f"| {p['events']:,} | {p['wall_seconds']:.2f} | {p['cpu_seconds']:.2f} "
            f"| {p['events_per_second'] / 1e6:.2f} | {p['hops_per_second'] / 1e6:.2f} | {p['peak_rss_mb']:.0f} "
            f"| {p['repeat']} |"
        )
    Path(args.table).write_text("\n".join(rows) + "\n")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    series: dict[tuple, list] = {}
    for p in points:
        series.setdefault((p["lb"], p["size"], p["radix"]), []).append(p)
    for (lb, size, radix), ps in sorted(series.items()):
        hosts = [p["hosts"] for p in ps]
        label = f"{lb} {size}" + ("" if radix == 64 else f", radix {radix}")
        # Hops (packets put on links), not events: lazy lines drop events, not work.
        ax1.plot(hosts, [p["hops_per_second"] / 1e6 for p in ps], marker="o", label=label)
        ax2.plot(hosts, [p["wall_seconds"] for p in ps], marker="o", label=label)
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("hosts")
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("million hops (packets put on links) per second")
    ax1.set_ylim(bottom=0)
    ax2.set_yscale("log")
    ax2.set_ylabel("wall time of the run (s)")
    ax2.legend()
    fig.suptitle("lbsim-cli bench: 400G permutation, radix 64 (2 tiers up to 2048 hosts, 3 beyond) unless said")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the grid's points not yet in --out")
    r.add_argument("--cli", default="target/release/lbsim-cli")
    r.add_argument("--out", required=True)
    r.add_argument("--grid", choices=sorted(GRIDS), default="full")
    r.add_argument("--repeat", type=int, default=3)
    p = sub.add_parser("report", help="the table (Markdown) and the plot of a results file")
    p.add_argument("results")
    p.add_argument("--table", required=True)
    p.add_argument("--plot", required=True)
    args = ap.parse_args()
    return run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
