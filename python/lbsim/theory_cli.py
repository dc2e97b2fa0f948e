"""``lbsim theory``: the balls-into-bins models of REPS §5 and App. B–D.

    lbsim theory ops        [--n 16,32,64,128] [--lam 0.99] [--steps 10000] [--seed 1] [--seeds 1]
    lbsim theory recycled   [--n 5] [--steps 200] [--seed 1] [--tau T] [--b B] [--schedule immediate|round_robin]
    lbsim theory recycled --convergence [--n 16,32,64,128] [--seeds 100] [--initial empty|phase2] [--horizon 50]
    lbsim theory coalescing [--n 16] [--k 1,2,4,8] [--steps 10000] [--seed 1] [--tau T] [--b B]
    lbsim theory evs        [--uplinks 32] [--flows 1,32] [--evs 1,2,...,65536] [--seeds 100]

Each prints a summary table and writes the full table (``NAME.parquet``)
and its plot (``NAME.png``, ``NAME.pdf``) into ``--out`` (default
``results/theory``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import LbsimError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["add_parser", "run"]


def _int_list(text: str) -> list[int]:
    """``"16,32"`` -> [16, 32]; ``"2^8"`` is 256."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)\s*(?:\^|\*\*)\s*(\d+)", part)
        try:
            out.append(int(m.group(1)) ** int(m.group(2)) if m else int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return out


def add_parser(sub: Any) -> None:
    """Add the ``theory`` command to the ``lbsim`` subparsers."""
    sp = sub.add_parser(
        "theory",
        help="balls-into-bins models of REPS §5 and App. B-D (Figs. 13, 14, 16, 17)",
        description="Balls-into-bins models of REPS §5 and Appendices B-D. Prints a summary, "
        "writes the table (Parquet) and its plot (PNG, PDF) into --out.",
    )
    models = sp.add_subparsers(dest="model", required=True, metavar="MODEL")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--out", type=Path, default=Path("results/theory"), help="output folder (default results/theory)")
        p.add_argument("--no-plot", action="store_true", help="write the table only")

    def tau_b(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tau", type=int, help="threshold τ (default ⌈4 ln n⌉, Theorem 5.1)")
        p.add_argument("--b", type=int, help="b·n colours (default b = ⌈2.4 ln n⌉, Theorem 5.1)")

    p = models.add_parser("ops", help="batched balls-into-bins (OPS): max load over time per n (Fig. 13)")
    p.add_argument("--n", type=_int_list, default=[16, 32, 64, 128], help="bins, comma-separated (default 16,32,64,128)")
    p.add_argument("--lam", type=float, default=0.99, help="load λ in (0, 1] (default 0.99)")
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1, help="first seed")
    p.add_argument("--seeds", type=int, default=1, help="number of seeds (default 1)")
    common(p)

    p = models.add_parser(
        "recycled",
        help="recycled balls-into-bins (REPS): queues vs OPS (Fig. 14), or --convergence (Theorem 5.1)",
    )
    p.add_argument("--n", type=_int_list, help="bins (default 5; with --convergence 16,32,64,128)")
    p.add_argument("--steps", type=int, default=200, help="steps of the queue plot (default 200)")
    p.add_argument("--seed", type=int, default=1, help="(first) seed")
    tau_b(p)
    p.add_argument("--schedule", choices=("immediate", "round_robin"), default="immediate")
    p.add_argument("--convergence", action="store_true", help="steps to converge over many seeds (Theorem 5.1)")
    p.add_argument("--seeds", type=int, default=100, help="with --convergence: number of seeds (default 100)")
    p.add_argument("--initial", choices=("empty", "phase2"), default="empty", help="with --convergence: start state")
    p.add_argument("--horizon", type=float, default=50.0, help="with --convergence: give up after this many n ln n steps")
    p.add_argument("--share", type=float, default=0.95, help="with --convergence: share of seeds for c (default 0.95)")
    common(p)

    p = models.add_parser("coalescing", help="recycling every k-th removed ball vs OPS (App. D.1, Fig. 17)")
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--k", type=_int_list, default=[1, 2, 4, 8], help="coalescing ratios (default 1,2,4,8)")
    p.add_argument("--steps", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=1)
    tau_b(p)
    common(p)

    p = models.add_parser("evs", help="entropy-space imbalance with the switch ECMP hash (App. B, Fig. 16)")
    p.add_argument("--uplinks", type=int, default=32)
    p.add_argument("--flows", type=_int_list, default=[1, 32], help="flow counts (default 1,32)")
    p.add_argument("--evs", type=_int_list, help="EVS sizes (default 2^0,...,2^16)")
    p.add_argument("--seed", type=int, default=1, help="first seed")
    p.add_argument("--seeds", type=int, default=100, help="number of seeds (default 100)")
    common(p)


def _seeds(first: int, count: int) -> range:
    if count < 1:
        raise LbsimError(f"seeds: must be at least 1, got {count}")
    return range(first, first + count)


def _write(df: pd.DataFrame, fig: Any, out: Path, name: str) -> list[Path]:
    from .plot import style

    out.mkdir(parents=True, exist_ok=True)
    table = df.copy()
    table.attrs = {}
    path = out / f"{name}.parquet"
    table.to_parquet(path, index=False)
    written = [path]
    if fig is not None:
        written += style.save(fig, out / name)
    return written


def _show(df: pd.DataFrame) -> None:
    from ._tables import console, frame_table

    console().print(frame_table(df, ".4g"))


def run(a: argparse.Namespace) -> int:
    """Run ``lbsim theory MODEL``; returns the exit status."""
    from . import theory
    from .plot import theory as tplot

    plot = not a.no_plot
    written: list[Path] = []
    if a.model == "ops":
        df = theory.ops_sweep(a.n, a.lam, a.steps, _seeds(a.seed, a.seeds))
        last = df[df["step"] == df["step"].max()].groupby("n")["max_load"]
        summary = last.agg(["mean", "min", "max"]).reset_index()
        summary.columns = ["n", "final_max_mean", "final_max_min", "final_max_max"]
        print(f"OPS (batched balls-into-bins), λ = {a.lam:g}, maximum load after {a.steps} steps:")
        _show(summary)
        written = _write(df, tplot.max_load_over_time(df) if plot else None, a.out, "ops")
    elif a.model == "recycled" and a.convergence:
        ns = a.n or [16, 32, 64, 128]
        df = theory.convergence(
            ns,
            _seeds(a.seed, a.seeds),
            tau=a.tau,
            b=a.b,
            initial=a.initial,
            horizon=a.horizon,
            schedule=a.schedule,
        )
        s = theory.convergence_summary(df, a.share)
        print(
            f"Recycled balls-into-bins ({a.schedule}, start {a.initial}): steps to converge = c·n ln n; "
            f"c_q: {a.share:.0%} of seeds within c·n ln n"
        )
        _show(s)
        written = _write(df, tplot.convergence_cdf(df) if plot else None, a.out, f"recycled_convergence_{a.initial}")
    elif a.model == "recycled":
        if a.n is not None and len(a.n) != 1:
            raise LbsimError("n: give one number of bins (or use --convergence for several)")
        n = a.n[0] if a.n else 5
        df = theory.queues(n, a.steps, a.seed, tau=a.tau, b=a.b, schedule=a.schedule)
        g = df.groupby("model")["load"]
        tau = df.attrs["tau"]
        late = df[df["step"] > a.steps // 2].groupby("model")["load"].max()
        from ._tables import console, table

        print(f"n = {n}, τ = {tau}, b = {df.attrs['b']}, {a.steps} steps at full load, seed {a.seed}:")
        t = table("model", "peak queue", "peak in the second half")
        for model in ("ops", "recycled"):
            t.add_row(model, str(int(g.max()[model])), str(int(late[model])))
        console().print(t)
        written = _write(df, tplot.queues_over_time(df) if plot else None, a.out, "recycled_queues")
    elif a.model == "coalescing":
        df = theory.coalescing(a.n, a.k, a.steps, a.seed, tau=a.tau, b=a.b)
        print(f"ACK coalescing, n = {a.n}, τ = {df.attrs['tau']}, b = {df.attrs['b']}, {a.steps} steps at full load:")
        _show(theory.coalescing_summary(df))
        written = _write(df, tplot.coalescing_over_time(df) if plot else None, a.out, "coalescing")
    elif a.model == "evs":
        df = theory.evs(a.uplinks, a.flows, a.evs or theory.DEFAULT_EVS, _seeds(a.seed, a.seeds))
        print(f"Load imbalance (max/mean - 1) of {a.uplinks} uplinks over {a.seeds} seeds (switch ECMP hash):")
        _show(theory.evs_summary(df).drop(columns=["uplinks"]))
        written = _write(df, tplot.evs_imbalance(df) if plot else None, a.out, "evs")
    for p in written:
        print(p)
    return 0
