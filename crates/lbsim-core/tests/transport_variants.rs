//! Adaptive routing, EQDS, ACK coalescing and their keys (issue 5, part B).

mod common;
use common::{run_ok, scenario};
use lbsim_core::{build, RunOutput, Scenario};
use std::path::PathBuf;

/// The 128-host 2-tier tree of the REPS artifact (16 ToRs of 8 hosts, 8 spines, 400 Gb/s).
const TREE: &str = "preset = \"reps_artifact\"\n";

fn with(extra: &str) -> Scenario {
    scenario(&format!("{TREE}{extra}"))
}

/// A directory holding `file`, a flow list with `rows` (src,dst,size_bytes,start_us).
fn flow_list(name: &str, file: &str, rows: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lbsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    dir
}

/// A directory holding a one-line flow list: `size` bytes from host 0 to host 127.
fn lone_flow(name: &str, size: u64) -> PathBuf {
    flow_list(name, "one.csv", &format!("0,127,{size},0\n"))
}

/// Bytes a message puts on the wire: its payload plus one header per packet.
fn wire_bytes(out: &RunOutput, size: u64) -> u64 {
    let s = &out.scenario.packet;
    let (mtu, header) = (s.mtu.bytes(0, 0, None).unwrap(), s.header.bytes(0, 0, None).unwrap());
    size + size.div_ceil(mtu - header) * header
}

fn line_time_us(bytes: u64) -> f64 {
    bytes as f64 * 8.0 / 400e9 * 1e6
}

// ---- adaptive routing ----------------------------------------------------

/// REPS §4.3.1, Fig. 2: on a permutation, switches picking the shortest
/// queue avoid most of ECMP's hash collisions.
#[test]
fn adaptive_routing_beats_ecmp_on_a_permutation() {
    let run = |lb: &str| {
        let out = run_ok(
            &with(&format!(
                "[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"permutation\"\nsize = \"2MiB\"\n"
            )),
            None,
        );
        assert_eq!(out.summary.unfinished_flows, 0);
        assert!(out.flows.iter().all(|f| f.lb == lb));
        out.summary.max_fct_us
    };
    let (ecmp, adaptive) = (run("ecmp"), run("adaptive"));
    assert!(adaptive < 0.6 * ecmp, "adaptive {adaptive} us vs ECMP {ecmp} us");
}

// ---- EQDS ----------------------------------------------------------------

/// An idle path: the first BDP goes unsolicited and credits keep the line
/// busy from then on, so EQDS finishes as fast as the window sender (line
/// rate plus the one-way delay), within a few percent of size/rate + base RTT.
#[test]
fn eqds_lone_flow_runs_at_line_rate() {
    let size = 4 << 20;
    let dir = lone_flow("eqds-lone", size);
    let run = |cc: &str| {
        let s = with(&format!(
            "[cc]\nkind = \"{cc}\"\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n"
        ));
        run_ok(&s, Some(&dir))
    };
    let (eqds, dctcp) = (run("eqds"), run("dctcp"));
    let fct = eqds.flows[0].fct_us;
    let ideal = line_time_us(size) + eqds.summary.base_rtt_us;
    assert!(
        fct >= line_time_us(wire_bytes(&eqds, size)),
        "faster than the line: {fct}"
    );
    assert!(fct <= 1.03 * ideal, "EQDS {fct} us vs size/rate + RTT {ideal} us");
    assert!(
        (fct - dctcp.flows[0].fct_us).abs() < 0.01 * fct,
        "EQDS {fct} vs DCTCP {}",
        dctcp.flows[0].fct_us
    );
    assert_eq!(eqds.summary.retransmissions, 0);
    assert!(eqds.counters.credits_sent > 0, "the tail was pulled by credits");
}

/// N-to-1 incast with trimming: the N unsolicited first BDPs overflow the
/// receiver's downlink once, the excess is trimmed, and from then on
/// credits pull data at exactly the link rate, so the downlink stays busy
/// and nothing more is trimmed: completion within a few percent of
/// N · size / rate plus one RTT, and trims only from the first BDPs.
#[test]
fn eqds_incast_keeps_the_receiver_link_busy_with_few_trims() {
    let (n, size) = (8u64, 2u64 << 20);
    let out = run_ok(
        &with(&format!(
            "[cc]\nkind = \"eqds\"\n[queue]\ntrimming = true\n\
             [workload]\nkind = \"incast\"\nsenders = {n}\nsize = \"{size}B\"\n"
        )),
        None,
    );
    assert_eq!(out.summary.unfinished_flows, 0);
    let s = &out.summary;
    let ideal = line_time_us(n * wire_bytes(&out, size)) + s.base_rtt_us;
    assert!(
        s.max_fct_us <= 1.02 * ideal,
        "incast {} us vs N·size/rate + RTT {ideal} us",
        s.max_fct_us
    );
    // Trims: at most the unsolicited excess, N − 1 first BDPs (the
    // downlink and its one-BDP queue absorb more than one of them).
    let bdp_pkts = s.bdp_bytes.div_ceil(4150);
    let trims = s.drops.trimmed;
    assert!(
        trims > 0 && trims < (n - 1) * bdp_pkts,
        "trims {trims}, first-BDP excess {}",
        (n - 1) * bdp_pkts
    );
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmissions, trims, "every retransmission answers a trim");
    // Credits: exactly what the flows wanted, the packets beyond each
    // first BDP plus one per trimmed header (NACK plus credit).
    let npkts = size.div_ceil(4150 - 64);
    assert_eq!(out.counters.credits_sent, n * (npkts - bdp_pkts) + trims);
    // DCTCP in the same incast trims more and finishes later.
    let dctcp = run_ok(
        &with(&format!(
            "[queue]\ntrimming = true\n[workload]\nkind = \"incast\"\nsenders = {n}\nsize = \"{size}B\"\n"
        )),
        None,
    );
    assert!(dctcp.summary.drops.trimmed > trims);
}

/// Credits leave each receiver at most one per MTU time of its link, and
/// with many senders that pace is what the incast gets: no faster.
#[test]
fn eqds_credits_are_paced_at_the_link_rate() {
    let (n, size) = (16u64, 1u64 << 20);
    let base = format!(
        "[cc]\nkind = \"eqds\"\n[queue]\ntrimming = true\n\
         [workload]\nkind = \"incast\"\nsenders = {n}\nsize = \"{size}B\"\n"
    );
    let full = run_ok(&with(&base), None);
    let half = run_ok(&with(&format!("{base}[cc.eqds]\npull_rate = 0.5\n")), None);
    // At half the pull rate the pulled part takes twice as long.
    let credit_us = line_time_us(4150);
    let pulled = |o: &RunOutput| o.counters.credits_sent as f64 * credit_us;
    assert!(full.summary.max_fct_us >= pulled(&full), "credits faster than the link");
    assert!(
        half.summary.max_fct_us >= 2.0 * pulled(&half),
        "credits faster than half the link"
    );
    assert!(
        half.summary.max_fct_us > 1.6 * full.summary.max_fct_us,
        "half pull rate {} us vs full {} us",
        half.summary.max_fct_us,
        full.summary.max_fct_us
    );
}

/// Data lost outright (every 10th packet the sender puts on its uplink, no
/// trim, so no NACK): the timer finds it and, with no credit left, the
/// sender asks with an RTS. Every credited send is then paid by a credit of
/// the receiver: data sent ≤ unsolicited + credits sent. Without RTS (the
/// old stand-in) each timed-out packet reuses its credit, so the sender
/// sends more than the receiver ever credited.
#[test]
fn eqds_recovers_outright_losses_with_rts_and_only_receiver_credit() {
    let size = 4 << 20;
    let dir = lone_flow("eqds-rts", size);
    let run = |rts: bool| {
        let s = with(&format!(
            "[cc]\nkind = \"eqds\"\n[cc.eqds]\nrts = {rts}\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n\
             [[failures]]\nlink = \"h0->t0_0\"\nkind = \"drop_nth\"\nnth = 10\n"
        ));
        run_ok(&s, Some(&dir))
    };
    for rts in [true, false] {
        let out = run(rts);
        assert_eq!(out.summary.unfinished_flows, 0, "rts = {rts}");
        assert!(out.summary.timeouts > 50, "losses are found by the timer");
        let c = &out.counters;
        let unsolicited = out.summary.bdp_bytes.div_ceil(4150);
        if rts {
            assert!(c.rts_sent > 0);
            assert!(
                c.data_sent <= unsolicited + c.credits_sent,
                "{} data packets, {unsolicited} unsolicited + {} credits",
                c.data_sent,
                c.credits_sent
            );
        } else {
            assert_eq!(c.rts_sent, 0);
            assert!(c.data_sent > unsolicited + c.credits_sent, "self-made credit");
        }
    }
}

// ---- ACK coalescing -----------------------------------------------------

/// REPS §4.5.1: one ACK per n data packets, the last packet at once. A lone
/// flow's packets arrive in order, so it sends exactly ceil(packets / n)
/// ACKs, and its completion does not change.
#[test]
fn ack_coalescing_sends_one_ack_per_n_packets() {
    let size = 2u64 << 20;
    let dir = lone_flow("coalesce", size);
    let npkts = size.div_ceil(4150 - 64);
    let mut fct1 = 0.0;
    for n in [1u64, 2, 4, 8, 16] {
        let s = with(&format!(
            "[transport]\nack_ratio = {n}\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        assert_eq!(out.counters.acks_sent, npkts.div_ceil(n), "ratio {n}");
        assert_eq!(out.counters.data_sent, npkts);
        let fct = out.flows[0].fct_us;
        if n == 1 {
            fct1 = fct;
        }
        assert!((fct - fct1).abs() <= 0.01 * fct1, "ratio {n}: {fct} us vs {fct1} us");
        assert!(out.flows[0].sender_finish_us.is_finite());
    }
}

/// On a permutation with spraying, ACKs cover about n packets each.
#[test]
fn coalesced_acks_are_about_packets_over_n() {
    for n in [4u64, 16] {
        let out = run_ok(
            &with(&format!(
                "[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"reps\"\n[transport]\nack_ratio = {n}\n\
                 [workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n"
            )),
            None,
        );
        let (acks, data) = (out.counters.acks_sent as f64, out.counters.data_sent as f64);
        // At least data/n; at most one more per flow (its last partial batch) and the odd timer flush.
        assert!(acks >= data / n as f64, "ratio {n}: {acks} ACKs for {data} packets");
        assert!(
            acks <= data / n as f64 * 1.1 + 32.0,
            "ratio {n}: {acks} ACKs for {data} packets"
        );
    }
}

/// REPS §4.5.1, Fig. 11: at 16:1, ACKs return one EV per 16 packets and REPS
/// loses most of its edge over OPS on a healthy tree, but with a failure it
/// still does far better than OPS. 8 MiB permutation, two seeds.
#[test]
fn coalescing_16_to_1_erodes_reps_edge_only_on_a_healthy_tree() {
    let max_fct = |lb: &str, ratio: u32, seed: u64, extra: &str| {
        let out = run_ok(
            &with(&format!(
                "seed = {seed}\n[lb]\nkind = \"{lb}\"\n[transport]\nack_ratio = {ratio}\n\
                 [workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n{extra}"
            )),
            None,
        );
        assert_eq!(out.summary.unfinished_flows, 0);
        out.summary.max_fct_us
    };
    // REPS's edge: how much longer OPS takes, relative to REPS, averaged over seeds.
    let edge = |ratio: u32, extra: &str| {
        [1u64, 2]
            .iter()
            .map(|&seed| max_fct("ops", ratio, seed, extra) / max_fct("reps", ratio, seed, extra) - 1.0)
            .sum::<f64>()
            / 2.0
    };
    let (edge1, edge16) = (edge(1, ""), edge(16, ""));
    assert!(edge1 > 0.03, "REPS beats OPS without coalescing: edge {edge1}");
    assert!(edge16 < edge1 / 2.0, "16:1 keeps most of the edge: {edge16} vs {edge1}");
    let failed = "[[failures]]\nlink = \"t0_0->t1_0\"\n";
    let (ops, reps) = (max_fct("ops", 16, 1, failed), max_fct("reps", 16, 1, failed));
    assert!(
        reps < 0.5 * ops,
        "with a dead uplink at 16:1: REPS {reps} us vs OPS {ops} us"
    );
}

// ---- what an ACK acknowledges ---------------------------------------------

/// The REPS artifact's ACK carries a cumulative ACK and a 64-packet bitmap, so
/// a lost ACK costs nothing: the next one covers its packet. A lone 2 MiB flow
/// (514 packets) whose every 10th ACK is lost on the receiver's uplink: with
/// `cumulative_sack` no timeout, no retransmission and the healthy run's
/// completion; with `per_packet` every lost ACK is a timeout and a spurious
/// retransmission. Lost data is another matter: the same every-10th loss on
/// the sender's uplink costs the same timeouts either way.
#[test]
fn a_lost_ack_is_covered_by_the_next_cumulative_sack() {
    let size = 2u64 << 20;
    let dir = lone_flow("cumulative-sack", size);
    let npkts = size.div_ceil(4150 - 64);
    let run = |info: &str, failure: &str| {
        let s = with(&format!(
            "[transport]\nack_info = \"{info}\"\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n{failure}"
        ));
        let out = run_ok(&s, Some(&dir));
        assert!(out.flows[0].finished, "{info}");
        out
    };
    let lose = |link: &str| format!("[[failures]]\nlink = \"{link}\"\nkind = \"drop_nth\"\nnth = 10\n");
    let healthy = run("cumulative_sack", "");
    let acks_lost = lose("h127->t0_15");
    let sack = run("cumulative_sack", &acks_lost);
    assert_eq!(sack.counters.drops_failure, npkts / 10);
    assert_eq!((sack.counters.timeouts, sack.counters.retransmissions), (0, 0));
    assert_eq!(sack.counters.data_sent, npkts);
    assert_eq!(sack.flows[0].sender_finish_us, healthy.flows[0].sender_finish_us);
    let single = run("per_packet", &acks_lost);
    // One per lost ACK, and the spurious retransmissions' ACKs count towards every 10th too.
    assert!(
        single.counters.timeouts >= npkts / 10,
        "{} timeouts",
        single.counters.timeouts
    );
    assert_eq!(single.counters.retransmissions, single.counters.timeouts);
    assert!(single.flows[0].sender_finish_us > healthy.flows[0].sender_finish_us);
    let data_lost = lose("h0->t0_0");
    let (a, b) = (run("cumulative_sack", &data_lost), run("per_packet", &data_lost));
    assert!(a.counters.timeouts > 0);
    assert_eq!(a.counters.timeouts, b.counters.timeouts);
}

// ---- timeout RTS -----------------------------------------------------------

/// The REPS artifact's timeout RTS (`transport.timeout_rts`): a lone OPS flow
/// (8 MiB: long enough to be still sending when the first losses time out) sprays an eighth of its packets into a dead ToR uplink, so its
/// window fills with packets that only the timer finds lost. With the key on
/// it sends RTSs (each on a seq of its own that must be acknowledged), with it
/// off none; either way it finishes with exactly its bytes (the run's
/// invariants check the payload), over both ACK formats.
#[test]
fn window_limited_timeouts_send_rts_only_with_the_key() {
    let size = 8u64 << 20;
    let dir = lone_flow("timeout-rts", size);
    let run = |rts: bool, info: &str| {
        let s = with(&format!(
            "[lb]\nkind = \"ops\"\n[transport]\ntimeout_rts = {rts}\nack_info = \"{info}\"\n\
             [workload]\nkind = \"flows\"\nfile = \"one.csv\"\n[routing]\nconvergence = \"never\"\n\
             [[failures]]\nlink = \"t0_0->t1_0\"\ndirection = \"forward\"\nat = \"0us\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        let f = &out.flows[0];
        assert!(f.finished && f.fct_us.is_finite(), "rts = {rts}, {info}");
        assert_eq!(out.summary.unfinished_flows, 0);
        assert!(out.summary.timeouts > 0, "the dead uplink makes timeouts");
        out
    };
    for info in ["cumulative_sack", "per_packet"] {
        let (on, off) = (run(true, info), run(false, info));
        assert!(on.counters.rts_sent > 0, "{info}");
        assert_eq!(on.summary.rts_sent, on.counters.rts_sent, "the summary reports them");
        assert_eq!(off.counters.rts_sent, 0, "{info}");
        assert_eq!(off.summary.rts_sent, 0);
        // At most one RTS per RTO of the flow's life.
        let rto = on.summary.rto_us;
        assert!(
            (on.counters.rts_sent as f64) <= on.flows[0].fct_us / rto + 1.0,
            "{} RTS in {} us",
            on.counters.rts_sent,
            on.flows[0].fct_us
        );
    }
}

/// MPRDMA with MP-RDMA's own EV rule under the artifact's timeout RTS (REPS
/// Fig. 8's configuration, a quarter of the fabric cables down, routing never
/// converging): the RTS must not cost a flow its ACK clock. It once did: an
/// RTS sent on the path an ACK had granted spent the grant on a header whose
/// ACK freed no packet's worth of window, and flows with few live paths fell
/// back to one random retransmission per RTO (max FCT 456 ms against 4.1 ms
/// without the RTS).
#[test]
fn the_timeout_rts_keeps_mprdma_s_ack_clock() {
    let run = |rts: bool| {
        let out = run_ok(
            &with(&format!(
                "[lb]\nkind = \"mprdma\"\n[lb.mprdma]\nev_rule = \"mp_rdma\"\n[transport]\ntimeout_rts = {rts}\n\
                 [workload]\nkind = \"permutation\"\nsize = \"8MiB\"\n[routing]\nconvergence = \"never\"\n\
                 [[failures]]\nlinks = \"fabric\"\nfraction = 0.25\ndirection = \"both\"\n"
            )),
            None,
        );
        assert_eq!(out.summary.unfinished_flows, 0);
        out
    };
    let (on, off) = (run(true), run(false));
    assert!(on.counters.rts_sent > 0);
    let (s_on, s_off) = (&on.summary, &off.summary);
    assert!(
        s_on.mean_fct_us < 1.1 * s_off.mean_fct_us && s_on.max_fct_us < 2.0 * s_off.max_fct_us,
        "with the RTS mean {} max {} us, without {} / {} us",
        s_on.mean_fct_us,
        s_on.max_fct_us,
        s_off.mean_fct_us,
        s_off.max_fct_us
    );
}

/// `reps_artifact` turns the timeout RTS on only where it means something:
/// a window CC on the "sack" transport. EQDS (its own RTS) resolves it off;
/// a user's own `true` there is an error naming the key.
#[test]
fn the_artifact_preset_sets_the_timeout_rts_for_window_ccs_only() {
    assert!(with("").transport.timeout_rts);
    assert!(with("[cc]\nkind = \"mprdma\"\n").transport.timeout_rts);
    assert!(!with("[cc]\nkind = \"eqds\"\n").transport.timeout_rts);
    assert!(!scenario("").transport.timeout_rts, "reps_paper: off");
    let e = Scenario::from_toml(&format!(
        "{TREE}[cc]\nkind = \"eqds\"\n[transport]\ntimeout_rts = true\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "transport.timeout_rts", "{e}");
    assert!(e.message.contains("eqds"), "{e}");
}

/// `transport.ack_request` is the "sack" transport's; `reps_artifact` sets it.
#[test]
fn the_ack_request_is_the_artifact_preset_s_and_the_sack_transport_s() {
    assert!(with("").transport.ack_request);
    assert!(!scenario("").transport.ack_request, "reps_paper: off");
    let e = Scenario::from_toml("preset = \"rdma_lossless\"\n[transport]\nack_request = true\n").unwrap_err();
    assert_eq!(e.key, "transport.ack_request", "{e}");
    assert!(e.message.contains("gbn"), "{e}");
}

// ---- keys ------------------------------------------------------------------

#[test]
fn bad_keys_are_named() {
    let cases = [
        ("[transport]\nack_ratio = 0\n", "transport.ack_ratio"),
        ("[transport]\nack_delay = \"0us\"\n", "transport.ack_delay"),
        ("[transport]\nack_delay = \"soon\"\n", "transport.ack_delay"),
        ("[cc]\nwtd_alpha = 0.0\n", "cc.wtd_alpha"),
        ("[cc]\nwtd_alpha = 1.5\n", "cc.wtd_alpha"),
        ("[cc]\nwait_to_decrease = \"yes\"\n", "cc.wait_to_decrease"),
        ("[cc]\nkind = \"fastflow\"\n", "cc.kind"),
        ("[cc.eqds]\npull_rate = 0.0\n", "cc.eqds.pull_rate"),
        ("[cc.eqds]\npulll_rate = 1.0\n", "cc.eqds.pulll_rate"),
        ("[cc.eqds]\nunsolicited = \"0B\"\n", "cc.eqds.unsolicited"),
        ("[cc.eqds]\nrts = 1\n", "cc.eqds.rts"),
        (
            "[cc.eqds]\nretransmit_priority = \"yes\"\n",
            "cc.eqds.retransmit_priority",
        ),
        ("[lb]\nkind = \"adaptiv\"\n", "lb.kind"),
        ("[transport]\nack_info = \"cumulative\"\n", "transport.ack_info"),
        ("[transport]\ntimeout_rts = \"yes\"\n", "transport.timeout_rts"),
        (
            "[transport]\nkind = \"irn\"\n[transport.rdma]\nnack_interval = \"4us\"\ncnp_on_ooo = true\n\
             irn_window = \"auto\"\nirn_rto_low = \"100us\"\nirn_rto_high = \"320us\"\nirn_low_inflight = 3\n",
            "transport.ack_info",
        ),
    ];
    for (toml, key) in cases {
        let e = Scenario::from_toml(&format!("{TREE}{toml}"))
            .and_then(|s| build::build(&s, None).map(|_| ()))
            .unwrap_err();
        assert_eq!(e.key, key, "{toml}: {e}");
    }
}

// ---- pair state ------------------------------------------------------------

/// `transport.resume_pair_state` (the REPS artifact's connection mapping):
/// a pair's second flow, starting after its first finished, takes up the
/// first one's REPS state: its first window sends the 8 EVs the first flow's
/// last ACKs cached (REPS's buffer) before drawing random ones, so it
/// explores exactly 8 fewer than the same flow started afresh. The pair's
/// first flow and a flow of another pair are untouched.
#[test]
fn a_pairs_next_flow_resumes_its_last_flows_state() {
    let dir = flow_list(
        "pair-state",
        "two.csv",
        "0,127,1048576,0\n0,127,1048576,200\n1,126,1048576,200\n",
    );
    let run = |resume: bool| {
        let s = with(&format!(
            "[lb]\nkind = \"reps\"\n[transport]\nresume_pair_state = {resume}\n\
             [workload]\nkind = \"flows\"\nfile = \"two.csv\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        assert!(out.flows.iter().all(|f| f.finished));
        assert!(
            out.flows[0].sender_finish_us < 200.0,
            "the first flow is done before the second starts"
        );
        out.flows.iter().map(|f| f.explored_evs).collect::<Vec<_>>()
    };
    let (fresh, resumed) = (run(false), run(true));
    assert!(fresh[0] > 50, "a fresh REPS flow explores its first window: {fresh:?}");
    assert_eq!(resumed[0], fresh[0], "the pair's first flow starts afresh");
    assert!(
        fresh[1] > 50,
        "a fresh second flow explores its first window too: {fresh:?}"
    );
    assert_eq!(
        fresh[1] - resumed[1],
        8,
        "resumed, it recycles the 8 cached EVs: {resumed:?} {fresh:?}"
    );
    assert_eq!(resumed[2], fresh[2], "another pair is untouched");
}

// ---- the window cap per pair (cc.max_cwnd_basis) -----------------------------

/// The REPS artifact caps each flow's window at 1.5 x its own pair's BDP (uec.cpp
/// `initNscc`, lowered to the measured RTT by `update_base_rtt`) and clamps the window
/// to it on every unmarked ACK (`updateCwndOnAck_MPRDMA`), so an intra-ToR flow's
/// initial 151 packets fall to about 75 at its first ACK. lbsim's reps_artifact does
/// the same (`cc.max_cwnd_basis = "pair"`), and so does reps_paper (the paper says
/// 1.5 BDP without saying whose).
#[test]
fn the_artifact_caps_each_pair_at_its_own_bdp() {
    use lbsim_core::cc::{Cc, CongestionControl};
    let dir = flow_list("pair-cap", "two.csv", "0,1,2000000,0\n2,127,2000000,0\n");
    let s = with("[workload]\nkind = \"flows\"\nfile = \"two.csv\"\n");
    let mut sim = build::build(&s, Some(&dir)).expect("builds");
    let cap = |c: &Cc| match c {
        Cc::Dctcp(v) => v.max_cwnd,
        other => panic!("expected the DCTCP variant, got {other:?}"),
    };
    // Idle round trips at 400 Gb/s with 1 us links: a 4150 B packet out (83 ns per hop)
    // and a 64 B ACK back (1.28 ns), 2 hops each way under one ToR and 4 across the spine.
    let hop_ps = |bytes: f64| bytes * 8.0 / 400e9 * 1e12 + 1e6;
    let one_and_a_half_bdp = |hops: f64| 1.5 * 50.0 * hops * (hop_ps(4150.0) + hop_ps(64.0)) / 1e3;
    let (near, far) = (cap(&sim.flows[0].cc) as f64, cap(&sim.flows[1].cc) as f64);
    assert!((near - one_and_a_half_bdp(2.0)).abs() <= 2.0, "under one ToR: {near} B");
    assert!(
        (far - one_and_a_half_bdp(4.0)).abs() <= 2.0,
        "across the spine: {far} B"
    );
    assert!((near / 4150.0 - 75.3).abs() < 0.1 && (far / 4150.0 - 150.7).abs() < 0.1);
    // Both start at the artifact's 151 packets, above either cap; the first unmarked ACK
    // clamps them, and nothing takes a window back above its cap.
    assert!(sim.flows.iter().all(|f| f.cc.window() == Some(151 * 4150)));
    sim.run();
    for f in &sim.flows {
        assert!(f.cc.window().unwrap() <= cap(&f.cc), "window above the cap at the end");
    }
    // reps_paper takes the artifact's rule too (the paper says 1.5 BDP, not whose):
    // each pair's own idle round trip, over its 500 ns links and 500 ns switches.
    let paper = |extra: &str| {
        let s = scenario(&format!(
            "preset = \"reps_paper\"\n{extra}[workload]\nkind = \"flows\"\nfile = \"two.csv\"\n"
        ));
        let sim = build::build(&s, Some(&dir)).expect("builds");
        (cap(&sim.flows[0].cc), cap(&sim.flows[1].cc))
    };
    // A 4096 B packet out and a 64 B ACK back at 400 Gb/s, each hop 500 ns more, each
    // switch 500 ns: 2 hops and 1 switch each way under one ToR, 4 and 3 across the spine.
    let rtt_ps = |hops: f64| {
        let one_way = |bytes: f64| hops * (bytes * 8.0 / 400e9 * 1e12 + 500e3) + (hops - 1.0) * 500e3;
        one_way(4096.0) + one_way(64.0)
    };
    let one_and_a_half_bdp = |hops: f64| 1.5 * rtt_ps(hops) * 400e9 / 8.0 / 1e12;
    let (near, far) = paper("");
    assert!(
        (near as f64 - one_and_a_half_bdp(2.0)).abs() <= 2.0,
        "reps_paper, under one ToR: {near} B"
    );
    assert!(
        (far as f64 - one_and_a_half_bdp(4.0)).abs() <= 2.0,
        "reps_paper, across the spine: {far} B"
    );
    let (one, all) = paper("[cc]\nmax_cwnd_basis = \"network\"\n");
    assert_eq!(one, all, "\"network\": one cap for every flow");
    assert_eq!(all, far, "the network's longest path is a pair across the spine");
}

/// The artifact hands a pair's saved REPS buffer out by pointer, so two flows
/// of a pair that both resume from its last finished flow share one buffer,
/// live. Forced freezing (`force_freeze_at`) pins it: the first of the two to
/// send after that time freezes the shared state and the other finds it
/// frozen, so together they enter freezing once; without the pair state each
/// freezes on its own.
#[test]
fn flows_resuming_from_the_same_pair_state_share_one_reps_buffer() {
    let dir = flow_list(
        "pair-share",
        "three.csv",
        "0,127,1048576,0\n0,127,1048576,200\n0,127,1048576,200\n",
    );
    let run = |resume: bool| {
        let s = with(&format!(
            "[lb]\nkind = \"reps\"\n[lb.reps]\nforce_freeze_at = \"215us\"\n\
             [transport]\nresume_pair_state = {resume}\n\
             [workload]\nkind = \"flows\"\nfile = \"three.csv\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        assert!(out.flows.iter().all(|f| f.finished));
        assert!(out.flows[0].sender_finish_us < 200.0);
        assert!(out.flows[1..].iter().all(|f| f.sender_finish_us > 215.0));
        out.flows.iter().map(|f| f.freeze_entries).collect::<Vec<_>>()
    };
    assert_eq!(run(false), vec![0, 1, 1], "apart, each live flow freezes");
    let shared = run(true);
    assert_eq!(shared[0], 0);
    assert_eq!(shared[1] + shared[2], 1, "sharing, they freeze once: {shared:?}");
}

/// `transport.timeout_nic_turn` (the REPS artifact's NIC as published): one
/// host sends two equal messages at once, and every 50th packet of the first
/// is lost on its receiver's downlink. With the key, each of the lossy
/// message's timeouts takes it another turn of the NIC while it can send, so
/// it ends sooner than without and the clean one later (same losses either
/// way); with no loss there is no timeout and the key changes nothing.
#[test]
fn a_timeout_takes_a_second_nic_turn_only_with_the_artifacts_nic() {
    let dir = flow_list("nicturn", "two.csv", "0,9,2000000,0\n0,17,2000000,0\n");
    let run = |on: bool, lossy: bool| {
        let failure = if lossy {
            "[[failures]]\nlink = \"t0_1->h9\"\nkind = \"drop_nth\"\nnth = 50\n"
        } else {
            ""
        };
        let s = with(&format!(
            "[lb]\nkind = \"ops\"\n[transport]\ntimeout_nic_turn = {on}\n[workload]\nkind = \"flows\"\nfile = \"two.csv\"\n{failure}"
        ));
        let out = run_ok(&s, Some(&dir));
        let finish = |dst: u32| out.flows.iter().find(|f| f.dst == dst).unwrap().sender_finish_us;
        (finish(9), finish(17), out.counters.drops_failure, out.counters.timeouts)
    };
    let (lossy_off, clean_off, drops_off, timeouts_off) = run(false, true);
    let (lossy_on, clean_on, drops_on, timeouts_on) = run(true, true);
    assert!(
        drops_off > 5 && timeouts_off >= drops_off,
        "the lossy message times out: {drops_off} {timeouts_off}"
    );
    assert_eq!(drops_on, drops_off, "the same packets are lost");
    assert!(timeouts_on >= drops_on);
    assert!(
        lossy_on < lossy_off,
        "extra turns: the lossy message ends sooner ({lossy_on} against {lossy_off})"
    );
    assert!(
        clean_on > clean_off,
        "and takes them from the clean one ({clean_on} against {clean_off})"
    );
    assert_eq!(run(true, false), run(false, false), "no timeout, no extra turn");
}
