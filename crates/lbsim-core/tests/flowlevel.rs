//! The flow-level mode (`lbsim_core::flowlevel`): exact max-min rates on
//! fat trees, the packet engine's paths, agreement with packet-level
//! throughput in steady state, and its errors.

mod common;

use common::scenario;
use lbsim_core::flowlevel::{self, paths::candidates, FlowLevelOutput};
use lbsim_core::net::PortId;
use lbsim_core::{build, Scenario};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn flow_level(s: &Scenario, dir: Option<&std::path::Path>) -> FlowLevelOutput {
    flowlevel::run(s, dir).unwrap_or_else(|e| panic!("flow-level run: {e}"))
}

/// A folder with `f.csv` holding these flows (src, dst), each `size` bytes from 0.
fn flows_csv(tag: &str, pairs: &[(u32, u32)], size: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lbsim-flowlevel-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = pairs.iter().map(|(s, d)| format!("{s},{d},{size},0\n")).collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    dir
}

/// One host per ToR: every flow of a permutation is alone on every port it
/// crosses (its NIC, its ToR's uplink, the spine's link down to the
/// destination's ToR, that ToR's link to the host), whatever ECMP picks. So
/// every flow gets the NIC's line rate, to the bit.
#[test]
fn permutation_with_own_paths_gets_line_rate() {
    let s = scenario(
        "[topology]\nhosts = 8\nradix = 8\nhosts_per_tor = 1\nuplinks_per_tor = 4\n\
         [lb]\nkind = \"ecmp\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n",
    );
    let out = flow_level(&s, None);
    assert_eq!(out.flows.len(), 8);
    let line = 400e9; // the preset's link rate (REPS §4.1)
    for f in &out.flows {
        assert_eq!(f.rate_bps, line, "flow {}: {:?}", f.id, f);
        assert!(!f.congested);
    }
    assert_eq!(out.summary.congestion_rate, 0.0);
    assert_eq!(out.summary.total_rate_bps, 8.0 * line);
    // Every flow's path is one of its candidate paths.
    let net = build::build(&s, None).unwrap().net;
    for f in &out.flows {
        assert!(candidates(&net, f.src, f.dst).contains(&f.path));
    }
}

/// N senders to one receiver: the receiver's downlink is every flow's
/// bottleneck, shared N ways: line rate / N each, exactly; no fabric
/// collision is counted as congestion (the host link is not the balancer's).
#[test]
fn incast_shares_the_receiver_link() {
    for n in [3u32, 7, 20] {
        let s = scenario(&format!(
            "seed = 5\n[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"incast\"\nsize = \"1MiB\"\nsenders = {n}\nreceiver = 9\n"
        ));
        let out = flow_level(&s, None);
        assert_eq!(out.flows.len(), n as usize);
        let down = out.ports.iter().find(|p| p.name == "t0_1->h9").unwrap();
        for f in &out.flows {
            assert_eq!(f.rate_bps, 400e9 / n as f64, "{n} senders, flow {}", f.id);
            assert_eq!(f.bottleneck, Some(down.id));
        }
        assert_eq!(down.flows, n);
        assert_eq!(out.summary.host_limited_flows, n as usize);
        assert_eq!(out.summary.congestion_rate, 0.0);
        let cls = &out.summary.classes["t0->host"];
        assert_eq!(cls.max_bps, down.throughput_bps);
        assert_eq!(cls.drop_bps, cls.max_bps - cls.min_bps);
    }
}

/// The ports a packet-level run's packets crossed (those that sent bytes).
fn packet_ports(s: &Scenario, dir: Option<&std::path::Path>) -> (BTreeSet<PortId>, Vec<u64>) {
    let mut sim = build::build(s, dir).unwrap();
    sim.run();
    let bytes: Vec<u64> = sim.net.ports.iter().map(|p| p.tx_bytes).collect();
    let used = (0..bytes.len() as PortId).filter(|&p| bytes[p as usize] > 0).collect();
    (used, bytes)
}

/// The flow-level paths are the packet engine's: a short packet-level run
/// of the same scenario and seed sends bytes on exactly the ports of the
/// flows' data paths and of their ACKs' paths back (the same entropy value
/// hashed from the other end), each data port at least the flows' bytes.
/// For ECMP, and for WCMP with uneven weights (ToR uplinks weighted
/// 1:0:3:0, so its paths differ from ECMP's: checked too).
#[test]
fn paths_are_the_packet_engines() {
    let weights = "[lb.wcmp]\nweights = [1, 0, 3, 0]\n";
    for seed in [1u64, 2, 3] {
        let mut paths = Vec::new();
        for (lb, extra) in [("ecmp", ""), ("wcmp", weights)] {
            let s = scenario(&format!(
                "seed = {seed}\n[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"{lb}\"\n{extra}\
                 [workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n"
            ));
            let out = flow_level(&s, None);
            let mut net = build::build(&s, None).unwrap().net;
            let mut expect = BTreeSet::new();
            let (used, bytes) = packet_ports(&s, None);
            for f in &out.flows {
                expect.extend(f.path.iter().copied());
                let back = net.path_routed(f.dst, f.src, ev_of(&s, f.id), route_of(&s)).unwrap();
                expect.extend(back);
                for &p in &f.path {
                    assert!(
                        bytes[p as usize] >= 64 << 10,
                        "{lb} seed {seed}: port {p} sent too little"
                    );
                }
            }
            assert_eq!(used, expect, "{lb} seed {seed}: ports used differ");
            paths.push(out.flows.iter().map(|f| f.path.clone()).collect::<Vec<_>>());
        }
        assert_ne!(paths[0], paths[1], "seed {seed}: WCMP's weights should move some flow");
    }
}

/// The entropy value the packet engine's flow `id` carries (its first data packet's).
fn ev_of(s: &Scenario, id: u32) -> u16 {
    use lbsim_core::lb::{LbStats, LoadBalancer};
    let mut sim = build::build(s, None).unwrap();
    let f = &mut sim.flows[id as usize];
    f.lb.next_ev(lbsim_core::time::SimTime::ZERO, &mut f.rng, &mut LbStats::default())
}

/// The route class of the scenario's flows (0: ECMP's hash; WCMP's policy class otherwise).
fn route_of(s: &Scenario) -> u8 {
    build::build(s, None).unwrap().flows[0].route
}

/// Same scenario and seed, the same output to the bit.
#[test]
fn deterministic() {
    let s = scenario(
        "seed = 11\n[topology]\nhosts = 128\n[lb]\nkind = \"ecmp\"\n[workload]\nkind = \"permutation\"\nsize = \"1MiB\"\n",
    );
    let (a, b) = (flow_level(&s, None), flow_level(&s, None));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.ports, b.ports);
    assert_eq!(a.summary_json(), b.summary_json());
    assert_eq!(a.tables(), b.tables());
    // A permutation under ECMP on 128 hosts collides somewhere (REPS §2.2).
    assert!(a.summary.congested_flows > 0);
}

/// Balancers without a flow-level model, and failures, are refused naming the key.
#[test]
fn bad_input_names_the_key() {
    let e = flowlevel::run(&scenario("[lb]\nkind = \"reps\""), None).err().unwrap();
    assert_eq!(e.key, "lb.kind");
    assert!(e.message.contains("only \"ecmp\", \"wcmp\" and \"faca\""), "{e}");
    assert!(e.message.contains("reps"), "{e}");
    let mix = "[lb]\nkind = \"ecmp\"\n[[lb.mix]]\nkind = \"ops\"\nfraction = 0.5\n";
    let e = flowlevel::run(&scenario(mix), None).err().unwrap();
    assert_eq!(e.key, "lb.mix[0].kind");
    let fail = "[lb]\nkind = \"ecmp\"\n[[failures]]\nlink = \"t0_0->t1_0\"\nat = \"0us\"\nduration = \"10us\"\n";
    let e = flowlevel::run(&scenario(fail), None).err().unwrap();
    assert_eq!(e.key, "failures");
}

/// Steady state against the packet engine. Four long flows from rack 0's
/// hosts to rack 1's (h0..h3 → h4..h7, 4 hosts and 4 uplinks per ToR), under
/// ECMP with the first seed whose paths collide unevenly (some flow alone on
/// its spine, some sharing one): each flow has one bottleneck (the ToR
/// uplink it shares is shared with the same flows on the spine's link down),
/// where DCTCP with equal RTTs converges to equal shares, which is max-min.
/// Each flow's wire throughput on its destination's downlink (which carries
/// only its data) from 1 ms to 3 ms is within 5 % of its max-min rate.
#[test]
fn packet_level_steady_state_agrees() {
    let pairs: Vec<(u32, u32)> = (0..4).map(|i| (i, 4 + i)).collect();
    let dir = flows_csv("steady", &pairs, 4 << 30);
    let text = |seed: u64, stop: &str| {
        format!(
            "seed = {seed}\nstop_at = \"{stop}\"\n[topology]\nhosts = 16\nradix = 8\n[lb]\nkind = \"ecmp\"\n\
             [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n"
        )
    };
    let (seed, fl) = (1..100u64)
        .map(|seed| (seed, flow_level(&scenario(&text(seed, "1ms")), Some(&dir))))
        .find(|(_, o)| o.summary.min_rate_bps < o.summary.max_rate_bps && o.summary.max_rate_bps == 400e9)
        .expect("some seed collides unevenly");
    assert!(fl.summary.congested_flows > 0);
    let (t1, t2) = (1e-3, 3e-3);
    let (_, at1) = packet_ports(&scenario(&text(seed, "1ms")), Some(&dir));
    let (_, at2) = packet_ports(&scenario(&text(seed, "3ms")), Some(&dir));
    for f in &fl.flows {
        let down = *f.path.last().unwrap() as usize;
        let packet = (at2[down] - at1[down]) as f64 * 8.0 / (t2 - t1);
        let err = (packet - f.rate_bps).abs() / f.rate_bps;
        eprintln!(
            "seed {seed} flow {} {}: packet {:.2} Gb/s, max-min {:.2} Gb/s ({:+.2} %)",
            f.id,
            f.nodes,
            packet / 1e9,
            f.rate_bps / 1e9,
            (packet / f.rate_bps - 1.0) * 100.0
        );
        assert!(
            err < 0.05,
            "flow {}: packet {packet:.3e} vs max-min {:.3e}",
            f.id,
            f.rate_bps
        );
    }
}

/// WCMP's default weights are the uplinks' capacities after `[[rate_overrides]]`:
/// with every ToR's uplink to t1_0 at 1 Gb/s (weight 1 000 against 400 000 for
/// each of the 7 others), ECMP still sends some of the 128 flows through
/// t1_0, WCMP none (an expected 0.05 flows), in the flow-level mode and in a
/// packet-level run alike (no byte, data or ACK, on those uplinks).
#[test]
fn wcmp_weights_follow_rate_overrides() {
    let slow: String = (0..16)
        .map(|t| format!("[[rate_overrides]]\nlink = \"t0_{t}->t1_0\"\nrate = \"1Gbps\"\n"))
        .collect();
    let via_t1_0 = |lb: &str| {
        let s = scenario(&format!(
            "[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n{slow}"
        ));
        let fl = flow_level(&s, None);
        let n = fl.flows.iter().filter(|f| f.nodes.contains(">t1_0>")).count();
        (n, s)
    };
    assert!(via_t1_0("ecmp").0 > 0);
    let (n, s) = via_t1_0("wcmp");
    assert_eq!(n, 0);
    let (_, bytes) = packet_ports(&s, None);
    let net = build::build(&s, None).unwrap().net;
    for t in 0..16 {
        let p = net.port_by_name(&format!("t0_{t}->t1_0")).unwrap();
        assert_eq!(bytes[p as usize], 0, "t0_{t}->t1_0");
    }
}

/// FaCa in the flow-level mode (`paths::FacaPlacement`): Flowing & Jumping over
/// the candidate paths with the flows placed before as the load. Rack 0's four
/// hosts send one flow each to rack 1 over 4 spines, and back: a flow never
/// lands on a path strictly heavier than both its ring neighbours, every
/// placement is a candidate path, and over 20 seeds FaCa leaves fewer flows
/// sharing a full uplink, and the uplinks more even, than ECMP on the same
/// flows. (With more flows than uplinks, perfect balance fills every uplink
/// with several flows: the congestion rate then measures load, not balance.)
#[test]
fn faca_places_by_flowing_and_jumping() {
    let text = |kind: &str, seed: u32| {
        format!(
            "seed = {seed}\n[topology]\nhosts = 8\nradix = 8\nhosts_per_tor = 4\nuplinks_per_tor = 4\n\
             [lb]\nkind = \"{kind}\"\n[workload]\nkind = \"tornado\"\nsize = \"1MiB\"\n"
        )
    };
    let (mut faca_congested, mut ecmp_congested, mut faca_std, mut ecmp_std) = (0, 0, 0.0, 0.0);
    for seed in 1..=20 {
        let s = scenario(&text("faca", seed));
        let out = flow_level(&s, None);
        assert_eq!(out.flows.len(), 8);
        let net = build::build(&s, None).unwrap().net;
        // Replay the placements: the flows of rack 0 to rack 1, in id order, by uplink.
        let mut per_uplink = [0u32; 4];
        for f in out.flows.iter().filter(|f| f.src < 4) {
            let ring = candidates(&net, f.src, f.dst);
            let k = ring.iter().position(|p| *p == f.path).expect("a candidate path");
            let (l, r) = ((k + 3) % 4, (k + 1) % 4);
            let heavier_than_both = per_uplink[k] > per_uplink[l] && per_uplink[k] > per_uplink[r];
            assert!(
                !heavier_than_both,
                "seed {seed}, flow {}: loads {per_uplink:?}, path {k}",
                f.id
            );
            per_uplink[k] += 1;
        }
        let e = flow_level(&scenario(&text("ecmp", seed)), None);
        faca_congested += out.summary.congested_flows;
        ecmp_congested += e.summary.congested_flows;
        faca_std += out.summary.classes["t0->t1"].std_bps;
        ecmp_std += e.summary.classes["t0->t1"].std_bps;
        // Deterministic: the same seed places the same way.
        let again = flow_level(&s, None);
        assert!(out.flows.iter().zip(&again.flows).all(|(a, b)| a.path == b.path));
    }
    assert!(
        faca_congested < ecmp_congested,
        "FaCa {faca_congested} vs ECMP {ecmp_congested}"
    );
    assert!(faca_std < ecmp_std, "FaCa {faca_std} vs ECMP {ecmp_std}");
}
