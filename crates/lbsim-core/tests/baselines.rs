//! The sender-side baselines of REPS §4.1 and ARCANE (PLB, Flowlet,
//! MPRDMA, BitMap, ARCANE) on small trees: they finish, the per-packet ones
//! beat per-flow ECMP, `lb.entropy_space` reaches every spraying scheme,
//! and every bad key of their tables is named.

mod common;
use common::{run_ok, scenario};
use lbsim_core::cc::Cc;
use lbsim_core::lb::{AckEcho, Lb, LbStats, LoadBalancer};
use lbsim_core::rng::{Rng, StreamTag};
use lbsim_core::time::SimTime;
use lbsim_core::{build::build, Scenario};

/// 32 hosts on a 2-tier tree of radix 8: 8 ToRs of 4 hosts and 4 uplinks, 4 spines.
const SMALL: &str = "[topology]\nhosts = 32\nradix = 8\n";
const NEW_KINDS: [&str; 5] = ["plb", "flowlet", "mprdma", "bitmap", "arcane"];

fn permutation(kind: &str, size: &str, extra: &str) -> Scenario {
    scenario(&format!(
        "{SMALL}[lb]\nkind = \"{kind}\"\n{extra}[workload]\nkind = \"permutation\"\nsize = \"{size}\"\n"
    ))
}

#[test]
fn every_new_kind_finishes_a_permutation() {
    for kind in NEW_KINDS {
        let out = run_ok(&permutation(kind, "2MiB", ""), None);
        assert_eq!(out.summary.unfinished_flows, 0, "{kind}");
        assert_eq!(out.summary.flows, 32);
        assert!(
            out.flows.iter().all(|f| f.lb == kind),
            "{kind}: flow table names the balancer"
        );
    }
}

/// REPS §4.3.1: per-packet schemes avoid ECMP's flow collisions. On a
/// permutation ECMP's slowest flow shares an uplink; every per-packet
/// scheme, over several seeds, finishes clearly sooner.
#[test]
fn per_packet_schemes_beat_ecmp_on_a_permutation() {
    for seed in 1..=3 {
        let max_fct = |kind: &str| {
            let mut s = permutation(kind, "2MiB", "");
            s.seed = seed;
            let out = run_ok(&s, None);
            assert_eq!(out.summary.unfinished_flows, 0, "{kind} seed {seed}");
            out.summary.max_fct_us
        };
        let ecmp = max_fct("ecmp");
        for kind in ["ops", "reps", "arcane", "mprdma", "bitmap"] {
            let fct = max_fct(kind);
            assert!(
                fct < 0.8 * ecmp,
                "seed {seed}: {kind} max FCT {fct:.1} us vs ECMP {ecmp:.1} us"
            );
        }
    }
}

/// With a single entropy value every spraying scheme is ECMP: each packet
/// of a flow hashes onto the one path its (src, dst, EV = 0) picks, so the
/// runs are identical packet for packet. Any scheme that ignored
/// `lb.entropy_space` would spread its packets and differ.
#[test]
fn one_entropy_value_makes_every_scheme_ecmp() {
    // MPRDMA's own window rule and send bound would change timing, not paths.
    let extra = "entropy_space = 1\n[lb.mprdma]\ncc = \"dctcp\"\nooo_limit = 0\n";
    let ecmp = run_ok(&permutation("ecmp", "1MiB", extra), None);
    let fcts = |out: &lbsim_core::RunOutput| out.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
    for kind in ["ops", "reps"].into_iter().chain(NEW_KINDS) {
        let out = run_ok(&permutation(kind, "1MiB", extra), None);
        assert_eq!(fcts(&out), fcts(&ecmp), "{kind}");
        assert_eq!(out.counters.events, ecmp.counters.events, "{kind}");
    }
}

/// The EVs a built flow's balancer hands out, under a mix of feedback.
fn evs_handed_out(s: &Scenario) -> Vec<u16> {
    let mut sim = build(s, None).expect("builds");
    let f = &mut sim.flows[0];
    let mut fb = Rng::new(1, StreamTag::Workload, 0);
    let mut st = LbStats::default();
    let mut evs = Vec::new();
    for step in 0..5000u64 {
        let now = SimTime::from_ns(step * 100);
        let ev = f.lb.next_ev(now, &mut f.rng, &mut st);
        evs.push(ev);
        match fb.below(4) {
            0 => {
                f.lb.on_ack(
                    now,
                    &AckEcho {
                        ev,
                        ecn: true,
                        seq: None,
                    },
                    &mut st,
                );
            }
            1 => {
                f.lb.on_ack(
                    now,
                    &AckEcho {
                        ev,
                        ecn: false,
                        seq: None,
                    },
                    &mut st,
                );
            }
            2 if fb.below(50) == 0 => f.lb.on_nack(now, ev, &mut st),
            _ => {}
        }
    }
    evs
}

#[test]
fn entropy_space_bounds_every_spraying_scheme() {
    for kind in ["ops", "reps", "subflows"].into_iter().chain(NEW_KINDS) {
        let evs = evs_handed_out(&permutation(kind, "1MiB", "entropy_space = 32\n"));
        assert!(evs.iter().all(|&ev| ev < 32), "{kind}: {:?}", evs.iter().max());
    }
    // BitMap and ARCANE keep their own 256 inside a larger header space,
    // and use all of it: BitMap round-robin, ARCANE's sequential exploration.
    for kind in ["bitmap", "arcane"] {
        let extra = "[lb.arcane]\nexplore = \"1000pkt\"\n";
        let evs = evs_handed_out(&permutation(kind, "1MiB", extra));
        assert_eq!(evs.iter().max(), Some(&255), "{kind}");
    }
}

#[test]
fn mprdma_flows_run_mprdmas_window_rule_by_default() {
    let mixed = permutation("ops", "1MiB", "[[lb.mix]]\nkind = \"mprdma\"\nfraction = 0.5\n");
    let sim = build(&mixed, None).unwrap();
    for f in &sim.flows {
        let mprdma_cc = matches!(f.cc, Cc::Mprdma(_));
        assert_eq!(
            mprdma_cc,
            f.lb.name() == "mprdma",
            "flow {} ({})",
            f.spec.src,
            f.lb.name()
        );
    }
    let artifact = scenario("preset = \"reps_artifact\"\n[lb]\nkind = \"mprdma\"\n");
    let sim = build(&artifact, None).unwrap();
    assert!(
        matches!(sim.flows[0].cc, Cc::Dctcp(_)),
        "the artifact runs its own MPRDMA_CC rule (lbsim's dctcp) for every flow"
    );
}

/// MP-RDMA's send bound: no new packet at or beyond snd_una + Δ. A lone
/// flow on an idle path then has at most Δ packets out per round trip: it
/// takes npkts / Δ base RTTs (within two), where without the bound it runs
/// at line rate.
#[test]
fn mprdma_ooo_limit_bounds_a_lone_flow_to_delta_packets_per_rtt() {
    let dir = std::env::temp_dir().join(format!("lbsim-ooo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let size = 1u64 << 20;
    std::fs::write(
        dir.join("one.csv"),
        format!("src,dst,size_bytes,start_us\n0,31,{size},0\n"),
    )
    .unwrap();
    let run = |delta: u32| {
        let s = scenario(&format!(
            "{SMALL}[lb]\nkind = \"mprdma\"\n[lb.mprdma]\nooo_limit = {delta}\n\
             [workload]\nkind = \"flows\"\nfile = \"one.csv\"\n"
        ));
        run_ok(&s, Some(&dir))
    };
    let delta = 8u32;
    let bounded = run(delta);
    let rtt = bounded.summary.base_rtt_us;
    let npkts = size.div_ceil(4096 - 64) as f64;
    let rounds = bounded.flows[0].fct_us / rtt;
    let want = npkts / delta as f64;
    assert!(
        rounds >= want - 1.0 && rounds <= want + 2.0,
        "{rounds:.2} RTTs, Δ-bound predicts {want:.2}"
    );
    let free = run(0);
    assert!(
        free.flows[0].fct_us < 0.3 * bounded.flows[0].fct_us,
        "no bound: {} us vs {} us",
        free.flows[0].fct_us,
        bounded.flows[0].fct_us
    );
}

#[test]
fn every_bad_key_in_the_new_tables_is_named() {
    let bad: &[(&str, &str)] = &[
        ("lb.plb.congestion_threshold", "1.0"),
        ("lb.plb.congestion_threshold", "-0.1"),
        ("lb.plb.congestion_threshold", "\"half\""),
        ("lb.plb.congested_rounds", "0"),
        ("lb.plb.congested_rounds", "-1"),
        ("lb.plb.rounds", "2"),
        ("lb.flowlet.timeout", "\"0us\""),
        ("lb.flowlet.timeout", "\"5\""),
        ("lb.flowlet.gap", "\"5us\""),
        ("lb.flowlet.gap_from", "\"recv\""),
        ("lb.flowlet.hold", "\"2rto\""),
        ("lb.bitmap.sends_per_ev", "0"),
        ("lb.mprdma.cc", "\"cubic\""),
        ("lb.mprdma.window", "1"),
        ("lb.mprdma.ooo_limit", "-1"),
        ("lb.mprdma.ooo_limit", "\"32pkt\""),
        ("lb.plb.pause_after_timeout", "\"60\""),
        ("lb.plb.pause_after_timeout", "5"),
        ("lb.bitmap.entropy_space", "0"),
        ("lb.bitmap.entropy_space", "65537"),
        ("lb.bitmap.max_penalty", "0"),
        ("lb.bitmap.max_penalty", "256"),
        ("lb.bitmap.ecn_penalty", "-1"),
        ("lb.bitmap.nack_penalty", "300"),
        ("lb.bitmap.timeout_penalty", "1.5"),
        ("lb.bitmap.decay", "1"),
        ("lb.arcane.entropy_space", "0"),
        ("lb.arcane.buffer_size", "0"),
        ("lb.arcane.buffer_size", "256"),
        ("lb.arcane.explore", "\"lots\""),
        ("lb.arcane.cache", "8"),
        ("lb.subflows.count", "0"),
        ("lb.subflows.count", "-8"),
        ("lb.subflows.window", "\"half\""),
        ("lb.subflows.paths", "8"),
        ("lb.kind", "\"hula\""),
    ];
    for (key, value) in bad {
        let e = Scenario::from_toml_with("", &[(key.to_string(), value.to_string())])
            .and_then(|s| build(&s, None).map(|_| ()))
            .expect_err(&format!("{key} = {value} must be rejected"));
        assert_eq!(&e.key, key, "{key} = {value}: {e}");
    }
    // A bad kind in the mix is named by its index.
    let e = Scenario::from_toml("[[lb.mix]]\nkind = \"hula\"\nfraction = 0.1\n").unwrap_err();
    assert_eq!(e.key, "lb.mix[0].kind");
}

// ---- MPTCP-like subflows (REPS §4.1) -------------------------------------

fn subflow_evs(f: &lbsim_core::transport::Flow) -> Vec<u16> {
    match &f.lb {
        Lb::Subflows(s) => s.evs().to_vec(),
        other => panic!("a subflows message runs the subflows balancer, not {}", other.name()),
    }
}

/// One 8 MiB message from one host to a host under another ToR, split into
/// 8 subflows on an idle tree. All 8 leave through the sender's one NIC,
/// the bottleneck, so the message cannot finish before that NIC has sent
/// every byte of every subflow (W bytes at rate R) and the last packet to
/// leave (at least the smallest packet, s_min) has crossed the remaining
/// h − 1 hops and every link's latency L:
///     FCT ≥ W / R + L + (h − 1) · ser(s_min).
/// Nothing else holds it back: each subflow's window (1.5 BDP) exceeds what
/// it needs at 1/8 of the rate, so the NIC sends back to back. Behind it
/// every link also runs at R, and a FIFO link at R fed at most σ + R·t
/// bytes in any t delays a packet at most σ/R and adds that much jitter:
/// σ starts at one full packet and doubles per hop, so the h − 1 hops add
/// at most (2^(h−1) − 1) full packet times:
///     FCT ≤ W / R + L + 7 · ser(s_full)   (h = 4).
/// Against the single-path ideal the split costs only the headers of 8 last
/// packets instead of one, so the message never beats that ideal by more
/// than the pipelining of its last packet over h hops.
#[test]
fn lone_subflows_message_is_bound_by_the_senders_nic() {
    let s = scenario(&format!(
        "{SMALL}[lb]\nkind = \"subflows\"\n[workload]\nkind = \"incast\"\nsenders = 1\nreceiver = 31\nsize = \"8MiB\"\n"
    ));
    let sim = build(&s, None).unwrap();
    assert_eq!(sim.flows.len(), 8, "8 transport flows");
    assert_eq!(sim.flows.iter().map(|f| f.spec.size).sum::<u64>(), 8 << 20);
    assert!(sim.flows.iter().all(|f| f.message == 0));
    let src = sim.flows[0].spec.src;
    let mut wire = 0u64;
    let mut s_min = u64::MAX;
    let mut latency = SimTime(u64::MAX);
    for f in &sim.flows {
        let evs = subflow_evs(f);
        assert_eq!(evs.len(), 1, "each subflow keeps one fixed EV");
        let (npkts, full, last) = lbsim_core::transport::packetize(f.spec.size, 4096, 64);
        wire += (npkts - 1) * full + last;
        s_min = s_min.min(last);
        let path = sim.net.path(src, 31, evs[0]);
        assert_eq!(path.len(), 4, "host, ToR, spine, ToR");
        latency = latency.min(
            path.iter()
                .map(|&p| sim.net.ports[p as usize].latency)
                .fold(SimTime::ZERO, |a, b| a + b),
        );
    }
    let rate = sim.net.ports[sim.net.path(src, 31, 0)[0] as usize].rate;
    let out = run_ok(&s, None);
    assert_eq!(out.flows.len(), 8);
    assert_eq!(out.messages.len(), 1);
    let m = &out.messages[0];
    assert!(m.finished && m.subflows == 8 && m.size_bytes == 8 << 20);
    let last_arrival = out.flows.iter().map(|f| f.receiver_finish_us).fold(0.0, f64::max);
    assert_eq!(m.receiver_finish_us, last_arrival);
    assert_eq!(m.fct_us, last_arrival - out.flows[0].start_us);
    let h = 4;
    let base = rate.serialization(wire) + latency;
    let lower = (base + rate.serialization(s_min) * (h - 1)).as_us_f64();
    let upper = (base + rate.serialization(4096) * 7).as_us_f64();
    assert!(
        m.fct_us >= lower && m.fct_us <= upper,
        "FCT {} us outside [{lower}, {upper}]",
        m.fct_us
    );
    // The message's ideal is the whole message alone on one path; each subflow keeps its own.
    let ideal = |size| {
        let (n, full, last) = lbsim_core::transport::packetize(size, 4096, 64);
        sim.net.ideal_fct(src, 31, n, full, last).as_us_f64()
    };
    assert_eq!(m.ideal_fct_us, ideal(8 << 20));
    assert!(out.flows.iter().all(|f| f.ideal_fct_us == ideal(1 << 20)));
    assert!(m.fct_us >= m.ideal_fct_us - (rate.serialization(4096) * h).as_us_f64());
    assert_eq!(out.summary.max_fct_us, m.fct_us);
    assert_eq!(out.summary.flows, 1, "the summary counts messages");
}

/// REPS Fig. 2 (permutation): 8 fixed paths per message spread the load
/// better than one (ECMP), but not as well as spraying every packet (OPS).
/// Holds on every seed tried (1..=5) and every window choice.
#[test]
fn subflows_sit_between_ecmp_and_ops_on_a_permutation() {
    for seed in 1..=3 {
        let max_fct = |kind: &str, extra: &str| {
            let mut s = permutation(kind, "2MiB", extra);
            s.seed = seed;
            let out = run_ok(&s, None);
            assert_eq!(out.summary.unfinished_flows, 0, "{kind} seed {seed}");
            out.summary.max_fct_us
        };
        let (ecmp, ops) = (max_fct("ecmp", ""), max_fct("ops", ""));
        for window in ["full", "share", "single"] {
            let sub = max_fct("subflows", &format!("[lb.subflows]\nwindow = \"{window}\"\n"));
            assert!(
                ops < sub && sub < ecmp,
                "seed {seed}, {window}: OPS {ops:.1} < subflows {sub:.1} < ECMP {ecmp:.1} us"
            );
        }
    }
}

/// Ring AllReduce with every message split: each step's subflows start
/// exactly when the last subflow of the message they wait for has arrived,
/// never earlier, and the steps table times messages.
#[test]
fn subflows_of_a_step_wait_for_every_subflow_of_the_last() {
    let s = scenario(
        "[topology]\nhosts = 16\nradix = 8\n[lb]\nkind = \"subflows\"\n\
         [workload]\nkind = \"ring_allreduce\"\nsize = \"1MiB\"\n",
    );
    let out = run_ok(&s, None);
    let n = 16;
    assert_eq!(out.messages.len(), 2 * (n - 1) * n);
    assert_eq!(out.summary.flows, out.messages.len());
    assert_eq!(out.summary.unfinished_flows, 0);
    let chunk = (1u64 << 20) / n as u64;
    assert!(out.messages.iter().all(|m| m.subflows == 8 && m.size_bytes == chunk));
    let arrival = |message: usize| {
        out.flows
            .iter()
            .filter(|f| f.message as usize == message)
            .map(|f| f.receiver_finish_us)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    // Message ids: step · n + rank; step s of rank r waits for step s − 1 of rank r − 1.
    for f in &out.flows {
        let (step, rank) = (f.message as usize / n, f.message as usize % n);
        if step > 0 {
            let before = (step - 1) * n + (rank + n - 1) % n;
            assert_eq!(f.start_us, arrival(before), "flow {} (message {})", f.id, f.message);
        }
    }
    let steps = out.tables.iter().find(|t| t.name == "steps").unwrap();
    let Some(lbsim_core::table::Column::U32(count)) = steps.column("flows") else {
        panic!("steps.flows")
    };
    assert!(
        count.iter().all(|&c| c as usize == n),
        "the steps table counts messages"
    );
    let last = out.flows.iter().map(|f| f.receiver_finish_us).fold(0.0, f64::max);
    assert_eq!(out.summary.collective_us, last - out.flows[0].start_us);
}

/// Without subflows every message is one flow: the message column is the
/// flow's id, no messages table is written, and message records repeat the
/// flows' numbers.
#[test]
fn without_subflows_messages_are_the_flows() {
    let out = run_ok(&permutation("reps", "1MiB", ""), None);
    assert!(out.flows.iter().all(|f| f.message == f.id));
    assert!(out.tables.iter().all(|t| t.name != "messages"));
    for (f, m) in out.flows.iter().zip(&out.messages) {
        assert_eq!(
            (f.fct_us, f.slowdown, f.ideal_fct_us),
            (m.fct_us, m.slowdown, m.ideal_fct_us)
        );
    }
}

/// Subflows draw from streams of their own: in a mix, the ECMP messages'
/// flows pick the same EVs as in an all-ECMP run.
#[test]
fn subflows_leave_other_flows_draws_alone() {
    let ecmp = build(&permutation("ecmp", "1MiB", ""), None).unwrap();
    let mixed = build(
        &permutation("ecmp", "1MiB", "[[lb.mix]]\nkind = \"subflows\"\nfraction = 0.5\n"),
        None,
    )
    .unwrap();
    assert_eq!(mixed.flows.len(), 16 + 16 * 8);
    let mut st = LbStats::default();
    let mut ev = |f: &mut lbsim_core::transport::Flow| f.lb.next_ev(SimTime::ZERO, &mut f.rng.clone(), &mut st);
    let mut plain = ecmp.flows;
    for mut f in mixed.flows.into_iter().filter(|f| f.lb.name() == "ecmp") {
        let m = f.message as usize;
        assert_eq!(ev(&mut f), ev(&mut plain[m]), "message {m}");
    }
}

/// `window`: "full" gives each subflow `cc.initial_cwnd`, "share" an eighth
/// of it; "single" keeps the message on one flow cycling over 8 EVs.
#[test]
fn subflow_windows() {
    let cwnd = |window: &str| {
        let s = permutation("subflows", "1MiB", &format!("[lb.subflows]\nwindow = \"{window}\"\n"));
        let sim = build(&s, None).unwrap();
        let windows: Vec<u64> = sim
            .flows
            .iter()
            .map(|f| match &f.cc {
                Cc::Dctcp(c) => c.cwnd,
                _ => panic!("cc.kind is dctcp"),
            })
            .collect();
        (sim, windows)
    };
    let (full, w_full) = cwnd("full");
    let (_, w_share) = cwnd("share");
    assert_eq!(full.flows.len(), 32 * 8);
    assert!(w_full.iter().all(|&w| w == w_full[0]));
    assert!(w_share.iter().all(|&w| w == w_full[0] / 8));
    let (single, w_single) = cwnd("single");
    assert_eq!(single.flows.len(), 32);
    assert!(w_single.iter().all(|&w| w == w_full[0]));
    for mut f in single.flows {
        let evs = subflow_evs(&f);
        assert_eq!(evs.len(), 8);
        let mut st = LbStats::default();
        for i in 0..16 {
            assert_eq!(f.lb.next_ev(SimTime::ZERO, &mut f.rng, &mut st), evs[i % 8]);
        }
    }
}
