"""The balls-into-bins models (lbsim.theory) against the claims of REPS §5 and
Appendices B–D, and the ``lbsim theory`` command."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lbsim
from lbsim import theory


def test_theorem_parameters() -> None:
    # Thm 5.1: τ ≥ 4 ln n, b ≥ 2.4 ln n, taken as the ceilings.
    for n in (16, 32, 64, 128):
        tau, b = theory.theorem_params(n)
        assert tau == math.ceil(4 * math.log(n)) and b == math.ceil(2.4 * math.log(n))
    start = theory.phase_two_start(16)
    assert len(start) == 16 and min(start) == 1
    assert sum(start) == int(2 * 16 * math.log(16)) + 16


def test_ops_max_load_grows_with_n() -> None:
    # §5.1, Fig. 13: λ = 0.99, the maximum load after 10 000 steps grows with n.
    # One seed's final maximum spreads by about ±35, so compare means over 50 seeds.
    df = theory.ops_sweep((16, 32, 64, 128), lam=0.99, steps=10_000, seeds=range(1, 51))
    final = df[df["step"] == 10_000].groupby("n")["max_load"].mean()
    assert list(final.index) == [16, 32, 64, 128]
    assert final.is_monotonic_increasing and final.diff().dropna().min() > 0, final.to_dict()
    # λn balls per step on average: the ball count never exceeds what arrived.
    one = df[(df["n"] == 16) & (df["seed"] == 1)]
    assert (one["balls"] <= np.floor(0.99 * 16 * one["step"])).all()


def test_recycled_converges_within_c_n_ln_n() -> None:
    # Thm 5.1: n ≥ 16, τ = ⌈4 ln n⌉, b = ⌈2.4 ln n⌉, full load: all bins at or
    # below τ (for good) within c·n ln n steps in at least 95 of 100 seeds.
    c_bound = 1.5
    df = theory.convergence((16, 32, 64, 128), range(1, 101))
    s = theory.convergence_summary(df, 0.95)
    print("\n" + s.to_string())
    assert (s["seeds"] == 100).all()
    assert (s["c_q"] <= c_bound).all(), s
    within = df.groupby("n")["c"].apply(lambda c: float((c.fillna(np.inf) <= c_bound).mean()))
    assert (within >= 0.95).all(), within
    # Once converged no bin goes above τ again: the last overflow comes before.
    conv = df[df["converged_step"].notna()]
    assert (conv["last_over_tau"].astype(int) < conv["converged_step"].astype(int)).all()
    # App. C's worst phase-2 start (2n ln n + n balls, the surplus in one bin):
    # still O(n ln n), about 2n ln n steps to drain the pile, whatever n.
    df2 = theory.convergence((16, 32, 64, 128), range(1, 101), initial="phase2")
    s2 = theory.convergence_summary(df2, 0.95)
    print(s2.to_string())
    assert ((s2["c_q"] >= 1.5) & (s2["c_q"] <= 2.5)).all(), s2
    assert (s2["converged"] == 1.0).all()


def test_fig14_ops_grows_recycled_stays_below_tau() -> None:
    # Fig. 14 (n = 5, 200 steps, full load): OPS queues keep growing, the
    # recycled model's stay below τ.
    ops_late, ops_early, rec_ok = [], [], 0
    for seed in range(1, 21):
        q = theory.queues(n=5, steps=200, seed=seed)
        tau = q.attrs["tau"]
        late = q[q["step"] > 100].groupby("model")["load"].max()
        early = q[q["step"] <= 50].groupby("model")["load"].max()
        ops_late.append(late["ops"])
        ops_early.append(early["ops"])
        rec_ok += int(late["recycled"] <= tau)
    assert rec_ok == 20
    assert sum(v > tau for v in ops_late) >= 18
    assert np.mean(ops_late) > 1.5 * np.mean(ops_early)


def test_evs_imbalance_small_and_large_spaces() -> None:
    # App. B, Fig. 16b: 32 uplinks, 32 flows: 2^16 entropies give under 1 %
    # imbalance, 2^8 or fewer over 10 % (expected values over 100 trials).
    df = theory.evs(uplinks=32, flows=32, evs=(2**4, 2**6, 2**8, 2**16), seeds=range(1, 101))
    s = theory.evs_summary(df).set_index("evs")
    print("\n" + s.to_string())
    assert s.loc[2**16, "mean"] < 0.01
    assert (s.loc[[2**4, 2**6, 2**8], "mean"] > 0.10).all()
    assert s["mean"].is_monotonic_decreasing
    # The imbalance is max/mean − 1 of counts that add up to flows × evs.
    row = df.iloc[0]
    assert row["mean_load"] == 32 * row["evs"] / 32
    assert row["imbalance"] == pytest.approx(row["max_load"] / row["mean_load"] - 1)


def test_coalescing_barely_exceeds_tau_and_beats_ops() -> None:
    # App. D.1, Fig. 17: 2:1 and 4:1 coalescing barely exceed τ; 8:1 still beats OPS.
    for seed in (1, 2, 3):
        df = theory.coalescing(n=16, ks=(1, 2, 4, 8), steps=10_000, seed=seed)
        tau = df.attrs["tau"]
        s = theory.coalescing_summary(df).set_index("model", append=False)
        rec = s.loc["recycled"].set_index("ack_every")
        ops_mean = float(s.loc["ops", "mean_max_load"])
        assert rec.loc[1, "peak_max_load"] <= tau
        assert rec.loc[2, "mean_max_load"] <= 2 * tau and rec.loc[4, "mean_max_load"] <= 2 * tau, rec
        assert rec["mean_max_load"].is_monotonic_increasing
        assert rec.loc[8, "mean_max_load"] < 0.5 * ops_mean, (rec, ops_mean)


def test_literal_round_robin_reading_piles_up() -> None:
    # §5.1 read literally (batch (t−1) mod b throws at step t): at Thm 5.1's
    # constants balls pile up past App. C's bound and bins stay above τ.
    df = theory.recycled(n=16, steps=3000, seed=1, schedule="round_robin")
    assert df.attrs["converged_step"] is None
    assert df.attrs["final_balls"] > 2 * 16 * math.log(16) + 16
    assert df.attrs["last_over_tau"] > 2900


def test_tables_are_deterministic_per_seed() -> None:
    a = theory.recycled(n=8, steps=300, seed=4, loads=True)
    b = theory.recycled(n=8, steps=300, seed=4, loads=True)
    c = theory.recycled(n=8, steps=300, seed=5, loads=True)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert [f"bin_{i}" for i in range(8)] == [col for col in a.columns if col.startswith("bin_")]
    assert (a.filter(like="bin_").max(axis=1) == a["max_load"]).all()
    assert (a.filter(like="bin_").sum(axis=1) == a["balls"]).all()
    e1 = theory.evs(uplinks=8, flows=2, evs=16, seeds=[7])
    e2 = theory.evs(uplinks=8, flows=2, evs=16, seeds=[7])
    pd.testing.assert_frame_equal(e1, e2)


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda: theory.ops(n=0), "n"),
        (lambda: theory.ops(n=4, lam=1.5), "lam"),
        (lambda: theory.ops(n=4, lam=0.0), "lam"),
        (lambda: theory.ops(n=4, steps=0), "steps"),
        (lambda: theory.recycled(n=4, ack_every=0), "ack_every"),
        (lambda: theory.recycled(n=4, b=0), "b"),
        (lambda: theory.recycled(n=4, schedule="fifo"), "schedule"),
        (lambda: theory.recycled(n=4, initial=[1, 2]), "initial_loads"),
        (lambda: theory.recycled(n=4, initial="full"), "initial"),
        (lambda: theory.recycled(n=4, seed=-1), "seed"),
        (lambda: theory.convergence(ns=[]), "ns"),
        (lambda: theory.evs(uplinks=0), "uplinks"),
        (lambda: theory.evs(evs=2**16 + 1), "evs"),
        (lambda: theory.evs(flows=0), "flows"),
        (lambda: theory.ops(n=2.5), "n"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_name_the_parameter(call, param: str) -> None:
    with pytest.raises(theory.TheoryError) as e:
        call()
    assert str(e.value).startswith(f"{param}:"), str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, lbsim.LbsimError)


def test_cli_writes_tables_and_plots(cli, tmp_path: Path) -> None:
    p = cli("theory", "evs", "--flows", "1,32", "--evs", "2^4,256", "--seeds", "3", "--out", "out", check=True)
    assert "65536" not in p.stdout and "256" in p.stdout
    df = pd.read_parquet(tmp_path / "out/evs.parquet")
    assert len(df) == 2 * 2 * 3 and set(df["evs"]) == {16, 256}
    assert (tmp_path / "out/evs.png").stat().st_size > 0 and (tmp_path / "out/evs.pdf").is_file()
    p = cli("theory", "recycled", "--steps", "60", "--out", "out", check=True)
    assert "recycled" in p.stdout and (tmp_path / "out/recycled_queues.png").is_file()
    q = pd.read_parquet(tmp_path / "out/recycled_queues.parquet")
    assert set(q["model"]) == {"ops", "recycled"} and q["step"].max() == 60 and q["bin"].nunique() == 5
    p = cli("theory", "recycled", "--convergence", "--n", "16", "--seeds", "5", "--no-plot", "--out", "out", check=True)
    assert "c_q" in p.stdout and not (tmp_path / "out/recycled_convergence_empty.png").exists()


def test_cli_bad_arguments_exit_2(cli) -> None:
    p = cli("theory", "ops", "--n", "0", "--steps", "10")
    assert p.returncode == 2 and "n:" in p.stderr and "Traceback" not in p.stderr
    p = cli("theory", "coalescing", "--k", "0", "--steps", "10")
    assert p.returncode == 2 and "ack_every" in p.stderr and "Traceback" not in p.stderr
    p = cli("theory", "evs", "--evs", "two")
    assert p.returncode == 2 and "Traceback" not in p.stderr
