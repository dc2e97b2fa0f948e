//! The sender-side baselines of REPS §4.1 and ARCANE (PLB, Flowlet,
//! MPRDMA, BitMap, ARCANE) on small trees: they finish, the per-packet ones
//! beat per-flow ECMP, `lb.entropy_space` reaches every spraying scheme,
//! and every bad key of their tables is named.

mod common;
use common::{run_ok, scenario};
use lbsim_core::cc::CongestionControl;
use lbsim_core::lb::LbStats;
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
    let extra = "entropy_space = 1\n[lb.mprdma]\ncc = \"dctcp\"\n";
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
            0 => f.lb.on_ack(now, ev, true, &mut st),
            1 => f.lb.on_ack(now, ev, false, &mut st),
            2 if fb.below(50) == 0 => f.lb.on_nack(now, ev, &mut st),
            _ => {}
        }
    }
    evs
}

#[test]
fn entropy_space_bounds_every_spraying_scheme() {
    for kind in ["ops", "reps"].into_iter().chain(NEW_KINDS) {
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
        let mprdma_cc = matches!(f.cc, CongestionControl::Mprdma(_));
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
        matches!(sim.flows[0].cc, CongestionControl::Dctcp(_)),
        "the artifact runs its own MPRDMA_CC rule (lbsim's dctcp) for every flow"
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
        ("lb.mprdma.cc", "\"cubic\""),
        ("lb.mprdma.window", "1"),
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
        ("lb.kind", "\"letflow\""),
    ];
    for (key, value) in bad {
        let e = Scenario::from_toml_with("", &[(key.to_string(), value.to_string())])
            .and_then(|s| build(&s, None).map(|_| ()))
            .expect_err(&format!("{key} = {value} must be rejected"));
        assert_eq!(&e.key, key, "{key} = {value}: {e}");
    }
    // A bad kind in the mix is named by its index.
    let e = Scenario::from_toml("[[lb.mix]]\nkind = \"letflow\"\nfraction = 0.1\n").unwrap_err();
    assert_eq!(e.key, "lb.mix[0].kind");
}
