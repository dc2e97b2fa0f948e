//! The RDMA fabric's switch: a shared buffer with dynamic thresholds and
//! PFC, checked against exact answers.

mod common;

use common::{run_ok, scenario};
use lbsim_core::build::build;
use lbsim_core::net::{Network, QueueDiscipline};
use lbsim_core::Scenario;
use std::path::PathBuf;

/// 16 hosts at 100 Gb/s, 1 us links, no switch latency: two ToRs of 8
/// hosts and 8 spines (the ConWeave artifact's link settings), packets of
/// 1000 B payload and 48 B headers. Windows are far above the BDP and ECN
/// never marks, so only the buffer and PFC shape the traffic.
fn fabric(pfc: bool, extra: &str) -> String {
    format!(
        "[topology]\nhosts = 16\nradix = 16\nlink_rate = \"100Gbps\"\nlink_latency = \"1us\"\nswitch_latency = \"0ns\"\n\
         [packet]\nmtu = \"1048B\"\nheader = \"48B\"\nack = \"64B\"\n\
         [queue]\nkind = \"shared\"\necn_kmin = \"100MB\"\necn_kmax = \"200MB\"\necn_pmax = 0.2\n\
         [queue.shared]\nsize = \"2MiB\"\negress_alpha = 1.0\negress_limits_lossless = false\ndata_class = 3\nscheduling = \"round_robin\"\n\
         pfc = {pfc}\npfc_alpha = 0.0625\nheadroom = \"auto\"\nhysteresis = \"2pkt\"\npause_time = \"5us\"\ndeadlock_after = \"1ms\"\n\
         [cc]\ninitial_cwnd = \"1000pkt\"\nmax_cwnd = \"1000pkt\"\n[lb]\nkind = \"ecmp\"\n[transport]\nrto = \"10ms\"\n{extra}"
    )
}

fn incast(senders: u32, size: &str) -> String {
    format!("[workload]\nkind = \"incast\"\nsenders = {senders}\nsize = \"{size}\"\n")
}

/// Flows from `srcs` to host 0, all at time 0, in a CSV beside the scenario.
fn flows_to_h0(srcs: &[u32], size: u64, tag: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("lbsim-rdma-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = srcs.iter().map(|s| format!("{s},0,{size},0\n")).collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    (dir, "[workload]\nkind = \"flows\"\nfile = \"f.csv\"\n".into())
}

fn port(net: &Network, name: &str) -> usize {
    net.port_by_name(name).unwrap_or_else(|| panic!("no port {name}")) as usize
}

fn paused_us(net: &Network, name: &str) -> f64 {
    let p = &net.ports[port(net, name)];
    p.pfc.as_ref().map_or(0.0, |s| s.paused_total.as_us_f64())
}

/// An 8-to-1 incast of 1 MiB each under PFC loses nothing and keeps the
/// receiver's link busy from its first packet to its last: the incast ends
/// when the bottleneck has serialized every byte, exactly.
#[test]
fn a_pfc_incast_loses_nothing_and_keeps_the_bottleneck_busy() {
    let out = run_ok(&scenario(&fabric(true, &incast(8, "1MiB"))), None);
    let c = &out.counters;
    assert_eq!(c.drops_congestion + c.drops_failure, 0);
    assert!(c.pfc_pauses > 0, "the incast must have paused someone");
    // 1 MiB = 1048 full packets of 1048 B and one of 576 + 48 B, eight times.
    let wire_bytes = 8.0 * (1048.0 * 1048.0 + 624.0);
    let busy_us = wire_bytes * 8.0 / 100e3;
    // The bottleneck starts when a neighbour's first packet arrives (one
    // serialization plus 1 us) and its last byte lands 1 us after it leaves.
    let first_us = 1048.0 * 8.0 / 100e3 + 1.0;
    let ideal = first_us + busy_us + 1.0;
    let max = out.summary.max_fct_us;
    let packet_us = 1048.0 * 8.0 / 100e3;
    assert!(
        max >= ideal - 1e-6 && max <= ideal + 8.0 * packet_us,
        "{max} vs ideal {ideal}"
    );
}

/// Every ingress group stays within its headroom: the most a group held
/// beyond its threshold never exceeded what is reserved for it.
#[test]
fn ingress_groups_never_exceed_their_headroom() {
    let s = scenario(&fabric(true, &incast(12, "512KiB")));
    let mut sim = build(&s, None).unwrap();
    sim.run();
    // "auto": 2 × 100 Gb/s × 1 us + 2 MTU.
    let headroom = 2 * 12_500 + 3 * 1048 + 64;
    let most = sim.net.buffers.iter().map(|b| b.max_headroom).max().unwrap();
    assert!(most > 0, "the incast reached the headroom");
    assert!(most <= headroom, "{most} > {headroom}");
    assert_eq!(sim.counters.drops_congestion, 0);
}

/// Senders under the other ToR: the receiver's ToR pauses the spines, the
/// spines fill and pause the senders' ToR, which pauses the senders. Pauses
/// spread one hop at a time up to the hosts.
#[test]
fn a_pause_spreads_upstream_hop_by_hop_to_the_hosts() {
    let (dir, w) = flows_to_h0(&[8, 9, 10, 11, 12, 13, 14, 15], 1 << 20, "spread");
    let s = scenario(&fabric(true, &w));
    let mut sim = build(&s, Some(&dir)).unwrap();
    sim.run();
    let net = &sim.net;
    let spines: f64 = (0..8).map(|j| paused_us(net, &format!("t1_{j}->t0_0"))).sum();
    let tor1_up: f64 = (0..8).map(|j| paused_us(net, &format!("t0_1->t1_{j}"))).sum();
    let hosts: f64 = (8..16).map(|h| paused_us(net, &format!("h{h}->t0_1"))).sum();
    assert!(spines > 0.0, "the receiver's ToR paused the spines");
    assert!(tor1_up > 0.0, "the spines paused the senders' ToR");
    assert!(hosts > 0.0, "the senders' ToR paused the hosts");
    assert_eq!(paused_us(net, "t0_0->h0"), 0.0, "the receiver pauses nothing");
    assert_eq!(sim.counters.drops_congestion, 0);
    assert!(sim.flow_records().iter().all(|f| f.finished));
}

/// Without PFC one congested egress queue settles where dynamic thresholds
/// put it: q = α (B − q), i.e. α/(1+α) of the buffer (B/2 at α = 1, B/3
/// at α = 0.5), give or take a packet; beyond it the switch drops.
#[test]
fn a_congested_lossy_queue_settles_at_alpha_over_one_plus_alpha_of_the_buffer() {
    for (alpha, share) in [(1.0, 0.5), (0.5, 1.0 / 3.0)] {
        let text = fabric(false, &incast(6, "1MiB")).replace("egress_alpha = 1.0", &format!("egress_alpha = {alpha}"));
        let mut sim = build(&scenario(&text), None).unwrap();
        sim.run();
        let q = sim.net.ports[port(&sim.net, "t0_0->h0")].queue.stats().max_bytes as f64;
        let want = share * (2 << 20) as f64;
        assert!((q - want).abs() <= 1048.0, "α = {alpha}: queue {q} vs {want}");
        assert!(sim.counters.drops_congestion > 0, "lossy: the rest is dropped");
        assert!(sim.flow_records().iter().all(|f| f.finished), "and retransmitted");
    }
}

#[test]
fn bad_buffer_keys_are_named() {
    let cases = [
        ("queue.trimming", "trimming = true", ""),
        ("queue.shared.data_class", "data_class = 3", "data_class = 8"),
        ("queue.shared.data_class", "data_class = 3", "data_class = 0"),
        ("queue.shared.egress_alpha", "egress_alpha = 1.0", "egress_alpha = 0.0"),
        ("queue.shared.pfc_alpha", "pfc_alpha = 0.0625", "pfc_alpha = -1.0"),
        ("queue.shared.headroom", "headroom = \"auto\"", "headroom = \"1MiB\""),
        ("queue.ecn_at", "ecn_at = \"dequeue\"", "ecn_at = \"enqueue\""),
        ("queue.ecn_pmax", "ecn_pmax = 0.2", "ecn_pmax = 1.5"),
    ];
    for (key, from, to) in cases {
        let base = fabric(true, &incast(2, "64KiB"));
        let text = match key {
            "queue.trimming" => base.replace("[queue]\n", "[queue]\ntrimming = true\n"),
            "queue.ecn_at" => base.replace("[queue]\n", "[queue]\necn_at = \"enqueue\"\n"),
            _ => base.replace(from, to),
        };
        let e = Scenario::from_toml(&text)
            .and_then(|s| build(&s, None).map(|_| ()))
            .unwrap_err();
        assert_eq!(e.key, key, "{to}: {e}");
    }
}

/// What a run reports of PFC: the summary's frame counts, a `pfc` table
/// (per port: frames, paused time), paused time per bucket in the `ports`
/// series and buffer occupancy per switch in the `buffers` series.
#[test]
fn pfc_shows_in_the_summary_the_pfc_table_and_the_series() {
    use lbsim_core::table::Column;
    let (dir, w) = flows_to_h0(&[8, 9, 10, 11], 1 << 20, "series");
    let observe = "[observe]\nports = [\"h8->t0_1\", \"t0_0->h0\"]\nbucket = \"10us\"\nbuffers = true\n";
    let out = run_ok(&scenario(&fabric(true, &format!("{w}{observe}"))), Some(&dir));
    assert!(out.summary.pfc_pauses > 0 && out.summary.pfc_resumes > 0);
    assert_eq!(out.summary.stop_reason, "drained");
    let table = |name: &str| {
        out.tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let f64s = |t: &str, c: &str| match table(t).column(c) {
        Some(Column::F64(v)) => v.clone(),
        _ => panic!("{t}.{c}"),
    };
    let sent: u64 = match table("pfc").column("pauses_sent") {
        Some(Column::U64(v)) => v.iter().sum(),
        _ => panic!(),
    };
    assert_eq!(sent, out.summary.pfc_pauses, "the table adds up to the summary");
    let Some(Column::Str(ports)) = table("ports").column("port") else {
        panic!()
    };
    let paused = f64s("ports", "paused_us");
    let host: f64 = ports
        .iter()
        .zip(&paused)
        .filter(|(p, _)| *p == "h8->t0_1")
        .map(|(_, v)| v)
        .sum();
    assert!(host > 0.0, "the sender's NIC was paused in some bucket");
    assert!(
        paused.iter().all(|&v| (0.0..=10.0 + 1e-9).contains(&v)),
        "at most a bucket's worth"
    );
    let Some(Column::U64(used)) = table("buffers").column("max_used_bytes") else {
        panic!()
    };
    assert!(
        used.iter().any(|&u| u > 100_000),
        "the congested switch's buffer filled"
    );
}
