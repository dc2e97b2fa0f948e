"""MPTCP-like subflows (REPS §4.1): the message-level numbers a run reports
agree with the flow table grouped by message."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL

import lbsim
from lbsim import fct


def small(**overrides: object) -> lbsim.Scenario:
    return lbsim.Scenario.from_toml(SMALL).with_overrides(overrides)


def test_messages_agree_with_a_groupby_over_flows(tmp_path: Path) -> None:
    r = lbsim.run(small(**{"lb.kind": "subflows", "workload.size": "1MiB"}), progress=False)
    flows, msgs, s = r.flows, r.messages, r.summary
    assert len(flows) == 16 * 8 and len(msgs) == 16 == s["flows"]
    g = flows.groupby("message")
    want = {
        "size_bytes": g["size_bytes"].sum(),
        "subflows": g.size(),
        "start_us": g["start_us"].min(),
        "receiver_finish_us": g["receiver_finish_us"].max(),
        "finished": g["finished"].all(),
    }
    m = msgs.set_index("message")
    for col, expected in want.items():
        np.testing.assert_array_equal(m[col].to_numpy(), expected.to_numpy(), err_msg=col)
    np.testing.assert_allclose(m["fct_us"], m["receiver_finish_us"] - m["start_us"], rtol=1e-12)
    # The summary is per message: max and mean over message FCTs, not subflow FCTs.
    assert s["max_fct_us"] == pytest.approx(m["fct_us"].max(), rel=1e-12)
    assert s["mean_fct_us"] == pytest.approx(m["fct_us"].mean(), rel=1e-9)
    assert s["mean_fct_us"] > flows["fct_us"].mean()
    assert s["unfinished_flows"] == int((~m["finished"]).sum()) == 0
    # Each message's ideal is the whole message's: more than any one of its subflows' ideals.
    assert (m["ideal_fct_us"] > g["ideal_fct_us"].max()).all()
    slow = np.maximum(1.0, m["fct_us"] / m["ideal_fct_us"])
    np.testing.assert_allclose(m["slowdown"], slow, rtol=1e-9)
    assert s["mean_slowdown"] == pytest.approx(slow.mean(), rel=1e-9)
    # Slowdown statistics by size count messages, once each.
    assert len(fct.measured_flows(r)) == 16
    # Saved and loaded, the run keeps its message table.
    back = lbsim.load(r.save(tmp_path / "run"))
    assert "messages" in back.table_names
    np.testing.assert_array_equal(back.messages["fct_us"].to_numpy(), msgs["fct_us"].to_numpy())


def test_without_subflows_messages_are_the_flow_rows() -> None:
    r = lbsim.run(small(**{"lb.kind": "ecmp"}), progress=False)
    assert "messages" not in r.table_names
    f, m = r.flows, r.messages
    assert (f["message"] == f["id"]).all()
    assert (m["subflows"] == 1).all()
    for col in ("message", "fct_us", "slowdown", "ideal_fct_us", "measured"):
        np.testing.assert_array_equal(m[col].to_numpy(), f["message" if col == "message" else col].to_numpy())


def test_subflows_has_a_name_and_colour() -> None:
    from lbsim.plot import style

    assert style.label("subflows") == "MPTCP"
    assert style.color("subflows") not in {style.color(lb) for lb in style.ORDER if lb != "subflows"}
