//! ConWeave on the RDMA fabric: rerouting with in-network reordering keeps
//! the receiving NICs' packets in order, which rerouting alone does not.

mod common;

use common::{run_ok, scenario};
use lbsim_core::RunOutput;

/// Two racks of 16 hosts under 8 spines (the `rdma_lossless` preset at 32
/// hosts), flows from a CSV; spine t1_0's downlink to rack 1 runs at
/// 25 Gb/s, so flows on it see their RTT_REPLY late and reroute.
fn run(flows: &[(u32, u32, u64)], extra: &str, tag: &str) -> RunOutput {
    run_slow(flows, extra, tag, 25)
}

fn run_slow(flows: &[(u32, u32, u64)], extra: &str, tag: &str, gbps: u32) -> RunOutput {
    let dir = std::env::temp_dir().join(format!("lbsim-conweave-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows: String = flows.iter().map(|(s, d, n)| format!("{s},{d},{n},0\n")).collect();
    std::fs::write(dir.join("f.csv"), format!("src,dst,size_bytes,start_us\n{rows}")).unwrap();
    let text = format!(
        "preset = \"rdma_lossless\"\n[topology]\nhosts = 32\n[lb]\nkind = \"conweave\"\n\
         [[rate_overrides]]\nlink = \"t1_0->t0_1\"\nrate = \"{gbps}Gbps\"\n\
         [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n{extra}"
    );
    run_ok(&scenario(&text), Some(&dir))
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.summary
        .switch_lb
        .get(&format!("conweave.{name}"))
        .copied()
        .unwrap_or(0)
}

/// Rack 0's hosts 0-7 each send 1 MB to rack 1's hosts 16-23.
fn eight_flows() -> Vec<(u32, u32, u64)> {
    (0..8).map(|h| (h, 16 + h, 1_000_000)).collect()
}

#[test]
fn reordering_in_the_tor_keeps_the_nics_in_order() {
    let with = run(&eight_flows(), "", "with");
    assert!(counter(&with, "reroutes") > 0, "{:?}", with.summary.switch_lb);
    assert!(
        counter(&with, "held_packets") > 0,
        "some rerouted packets overtook their TAIL"
    );
    assert_eq!(with.summary.reordered_arrivals, 0, "{:?}", with.summary.switch_lb);
    assert_eq!(with.counters.retransmissions, 0);
    assert_eq!(with.counters.drops_congestion, 0);
    assert!(with.flows.iter().all(|f| f.finished));
    // The same reroutes without reorder queues: the NICs see overtaken packets, and Go-Back-N resends.
    let without = run(&eight_flows(), "[lb.conweave]\nreorder_queues = 0\n", "without");
    assert!(counter(&without, "reroutes") > 0);
    assert_eq!(counter(&without, "held_packets"), 0);
    assert!(counter(&without, "unheld_early_packets") > 0);
    assert!(without.summary.reordered_arrivals > 0);
    assert!(without.counters.retransmissions > 0);
    assert!(without.flows.iter().all(|f| f.finished));
}

/// On a 10 Gb/s hot link the old path's queue grows between the last
/// timed packet and the TAIL by more than θ_resume_extra, so a reorder
/// queue can be flushed by T_resume before its TAIL arrives (ConWeave
/// App. A: the estimate assumes both saw the same delay). Packets reach a
/// NIC out of order only then: never without a flush by the timer.
#[test]
fn only_a_premature_resume_lets_packets_out_of_order() {
    let mut premature = 0;
    for gbps in [10, 25, 50] {
        let out = run_slow(&eight_flows(), "", &format!("slow{gbps}"), gbps);
        let by_timer = counter(&out, "flushed_by_timer");
        premature += by_timer;
        // A TAIL that comes after its queue's flush is counted, and its error is below −θ_resume_extra.
        assert!(counter(&out, "tails_after_timer_flush") <= by_timer);
        if out.summary.reordered_arrivals > 0 {
            assert!(by_timer > 0, "{gbps} Gb/s: {:?}", out.summary.switch_lb);
        }
        assert!(out.flows.iter().all(|f| f.finished));
    }
    assert!(
        premature > 0,
        "the 10 Gb/s link makes T_resume fire first at least once"
    );
}

/// Every control packet the destination ToRs made is counted by kind, and
/// each reached its source ToR (conservation counts it delivered there).
#[test]
fn every_control_packet_is_counted() {
    let out = run(&eight_flows(), "", "count");
    let by_kind = counter(&out, "replies") + counter(&out, "clears") + counter(&out, "notifies");
    assert!(by_kind > 0);
    assert_eq!(out.counters.switch_control_sent, by_kind);
    assert_eq!(out.summary.switch_control_sent, by_kind);
    // One REPLY per epoch, one CLEAR per TAIL (nothing is lost under PFC).
    assert_eq!(counter(&out, "replies"), counter(&out, "epochs"));
    assert_eq!(counter(&out, "clears"), counter(&out, "tails"));
}

/// Eight flows into one host compete for its downlink's reorder queues;
/// with one queue the others' early packets pass unheld (counted), and
/// every flow still completes.
#[test]
fn reorder_queue_exhaustion_is_counted_and_flows_complete() {
    let incast: Vec<_> = (0..8).map(|h| (h, 16, 500_000)).collect();
    let out = run(&incast, "[lb.conweave]\nreorder_queues = 1\n", "exhaust");
    assert_eq!(counter(&out, "max_reorder_queues_on_a_port"), 1);
    assert!(counter(&out, "unheld_early_packets") > 0, "{:?}", out.summary.switch_lb);
    assert!(out.flows.iter().all(|f| f.finished));
}

/// Same scenario and seed, same results, bit for bit.
#[test]
fn conweave_is_deterministic() {
    let a = run(&eight_flows(), "", "det-a");
    let b = run(&eight_flows(), "", "det-b");
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.summary.switch_lb, b.summary.switch_lb);
    let fct = |o: &RunOutput| o.flows.iter().map(|f| f.fct_us.to_bits()).collect::<Vec<_>>();
    assert_eq!(fct(&a), fct(&b));
}

#[test]
fn conweave_refuses_what_it_cannot_run() {
    let bad = |t: &str| lbsim_core::build::build(&scenario(t), None).err().expect("refused");
    let e = bad("[lb]\nkind = \"conweave\"\n");
    assert_eq!(e.key, "lb.kind");
    assert!(e.message.contains("gbn"), "{}", e.message);
    let e = lbsim_core::Scenario::from_toml(
        "preset = \"rdma_lossless\"\n[lb]\nkind = \"conweave\"\n[lb.conweave]\ninactive = \"0us\"\n",
    )
    .unwrap_err();
    assert_eq!(e.key, "lb.conweave.inactive");
    // A 3-tier tree with more than 256 paths between racks.
    let e = bad("preset = \"rdma_lossless\"\n[topology]\ntiers = 3\nhosts = 1024\nradix = 64\nhosts_per_tor = 16\nuplinks_per_tor = 32\n[lb]\nkind = \"conweave\"\n");
    assert_eq!(e.key, "lb.kind");
    // ConWeave's k = 8 fat tree needs 12-port ToRs: without tor_radix it does not fit, and
    // tor_radix is checked like radix.
    let k8 = "preset = \"rdma_lossless\"\n[topology]\ntiers = 3\nhosts = 256\nradix = 8\nhosts_per_tor = 8\nuplinks_per_tor = 4\n";
    assert_eq!(bad(k8).key, "topology.uplinks_per_tor");
    assert!(lbsim_core::build::build(&scenario(&format!("{k8}tor_radix = 12\n")), None).is_ok());
    let e = bad(&format!("{k8}tor_radix = 11\n"));
    assert!(e.message.contains("topology.tor_radix = 11"), "{}", e.message);
}
