"""ConWeave's measurements from Python: uplink imbalance (Fig. 14) against an
exact case, and the reorder-queue samples (Figs. 15-16) against the engine's
own counters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lbsim
from lbsim.conweave import control_overhead, reorder_samples, resume_errors, uplink_imbalance
from lbsim.plot.reorder import reorder_figure


def _flows(tmp_path: Path, rows: list[tuple[int, int, int]]) -> Path:
    f = tmp_path / "f.csv"
    f.write_text("src,dst,size_bytes,start_us\n" + "".join(f"{s},{d},{n},0\n" for s, d, n in rows))
    return f


def _scenario(tmp_path: Path, rows: list[tuple[int, int, int]]) -> lbsim.Scenario:
    f = _flows(tmp_path, rows)
    return lbsim.Scenario.from_toml(
        f'preset = "rdma_lossless"\n[topology]\nhosts = 32\n[workload]\nkind = "flows"\nfile = "{f}"\n'
        '[observe]\nports = ["t0_0"]\nbucket = "10us"\n'
    )


def test_one_flow_loads_one_uplink_of_eight(tmp_path: Path) -> None:
    """One flow leaves its ToR by one of 8 uplinks: in every 100 us window it
    sends in, (max − min) / mean = x / (x / 8) = 8 exactly."""
    r = lbsim.run(_scenario(tmp_path, [(0, 16, 2_000_000)]), progress=False)
    imb = uplink_imbalance(r)
    assert len(imb) >= 1 and np.allclose(imb, 8.0), imb
    with pytest.raises(lbsim.LbsimError, match="longer than"):
        uplink_imbalance(r, window_us=5.0)


def test_reorder_samples_stay_within_the_counted_peaks(tmp_path: Path) -> None:
    rows = [(h, 16 + h, 1_000_000) for h in range(8)]
    s = _scenario(tmp_path, rows).set("lb.kind", "conweave").set("observe.switch_lb", True)
    s = s.set("rate_overrides", [{"link": "t1_0->t0_1", "rate": "25Gbps"}])
    r = lbsim.run(s, progress=False)
    queues = reorder_samples(r, "conweave.reorder_queues")
    memory = reorder_samples(r, "conweave.reorder_bytes")
    counters = r.summary["switch_lb"]
    assert counters["conweave.held_packets"] > 0
    assert len(queues) > 0 and queues.max() <= counters["conweave.max_reorder_queues_on_a_port"] <= 31
    assert memory.max() <= counters["conweave.max_reorder_bytes_at_a_switch"]
    assert memory.max() > 0, "a 10 us sample caught some held bytes"
    errors = resume_errors(r)
    late = counters["conweave.tails_after_timer_flush"]
    assert len(errors) == counters["conweave.resume_error_count"] == counters["conweave.flushed_by_tail"] + late
    share = control_overhead(r)
    n = counters["conweave.replies"]
    data = 8 * (1_000_000 + 1000 * 48)  # eight 1 MB flows of 1000 B payloads, 48 B headers each
    assert share["replies"] == pytest.approx(n * 64 / data)
    assert 0 < share["replies"] < 0.05
    paths = reorder_figure({"lossless/conweave": r}, tmp_path / "fig")
    assert all(p.stat().st_size > 10_000 for p in paths)
    with pytest.raises(lbsim.LbsimError, match="observe.switch_lb"):
        reorder_samples(lbsim.run(_scenario(tmp_path, rows[:1]), progress=False), "conweave.reorder_queues")
