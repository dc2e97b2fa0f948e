"""Measure what the progress machinery costs. Three ways to run the same scenario:

- plain:     no callbacks at all (as lbsim_core::run),
- signals:   the engine calls back every PROGRESS_EVERY events; the binding
             takes the GIL and checks for Ctrl-C (what every run does),
- bar:       the same plus a progress bar redrawn every 0.1 s (what a run on a
             terminal does).

    python tests/bench/progress_overhead.py [--size 32MiB] [--repeat 7]

The modes are interleaved and the minimum and median wall times reported. Not a
pytest test: timings on a shared machine are too noisy to assert on.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import time

from lbsim import _core
from lbsim.demo import demo_scenario
from lbsim.progress import RunProgress
from lbsim.runner import PROGRESS_EVERY


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="32MiB")
    ap.add_argument("--lb", default="reps")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    # Draw the bar as on a terminal although it writes to a string.
    os.environ["LBSIM_PROGRESS"] = "1"
    text = demo_scenario().with_overrides({"workload.size": a.size, "lb.kind": a.lb}).resolved()
    times: dict[str, list[float]] = {"plain": [], "signals": [], "bar": []}
    redraws = 0
    events = 0
    for i in range(a.repeat):
        order = ["plain", "signals", "bar"]
        order = order[i % 3 :] + order[: i % 3]
        for mode in order:
            sink = io.StringIO()
            bar = RunProgress("bench", stream=sink, delay=0.0) if mode == "bar" else None
            every = 2**63 if mode == "plain" else PROGRESS_EVERY
            t0 = time.perf_counter()
            raw = _core.run(text, [], None, bar, every)
            times[mode].append(time.perf_counter() - t0)
            if bar is not None:
                bar.close()
                redraws = sink.getvalue().count("\r")
            events = json.loads(raw["summary_json"])["events"]
    print(
        f"{a.lb}, 128-host 400G permutation of {a.size}: {events:,} events, "
        f"{events // PROGRESS_EVERY:,} engine callbacks, {redraws} bar redraws per run"
    )
    base_min, base_med = min(times["plain"]), statistics.median(times["plain"])
    for mode, ts in times.items():
        mn, md = min(ts), statistics.median(ts)
        print(
            f"{mode:8} min {mn:.3f} s ({100 * (mn - base_min) / base_min:+.2f} %)  "
            f"median {md:.3f} s ({100 * (md - base_med) / base_med:+.2f} %)  "
            f"runs {' '.join(f'{x:.3f}' for x in ts)}"
        )


if __name__ == "__main__":
    main()
