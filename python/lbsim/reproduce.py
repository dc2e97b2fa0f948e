"""Reproduce paper figures: run a shipped scenario in each of the variants a
figure compares, save every run, draw lbsim's version of the figure and a
table of the numbers the paper reports.

``lbsim reproduce reps-fig06`` (from the repository root, where
``scenarios/`` is) writes ``results/reproduce/reps-fig06/``: one run
directory per variant, ``reps-fig06.png``/``.pdf`` and ``summary.csv``.
``lbsim reproduce --list`` lists the figures.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._tables import frame_table, render
from .errors import LbsimError
from .fct import measured_flows, percentile
from .results import Result, is_run_dir, load
from .runner import run
from .scenario import Scenario

__all__ = ["FIGURES", "Figure", "reproduce"]

Overrides = Mapping[str, Any]


@dataclass(frozen=True)
class Figure:
    """A figure: its scenario (relative to ``scenarios/``), the variants it
    compares (name -> overrides), how to draw them, and what the paper says."""

    scenario: str
    variants: Mapping[str, Overrides]
    #: "timeseries", "bars" (`metric` by variant), "lines" (`metric` against
    #: `x`), "trace" (mean and p99 slowdown against `x`, and per size bucket at
    #: the largest x), "grouped" (`metric` over ECMP's per workload, variants
    #: named "<workload>/<lb>"), "distributions" (FCT and RTT CDFs per variant), "reorder"
    #: (uplink imbalance and ConWeave's reorder queues and memory, variants "<setting>/<lb>"),
    #: "resume_error" (the CDF of ConWeave's T_resume errors per variant), "fct" (the measured
    #: flows' mean, p99 and p99.9 completion times against `x`, variants "<x>/<lb>"), "balance"
    #: (FaCa Figs. 6-7: uplink and RNIC throughput spread, mean over seeds, variants "<seed>/<lb>"),
    #: "core_congestion" (FaCa Fig. 9b: the share of the traffic into the core that met a standing
    #: queue, over time, a line per variant),
    #: "congestion" (flow-level: congestion rate and the ToR uplinks' spread against `x`, mean
    #: over seeds, variants "<x>/<lb>/<seed>"), "drop" (flow-level, FaCa Fig. 1: the largest
    #: throughput of t1_0's ports and their max − min against `x`, mean over seeds).
    plot: str
    paper: str
    x_label: str = ""
    #: For "lines" and "trace": each variant's x value; variants are named "<x>/<lb>".
    x: Mapping[str, float] = field(default_factory=dict)
    #: The summary value "bars" and "lines" draw.
    metric: str = "max_fct_us"
    #: For "lines": a logarithmic x axis.
    x_log: bool = False
    #: For "grouped": the load balancer each workload's values are divided by
    #: (None: plain values).
    baseline: str | None = "ecmp"
    #: For "grouped", "lines" and "trace": a logarithmic y axis.
    y_log: bool = False
    #: Overrides for the quick version (``--quick``): a smaller network or
    #: workload that keeps the comparison, for CI and a first look. They apply
    #: over each variant's own (a quick size shrinks every variant's).
    quick: Overrides = field(default_factory=dict)
    #: "packet" (the engine) or "flow" (the flow-level mode, docs/flow-level.md).
    mode: str = "packet"


#: How "grouped" figures label a summary metric other than a completion time.
_METRIC_LABELS = {"mean_slowdown": ("Average FCT slowdown", ""), "p99_slowdown": ("p99 FCT slowdown", ""),
                  "mean_fct_us": ("Mean FCT", "µs"), "collective_us": ("Collective completion time", "µs")}


def _lbs(*names: str) -> dict[str, Overrides]:
    return {n: {"lb.kind": n} for n in names}


#: ``[[failures]]`` entries (and ``[[rate_overrides]]`` below) as Python values; the
#: override writes them as TOML.
_FIG07_MODES: dict[str, list[dict[str, Any]]] = {
    "cable": [{"link": "t0_0->t1_0", "direction": "both", "at": "50us"}],
    "switch": [{"switch": "t1_0", "at": "50us"}],
    "degraded": [{"kind": "degrade", "rate": "200Gbps", "link": "t0_0->t1_0", "direction": "both", "at": "50us"}],
    # The artifact's 1 % switch bit errors (its Fig. 7 script's ber_switch_one_percent.txt), network-wide.
    "loss_1pct": [{"kind": "switch_ber", "loss": 0.01, "at": "50us"}],
    # Its 1 % cable bit errors (ber_cable_one_percent.txt), which the same script also runs.
    "cable_ber": [{"kind": "cable_ber", "loss": 0.01, "at": "50us"}],
    "every_10th": [{"kind": "drop_nth", "nth": 10, "link": "t0_0->t1_0", "at": "50us"}],
}

_FIG08_FRACTIONS = (0.05, 0.1, 0.25, 0.5)

#: REPS §4.3.1: "different load levels, ranging from 40% to 100%".
_TRACE_LOADS = (0.4, 0.6, 0.8, 1.0)
_TRACE_LBS = ("ecmp", "ops", "reps")


def _trace_variants() -> dict[str, Overrides]:
    return {f"{x}/{lb}": {"lb.kind": lb, "workload.load": x} for x, lb in itertools.product(_TRACE_LOADS, _TRACE_LBS)}


_TRACE_X = {f"{x}/{lb}": x for x, lb in itertools.product(_TRACE_LOADS, _TRACE_LBS)}

#: REPS §4.5.1, Fig. 11: ACK coalescing ratios.
_ACK_RATIOS = (1, 2, 4, 8, 16)
#: REPS §4.5.2, Fig. 12 left: EVS sizes.
_EVS_SIZES = (32, 256, 65536)


#: Every load balancer REPS §4.1 compares, per-flow ones first.
_ALL_LBS = ("ecmp", "plb", "flowlet", "subflows", "ops", "bitmap", "mprdma", "adaptive", "arcane", "reps")

#: REPS §4.2 synthetic patterns: incast (8 senders), permutation, tornado.
_PATTERNS: dict[str, Overrides] = {
    "incast": {"workload.kind": "incast", "workload.senders": 8},
    "permutation": {"workload.kind": "permutation"},
    "tornado": {"workload.kind": "tornado"},
}

#: 32 hosts and 2 MiB messages.
_QUICK_PERM: dict[str, Any] = {"topology.hosts": 32, "topology.radix": 8, "workload.size": "2MiB"}


#: ConWeave §4.1.1, Figs. 12-13: 50 % and 80 % average load of the fabric, the schemes compared
#: (§4.1, "Schemes compared": ECMP, CONGA, LetFlow, DRILL(2,1)).
_CW_LOADS = (0.5, 0.8)
_CW_LBS = ("ecmp", "conga", "letflow", "drill", "conweave")
#: On the 3-tier fat tree (Fig. 17) without CONGA: a leaf-spine design (CONGA SIGCOMM '14 §3), and
#: lbsim's CONGA, like the ConWeave artifact's, runs on 2 tiers only.
_CW_LBS_3TIER = tuple(lb for lb in _CW_LBS if lb != "conga")
_CW_X = {f"{x}/{lb}": x for x, lb in itertools.product(_CW_LOADS, _CW_LBS)}


def _cw_variants() -> dict[str, Overrides]:
    return {f"{x}/{lb}": {"lb.kind": lb, "workload.load": x} for x, lb in itertools.product(_CW_LOADS, _CW_LBS)}


#: ConWeave §4.1.4, Fig. 17: the k = 8 fat tree on lossless and IRN RDMA (rdma_irn is
#: rdma_lossless without PFC, with IRN).
_CW_FABRICS: dict[str, Overrides] = {
    "lossless": {},
    "irn": {"queue.shared.pfc": False, "transport.kind": "irn"},
}

#: ConWeave Figs. 14-16: every ToR's uplinks and the switches' reorder state sampled every 10 us
#: (Fig. 14 sums them into 100 us windows).
_CW_SAMPLED: dict[str, Any] = {
    "observe.ports": [f"t0_{i}" for i in range(8)],
    "observe.bucket": "10us",
}


def _cw_resource_variants() -> dict[str, Overrides]:
    out: dict[str, Overrides] = {}
    for (fabric, o), load, lb in itertools.product(_CW_FABRICS.items(), _CW_LOADS, _CW_LBS):
        sampled = {**_CW_SAMPLED, "observe.switch_lb": lb == "conweave"}
        out[f"{fabric} {int(load * 100)}%/{lb}"] = {**o, **sampled, "lb.kind": lb, "workload.load": load}
    return out


#: ConWeave App. B.1, Fig. 22: θ_reply from 5 us to 68 us (IRN, leaf-spine).
_CW_REPLY_US = (5, 8, 12, 16, 24, 32, 48, 68)

#: ConWeave §4.2, Fig. 19: the testbed's loads and schemes (no CONGA, no DRILL on the testbed).
_CW_TESTBED_LOADS = (0.4, 0.5, 0.6, 0.7, 0.8)
_CW_TESTBED_LBS = ("ecmp", "letflow", "conweave")

#: 500 us of arrivals after a 100 us warm-up: a first look in seconds.
_CW_QUICK: dict[str, Any] = {"workload.duration": "500us", "workload.warmup": "100us"}


def _cw_hadoop(scenario: str, paper: str) -> Figure:
    """ConWeave App. B.2, Figs. 23-24: a Figs. 12-13 scenario with the Meta Hadoop flow sizes."""
    return Figure(
        scenario,
        {v: {**o, "workload.cdf": "meta_hadoop2015"} for v, o in _cw_variants().items()},
        "trace",
        paper,
        x_label="Average load of the fabric",
        x=_CW_X,
        y_log=True,
        quick=_CW_QUICK,
    )


def _synthetic_variants(extra: Overrides | None = None) -> dict[str, Overrides]:
    """Every REPS §4.2 synthetic pattern under every load balancer."""
    return {f"{p}/{lb}": {**o, **(extra or {}), "lb.kind": lb} for p, o in _PATTERNS.items() for lb in _ALL_LBS}


def _ops_vs_reps(scenario: str, key: str, values: tuple[int, ...], paper: str, x_label: str) -> Figure:
    """OPS and REPS completion against ``key`` set to each of ``values`` (log x)."""
    pairs = list(itertools.product(values, ("ops", "reps")))
    return Figure(
        scenario,
        {f"{v}/{lb}": {"lb.kind": lb, key: v} for v, lb in pairs},
        "lines",
        paper,
        x_label=x_label,
        x={f"{v}/{lb}": v for v, lb in pairs},
        x_log=True,
        quick=_QUICK_PERM,
    )


#: REPS §4.3.2: 2 % of the ToR uplinks, picked at random, at 200 Gbps.
_SLOW_2PCT = [{"links": "tor_uplinks", "fraction": 0.02, "rate": "200Gbps"}]

#: One ToR uplink at 200 Gbps, for trees too small for 2 % to be one.
_SLOW_ONE = [{"links": "tor_uplinks", "count": 1, "rate": "200Gbps"}]

#: 32 hosts (8 ToRs of 4, 4 spines) instead of 128.
_SMALL_TREE: dict[str, Any] = {"topology.hosts": 32, "topology.radix": 8}

#: REPS §4.2 collectives in the shapes of the artifact's matrices (`gen_files.py`, run by
#: `run_collective.py`; the paper gives no sizes): the ring is the scenario file's (64 of the 128
#: hosts in a shuffled order, 4 000 000 B per hop); the butterfly is recursive doubling over all
#: hosts in order, 20 000 000 B per message (`gen_allreduce_butterfly.py`); AllToAll sends
#: 2 000 000 B to every other host, 8 under way, the hosts shuffled (`alltoall8.cm` from
#: `gen_serialn_alltoall.py`). `--quick` runs each on 16 of 64 hosts (ToRs of 8, as on the full
#: tree) with 4 000 000 B ring hops.
_COLLECTIVES: dict[str, Overrides] = {
    "ring": {"workload.kind": "ring_allreduce"},
    "butterfly": {
        "workload.kind": "butterfly_allreduce",
        "workload.ranks": 128,
        "workload.layout": "host_order",
        "workload.schedule": "doubling",
        "workload.size": 20_000_000,
    },
    "alltoall": {"workload.kind": "alltoall", "workload.ranks": 128, "workload.parallel": 8,
                 "workload.size": 128 * 2_000_000},
}
_COLLECTIVES_QUICK: dict[str, Any] = {"topology.hosts": 64, "workload.ranks": 16, "workload.size": 16 * 4_000_000}


def _slow_tor0(rate: str) -> list[dict[str, str]]:
    """ToR 0's uplinks to spines 0-3 at `rate`, half of its 8: the REPS artifact's Fig. 4
    collectives (`run_all_asy.py` -> `run_collective.py --asymmetry_links 4`: `-failed 4`, which
    `fat_tree_topology.cpp` puts on the first ToR's uplinks)."""
    return [{"link": f"t0_0->t1_{spine}", "rate": rate} for spine in range(4)]


def _fig04_collectives() -> dict[str, Overrides]:
    """The artifact's script asks for a quarter of the line rate for the ring and half for the
    others (`-down_ratio`), but formats its command once, so every collective ran at half: the
    ring and the butterfly run at both, AllToAll at half."""
    shapes = [("ring", "100Gbps"), ("ring", "200Gbps"), ("butterfly", "100Gbps"), ("butterfly", "200Gbps"),
              ("alltoall", "200Gbps")]
    return {
        f"{c}_{rate[:3]}G/{lb}": {**_COLLECTIVES[c], "lb.kind": lb, "rate_overrides": _slow_tor0(rate)}
        for c, rate in shapes for lb in _TRACE_LBS
    }


#: ARCANE §4 compares ARCANE with ECMP and packet spraying; REPS, its later form, is added.
_ARCANE_LBS = ("ecmp", "ops", "arcane", "reps")
#: A 128-host 3-tier tree (radix 8) and 1 MiB messages.
_ARCANE_QUICK: dict[str, Any] = {"topology.hosts": 128, "topology.radix": 8, "workload.size": "1MiB"}
#: 8 ToRs of 16 hosts with 2 uplinks each: ARCANE Fig. 3's 8:1 at 128 hosts.
_ARCANE_QUICK_8TO1: dict[str, Any] = {**_ARCANE_QUICK, "topology.tiers": 2, "topology.radix": 16,
                                      "topology.hosts_per_tor": 16, "topology.uplinks_per_tor": 2}
#: ARCANE §3.0.1: FASTFLOW's Wait-To-Decrease off and on (on in every ARCANE §4 run); the
#: variants are "<setting>/<lb>".
_WTD: dict[str, Overrides] = {"WTD_off": {"cc.wait_to_decrease": False}, "WTD_on": {"cc.wait_to_decrease": True}}


def _wtd_variants() -> dict[str, Overrides]:
    return {f"{w}/{lb}": {**o, "lb.kind": lb} for w, o in _WTD.items() for lb in _ARCANE_LBS}


def _fig07_panel(scenario: str, claim: str, **kw: Any) -> Figure:
    """A panel of REPS Fig. 7: every failure mode under every load balancer (variants
    "<mode>/<lb>"), grouped by mode on a log scale."""
    variants = {f"{mode}/{lb}": {"lb.kind": lb, "failures": spec} for mode, spec in _FIG07_MODES.items() for lb in _ALL_LBS}
    return Figure(scenario, variants, "grouped", claim, baseline=None, y_log=True, **kw)

#: FaCa Figs. 6-7: seeds (each an ECMP hash draw) and the balancers compared.
_FACA_SEEDS = tuple(range(1, 11))
_FACA_CLOS_LBS = ("ecmp", "wcmp", "plb", "faca")
#: FaCa Figs. 8-9: the flow-level balancers (PLB reacts to ECN over time: packet level only).
_FACA_FLOW_LBS = ("ecmp", "wcmp", "faca")
_FACA_STREAMS = (1, 2, 4, 8, 16)
#: FaCa Fig. 1: flows per RNIC (160 RNICs: up to 40 000 flows).
_FACA_FIG1_K = (1, 2, 4, 8, 16, 32, 64, 125, 250)


FIGURES: dict[str, Figure] = {
    "reps-fig01": Figure(
        "reps/fig01_tornado_16mib.toml",
        _lbs("ops", "reps"),
        "timeseries",
        "OPS uplinks swing ±15 % around 400 Gbps with queues past Kmax; REPS converges to "
        "400 Gbps on every uplink with queues below Kmin; REPS about 4 % faster.",
    ),
    "reps-fig03": Figure(
        "reps/fig03_slow_uplink.toml",
        _lbs("ops", "reps"),
        "timeseries",
        "One 200 Gbps uplink: OPS 1400 µs, REPS 756 µs.",
    ),
    "reps-fig05": Figure(
        "reps/fig05_ecmp_background.toml",
        _lbs("ops", "reps"),
        "bars",
        "With 10 % ECMP background flows REPS moves its traffic off the ECMP-loaded paths, "
        "helping both classes.",
    ),
    "reps-fig06": Figure(
        "reps/fig06_two_uplink_failures.toml",
        _lbs("ops", "reps"),
        "timeseries",
        "REPS > 35 % faster than OPS and 2.5x fewer drops.",
    ),
    "reps-fig07": _fig07_panel(
        "reps/fig07_failure_modes.toml",
        "Total failures: REPS far ahead of OPS and every other scheme; random drops do not hurt REPS.",
    ),
    "reps-fig07-ring": _fig07_panel(
        "reps/fig07_ring_allreduce.toml",
        "Fig. 7's ring-AllReduce panel: the same failure modes; total failures REPS far ahead of OPS "
        "and the others, random drops do not hurt REPS (no numbers given).",
        metric="collective_us",
        # 16 hosts (4 ToRs, 4 spines) and 512 KiB per ring step: still over one BDP (about
        # 400 KiB), so REPS leaves exploration.
        quick={"topology.hosts": 16, "workload.size": "8MiB"},
    ),
    "reps-fig07-trace": _fig07_panel(
        "reps/fig07_websearch.toml",
        "Fig. 7's trace panel (WebSearch at 100 % load, mean FCT): the same failure modes; total failures "
        "REPS far ahead of OPS and the others, random drops do not hurt REPS (no numbers given).",
        metric="mean_fct_us",
        # 16 hosts (4 ToRs, 4 spines), 300 us of arrivals.
        quick={"topology.hosts": 16, "workload.duration": "300us"},
    ),
    "reps-fig08": Figure(
        "reps/fig08_extreme_failures.toml",
        {
            f"{x}/{lb}": {"lb.kind": lb, "failures": [{"switches": "t1", "fraction": x}]}
            for x, lb in itertools.product(_FIG08_FRACTIONS, _ALL_LBS)
        },
        "lines",
        "REPS close to ideal up to 50 % of cables failed; PLB, second best, far behind.",
        x_label="Fraction of spines cut off (the artifact's failed cables)",
        y_log=True,
        x={f"{x}/{lb}": x for x, lb in itertools.product(_FIG08_FRACTIONS, _ALL_LBS)},
        # 128 hosts (16 ToRs, 8 spines) and 8 MiB: at least one spine fails at every fraction.
        quick={"topology.hosts": 128, "topology.radix": 16, "workload.size": "8MiB"},
    ),
    "rdma-pfc-incast": Figure(
        "rdma/pfc_incast.toml",
        {"ecmp": {}},
        "timeseries",
        "Not a paper figure (docs/rdma.md): PFC pauses spread from the incast receiver's leaf to the "
        "spines, the senders' leaves and their hosts; a flow sharing a paused uplink waits too.",
    ),
    "rdma-dcqcn-rates": Figure(
        "rdma/dcqcn_rates.toml",
        {"ecmp": {}},
        "timeseries",
        "Not a paper figure (docs/rdma.md): DCQCN rates of four flows into one host, starting 500 µs "
        "apart, with the ConWeave artifact's constants.",
    ),
    "conweave-fig12": Figure(
        "conweave/alistorage_leafspine.toml",
        _cw_variants(),
        "trace",
        "Lossless RDMA, AliStorage: at 50 % load ConWeave's average and p99 slowdowns at least 23.3 % "
        "and 45.8 % below the best other scheme; at 80 %, 17.6 % and 35.8 %.",
        x_label="Average load of the fabric",
        x=_CW_X,
        y_log=True,
        quick=_CW_QUICK,
    ),
    "conweave-fig13": Figure(
        "conweave/alistorage_leafspine_irn.toml",
        _cw_variants(),
        "trace",
        "IRN RDMA, AliStorage: at 50 % load ConWeave's average and p99 slowdowns at least 12.7 % and "
        "46.2 % below the best other scheme; at 80 %, 42.3 % and 66.8 %.",
        x_label="Average load of the fabric",
        x=_CW_X,
        y_log=True,
        quick=_CW_QUICK,
    ),
    "conweave-fig17": Figure(
        "conweave/fattree_k8.toml",
        {f"{f}/{lb}": {**o, "lb.kind": lb} for f, o in _CW_FABRICS.items() for lb in _CW_LBS_3TIER},
        "grouped",
        "k = 8 fat tree, 60 % load: across lossless and IRN RDMA ConWeave's average and p99 slowdowns "
        "at least 21.4 % and 40.8 % below the others' for short (< 1 BDP) flows.",
        metric="mean_slowdown",
        baseline=None,
        y_log=True,
        quick=_CW_QUICK,
    ),
    "conweave-figs14-16": Figure(
        "conweave/alistorage_leafspine.toml",
        _cw_resource_variants(),
        "reorder",
        "Fig. 14: ConWeave spreads load across the uplinks better than every scheme but DRILL. Fig. 15: "
        "fewer than 10 reorder queues per port most of the time, never more than 15. Fig. 16: more "
        "reorder memory on lossless than on IRN; lossless 80 %: p99.9 1.5 MB, max 2.4 MB per switch.",
        quick=_CW_QUICK,
    ),
    "conweave-fig23": _cw_hadoop(
        "conweave/alistorage_leafspine.toml",
        "Meta Hadoop, lossless RDMA: at 80 % load ConWeave's average and p99 slowdowns 40.7 % and "
        "59.4 % below every other scheme's.",
    ),
    "conweave-fig24": _cw_hadoop(
        "conweave/alistorage_leafspine_irn.toml",
        "Meta Hadoop, IRN RDMA: at 80 % load ConWeave's average and p99 slowdowns 28.6 % and 56.3 % "
        "below every other scheme's.",
    ),
    "conweave-fig21": Figure(
        "conweave/alistorage_leafspine.toml",
        {f"{f}/conweave": {**o, "lb.kind": "conweave", "workload.load": 0.6} for f, o in _CW_FABRICS.items()},
        "resume_error",
        "T_resume's error at 60 % load, before θ_resume_extra: small on the leaf-spine, its 99th "
        "percentile within a few us, so θ_resume_extra of 3.0 us (lossless) or 2.7 us (IRN) covers it.",
        quick=_CW_QUICK,
    ),
    "conweave-fig22": Figure(
        "conweave/alistorage_leafspine_irn.toml",
        {f"{t}/conweave": {"lb.kind": "conweave", "lb.conweave.reply_timeout": f"{t}us"} for t in _CW_REPLY_US},
        "lines",
        "IRN: p99 slowdown lowest near θ_reply = 8 us and rising beyond it; smaller θ_reply uses more "
        "reorder memory.",
        x_label="θ_reply (µs)",
        x={f"{t}/conweave": float(t) for t in _CW_REPLY_US},
        metric="p99_slowdown",
        x_log=True,
        quick=_CW_QUICK,
    ),
    "conweave-fig19": Figure(
        "conweave/testbed_solar.toml",
        {f"{x}/{lb}": {"lb.kind": lb, "workload.load": x} for x in _CW_TESTBED_LOADS for lb in _CW_TESTBED_LBS},
        "fct",
        "Testbed, Solar RPC, lossless RDMA (2 leaves x 4 spines, 25 Gbps): ConWeave's FCTs at least "
        "11-23 % below ECMP's and LetFlow's at 40-80 % load, its p99.9 39.67-52.96 % below.",
        x_label="Average load of the fabric",
        x={f"{x}/{lb}": x for x in _CW_TESTBED_LOADS for lb in _CW_TESTBED_LBS},
        quick={"workload.duration": "5ms", "workload.warmup": "1ms"},
    ),
    "faca-figs6-7": Figure(
        "faca/production_clos.toml",
        {f"{seed}/{lb}": {"lb.kind": lb, "seed": seed} for seed in _FACA_SEEDS for lb in _FACA_CLOS_LBS},
        "balance",
        "Production Clos, 10 RNICs x 2 elephant flows under one S0: standard deviation of the S0 ports' "
        "throughput ECMP 148.06 vs FaCa 2.96 (Fig. 6); RNIC throughput gap 38 vs 6 Gbps, standard deviation "
        "13.61 vs 1.78, average 22.5 % higher with FaCa (Fig. 7).",
        quick={"stop_at": "1500us"},
    ),
    "faca-fig9b": Figure(
        "faca/microbench_streams.toml",
        _lbs("ecmp", "wcmp", "plb", "faca"),
        "core_congestion",
        "Micro-benchmark with streams that keep coming: congested traffic on the core switches over "
        "time; FaCa's grows slowest, ECMP/WCMP ahead of PLB at loads the links carry.",
        quick={"stop_at": "2ms"},
    ),
    "faca-fig1": Figure(
        "faca/production_clos_fig1.toml",
        {f"{k}/ecmp/{seed}": {"workload.parallel": k, "seed": seed} for k in _FACA_FIG1_K for seed in range(1, 6)},
        "drop",
        "ECMP in the production DCN, the two sides sending to each other: the maximum throughput of a "
        "layer-1 switch's ports falls to almost a quarter as the flows grow to 40 000.",
        x_label="Flows",
        x={f"{k}/ecmp": 160.0 * k for k in _FACA_FIG1_K},
        x_log=True,
        mode="flow",
    ),
    "faca-fig8": Figure(
        "faca/production_clos.toml",
        {f"{seed}/{lb}/{seed}": {"lb.kind": lb, "seed": seed} for seed in range(1, 21) for lb in ("ecmp", "faca")},
        "congestion",
        "Twenty experiments of concurrent flows: FaCa's congestion rate below ECMP's in every one, "
        "5.88 % lower on average.",
        x_label="Experiment (seed)",
        x={f"{seed}/{lb}": float(seed) for seed in range(1, 21) for lb in ("ecmp", "faca")},
        mode="flow",
    ),
    "faca-fig9a": Figure(
        "faca/microbench.toml",
        {f"{k}/{lb}/{seed}": {"lb.kind": lb, "workload.parallel": k, "seed": seed}
         for k in _FACA_STREAMS for lb in _FACA_FLOW_LBS for seed in range(1, 21)},
        "congestion",
        "Micro-benchmark (16 leaves, spines of 380 and 400 Gbps): congestion rate against concurrent "
        "streams; ECMP and WCMP congest first, then PLB; FaCa about 50 % below ECMP and 31.47 % below PLB.",
        x_label="Concurrent flows per host",
        x={f"{k}/{lb}": float(k) for k in _FACA_STREAMS for lb in _FACA_FLOW_LBS},
        x_log=True,
        mode="flow",
    ),
    "reps-fig02-synthetic": Figure(
        "reps/fig02_synthetic_1024.toml",
        _synthetic_variants(),
        "grouped",
        "Incast: all load balancers alike (the CC decides). Permutation and tornado: ECMP far behind, "
        "per-packet schemes ahead of Flowlet and PLB, REPS best or tied (Adaptive RoCE ties on tornado); "
        "up to 6x over ECMP and 1.25x over OPS.",
        quick=_QUICK_PERM,
    ),
    "reps-fig04-synthetic": Figure(
        "reps/fig02_synthetic_1024.toml",
        _synthetic_variants({"rate_overrides": _SLOW_2PCT}),
        "grouped",
        "2 % of ToR uplinks at 200 Gbps: REPS up to 3.5x over ECMP and 10 % over the second best "
        "(usually BitMap).",
        # 32 hosts have 32 ToR uplinks: 2 % would round to none, so slow one (3 %).
        quick={**_QUICK_PERM, "rate_overrides": _SLOW_ONE},
    ),
    "reps-fig18": Figure(
        "reps/fig18_synthetic_3tier.toml",
        _synthetic_variants(),
        "grouped",
        "Three tiers: REPS performs comparably to the two-tier tree (Fig. 2).",
        quick={**_QUICK_PERM, "topology.hosts": 128},
    ),
    "reps-fig02-traces": Figure(
        "reps/fig02_websearch.toml",
        _trace_variants(),
        "trace",
        "WebSearch at 40-100 % load: per-packet schemes clearly ahead of per-flow ones; REPS about "
        "5 % ahead of OPS at high load.",
        x_label="Offered load (fraction of the host link)",
        x=_TRACE_X,
        quick={**_SMALL_TREE, "workload.duration": "300us"},
    ),
    "reps-fig02-collectives": Figure(
        "reps/fig02_collectives.toml",
        {f"{c}/{lb}": {**o, "lb.kind": lb} for c, o in _COLLECTIVES.items() for lb in _TRACE_LBS},
        "bars",
        "Ring AllReduce the same for most load balancers; REPS up to 20 % ahead on AllToAll.",
        metric="collective_us",
        quick=_COLLECTIVES_QUICK,
    ),
    "reps-fig04-traces": Figure(
        "reps/fig04_websearch_slow_uplinks.toml",
        _trace_variants(),
        "trace",
        "2 % of ToR uplinks at 200 Gbps: REPS 25 % ahead of the second best and 10x ahead of ECMP at 100 % load.",
        x_label="Offered load (fraction of the host link)",
        x=_TRACE_X,
        # 32 hosts have 32 ToR uplinks: 2 % of them would round to none, so slow one (3 %).
        quick={**_SMALL_TREE, "workload.duration": "300us", "rate_overrides": _SLOW_ONE},
    ),
    "reps-fig04-collectives": Figure(
        "reps/fig02_collectives.toml",
        _fig04_collectives(),
        "bars",
        "2 % of ToR uplinks at 200 Gbps: REPS keeps a small edge on AllToAll and a 50 % edge on AllReduce "
        "over the second best.",
        metric="collective_us",
        quick=_COLLECTIVES_QUICK,
    ),
    "reps-fig11-healthy": _ops_vs_reps(
        "reps/permutation_8mib.toml",
        "transport.ack_ratio",
        _ACK_RATIOS,
        "8 MiB permutation: REPS clearly ahead of OPS at 2:1, 4:1 and 8:1 coalescing; at 16:1 it starts "
        "losing its advantage.",
        "ACK coalescing ratio (data packets per ACK)",
    ),
    "reps-fig11-failure": _ops_vs_reps(
        "reps/permutation_8mib_dead_uplink.toml",
        "transport.ack_ratio",
        _ACK_RATIOS,
        "With a failure REPS does much better than OPS even at 16:1.",
        "ACK coalescing ratio (data packets per ACK)",
    ),
    "reps-fig12-evs": _ops_vs_reps(
        "reps/permutation_8mib.toml",
        "lb.entropy_space",
        _EVS_SIZES,
        "REPS equal with 256 and 64K EVs, 8 % slower with 32; OPS 21 % and 64 % slower with 256 and 32.",
        "Entropy values (EVS size)",
    ),
    "reps-fig12-cc": Figure(
        "reps/permutation_8mib.toml",
        {
            f"{cc}/{lb}": {"lb.kind": lb, "cc.kind": cc, "queue.trimming": cc == "eqds"}
            for cc, lb in itertools.product(("dctcp", "eqds"), ("ops", "reps"))
        },
        "bars",
        "REPS helps DCTCP, EQDS and a proprietary CC against OPS (EQDS with trimming, which it relies on).",
        quick=_QUICK_PERM,
    ),
    "arcane-fig02": Figure(
        "arcane/fig02_permutation_4mib.toml",
        _lbs(*_ARCANE_LBS),
        "distributions",
        "Non-oversubscribed: ARCANE about 10 % faster than packet spraying, with lower RTTs.",
        quick=_ARCANE_QUICK,
    ),
    "arcane-fig03": Figure(
        "arcane/fig03_oversubscribed_8to1.toml",
        _lbs(*_ARCANE_LBS),
        "distributions",
        "8:1 oversubscribed: ARCANE about 10 % faster than spraying; ECMP 1.5x slower with low RTTs "
        "(the CC backs off on collisions); ARCANE's RTTs closer to the target, less spread.",
        quick=_ARCANE_QUICK_8TO1,
    ),
    "arcane-fig04": Figure(
        "arcane/fig04_agg_core_failures.toml",
        _lbs(*_ARCANE_LBS),
        "distributions",
        "Aggregation-core links failed: ARCANE 50 % ahead of spraying; some ECMP flows never finish.",
        # One of the 128 aggregation-core cables (the full scale fails 8 of 1024).
        quick={**_ARCANE_QUICK, "failures": [{"links": "agg_uplinks", "count": 1, "direction": "both"}]},
    ),
    "arcane-wtd": Figure(
        "arcane/fig02_permutation_4mib.toml",
        _wtd_variants(),
        "grouped",
        "ARCANE §3.0.1: Wait-To-Decrease \"significantly improves\" the FCT of permutations on the "
        "1024-node non-oversubscribed fat tree (its Fig. 1; no number in the text).",
        baseline=None,
        quick=_ARCANE_QUICK,
    ),
    "arcane-wtd-8to1": Figure(
        "arcane/fig03_oversubscribed_8to1.toml",
        _wtd_variants(),
        "grouped",
        "Not a paper figure: Wait-To-Decrease off and on on ARCANE Fig. 3's 8:1 tree, where every "
        "ToR uplink is a bottleneck (the paper shows WTD on the non-oversubscribed tree only).",
        baseline=None,
        quick=_ARCANE_QUICK_8TO1,
    ),
    "reps-fig15": Figure(
        "reps/fig15_forced_freezing.toml",
        {"normal": {"lb.reps.force_freeze_at": "never"}, "forced": {}},
        "bars",
        "Forced freezing at 150 µs without failures: 1 % longer completion, p99 RTT very close.",
    ),
    "reps-fig19": Figure(
        "reps/fig19_incremental_failures.toml",
        _lbs("ops", "reps"),
        "timeseries",
        "Three of four uplinks fail 200 µs apart: OPS 40x worse than REPS.",
    ),
    "reps-sec32": Figure(
        "reps/sec32_routing_convergence.toml",
        {
            "ops": {"lb.kind": "ops"},
            "reps_no_freezing": {"lb.reps.freezing": False},
            "reps": {},
        },
        "bars",
        "10 ms routing convergence at 400 Gbps: > 120 000 packets lost without freezing "
        "(ignoring congestion control), about 1 000 with it.",
    ),
}


def row(name: str, r: Result) -> dict[str, Any]:
    """The numbers a figure's table reports for one run."""
    s = r.summary
    f = r.flows
    out: dict[str, Any] = {
        "variant": name,
        "max_fct_us": s.get("max_fct_us"),
        "mean_fct_us": s.get("mean_fct_us"),
        "unfinished": s.get("unfinished_flows"),
        "failure_drops": s["drops"]["failure"],
        "congestion_drops": s["drops"]["congestion"],
        "retransmissions": s.get("retransmissions"),
        "freeze_entries": int(f["freeze_entries"].sum()),
        "mean_slowdown": s.get("mean_slowdown"),
        "p99_slowdown": s.get("p99_slowdown"),
        "collective_us": s.get("collective_us"),
    }
    m = r.messages
    if (m["lb"] != m["lb"].iloc[0]).any():
        for lb, part in m.groupby("lb"):
            out[f"mean_fct_us_{lb}"] = float(part["fct_us"].mean())
    if "rtt" in r.table_names:
        out["p99_rtt_us"] = percentile(r.rtt["rtt_us"].to_numpy(dtype=float), 99.0)
    return out


#: The "fct" figures' statistics of the measured flows' completion times: column, panel label.
_FCT_STATS = {"measured_mean_fct_us": "Average FCT (µs)", "measured_p99_fct_us": "p99 FCT (µs)",
              "measured_p999_fct_us": "p99.9 FCT (µs)"}


def _fct_stats(r: Result) -> dict[str, float]:
    """The measured flows' mean, p99 and p99.9 completion times (ConWeave Fig. 19)."""
    fct = measured_flows(r)["fct_us"].to_numpy(dtype=float)
    if len(fct) == 0:
        return dict.fromkeys(_FCT_STATS, float("nan"))
    p99, p999 = percentile(fct, [99.0, 99.9]).tolist()
    return dict(zip(_FCT_STATS, (float(fct.mean()), p99, p999)))


def _balance_stats(r: Result) -> dict[str, float]:
    """FaCa Figs. 6-7 for one run (:func:`lbsim.faca.balance`), after 1 ms of settling."""
    from .faca import balance

    return balance(r, start_us=min(1000.0, float(r.ports["time_us"].max()) / 2))


#: The "balance" figure's panels: column, label.
_BALANCE_STATS = {"s0_std_gbps": "Std of S0 uplinks (Gb/s)", "rnic_gap_gbps": "RNIC gap (Gb/s)",
                  "rnic_std_gbps": "Std of RNICs (Gb/s)", "rnic_mean_gbps": "Mean RNIC (Gb/s)"}


def _core_congestion_stats(r: Result) -> dict[str, float]:
    """FaCa Fig. 9b for one run: the share of the leaves' traffic into the core, over the whole run,
    sent by uplinks whose queue reached the ECN threshold (:func:`lbsim.faca.core_congestion`)."""
    from .faca import core_congestion

    c = core_congestion(r)
    return {"congested_share": float(c["congested_bytes"].sum() / c["bytes"].sum())}


def _core_congestion_figure(results: Mapping[str, Result], stem: Path) -> None:
    """The congested share of the traffic into the core per bucket, a line per variant."""
    import matplotlib.pyplot as plt

    from .faca import core_congestion
    from .plot import style

    with style.context():
        f, ax = plt.subplots(figsize=(7.0, 2.6), layout="constrained")
        style.apply(ax)
        for v in style.sort_labels(list(results)):
            c = core_congestion(results[v])
            ax.plot(c["time_us"] / 1000.0, c["congested_share"], color=style.color(v), label=style.label(v))
        ax.set_xlabel("Time (ms)")
        ax.set_ylabel("Congested share of traffic into the core")
        ax.set_ylim(0, 1)
        style.legend(ax, ncol=4)
        style.save(f, stem)


def _balance_figure(table: Any, stem: Path) -> None:
    """One panel per statistic of :data:`_BALANCE_STATS`: a bar per load balancer,
    the mean over seeds, and every seed's value as a dot."""
    import matplotlib.pyplot as plt

    from .plot import style

    lb_of = table["variant"].str.split("/").str[1]
    lbs = style.sort_labels(sorted(set(lb_of)))
    with style.context():
        f, axes = plt.subplots(1, len(_BALANCE_STATS), figsize=(9.0, 2.4), layout="constrained")
        for ax, (col, label) in zip(axes, _BALANCE_STATS.items()):
            style.apply(ax)
            for i, lb in enumerate(lbs):
                v = table.loc[lb_of == lb, col].to_numpy(dtype=float)
                ax.bar(i, v.mean(), color=style.color(lb), width=0.7)
                ax.plot(np.full(len(v), i), v, "o", color="black", markersize=2, alpha=0.6)
            ax.set_xticks(range(len(lbs)), [style.label(lb) for lb in lbs], fontsize=7)
            ax.set_ylabel(label)
        style.save(f, stem)


def _fct_figure(fig: Figure, table: Any, stem: Path) -> None:
    """One panel per statistic of :data:`_FCT_STATS` against load, a line per load balancer."""
    import matplotlib.pyplot as plt

    from .plot import style

    lbs = style.sort_labels(sorted({v.split("/")[1] for v in table["variant"]}))
    with style.context():
        f, axes = plt.subplots(1, len(_FCT_STATS), figsize=(9.0, 2.6), layout="constrained")
        for ax, (col, label) in zip(axes, _FCT_STATS.items()):
            style.apply(ax)
            for lb in lbs:
                part = table[table["variant"].str.endswith("/" + lb)]
                ax.plot([fig.x[v] for v in part["variant"]], part[col], marker="o", color=style.color(lb),
                        label=style.label(lb))
            ax.set_xlabel(fig.x_label)
            ax.set_ylabel(label)
        style.legend(axes[0])
        style.save(f, stem)


def _trace_figure(fig: Figure, results: Mapping[str, Result], stem: Path) -> None:
    """Mean and p99 slowdown against load per load balancer, and the
    slowdown per size bucket at the largest load (``stem``-buckets)."""
    import matplotlib.pyplot as plt

    from .plot import style
    from .plot.slowdown import slowdown_figure

    lbs = style.sort_labels(sorted({v.split("/")[1] for v in results}))
    with style.context():
        f, axes = plt.subplots(1, 2, figsize=(7.0, 2.6), layout="constrained")
        for ax, stat in zip(axes, ("mean_slowdown", "p99_slowdown")):
            style.apply(ax)
            for lb in lbs:
                vs = [v for v in results if v.endswith("/" + lb)]
                ys = [results[v].summary.get(stat) for v in vs]
                ax.plot([fig.x[v] for v in vs], [y if y is not None else float("nan") for y in ys],
                        marker="o", color=style.color(lb), label=style.label(lb))
            ax.set_xlabel(fig.x_label)
            ax.set_ylabel(("Average" if stat == "mean_slowdown" else "p99") + " FCT slowdown")
            if fig.y_log:
                ax.set_yscale("log")
        style.legend(axes[0])
        style.save(f, stem)
    top = max(fig.x.values())
    slowdown_figure({lb: [results[v] for v in results if fig.x[v] == top and v.endswith("/" + lb)] for lb in lbs},
                    stem.with_name(stem.name + "-buckets"))


def _flow_row(variant: str, r: Any) -> dict[str, Any]:
    """A flow-level result's numbers: congestion rate and the ToR uplinks' spread (Gb/s)."""
    up = r.summary["classes"].get("t0->t1", {})
    core = r.ports[r.ports["name"].str.startswith("t1_0->")]["throughput_bps"]  # FaCa Fig. 1: one layer-1 switch
    return {
        "variant": variant,
        "core_max_gbps": float(core.max()) / 1e9,
        "core_drop_gbps": float(core.max() - core.min()) / 1e9,
        "flows": len(r.flows),
        "congestion_rate": r.summary["congestion_rate"],
        "uplink_max_gbps": up.get("max_bps", float("nan")) / 1e9,
        "uplink_drop_gbps": up.get("drop_bps", float("nan")) / 1e9,
        "uplink_std_gbps": up.get("std_bps", float("nan")) / 1e9,
    }


def _seed_mean_figure(fig: Figure, table: Any, stem: Path, panels: tuple[tuple[str, str], ...],
                      log_base: float, y_from_zero: bool = False) -> None:
    """One panel per (column, label) of ``panels`` against x, a line per load
    balancer, each point the mean over seeds (variants "<x>/<lb>/<seed>")."""
    import matplotlib.pyplot as plt

    from .plot import style

    parts = table["variant"].str.split("/")
    frame = table.assign(x=[fig.x["/".join(p[:2])] for p in parts], lb=parts.str[1])
    means = frame.groupby(["lb", "x"])[[col for col, _ in panels]].mean().reset_index()
    with style.context():
        f, axes = plt.subplots(1, len(panels), figsize=(7.0, 2.6), layout="constrained")
        for ax, (col, label) in zip(axes, panels):
            style.apply(ax)
            for lb in style.sort_labels(sorted(set(means["lb"]))):
                part = means[means["lb"] == lb]
                ax.plot(part["x"], part[col], marker="o", color=style.color(lb), label=style.label(lb))
            ax.set_xlabel(fig.x_label)
            ax.set_ylabel(label)
            if fig.x_log:
                ax.set_xscale("log", base=log_base)
            if y_from_zero:
                ax.set_ylim(bottom=0)
        style.legend(axes[0])
        style.save(f, stem)


#: What the flow-level plots draw: panels (column, label), the log x axis's base, whether y starts
#: at 0. FaCa Figs. 8-9a ("congestion") and Fig. 1 ("drop", one layer-1 switch's ports, t1_0).
_FLOW_PLOTS: dict[str, tuple[tuple[tuple[str, str], ...], float, bool]] = {
    "congestion": ((("congestion_rate", "Congestion rate"), ("uplink_std_gbps", "Std of ToR uplinks (Gb/s)")),
                   2, False),
    "drop": ((("core_max_gbps", "Max port throughput (Gb/s)"), ("core_drop_gbps", "Drop: max − min (Gb/s)")),
             10, True),
}


def _reproduce_flow_level(name: str, fig: Figure, path: Path, d: Path, quick: bool,
                          log: Callable[[str], None]) -> Path:
    """A flow-level figure: every variant through :func:`lbsim.flow_level` (fast:
    nothing is kept between invocations), its table, its plot."""
    import pandas as pd

    from .flowlevel import flow_level

    rows = []
    for variant, overrides in fig.variants.items():
        s = Scenario.load(path).with_overrides({**overrides, **(fig.quick if quick else {})})
        rows.append(_flow_row(variant, flow_level(s, out=d / variant.replace("/", "_"))))
    table = pd.DataFrame(rows)
    table.to_csv(d / "summary.csv", index=False)
    if fig.plot not in _FLOW_PLOTS:
        raise LbsimError(f"figure {name}: plot {fig.plot!r} is not drawn from flow-level results")
    _seed_mean_figure(fig, table, d / name, *_FLOW_PLOTS[fig.plot])
    by_x = table.assign(group=[v.rsplit("/", 1)[0] for v in table["variant"]]).groupby("group", sort=False)
    log(render(frame_table(by_x[["flows", "congestion_rate", "uplink_max_gbps", "uplink_drop_gbps",
                                 "uplink_std_gbps", "core_max_gbps", "core_drop_gbps"]].mean().reset_index(), ".4g")))
    return d


def reproduce(
    name: str,
    out: str | Path = "results/reproduce",
    scenarios: str | Path = "scenarios",
    progress: bool = True,
    log: Callable[[str], None] = print,
    quick: bool = False,
    resume: bool = False,
) -> Path:
    """Run figure ``name`` (a key of :data:`FIGURES`) and write its runs,
    plot and ``summary.csv`` under ``out/name`` (``out/name-quick`` for the
    quick version). Returns that directory. With ``resume``, a variant whose
    run directory is already there with the same run key (resolved scenario,
    input files, lbsim version) is loaded instead of run again."""
    import pandas as pd

    from .plot import fct_cdf, style
    from .plot.compare import grouped_bars, rtt_cdf
    from .plot.reorder import reorder_figure, resume_error_figure
    from .plot.timeseries import timeseries_figure

    if name not in FIGURES:
        raise LbsimError(f"no figure {name!r}; known: {', '.join(FIGURES)}")
    fig = FIGURES[name]
    path = Path(scenarios) / fig.scenario
    if not path.is_file():
        raise LbsimError(f"{path} not found: run from the repository root or pass --scenarios DIR")
    d = Path(out) / (name + ("-quick" if quick else ""))
    if fig.mode == "flow":
        return _reproduce_flow_level(name, fig, path, d, quick, log)
    results: dict[str, Result] = {}
    for variant, overrides in fig.variants.items():
        s = Scenario.load(path).with_overrides({**overrides, **(fig.quick if quick else {})})
        vd = d / variant.replace("/", "_")
        if resume and is_run_dir(vd) and (kept := load(vd)).key == s.key():
            log(f"{name}: {variant} (kept)")
            results[variant] = kept
            continue
        log(f"{name}: {variant}")
        results[variant] = run(s, progress=progress, out=vd)
    extra = {"fct": _fct_stats, "balance": _balance_stats, "core_congestion": _core_congestion_stats}.get(fig.plot)
    table = pd.DataFrame([row(v, r) | (extra(r) if extra else {}) for v, r in results.items()])
    table.to_csv(d / "summary.csv", index=False)

    if fig.plot == "timeseries":
        timeseries_figure(results, d / name)
    elif fig.plot == "trace":
        _trace_figure(fig, results, d / name)
    elif fig.plot == "fct":
        _fct_figure(fig, table, d / name)
    elif fig.plot == "balance":
        _balance_figure(table, d / name)
    elif fig.plot == "core_congestion":
        _core_congestion_figure(results, d / name)
    elif fig.plot == "reorder":
        reorder_figure(results, d / name)
    elif fig.plot == "resume_error":
        resume_error_figure(results, d / name)
    elif fig.plot == "grouped":
        values = {(v.split("/")[0], v.split("/")[1]): r.summary.get(fig.metric) for v, r in results.items()}
        what, unit = _METRIC_LABELS.get(fig.metric, ("Completion time", "µs"))
        style.save(grouped_bars(values, fig.baseline, log=fig.y_log, what=what, unit=unit), d / name)
    elif fig.plot == "distributions":
        with style.context():
            f, (a, b) = style.figure("wide", ncols=2)
            groups = {v: [r] for v, r in results.items()}
            fct_cdf(groups, ax=a)
            rtt_cdf(groups, ax=b)
            style.save(f, d / name)
    else:
        import matplotlib.pyplot as plt

        with style.context():
            f, ax = plt.subplots(figsize=(7.0, 2.6), layout="constrained")
            style.apply(ax)
            if fig.plot == "lines":
                for lb in style.sort_labels(sorted({v.split("/")[1] for v in results})):
                    xs = [fig.x[v] for v in results if v.endswith("/" + lb)]
                    ys = [results[v].summary.get(fig.metric) for v in results if v.endswith("/" + lb)]
                    ax.plot(xs, [y if y is not None else float("nan") for y in ys], marker="o",
                            color=style.color(lb), label=style.label(lb))
                ax.set_xlabel(fig.x_label)
                if fig.x_log:
                    ax.set_xscale("log", base=2)
                if fig.y_log:
                    ax.set_yscale("log")
                style.legend(ax, ncol=2 if len(results) > 12 else 1)
            else:
                names = list(results)
                heights = [float(results[v].summary.get(fig.metric) or "nan") for v in names]
                colors = [style.color(v.split("/")[-1]) for v in names]
                ax.bar(range(len(names)), heights, color=colors)
                ax.set_xticks(range(len(names)), names, rotation=45 if len(names) > 4 else 0, ha="right"
                              if len(names) > 4 else "center", fontsize=7)
            what, unit = _METRIC_LABELS.get(fig.metric, ("Completion time", "µs"))
            if fig.metric == "collective_us":
                what = "Collective completion time"
            ax.set_ylabel(f"{what} ({unit})" if unit else what)
            style.save(f, d / name)
    log(render(frame_table(table, ".6g")))
    return d
