"""One definition of each thing, the engine's: units, percentiles, TOML written
by tomli-w and read back by the engine."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest

import lbsim
from lbsim import _core, units
from lbsim._toml import dumps, literal, value_text
from lbsim.fct import STATS, measured_flows, percentile, slowdown_by_bdp, slowdown_by_size

TREE = 'preset = "reps_artifact"\n[topology]\nhosts = 32\nradix = 8\n'
TRACE = TREE + '[workload]\nkind = "trace"\ncdf = "alistorage2019"\nload = 0.7\nduration = "200us"\nwarmup = "20us"\n'


# ---- units ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["400Gbps", "100Gbps", "1.5Tbps", "25Gbps", "800Mbps", "12.5 Gbps", "1e11bps"])
def test_rates_are_read_as_the_engine_reads_a_scenario(text: str) -> None:
    facts = lbsim.Scenario.from_toml("").set("topology.link_rate", text).validate()
    assert units.parse_rate(text) == facts["link_rate_bps"]


@pytest.mark.parametrize("text", ["1s", "20us", "1.5ms", "500ns", "41.87us", "2500ps", "1e3us", "70 us"])
def test_times_are_read_as_the_engine_reads_a_scenario(text: str) -> None:
    facts = lbsim.Scenario.from_toml("").set("stop_at", text).validate()
    assert units.parse_time(text) == round(facts["stop_at_us"] * 1e6)
    assert units.parse_time_us(text) == facts["stop_at_us"]


@pytest.mark.parametrize("text", ["4096B", "8MiB", "4.5KiB", "64KB", "2MB", "1GiB", "300000", "12345B", "1e5B"])
def test_amounts_are_read_as_the_engine_reads_a_scenario(text: str) -> None:
    facts = lbsim.Scenario.from_toml("").set("queue.capacity", text).validate()
    assert units.parse_bytes(text) == facts["queue_bytes"]
    assert units.parse_amount(text) == ("bytes", facts["queue_bytes"])


def test_other_amounts_keep_their_kind() -> None:
    assert units.parse_amount("101pkt") == ("pkt", 101.0)
    assert units.parse_amount("1.5bdp") == ("bdp", 1.5)
    assert units.parse_amount("20%") == ("percent", 20.0)
    bdp = lbsim.Scenario.from_toml("").set("queue.capacity", "2bdp").validate()
    assert bdp["queue_bytes"] == 2 * bdp["bdp_bytes"]
    with pytest.raises(lbsim.UnitError, match="101pkt"):
        units.parse_bytes("101pkt")


@pytest.mark.parametrize(
    ("parse", "key", "text"),
    [
        (units.parse_rate, "topology.link_rate", "fast"),
        (units.parse_rate, "topology.link_rate", "400GB"),
        (units.parse_time, "stop_at", "20 minutes"),
        (units.parse_time, "stop_at", "5 parsecs"),
        (units.parse_bytes, "queue.capacity", "3 parsecs"),
    ],
)
def test_a_bad_unit_raises_the_engines_message(parse, key: str, text: str) -> None:
    with pytest.raises(lbsim.UnitError) as caught:
        parse(text)
    err = caught.value
    assert isinstance(err, lbsim.LbsimError) and isinstance(err, ValueError)
    assert text in str(err) and str(err) == err.message
    # The same message a scenario gets for the same text.
    with pytest.raises(lbsim.ScenarioError) as scenario_err:
        lbsim.Scenario.from_toml("").set(key, text).resolved()
    assert err.message in scenario_err.value.message


def test_no_python_unit_parser_is_left() -> None:
    assert not hasattr(lbsim.results, "parse_rate_bps") and not hasattr(lbsim.results, "ideal_fct_us")


# ---- percentiles ------------------------------------------------------------


def test_percentile_by_hand() -> None:
    ten = np.arange(1.0, 11.0)  # 1..10
    # n·p/100 an integer: the value at that rank (ConWeave's sorted[int(n·p)] takes the next one up).
    assert percentile(ten, 50) == 5.0
    assert percentile(ten, 90) == 9.0
    assert percentile(ten, 100) == 10.0
    assert percentile(np.arange(1.0, 21.0), 95) == 19.0
    assert percentile(np.arange(1.0, 101.0), 99) == 99.0
    # Not an integer: the next rank up, where ConWeave's rule agrees.
    assert percentile(ten, 99) == 10.0
    assert percentile(ten, 55) == 6.0
    assert percentile(np.arange(1.0, 8.0), 50) == 4.0
    assert percentile(np.arange(1.0, 21.0), 99.9) == 20.0
    # p = 0 is the smallest; order, NaNs and an empty array.
    assert percentile(ten, 0) == 1.0
    assert percentile(ten[::-1], [25, 50, 75]).tolist() == [3.0, 5.0, 8.0]
    assert percentile([3.0, float("nan"), 1.0, 2.0], 50) == 2.0
    assert math.isnan(percentile([], 50)) and math.isnan(percentile([float("nan")], 50))
    assert _core.percentile([5.0, 1.0], [50.0]) == [1.0]
    with pytest.raises(ValueError, match="p: must be in"):
        percentile(ten, 101)


def test_percentile_when_p_over_100_is_inexact() -> None:
    assert percentile(np.arange(1.0, 1001.0), 99.9) == 999.0
    assert percentile(np.arange(1.0, 101.0), 7) == 7.0


def test_summary_percentiles_are_the_same_rule() -> None:
    r = lbsim.run(lbsim.Scenario.from_toml(TREE + '[workload]\nkind = "permutation"\nsize = "256KiB"\n'), progress=False)
    fct = r.messages["fct_us"].to_numpy(dtype=float)
    assert percentile(fct, 50) == r.summary["p50_fct_us"]
    assert percentile(fct, 99) == r.summary["p99_fct_us"]


@pytest.fixture(scope="module")
def trace_run() -> lbsim.Result:
    return lbsim.run(lbsim.Scenario.from_toml(TRACE).set("lb.kind", "reps"), progress=False)


def test_slowdown_statistics_use_the_engines_percentile(trace_run: lbsim.Result) -> None:
    m = measured_flows(trace_run).sort_values("size_bytes", kind="stable").reset_index(drop=True)
    t = slowdown_by_size(trace_run)
    edges = [len(m) * i // 20 for i in range(21)]
    qs = [q for q in STATS.values() if q is not None]
    for i, row in t.iterrows():
        part = m["slowdown"].to_numpy(dtype=float)[edges[i] : edges[i + 1]]
        direct = _core.percentile(part, qs)
        assert [row[name] for name, q in STATS.items() if q is not None] == direct
        assert row["mean"] == pytest.approx(part.mean())
    b = slowdown_by_bdp(trace_run).set_index("group")
    bdp = trace_run.summary["bdp_bytes"]
    long = m.loc[m["size_bytes"] >= bdp, "slowdown"].to_numpy(dtype=float)
    assert [b.loc[">=1BDP", name] for name, q in STATS.items() if q is not None] == _core.percentile(long, qs)
    # The summary's p99 slowdown (the engine's) over the same measured messages.
    assert percentile(m["slowdown"], 99) == trace_run.summary["p99_slowdown"]


# ---- TOML -------------------------------------------------------------------


SCENARIO = {
    "name": "written by tomli-w",
    "seed": 7,
    "preset": "reps_artifact",
    "stop_at": "2ms",
    "topology": {"hosts": 32, "radix": 8, "link_rate": "200Gbps"},
    "queue": {"trimming": True, "ecn_kmin": "10%"},
    "cc": {"kind": "eqds", "eqds": {"pull_rate": 0.75}},
    "lb": {"kind": "reps", "reps": {"freezing": False, "freeze_rtt_factor": 1.5}},
    "workload": {"kind": "permutation", "size": "1MiB"},
    "observe": {"ports": ["t0_0->t1_0", "t0_1->t1_1"], "rtt": True},
    "failures": [
        {"link": "t0_0->t1_0", "direction": "both", "at": "50us"},
        {"kind": "loss", "loss": 0.01, "switch": "t1_1", "at": "60us"},
    ],
}


def test_a_scenario_written_by_tomli_w_resolves_to_the_same_scenario() -> None:
    text = dumps(SCENARIO)
    assert tomllib.loads(text) == SCENARIO
    s = lbsim.Scenario.from_toml(text)
    resolved = s.to_dict()
    for key in ("seed", "stop_at", "topology.link_rate", "cc.eqds.pull_rate", "lb.reps.freeze_rtt_factor",
                "observe.ports", "queue.trimming", "workload.size", "name"):
        node_in: object = SCENARIO
        for part in key.split("."):
            node_in = node_in[part]  # type: ignore[index]
        assert s[key] == node_in, key
    assert resolved["failures"][1]["loss"] == 0.01
    # Read back from its own resolved TOML it is still the same scenario (same run key).
    again = lbsim.Scenario.from_toml(s.resolved())
    assert again.resolved() == s.resolved() and again.key() == s.key()
    # A dict scenario is the same one.
    assert lbsim.Scenario.from_dict(SCENARIO).key() == s.key()


def test_override_values_are_toml_values() -> None:
    assert value_text("reps") == "reps" and value_text("8MiB") == "8MiB"
    assert value_text(3) == "3" and value_text(True) == "true" and value_text(0.02) == "0.02"
    assert value_text(float("inf")) == "inf" and value_text(["a", 1]) == '["a", 1]'
    assert literal("reps") == '"reps"' and literal('a "quoted"\nline') == '"a \\"quoted\\"\\nline"'
    v = [{"link": "t0_0->t1_0", "at": "50us", "odd key": {"x": [1, 2]}}]
    assert literal(v) == '[{ link = "t0_0->t1_0", at = "50us", "odd key" = { x = [1, 2] } }]'
    assert tomllib.loads(f"v = {literal(v)}")["v"] == v
    # A long array of tables stays one inline value (tomli-w alone would write [[v]] sections).
    many = [{"link": f"t0_{i}->t1_{i}", "direction": "both", "at": f"{i}us"} for i in range(8)]
    assert "\n" not in literal(many) and tomllib.loads(f"v = {literal(many)}")["v"] == many
    s = lbsim.Scenario.from_toml(TREE).set("failures", many[:2])
    assert s["failures"][1]["link"] == "t0_1->t1_1"
    with pytest.raises(TypeError):
        value_text(None)


def test_plot_style_comes_from_the_engine_registry() -> None:
    """One definition of the load balancers: names, labels and colours are the
    engine's (lbsim_core::lb::REGISTRY), in its order; nothing listed by hand."""
    from lbsim import _core
    from lbsim.plot import style

    registry = _core.load_balancers()
    assert [b["name"] for b in registry] == list(style.ORDER[:-1])
    for b in registry:
        assert style.label(b["name"]) == b["label"]
        assert style.color(b["name"]) == b["color"]
        assert b["side"] in ("host", "switch")
    assert {b["name"] for b in registry if b["side"] == "switch"} == {"adaptive", "conga", "letflow", "drill", "conweave", "wcmp"}
    assert len({b["color"] for b in registry}) == len(registry), "every balancer has its own colour"
