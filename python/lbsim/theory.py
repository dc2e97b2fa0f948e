"""The balls-into-bins theory of REPS (§5, Appendices B–D) as runnable models.

Each function runs a model in the Rust core (``lbsim-core/src/theory``) and
returns a pandas table, so the theory can be checked against packet-level
runs in the same tool. Every run is deterministic in its seed.

========================  =====================================================  =====================
function                  model                                                  paper
========================  =====================================================  =====================
:func:`ops`               batched balls-into-bins: λn balls per step at random   §5.1, Fig. 13, 14
:func:`recycled`          recycled balls-into-bins (colours, threshold τ)         §5.1, Thm 5.1, Fig. 14
:func:`convergence`       Theorem 5.1's convergence time over many seeds          Thm 5.1, App. C
:func:`queues`            per-bin queues of OPS and recycled side by side         Fig. 14
:func:`coalescing`        recycling only every k-th removed ball                  App. D.1, Fig. 17
:func:`evs`               (flow, entropy) pairs hashed onto uplinks               App. B, Fig. 16
========================  =====================================================  =====================

One step: every non-empty bin removes its oldest ball, then the step's balls
are thrown; loads are taken after the throws. ``tau`` and ``b`` default to
Theorem 5.1's ⌈4 ln n⌉ and ⌈2.4 ln n⌉. See ``docs/theory.md`` for the choices
made where the paper leaves the model open.

>>> from lbsim import theory
>>> df = theory.recycled(n=16, steps=500, seed=1)       # doctest: +SKIP
>>> df.attrs["converged_step"], df["max_load"].max()    # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from . import _core
from .errors import LbsimError
from .fct import percentile

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TheoryError",
    "SCHEDULES",
    "DEFAULT_EVS",
    "theorem_params",
    "phase_two_start",
    "ops",
    "ops_sweep",
    "recycled",
    "convergence",
    "convergence_summary",
    "queues",
    "coalescing",
    "coalescing_summary",
    "evs",
    "evs_summary",
]

#: How colours are scheduled in the recycled model: ``"immediate"`` (a
#: recycled colour is thrown again in the step that removed it, the process
#: of App. C; default) or ``"round_robin"`` (§5.1 read literally: batch
#: (t−1) mod b throws at step t).
SCHEDULES: tuple[str, ...] = ("immediate", "round_robin")

#: Entropy-space sizes of Fig. 16: 2^0 .. 2^16 (a 16-bit entropy field).
DEFAULT_EVS: tuple[int, ...] = tuple(2**e for e in range(17))

T = TypeVar("T")


class TheoryError(LbsimError, ValueError):
    """A bad model argument; the message starts with the parameter's name."""


def _call(f: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call the core, turning its ValueErrors ("param: message") into TheoryError."""
    try:
        return f(*args, **kwargs)
    except (ValueError, OverflowError) as e:
        raise TheoryError(str(e)) from None
    except TypeError as e:
        raise TheoryError(f"bad argument type: {e}") from None


def _int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TheoryError(f"{name}: must be an integer, got {v!r}")
    return int(v)


def _ints(name: str, vs: Any) -> list[int]:
    if isinstance(vs, (int, np.integer)) and not isinstance(vs, bool):
        return [int(vs)]
    if isinstance(vs, (str, bytes)) or not isinstance(vs, Iterable):
        raise TheoryError(f"{name}: must be an integer or a sequence of integers, got {vs!r}")
    out = [_int(name, v) for v in vs]
    if not out:
        raise TheoryError(f"{name}: needs at least one value")
    return out


def _n_ln_n(n: int) -> float:
    return n * math.log(n) if n > 1 else float("nan")


def theorem_params(n: int) -> tuple[int, int]:
    """Theorem 5.1's threshold and colour multiplier for ``n`` bins:
    ``(tau, b) = (⌈4 ln n⌉, ⌈2.4 ln n⌉)``, each at least 1.

    >>> theorem_params(16)
    (12, 7)
    """
    return _call(_core.theory_defaults, _int("n", n))


def phase_two_start(n: int) -> list[int]:
    """App. C's worst start of the second phase: one ball in every bin plus
    ⌊2n ln n⌋ in bin 0 (the bound on the balls the first phase leaves)."""
    return _call(_core.theory_phase_two_start, _int("n", n))


def _tau_b(n: int, tau: int | None, b: int | None) -> tuple[int, int]:
    t0, b0 = theorem_params(n)
    return (t0 if tau is None else _int("tau", tau), b0 if b is None else _int("b", b))


def _initial(n: int, initial: str | Sequence[int] | None) -> list[int] | None:
    if initial is None or (isinstance(initial, str) and initial == "empty"):
        return None
    if isinstance(initial, str):
        if initial == "phase2":
            return phase_two_start(n)
        raise TheoryError(f"initial: unknown start {initial!r}: expected 'empty', 'phase2' or a list of loads")
    return _ints("initial", initial)


def _series_frame(raw: dict[str, Any], n: int, steps: int, extra: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    import pandas as pd

    cols: dict[str, np.ndarray] = {
        "step": np.arange(1, steps + 1, dtype=np.int64),
        "max_load": np.frombuffer(raw["max_load"], dtype="<u4").astype(np.int64),
        "balls": np.frombuffer(raw["balls"], dtype="<u8").astype(np.int64),
    }
    if extra:
        cols.update(extra)
    df = pd.DataFrame(cols)
    if raw.get("loads") is not None:
        loads = np.frombuffer(raw["loads"], dtype="<u4").reshape(steps, n).astype(np.int64)
        bins = pd.DataFrame(loads, columns=[f"bin_{i}" for i in range(n)])
        df = pd.concat([df, bins], axis=1)
    return df


def ops(n: int = 16, lam: float = 0.99, steps: int = 10_000, seed: int = 1, *, loads: bool = False) -> pd.DataFrame:
    """Batched balls-into-bins, the model of oblivious packet spraying (§5.1).

    ``n`` bins; each step every non-empty bin removes one ball, then ``lam·n``
    balls are thrown uniformly at random (⌊λnt⌋ − ⌊λn(t−1)⌋ at step t, so
    exactly λn per step on average). Returns one row per step: ``step``,
    ``max_load``, ``balls`` and, with ``loads=True``, ``bin_0`` ... ``bin_{n-1}``.
    ``df.attrs`` holds the parameters.
    """
    n, steps, seed = _int("n", n), _int("steps", steps), _int("seed", seed)
    raw = _call(_core.theory_ops, n, float(lam), steps, seed, record_loads=loads)
    df = _series_frame(raw, n, steps)
    df.attrs.update(model="ops", n=n, lam=float(lam), seed=seed)
    return df


def ops_sweep(
    ns: Sequence[int] = (16, 32, 64, 128),
    lam: float = 0.99,
    steps: int = 10_000,
    seeds: Iterable[int] = (1,),
) -> pd.DataFrame:
    """Fig. 13: :func:`ops` for several ``n`` (and seeds), stacked with
    columns ``n``, ``seed``, ``step``, ``max_load``, ``balls``."""
    import pandas as pd

    frames = []
    for n in _ints("ns", ns):
        for seed in _ints("seeds", seeds):
            df = ops(n, lam, steps, seed)
            df.insert(0, "seed", seed)
            df.insert(0, "n", n)
            frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(model="ops", lam=float(lam))
    return out


def recycled(
    n: int = 16,
    tau: int | None = None,
    b: int | None = None,
    steps: int = 10_000,
    seed: int = 1,
    *,
    ack_every: int = 1,
    schedule: str = "immediate",
    initial: str | Sequence[int] | None = None,
    loads: bool = False,
) -> pd.DataFrame:
    """Recycled balls-into-bins, the model of REPS (§5.1, Theorem 5.1).

    b·n colours, threshold τ: a removed ball's colour remembers its bin if the
    bin held at most τ balls and forgets it above τ; remembered colours are
    thrown into their bin, the others at random; n balls per step (full
    load). ``ack_every=k`` recycles only every k-th removed ball (App. D.1).
    ``initial``: ``None``/``"empty"``, ``"phase2"`` (:func:`phase_two_start`)
    or a list of n loads. Returns one row per step: ``step``, ``max_load``,
    ``balls``, ``fresh`` (balls thrown at random) and, with ``loads=True``,
    ``bin_0`` .... ``df.attrs`` holds the parameters and the run's summary:
    ``converged_step`` (the step after which nothing changes: every bin
    non-empty and at most τ, one ball per colour; None if not reached),
    ``last_over_tau`` (0 if never), ``peak_load``, ``final_balls``, ``collisions``.
    """
    n, steps, seed = _int("n", n), _int("steps", steps), _int("seed", seed)
    tau, b = _tau_b(n, tau, b)
    init = _initial(n, initial)
    raw = _call(
        _core.theory_recycled,
        n,
        tau,
        b,
        steps,
        seed,
        ack_every=_int("ack_every", ack_every),
        schedule=schedule,
        initial_loads=init,
        record_loads=loads,
    )
    fresh = np.frombuffer(raw["fresh"], dtype="<u4").astype(np.int64)
    df = _series_frame(raw, n, steps, {"fresh": fresh})
    df.attrs.update(
        model="recycled",
        n=n,
        tau=tau,
        b=b,
        ack_every=ack_every,
        schedule=schedule,
        seed=seed,
        converged_step=raw["converged_step"],
        last_over_tau=raw["last_over_tau"],
        peak_load=raw["peak_load"],
        final_balls=raw["final_balls"],
        collisions=raw["collisions"],
    )
    return df


def convergence(
    ns: Sequence[int] = (16, 32, 64, 128),
    seeds: Iterable[int] = range(1, 101),
    *,
    tau: int | None = None,
    b: int | None = None,
    initial: str = "empty",
    horizon: float = 50.0,
    schedule: str = "immediate",
) -> pd.DataFrame:
    """Theorem 5.1 over many seeds: one row per (n, seed) with
    ``converged_step`` (nullable) and ``c = converged_step / (n ln n)``
    (NaN when the run did not converge within ``horizon·n ln n`` steps),
    plus ``tau``, ``b``, ``last_over_tau``, ``peak_load``, ``final_balls``,
    ``collisions``. ``initial`` is ``"empty"`` (phase 1 of App. C) or
    ``"phase2"`` (:func:`phase_two_start`). Runs stop once converged."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    seed_list = _ints("seeds", seeds)
    if not horizon > 0:
        raise TheoryError(f"horizon: must be positive, got {horizon!r}")
    for n in _ints("ns", ns):
        t, bb = _tau_b(n, tau, b)
        steps = max(1, math.ceil(horizon * _n_ln_n(n))) if n > 1 else max(1, math.ceil(horizon))
        init = _initial(n, initial)
        sums = _call(
            _core.theory_recycled_summaries, n, t, bb, steps, seed_list, schedule=schedule, initial_loads=init
        )
        for s in sums:
            rows.append({"n": n, "tau": t, "b": bb, "horizon_steps": steps, **s})
    df = pd.DataFrame(rows)
    df["converged_step"] = df["converged_step"].astype("Int64")
    scale = df["n"].map(lambda v: _n_ln_n(int(v)))
    df["c"] = df["converged_step"].astype("Float64").astype(float) / scale
    df.attrs.update(model="recycled", initial=initial, schedule=schedule)
    return df


def convergence_summary(df: pd.DataFrame, share: float = 0.95) -> pd.DataFrame:
    """Per n: seeds, the fraction that converged, the median c and ``c_q``:
    the smallest c such that a ``share`` of the seeds converged within
    c·n ln n steps (inf if fewer than that share converged at all). Both are
    the engine's nearest-rank percentiles (:func:`lbsim.fct.percentile`, the
    median its 50th: the lower middle value of an even count), seeds that
    did not converge counting as c = inf."""
    import pandas as pd

    if not 0 < share <= 1:
        raise TheoryError(f"share: must be in (0, 1], got {share!r}")
    out = []
    for n in sorted(int(v) for v in df["n"].unique()):
        g = df[df["n"] == n]
        c = g["c"].to_numpy(dtype=float, na_value=np.inf)
        c_median, c_q = percentile(c, [50.0, share * 100.0]).tolist()
        out.append(
            {
                "n": n,
                "tau": int(g["tau"].iloc[0]),
                "b": int(g["b"].iloc[0]),
                "seeds": len(c),
                "converged": float(np.isfinite(c).mean()),
                "c_median": c_median,
                "c_q": c_q,
                "peak_load": int(g["peak_load"].max()),
                "collisions": int(g["collisions"].sum()),
            }
        )
    return pd.DataFrame(out)


def queues(
    n: int = 5,
    steps: int = 200,
    seed: int = 1,
    *,
    tau: int | None = None,
    b: int | None = None,
    schedule: str = "immediate",
) -> pd.DataFrame:
    """Fig. 14: every bin's queue over time for OPS at full load and for the
    recycled model, in long form: ``model`` ("ops" or "recycled"), ``step``,
    ``bin``, ``load``. ``df.attrs["tau"]`` is the threshold."""
    import pandas as pd

    n = _int("n", n)
    tau, b = _tau_b(n, tau, b)
    frames = []
    for model, df in (
        ("ops", ops(n, 1.0, steps, seed, loads=True)),
        ("recycled", recycled(n, tau, b, steps, seed, schedule=schedule, loads=True)),
    ):
        long = df.melt(id_vars=["step"], value_vars=[f"bin_{i}" for i in range(n)], var_name="bin", value_name="load")
        long["bin"] = long["bin"].str.removeprefix("bin_").astype(np.int64)
        long.insert(0, "model", model)
        frames.append(long)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(n=n, tau=tau, b=b, seed=seed, steps=steps)
    return out


def coalescing(
    n: int = 16,
    ks: Sequence[int] = (1, 2, 4, 8),
    steps: int = 10_000,
    seed: int = 1,
    *,
    tau: int | None = None,
    b: int | None = None,
    with_ops: bool = True,
) -> pd.DataFrame:
    """Fig. 17: the recycled model with ACK coalescing k:1 for each k in
    ``ks`` (App. D.1), and OPS at full load, in long form: ``model``,
    ``ack_every`` (<NA> for OPS), ``step``, ``max_load``, ``balls``."""
    import pandas as pd

    n = _int("n", n)
    tau, b = _tau_b(n, tau, b)
    frames = []
    for k in _ints("ks", ks):
        df = recycled(n, tau, b, steps, seed, ack_every=k)
        df.insert(0, "ack_every", k)
        df.insert(0, "model", "recycled")
        frames.append(df.drop(columns=["fresh"]))
    if with_ops:
        df = ops(n, 1.0, steps, seed)
        df.insert(0, "ack_every", pd.Series(pd.NA, index=df.index, dtype="Int64"))
        df.insert(0, "model", "ops")
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out["ack_every"] = out["ack_every"].astype("Int64")
    out.attrs.update(n=n, tau=tau, b=b, seed=seed, steps=steps)
    return out


def coalescing_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per series of :func:`coalescing`: the peak maximum load, its time mean,
    its mean over the second half of the run, and the fraction of steps
    with a bin above τ."""
    import pandas as pd

    tau = int(df.attrs["tau"])
    out = []
    for (model, k), g in df.groupby(["model", "ack_every"], dropna=False, sort=False):
        m = g["max_load"].to_numpy(dtype=float)
        out.append(
            {
                "model": model,
                "ack_every": k,
                "peak_max_load": int(m.max()),
                "mean_max_load": float(m.mean()),
                "late_mean_max_load": float(m[len(m) // 2 :].mean()),
                "frac_steps_over_tau": float((m > tau).mean()),
            }
        )
    res = pd.DataFrame(out)
    res["ack_every"] = res["ack_every"].astype("Int64")
    res.attrs.update(tau=tau)
    return res


def evs(
    uplinks: int = 32,
    flows: int | Sequence[int] = (1, 32),
    evs: int | Sequence[int] = DEFAULT_EVS,
    seeds: Iterable[int] = range(1, 101),
) -> pd.DataFrame:
    """App. B, Fig. 16: each flow hashes each of its ``evs`` entropy values
    onto one of ``uplinks`` with the switches' ECMP hash (the engine's
    ``ecmp_hash``, with the salt the engine gives a switch under that seed).
    One row per (flows, evs, seed): ``max_load``, ``mean_load`` and the load
    imbalance ``imbalance = max/mean − 1``."""
    import pandas as pd

    uplinks = _int("uplinks", uplinks)
    seed_list = _ints("seeds", seeds)
    rows: list[dict[str, Any]] = []
    for f in _ints("flows", flows):
        for e in _ints("evs", evs):
            for seed, mx, mean, imb in _call(_core.theory_evs, uplinks, f, e, seed_list):
                rows.append(
                    {"uplinks": uplinks, "flows": f, "evs": e, "seed": seed, "max_load": mx, "mean_load": mean, "imbalance": imb}
                )
    return pd.DataFrame(rows)


def evs_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (flows, evs): the mean, 5th percentile, median and 95th percentile
    of the load imbalance over seeds (the engine's nearest-rank percentiles,
    :func:`lbsim.fct.percentile`; the median is the 50th)."""
    g = df.groupby(["uplinks", "flows", "evs"], sort=True)["imbalance"]
    out = g.agg(
        trials="count",
        mean="mean",
        p5=lambda s: percentile(s.to_numpy(dtype=float), 5.0),
        median=lambda s: percentile(s.to_numpy(dtype=float), 50.0),
        p95=lambda s: percentile(s.to_numpy(dtype=float), 95.0),
    )
    return out.reset_index()
