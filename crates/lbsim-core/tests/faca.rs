//! FaCa (`lb.kind = "faca"`, FaCa §5): hosts probe the paths with INT
//! probes, learn which entropy value takes which path, and pin each new
//! flow to the EV Flowing & Jumping picks.

mod common;

use common::{assert_conservation, run_ok, scenario};
use lbsim_core::build::build;
use lbsim_core::lb::faca::agent::Agent;
use lbsim_core::net::{Node, Port};
use lbsim_core::{Scenario, ScenarioError, Simulation};
use std::path::{Path, PathBuf};

/// A scratch directory holding `f.csv` with these flows (src, dst, bytes, start in us).
fn flows_dir(tag: &str, flows: &[(u32, u32, u64, u64)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lbsim-faca-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = flows.iter().map(|(s, d, b, t)| format!("{s},{d},{b},{t}\n")).collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    dir
}

/// Every flow is placed, however short (`lb.faca.min_flow`; "auto" leaves
/// flows under 1 MB, one 20 us probe interval at 400 Gb/s, to ECMP).
const ALL_FLOWS: &str = "[lb.faca]\nmin_flow = \"0B\"";

/// Two racks of 8 hosts, 4 uplinks each (4 spines), 400 Gb/s.
fn two_racks(lb: &str, seed: u64, extra: &str) -> String {
    format!(
        "seed = {seed}\n[topology]\nhosts = 16\nradix = 12\nhosts_per_tor = 8\nuplinks_per_tor = 4\n\
         oversubscription = 2\n[lb]\nkind = \"{lb}\"\n{extra}\n[workload]\nkind = \"flows\"\nfile = \"f.csv\"\n"
    )
}

fn run_sim(text: &str, dir: &Path) -> Simulation {
    let mut sim = build(&scenario(text), Some(dir)).expect("builds");
    sim.run();
    sim
}

fn agent(sim: &Simulation) -> &Agent {
    sim.lb_agent()
        .expect("a FaCa run has an agent")
        .as_any()
        .downcast_ref::<Agent>()
        .unwrap()
}

fn switch_of(p: &Port) -> u32 {
    match p.from {
        Node::Switch(s) => s,
        Node::Host(_) => panic!("{} leaves a host", p.name),
    }
}

/// Every path host 0 learned to host 15 is, hop by hop, the switches and
/// ports `Network::path` says each of its EVs crosses (the NIC excepted: a
/// host writes no record); the 4 spines give 4 distinct paths, all found.
#[test]
fn int_records_list_exactly_the_switches_a_probe_crossed() {
    let dir = flows_dir("int", &[(0, 15, 100_000, 200)]);
    let sim = run_sim(&two_racks("faca", 1, ALL_FLOWS), &dir);
    let table = agent(&sim).table(0, 15).expect("host 0 probed host 15");
    assert_eq!(table.paths.len(), 4, "one path per spine");
    let mut evs = 0;
    for p in &table.paths {
        assert!(!p.evs.is_empty());
        for &ev in &p.evs {
            let ports = sim.net.path(0, 15, ev);
            let want: Vec<(u32, u32)> = ports[1..]
                .iter()
                .map(|&q| (switch_of(&sim.net.ports[q as usize]), q))
                .collect();
            assert_eq!(p.hops, want, "ev {ev}");
            evs += 1;
        }
    }
    // Discovery tried 8 EVs per path (32), all distinct: each maps to one path.
    assert_eq!(evs, 32);
    assert!(sim.flow_records()[0].finished);
}

/// The flow's data goes exactly where its pinned EV hashes: every port of
/// that path sent at least the flow's packets, and the other uplinks of the
/// source's ToR carried probes only.
#[test]
fn a_pinned_flow_sends_every_packet_on_the_chosen_path() {
    let size = 1_000_000u64;
    let dir = flows_dir("pin", &[(0, 15, size, 200)]);
    let sim = run_sim(&two_racks("faca", 3, ""), &dir);
    let rec = &sim.flow_records()[0];
    assert!(rec.finished && rec.retransmissions == 0);
    let summary = sim.summary(&sim.message_records());
    assert_eq!(summary.host_lb["faca.placed"], 1.0);
    assert_eq!(summary.host_lb["faca.fallbacks"], 0.0);
    let lbsim_core::lb::Lb::Faca(b) = &sim.flows[0].lb else {
        panic!("a FaCa flow")
    };
    let path = sim.net.path(0, 15, b.ev());
    let npkts = size.div_ceil(4096 - 64);
    for &q in &path {
        let port = &sim.net.ports[q as usize];
        assert!(
            port.tx_packets >= npkts,
            "{} sent {} < {npkts}",
            port.name,
            port.tx_packets
        );
    }
    let tor = &sim.net.switches[switch_of(&sim.net.ports[path[1] as usize]) as usize];
    for &up in &tor.up {
        if up != path[1] {
            let port = &sim.net.ports[up as usize];
            assert!(
                port.tx_packets < 40,
                "{} sent {}: probes only",
                port.name,
                port.tx_packets
            );
        }
    }
}

/// Bytes each uplink of rack 0's ToR sent.
fn uplink_bytes(sim: &Simulation) -> Vec<u64> {
    let tor = &sim.net.switches[sim.net.hosts[0].tor as usize];
    tor.up.iter().map(|&p| sim.net.ports[p as usize].tx_bytes).collect()
}

/// Two long flows start at 0 (FaCa knows nothing yet: they keep the random
/// EV they were built with, the very EV ECMP draws on the same seed), then
/// two more from other hosts of the rack at 60 us and 120 us, all 20 MB to
/// rack 1: by then FaCa has probed the loaded paths. Over 12 seeds the
/// busiest uplink of rack 0 carries less under FaCa than under ECMP, and
/// FaCa's late flows share an uplink with another flow less often.
#[test]
fn new_flows_avoid_loaded_paths_better_than_ecmp() {
    let mb = 20_000_000;
    let flows = [(0, 8, mb, 0), (1, 9, mb, 0), (2, 10, mb, 60), (3, 11, mb, 120)];
    let dir = flows_dir("balance", &flows);
    let (mut worst, mut shared) = ([0u64; 2], [0u32; 2]);
    for seed in 0..12 {
        for (i, lb) in ["ecmp", "faca"].iter().enumerate() {
            let sim = run_sim(&two_racks(lb, seed, ""), &dir);
            assert!(sim.flow_records().iter().all(|f| f.finished));
            let up = uplink_bytes(&sim);
            worst[i] += up.iter().max().unwrap();
            // Uplinks that carried more than one flow's bytes (probes are a few kB).
            shared[i] += up.iter().filter(|&&b| b > mb + mb / 2).count() as u32;
        }
    }
    eprintln!(
        "busiest uplink, summed over seeds: ecmp {} faca {}; shared uplinks: {shared:?}",
        worst[0], worst[1]
    );
    assert!(worst[1] < worst[0], "faca {} vs ecmp {}", worst[1], worst[0]);
    assert!(shared[1] < shared[0], "{shared:?}");
}

/// Probes and echoes are counted in the packet counters and the summary;
/// on a permutation of late-starting flows they stay under 1 % of the NICs.
#[test]
fn probe_overhead_is_counted() {
    let flows: Vec<(u32, u32, u64, u64)> = (0..16)
        .map(|h| (h, (h + 8) % 16, 2_000_000, 100 + 10 * h as u64))
        .collect();
    let dir = flows_dir("overhead", &flows);
    let out = run_ok(&scenario(&two_racks("faca", 5, "")), Some(&dir));
    let s = &out.summary.host_lb;
    let (probes, echoes) = (s["faca.probes"], s["faca.echoes"]);
    assert!(probes > 0.0);
    assert_eq!(probes, echoes, "no probe lost");
    assert_eq!(out.counters.probes_sent as f64, probes + echoes);
    assert_eq!(s["faca.placed"], 16.0);
    // A probe leaves at 64 B and gains 16 B per switch (3 on the way between racks).
    assert_eq!(s["faca.probe_bytes"], probes * 64.0 + echoes * (64.0 + 3.0 * 16.0));
    eprintln!("{s:?}");
    assert!(s["faca.overhead"] > 0.0 && s["faca.overhead"] < 0.01, "{s:?}");
    assert!(s["faca.overhead_max_host"] < 0.01, "{s:?}");
    assert_eq!(out.summary.switch_lb["faca.int_records"] as f64, probes * 3.0);
    assert_conservation(&out);
}

/// Issue 46: on every preset and on 2 and 3 tiers, a trace of mostly short
/// flows costs FaCa's probes under the documented 1 % of the NICs (mean and
/// busiest host): flows under one probe interval at line rate (`lb.faca.min_flow`
/// "auto") are neither probed for nor placed. Probing for every flow, as
/// before, cost 9.3 % on the 3-tier `rdma_irn` tree with AliStorage.
#[test]
fn probe_overhead_stays_under_one_percent_everywhere() {
    let trees = [
        "[topology]\nhosts = 32\nradix = 24\nhosts_per_tor = 8\nuplinks_per_tor = 8\n",
        "[topology]\ntiers = 3\nhosts = 32\nradix = 8\nhosts_per_tor = 4\nuplinks_per_tor = 4\n",
    ];
    for preset in ["reps_paper", "reps_artifact", "rdma_lossless", "rdma_irn"] {
        for (t, tree) in trees.iter().enumerate() {
            for cdf in ["alistorage2019", "websearch"] {
                let text = format!(
                    "preset = \"{preset}\"\n{tree}[lb]\nkind = \"faca\"\n\
                     [workload]\nkind = \"trace\"\ncdf = \"{cdf}\"\nload = 0.5\nduration = \"200us\"\n"
                );
                let out = lbsim_core::run(&scenario(&text), None).unwrap();
                let s = &out.summary.host_lb;
                let case = format!("{preset}, tree {t}, {cdf}: {s:?}");
                assert!(
                    s["faca.overhead"] < 0.01 && s["faca.overhead_max_host"] < 0.01,
                    "{case}"
                );
                assert!(s["faca.short"] > 0.0, "{case}");
                if cdf == "websearch" {
                    assert!(s["faca.placed"] > 0.0, "large flows are still placed: {case}");
                }
            }
        }
    }
}

fn error_of(extra: &str) -> ScenarioError {
    let dir = flows_dir("errors", &[(0, 15, 1000, 0)]);
    let text = two_racks("faca", 1, extra);
    match Scenario::from_toml(&text).and_then(|s| build(&s, Some(&dir)).map(|_| ())) {
        Err(e) => e,
        Ok(()) => panic!("accepted: {extra}"),
    }
}

#[test]
fn bad_parameters_name_their_key() {
    for (extra, key) in [
        ("[lb.faca]\nprobe_interval = \"0us\"", "lb.faca.probe_interval"),
        ("[lb.faca]\nprobe_interval = \"-5us\"", "lb.faca.probe_interval"),
        ("[lb.faca]\nk = -0.5", "lb.faca.k"),
        ("[lb.faca]\nk = \"fast\"", "lb.faca.k"),
        ("[lb.faca]\nprobe_evs = 0", "lb.faca.probe_evs"),
        ("[lb.faca]\nprobe_rounds = 0", "lb.faca.probe_rounds"),
        ("[lb.faca]\nbeta = \"heavy\"", "lb.faca.beta"),
        ("[lb.faca]\nprobe_bytes = 10", "lb.faca.probe_bytes"),
        ("[lb.faca]\nmin_flow = \"10%\"", "lb.faca.min_flow"),
        ("[lb.faca]\nmin_flow = \"lots\"", "lb.faca.min_flow"),
        ("[lb.faca]\nmin_flow = \"1e12bdp\"", "lb.faca.min_flow"),
        ("[lb.faca]\nprobes = 3", "lb.faca"),
    ] {
        let e = error_of(extra);
        assert!(e.key.starts_with(key), "{extra}: {e}");
    }
}

/// Same seed, same everything: flows, counters, FaCa's summary.
#[test]
fn same_seed_same_results() {
    let flows: Vec<(u32, u32, u64, u64)> = (0..8).map(|h| (h, 15 - h, 500_000, 30 * h as u64)).collect();
    let dir = flows_dir("determinism", &flows);
    let text = two_racks("faca", 9, "");
    let a = run_ok(&scenario(&text), Some(&dir));
    let b = run_ok(&scenario(&text), Some(&dir));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters.probes_sent, b.counters.probes_sent);
    assert_eq!(a.summary.host_lb, b.summary.host_lb);
    assert_eq!(a.summary.switch_lb, b.summary.switch_lb);
}

/// Flows that start at t = 0 find nothing in the table: each keeps the
/// random EV it was built with, the very EV ECMP draws for it, so the run is
/// ECMP's flow for flow; no probe is sent since no flow is left to place.
#[test]
fn flows_before_any_echo_fall_back_to_ecmp() {
    let flows: Vec<(u32, u32, u64, u64)> = (0..8).map(|h| (h, 8 + (h + 3) % 8, 300_000, 0)).collect();
    let dir = flows_dir("fallback", &flows);
    let faca = run_ok(&scenario(&two_racks("faca", 4, ALL_FLOWS)), Some(&dir));
    let ecmp = run_ok(&scenario(&two_racks("ecmp", 4, "")), Some(&dir));
    assert_eq!(faca.summary.host_lb["faca.fallbacks"], 8.0);
    assert_eq!(faca.summary.host_lb["faca.probes"], 0.0);
    let fct = |o: &lbsim_core::RunOutput| o.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
    assert_eq!(fct(&faca), fct(&ecmp));
}
