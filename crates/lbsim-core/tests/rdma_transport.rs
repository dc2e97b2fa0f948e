//! The RDMA transports (Go-Back-N, IRN) and DCQCN on the presets
//! `rdma_lossless` and `rdma_irn`, checked against exact answers.

mod common;

use common::{run_ok, scenario};
use lbsim_core::RunOutput;
use std::path::PathBuf;

/// 32 hosts, 16 per ToR, 100 Gb/s links of 200 ns (short, so that a gap
/// closes within one NACK interval), flows from a CSV beside the scenario.
fn rdma(preset: &str, flows: &[(u32, u32, u64)], extra: &str, tag: &str) -> (RunOutput, PathBuf) {
    let dir = std::env::temp_dir().join(format!("lbsim-rdma-tx-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = flows.iter().map(|(s, d, n)| format!("{s},{d},{n},0\n")).collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    let text = format!(
        "preset = \"{preset}\"\n[topology]\nhosts = 32\nlink_latency = \"200ns\"\n\
         [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n{extra}"
    );
    (run_ok(&scenario(&text), Some(&dir)), dir)
}

/// Packet 9 of a lone 100-packet flow is lost (the 10th packet over the
/// sender's link in its first 1.5 us). The receiver NACKs packet 10's
/// arrival; Go-Back-N then resends everything from 9 up to what the sender
/// had sent when the NACK came back: at line rate one packet every τ, the
/// NACK arrives 10τ + base RTT after the start, so the sender had sent
/// ⌊10 + RTT/τ⌋ + 1 packets. IRN with the paper's selective rule resends
/// packet 9 alone; with the ConWeave artifact's rewind (the preset) it
/// resends 9 and whatever was in flight behind it and not yet selectively
/// acknowledged when the sender got to it: more than one, at most Go-Back-N's.
#[test]
fn one_loss_costs_go_back_n_its_window_and_irn_one_packet() {
    let drop = "[[failures]]\nlink = \"h0->t0_0\"\nkind = \"drop_nth\"\nnth = 10\nduration = \"1.5us\"\n";
    let flow = [(0, 1, 100 * 1000)];
    let (gbn, _) = rdma("rdma_lossless", &flow, drop, "gbn1");
    assert_eq!(gbn.counters.drops_failure, 1);
    // Two hops each way (h0 -> ToR -> h1): data 1048 B, the NACK 60 B, 200 ns per link.
    let (tau_us, ack_us): (f64, f64) = (1048.0 * 8.0 / 100e3, 60.0 * 8.0 / 100e3);
    let rtt_us = 2.0 * (tau_us + 0.2) + 2.0 * (ack_us + 0.2);
    let sent_at_nack = (10.0 + rtt_us / tau_us).floor() as u64 + 1;
    assert_eq!(gbn.counters.retransmissions, sent_at_nack - 9);
    assert_eq!(gbn.counters.nacks_sent, 1, "one NACK: the gap closed within 4 us");
    assert_eq!(gbn.counters.timeouts, 0);
    let selective = format!("{drop}[transport.rdma]\nirn_recovery = \"selective\"\n");
    let (irn, _) = rdma("rdma_irn", &flow, &selective, "irn1");
    assert_eq!(irn.counters.drops_failure, 1);
    assert_eq!(irn.counters.retransmissions, 1);
    assert!(irn.flows[0].fct_us < gbn.flows[0].fct_us);
    let (rewind, _) = rdma("rdma_irn", &flow, drop, "irn1-rewind");
    assert_eq!(rewind.counters.drops_failure, 1);
    let r = rewind.counters.retransmissions;
    assert!(
        r > 1 && r <= gbn.counters.retransmissions,
        "{r} against Go-Back-N's {}",
        gbn.counters.retransmissions
    );
    assert!(rewind.flows[0].fct_us <= gbn.flows[0].fct_us);
}

/// A lost tail (the last packet) has no later packet to reveal it: only
/// the timer finds it, after Go-Back-N's 4 ms or IRN's RTO_low (100 us,
/// one packet outstanding).
#[test]
fn a_lost_tail_waits_for_the_timer() {
    let drop = "[[failures]]\nlink = \"h0->t0_0\"\nkind = \"drop_nth\"\nnth = 5\nduration = \"1.5us\"\n";
    let flow = [(0, 1, 5 * 1000)];
    for (preset, rto_us) in [("rdma_lossless", 4000.0), ("rdma_irn", 100.0)] {
        let (out, _) = rdma(preset, &flow, drop, &format!("tail-{preset}"));
        assert_eq!(
            (out.counters.retransmissions, out.counters.timeouts),
            (1, 1),
            "{preset}"
        );
        let fct = out.flows[0].fct_us;
        assert!(fct > rto_us && fct < rto_us + 10.0, "{preset}: {fct} us");
    }
}

/// Two DCQCN flows into one host share its link: CNPs cut both and the
/// timers bring them back, and each gets its half (equal sizes finish
/// within 10 % of each other, where 70/30 would differ by 30 %), with
/// nothing lost under PFC.
#[test]
fn two_dcqcn_flows_converge_to_fair_shares() {
    let flows = [(0, 2, 20 << 20), (1, 2, 20 << 20)];
    let (out, _) = rdma("rdma_lossless", &flows, "", "fair");
    assert_eq!(out.counters.drops_congestion, 0);
    assert!(out.counters.ecn_marks > 0, "the shared link must have marked");
    let (a, b) = (out.flows[0].fct_us, out.flows[1].fct_us);
    assert!((a - b).abs() / a.max(b) < 0.10, "{a} vs {b}");
    // Together they cannot beat the link: 2 x 20 MiB in 1000 B payloads of 1048 B.
    let busy_us = 2.0 * (20u64 << 20).div_ceil(1000) as f64 * 1048.0 * 8.0 / 100e3;
    assert!(a.max(b) >= busy_us, "{} < {busy_us}", a.max(b));
}

/// An 8-to-1 incast on the lossless preset: PFC holds the senders back,
/// nothing is dropped, nothing is retransmitted, and packets are conserved.
#[test]
fn the_lossless_preset_never_drops() {
    let flows: Vec<(u32, u32, u64)> = (1..9).map(|s| (s * 3, 0, 2 << 20)).collect();
    let small = "[queue.shared]\nsize = \"1MiB\"\n";
    let (out, _) = rdma("rdma_lossless", &flows, small, "incast");
    let c = &out.counters;
    assert!(c.pfc_pauses > 0);
    assert_eq!((c.drops_congestion, c.retransmissions), (0, 0));
}

/// Bad RDMA settings are refused by name.
#[test]
fn bad_rdma_settings_name_their_key() {
    let bad = |extra: &str| lbsim_core::Scenario::from_toml(extra).unwrap_err().key;
    assert_eq!(
        bad("preset = \"rdma_irn\"\n[queue.shared]\npfc = true\n"),
        "queue.shared.pfc"
    );
    assert_eq!(bad("[transport]\nkind = \"gbn\"\n"), "transport.rdma");
    assert_eq!(
        bad("preset = \"rdma_lossless\"\n[transport.rdma]\nnack_interval = \"0us\"\n"),
        "transport.rdma.nack_interval"
    );
    assert_eq!(
        bad("preset = \"rdma_lossless\"\n[transport]\nack_ratio = 4\n"),
        "transport.ack_ratio"
    );
    assert_eq!(bad("preset = \"rdma_lossless\"\n[cc.dcqcn]\ng = 0.0\n"), "cc.dcqcn.g");
    assert_eq!(
        bad("preset = \"rdma_irn\"\n[transport.rdma]\nirn_rto_low = \"400us\"\n"),
        "transport.rdma.irn_rto_low"
    );
    assert_eq!(
        bad("preset = \"rdma_irn\"\n[transport.rdma]\nirn_low_inflight = 0\n"),
        "transport.rdma.irn_low_inflight"
    );
    assert_eq!(
        bad("preset = \"rdma_lossless\"\n[queue]\nkind = \"two_class\"\ntrimming = true\n"),
        "queue.trimming"
    );
}

/// Go-Back-N under a spraying balancer is allowed, with a warning that
/// explains its retransmissions; under ECMP there is none.
#[test]
fn go_back_n_under_spraying_warns() {
    let w = |lb: &str| {
        lbsim_core::scenario::warnings(&scenario(&format!(
            "preset = \"rdma_lossless\"\n[lb]\nkind = \"{lb}\"\n"
        )))
    };
    assert!(w("ecmp").is_empty());
    let ops = w("ops");
    assert_eq!(ops.len(), 1);
    assert!(
        ops[0].contains("lb.kind = \"ops\"") && ops[0].contains("retransmissions"),
        "{}",
        ops[0]
    );
    let flows: Vec<(u32, u32, u64)> = (0..8).map(|s| (s, 16 + s, 1 << 20)).collect();
    let (out, _) = rdma("rdma_lossless", &flows, "[lb]\nkind = \"ops\"\n", "gbn-ops");
    assert_eq!(out.summary.warnings, ops);
    assert!(out.counters.retransmissions > 0, "sprayed packets overtake each other");
}

/// `metrics.fct = "last_ack"` (the RDMA presets, as the ConWeave artifact measures): a lone
/// 10-packet flow across two links ends when the last packet's 60 B ACK is back at the sender,
/// and its ideal ends there too: one packet's store-and-forward per link plus nine more
/// serialisations, then the ACK's two hops. Alone on the path, its slowdown is exactly 1.
#[test]
fn last_ack_fct_includes_the_acks_way_back() {
    let flow = [(0, 1, 10 * 1000)];
    let (out, _) = rdma("rdma_lossless", &flow, "", "lastack");
    let f = &out.flows[0];
    let (tau_us, ack_us) = (1048.0 * 8.0 / 100e3, 60.0 * 8.0 / 100e3);
    let data_us = 2.0 * (tau_us + 0.2) + 9.0 * tau_us;
    let expect = data_us + 2.0 * (ack_us + 0.2);
    assert!(
        (f.ideal_fct_us - expect).abs() < 1e-6,
        "ideal {} vs {expect}",
        f.ideal_fct_us
    );
    assert!((f.fct_us - expect).abs() < 1e-6, "fct {} vs {expect}", f.fct_us);
    assert!(
        (f.receiver_finish_us - data_us).abs() < 1e-6,
        "last byte at {}",
        f.receiver_finish_us
    );
    assert_eq!(f.slowdown, 1.0);
    // The same flow measured at its last byte (REPS): FCT and ideal both end there.
    let (out, _) = rdma("rdma_lossless", &flow, "[metrics]\nfct = \"last_byte\"\n", "lastbyte");
    assert!((out.flows[0].fct_us - data_us).abs() < 1e-6 && (out.flows[0].ideal_fct_us - data_us).abs() < 1e-6);
}
