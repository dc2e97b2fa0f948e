//! End-to-end checks against exact answers and against the REPS paper's
//! orderings (issue "Simulation core", checks 1-4, 6, 7).

use lbsim_core::{run, RunOutput, Scenario};

mod common;
use common::{run_ok, scenario};

/// Check 1: one flow on an idle 2-tier path: the first packet's latency
/// over each hop plus the rest of the message at line rate. The first packet
/// is stored and forwarded over 4 links (4 · ser(first) + 4 link latencies +
/// 3 switch latencies); the others follow back to back, so the last byte
/// arrives Σ ser(others) later. Equivalently: host serialization of the whole
/// message + 3 · ser(first packet) + latencies.
#[test]
fn lone_flow_matches_closed_form() {
    let dir = std::env::temp_dir().join(format!("lbsim-lone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (size, lb) in [(1_000_000u64, "reps"), (8 << 20, "ops"), (5000, "ecmp"), (1, "reps")] {
        std::fs::write(
            dir.join("one.csv"),
            format!("src,dst,size_bytes,start_us\n0,127,{size},2.5\n"),
        )
        .unwrap();
        let s = scenario(&format!(
            "[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"flows\"\nfile = \"one.csv\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        let (mtu, header, rate_bps) = (4096u64, 64u64, 400e9);
        let payload = mtu - header;
        let n = size.div_ceil(payload);
        let last = size - (n - 1) * payload + header;
        let ser = |b: u64| b as f64 * 8.0 / rate_bps * 1e6; // us
        let host_ser = ser((n - 1) * mtu + last);
        let first = if n > 1 { mtu } else { last };
        let expect = host_ser + 3.0 * ser(first) + 4.0 * 0.5 + 3.0 * 0.5;
        let f = &out.flows[0];
        assert!(f.finished);
        assert!(
            (f.fct_us - expect).abs() <= ser(mtu),
            "{lb} {size} B: FCT {} us, closed form {expect} us",
            f.fct_us
        );
        assert_eq!(f.start_us, 2.5);
        assert!(
            f.sender_finish_us > f.receiver_finish_us,
            "the last ACK comes after the last byte"
        );
        assert_eq!(out.summary.drops.congestion + out.summary.drops.failure, 0);
    }
}

/// Check 2: N-to-1 incast of 8 MiB messages completes within 5 % of
/// N · size / host rate + one base RTT.
#[test]
fn incast_completes_near_line_rate() {
    for n in [8u32, 16] {
        let s = scenario(&format!(
            "[workload]\nkind = \"incast\"\nsize = \"8MiB\"\nsenders = {n}\nreceiver = 5\n"
        ));
        let out = run_ok(&s, None);
        let ideal = n as f64 * (8u64 << 20) as f64 * 8.0 / 400e9 * 1e6 + out.summary.base_rtt_us;
        let got = out.summary.max_fct_us;
        assert!(out.flows.iter().all(|f| f.dst == 5 && f.finished));
        assert!(
            got >= ideal * 0.99,
            "incast {n}: {got} us cannot beat the line rate bound {ideal} us"
        );
        assert!(got <= ideal * 1.05, "incast {n}: {got} us vs ideal {ideal} us");
    }
}

/// `topology.agg_uplinks`: on a 3-tier tree of radix 4 (2 pods of 2 ToRs
/// with 2 hosts each, 2 aggregation switches per pod), the 4 hosts of pod 0
/// each send 8 MiB to one of pod 1's. With 2 core uplinks per aggregation
/// switch (the default, radix / 2) the pod has 4 lines out and each flow runs
/// near line rate; with 1 (2:1 at the aggregation layer) it has 2, and the
/// 4 flows need at least twice a lone flow's time, which OPS's spraying comes
/// close to.
#[test]
fn aggregation_uplinks_set_the_bandwidth_between_pods() {
    let dir = std::env::temp_dir().join(format!("lbsim-agg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let size = 8u64 << 20;
    let flows: String = (0..4).map(|h| format!("{h},{},{size},0\n", 4 + h)).collect();
    std::fs::write(dir.join("cross.csv"), format!("src,dst,size_bytes,start_us\n{flows}")).unwrap();
    // A lone flow's bytes on the wire (4096 B packets carrying 4032) at 400 Gb/s.
    let lone = size as f64 * 4096.0 / 4032.0 * 8.0 / 400e9 * 1e6;
    for (agg_uplinks, least, most) in [("", 1.0, 1.1), ("agg_uplinks = 1\n", 2.0, 2.3)] {
        let s = scenario(&format!(
            "[topology]\ntiers = 3\nhosts = 8\nradix = 4\nhosts_per_tor = 2\nuplinks_per_tor = 2\n{agg_uplinks}\
             [lb]\nkind = \"ops\"\n[workload]\nkind = \"flows\"\nfile = \"cross.csv\"\n"
        ));
        let out = run_ok(&s, Some(&dir));
        let got = out.summary.max_fct_us;
        assert!(
            got >= least * lone * 0.99 && got <= most * lone,
            "{agg_uplinks:?}: {got:.1} us against {least}-{most} x a lone flow's {lone:.1} us"
        );
    }
    // Only a 3-tier tree has the layer, and an aggregation switch has radix - radix / 2 ports for it.
    for (text, why) in [
        ("[topology]\nagg_uplinks = 2\n", "2 tiers"),
        (
            "[topology]\ntiers = 3\nradix = 4\nhosts = 8\nhosts_per_tor = 2\nagg_uplinks = 3\n",
            "too many",
        ),
        (
            "[topology]\ntiers = 3\nradix = 4\nhosts = 8\nhosts_per_tor = 2\nagg_uplinks = 0\n",
            "none",
        ),
    ] {
        match run(&scenario(text), None) {
            Err(e) => assert_eq!(e.key, "topology.agg_uplinks", "{why}: {e}"),
            Ok(_) => panic!("{why}: should be refused"),
        }
    }
}

/// Where the packets went (`observe.port_totals`), in a 16-to-1 incast
/// that overflows the receiver's downlink: every packet a host sends leaves
/// by its NIC, every packet delivered crossed one port into a host, and
/// every drop is at a full queue on the way into the receiver's ToR or on
/// its downlink.
#[test]
fn port_totals_account_for_every_packet_of_an_incast() {
    use lbsim_core::table::Column;
    let s = scenario(
        "preset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"ops\"\n\
         [workload]\nkind = \"incast\"\nsize = \"1MiB\"\nsenders = 16\nreceiver = 5\n\
         [observe]\nport_totals = true\n",
    );
    let out = run_ok(&s, None);
    let t = out
        .tables
        .iter()
        .find(|t| t.name == "port_totals")
        .expect("a port_totals table");
    let text = |name| match t.column(name) {
        Some(Column::Str(v)) => v.clone(),
        _ => panic!("{name}"),
    };
    let num = |name| match t.column(name) {
        Some(Column::U64(v)) => v.clone(),
        _ => panic!("{name}"),
    };
    let (from, to, tx, drops, max_q) = (
        text("from"),
        text("to"),
        num("tx_packets"),
        num("drops"),
        num("max_queue_bytes"),
    );
    let sum = |keep: &dyn Fn(usize) -> bool| (0..tx.len()).filter(|&i| keep(i)).map(|i| tx[i]).sum::<u64>();
    let c = &out.counters;
    assert!(
        c.drops_congestion > 0 && c.drops_failure == 0,
        "the incast overflows a queue: {c:?}"
    );
    assert_eq!(
        sum(&|i| from[i].starts_with('h')),
        c.packets_sent,
        "every packet leaves by its NIC"
    );
    assert_eq!(
        sum(&|i| to[i].starts_with('h')),
        c.delivered,
        "every delivery crossed one port into a host"
    );
    assert_eq!(drops.iter().sum::<u64>(), c.drops_congestion);
    // Sprayed over the spines, the traffic meets on the links into the receiver's ToR and on its downlink.
    let downlink = (0..to.len()).find(|&i| to[i] == "h5").unwrap();
    let tor = &from[downlink];
    for i in (0..drops.len()).filter(|&i| drops[i] > 0) {
        assert!(i == downlink || &to[i] == tor, "{} -> {} drops", from[i], to[i]);
        assert!(
            max_q[i] >= out.summary.queue_bytes - 4150,
            "a dropping queue fills: {}",
            max_q[i]
        );
    }
    assert!(drops[downlink] > 0);
}

/// Check 3: same scenario and seed, same results bit for bit; another seed differs.
#[test]
fn runs_are_deterministic() {
    let text = "[topology]\nhosts = 32\n[lb]\nkind = \"reps\"\n[workload]\nkind = \"permutation\"\nsize = \"512KiB\"\n";
    let a = run_ok(&scenario(text), None);
    let b = run_ok(&scenario(text), None);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters, b.counters);
    let c = run_ok(&scenario(&format!("seed = 2\n{text}")), None);
    assert_ne!(
        a.flows, c.flows,
        "a different seed must change the permutation or the sprays"
    );
}

fn perm_128(lb: &str, failure: bool) -> RunOutput {
    let fail = if failure {
        "[[failures]]\nlink = \"t0_0->t1_0\"\nat = \"0us\"\n"
    } else {
        ""
    };
    // Artifact preset: the REPS authors' htsim values; 128 hosts, 8 per ToR, 8 spines.
    let s = scenario(&format!(
        "preset = \"reps_artifact\"\nstop_at = \"20ms\"\n[lb]\nkind = \"{lb}\"\n{fail}"
    ));
    run_ok(&s, None)
}

/// Check 6: 8 MiB permutation on the 128-host tree: REPS ≤ OPS < ECMP, ECMP ≥ 2× OPS.
#[test]
fn permutation_orders_reps_ops_ecmp() {
    let [ecmp, ops, reps] = ["ecmp", "ops", "reps"].map(|lb| perm_128(lb, false).summary.max_fct_us);
    assert!(reps <= ops && ops < ecmp, "REPS {reps} OPS {ops} ECMP {ecmp}");
    assert!(ecmp >= 2.0 * ops, "ECMP {ecmp} should be at least 2x OPS {ops}");
}

/// Check 7: with one ToR uplink dead for the whole run, REPS finishes at
/// least 3× sooner than OPS and loses at most a fifth as many packets.
#[test]
fn dead_uplink_reps_beats_ops() {
    let ops = perm_128("ops", true);
    let reps = perm_128("reps", true);
    let (o, r) = (&ops.summary, &reps.summary);
    assert_eq!(r.unfinished_flows, 0);
    assert!(
        o.max_fct_us >= 3.0 * r.max_fct_us,
        "OPS {} us vs REPS {} us",
        o.max_fct_us,
        r.max_fct_us
    );
    assert!(o.drops.failure > 0, "OPS must spray onto the dead link");
    assert!(
        r.drops.failure * 5 <= o.drops.failure,
        "REPS {} vs OPS {} failure drops",
        r.drops.failure,
        o.drops.failure
    );
    assert_eq!(
        o.drops.failure + o.drops.congestion + r.drops.failure + r.drops.congestion,
        ops.flows.iter().chain(&reps.flows).map(|f| f.drops).sum::<u64>(),
        "every drop is some flow's"
    );
    assert!(
        reps.flows.iter().any(|f| f.freeze_entries > 0),
        "REPS senders behind the dead link freeze"
    );
}

/// A flow that cannot finish is reported unfinished at the horizon, not a hang.
#[test]
fn cut_off_host_is_reported_unfinished() {
    let s = scenario(
        "stop_at = \"2ms\"\n[topology]\nhosts = 16\n[workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n\
         [[failures]]\nlink = \"h3->t0_0\"\nat = \"0us\"\n",
    );
    let out = run(&s, None).unwrap();
    assert_eq!(out.summary.unfinished_flows, 1);
    assert!(out.summary.max_fct_us.is_nan());
    assert!(!out.flows[3].finished && out.flows[3].timeouts > 0);
    assert!(out.summary.stopped_early);
    assert_eq!(out.flows.iter().filter(|f| f.finished).count(), 15);
}

/// A failure that heals: packets are lost only while the link is down. A
/// run stopped just after the link came back has seen every failure drop
/// the full run sees (runs are deterministic, so both are identical up to
/// that instant).
#[test]
fn failure_drops_stop_when_link_recovers() {
    let base = "preset = \"reps_artifact\"\n[topology]\nhosts = 32\n[lb]\nkind = \"ops\"\n[workload]\nkind = \"permutation\"\nsize = \"2MiB\"\n";
    let healthy = run_ok(&scenario(base), None);
    assert_eq!(healthy.summary.drops.failure, 0);
    let fail = "[[failures]]\nlink = \"t0_0->t1_1\"\ndirection = \"both\"\nat = \"5us\"\nduration = \"10us\"\n";
    let full = run_ok(&scenario(&format!("{base}{fail}")), None);
    let cut = run(&scenario(&format!("stop_at = \"15.001us\"\n{base}{fail}")), None).unwrap();
    assert!(full.summary.drops.failure > 0);
    assert_eq!(
        full.summary.drops.failure, cut.summary.drops.failure,
        "no failure drop after recovery"
    );
    let before = run(&scenario(&format!("stop_at = \"4.999us\"\n{base}{fail}")), None).unwrap();
    assert_eq!(
        before.summary.drops.failure, 0,
        "no failure drop before the link goes down"
    );
    assert_eq!(full.summary.unfinished_flows, 0);
    assert!(full.summary.max_fct_us > healthy.summary.max_fct_us);
}

#[test]
fn bad_scenarios_name_the_key() {
    let cases = [
        ("[topology]\nhosts = 100\n", "topology.hosts"),
        ("[queue]\necn_kmin = \"90%\"\necn_kmax = \"10%\"\n", "queue.ecn_kmin"),
        (
            "[[failures]]\nlink = \"t0_0->t9_9\"\nat = \"0us\"\n",
            "failures[0].link",
        ),
        ("[packet]\nheader = \"5000B\"\n", "packet.header"),
        (
            "[workload]\nkind = \"incast\"\nsize = \"1MiB\"\nsenders = 500\n",
            "workload.senders",
        ),
        (
            "[workload]\nkind = \"flows\"\nfile = \"/nonexistent.csv\"\n",
            "workload.file",
        ),
    ];
    for (text, key) in cases {
        let s = scenario(text);
        match run(&s, None) {
            Err(e) => assert_eq!(e.key, key, "{text}: {e}"),
            Ok(_) => panic!("{text} should fail on {key}"),
        }
    }
}

/// The REPS artifact's full-queue keys belong to the two-class queue: a
/// shared buffer refuses them, and an unknown policy is an error; each names its key.
#[test]
fn full_queue_keys_need_the_two_class_queue() {
    let cases = [
        (
            "preset = \"rdma_lossless\"\n[queue]\nfull_drop = \"coin_newest\"\n",
            "queue.full_drop",
        ),
        (
            "preset = \"rdma_lossless\"\n[queue]\ncount_in_service = true\n",
            "queue.count_in_service",
        ),
        ("[queue]\nfull_drop = \"oldest\"\n", "queue.full_drop"),
    ];
    for (text, key) in cases {
        match Scenario::from_toml(text) {
            Err(e) => assert_eq!(e.key, key, "{text}: {e}"),
            Ok(_) => panic!("{text} should fail on {key}"),
        }
    }
    let artifact = scenario("preset = \"reps_artifact\"\n");
    assert_eq!(artifact.queue.full_drop, lbsim_core::scenario::FullDrop::CoinNewest);
    assert!(artifact.queue.count_in_service);
    let paper = scenario("");
    assert_eq!(paper.queue.full_drop, lbsim_core::scenario::FullDrop::Tail);
    assert!(!paper.queue.count_in_service);
}

#[test]
fn results_directory_has_the_three_files() {
    let s = scenario("[topology]\nhosts = 16\n[workload]\nkind = \"tornado\"\nsize = \"256KiB\"\n");
    let out = run_ok(&s, None);
    let dir = std::env::temp_dir().join(format!("lbsim-out-{}", std::process::id()));
    out.write_dir(&dir).unwrap();
    let csv = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    assert_eq!(csv.lines().count(), 17);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["flows"], 16);
    assert_eq!(summary["max_fct_us"].as_f64().unwrap(), out.summary.max_fct_us);
    let again = Scenario::from_toml(&std::fs::read_to_string(dir.join("scenario.toml")).unwrap()).unwrap();
    assert_eq!(
        run_ok(&again, None).flows,
        out.flows,
        "the resolved scenario reproduces the run"
    );
}
