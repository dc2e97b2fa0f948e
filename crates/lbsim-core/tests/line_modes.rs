//! Lazy lines (`LineMode::Lazy`: switch ports and NICs without `TxDone` events, each
//! line brought up to date when it is next looked at) change how the engine
//! schedules, never what happens: every golden scenario, and runs that sample
//! queues or fail links at the instant a line frees, give the same flow
//! table, counters, per-port transmissions and time series either way.

mod common;
use common::{golden_dir, golden_scenarios};
use lbsim_core::build::{build_with, Limits};
use lbsim_core::{metrics, run_built, LineMode, RunOutput, Scenario};
use std::path::Path;

/// Run `s` with the lines as `mode` says: the output, and
/// each port's bytes and packets sent.
fn run(s: &Scenario, dir: &Path, mode: LineMode) -> (RunOutput, Vec<(u64, u64)>) {
    let (mut sim, estimate) = build_with(s, Some(dir), &Limits::default()).unwrap();
    sim.set_line_mode(mode);
    let out = run_built(s, &mut sim, estimate, u64::MAX, &mut |_| true);
    (out, sim.net.ports.iter().map(|p| (p.tx_bytes, p.tx_packets)).collect())
}

/// Everything a run reports, with the event count (the one thing lazy lines change) left out.
fn outcome(out: &RunOutput) -> String {
    let mut counters = out.counters;
    counters.events = 0;
    let tables: Vec<String> = out
        .tables
        .iter()
        .map(|t| format!("{} {}", t.name, t.digest()))
        .collect();
    format!(
        "flows {}\ncounters {counters:?}\nstop {:?} at {:?}\ntables {tables:?}",
        metrics::flow_table(&out.flows).digest(),
        out.stop_reason,
        out.progress.now,
    )
}

/// Both modes on `s`: the same outcome, and the lazy run had lazy lines and fewer events.
fn assert_same_both_ways(name: &str, s: &Scenario, dir: &Path) -> bool {
    let (eager, eager_ports) = run(s, dir, LineMode::Eager);
    let (lazy, lazy_ports) = run(s, dir, LineMode::Lazy);
    assert!(!eager.lazy_lines, "{name}: eager mode has no lazy line");
    assert_eq!(
        outcome(&lazy),
        outcome(&eager),
        "{name}: lazy lines changed the outcome"
    );
    assert_eq!(lazy_ports, eager_ports, "{name}: lazy lines changed what ports sent");
    if lazy.lazy_lines {
        assert!(
            lazy.counters.events < eager.counters.events,
            "{name}: lazy lines saved no event ({} against {})",
            lazy.counters.events,
            eager.counters.events
        );
    }
    lazy.lazy_lines
}

#[test]
fn every_golden_scenario_is_the_same_with_lazy_lines() {
    let files = golden_scenarios();
    let mut lazy = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let s = Scenario::from_toml(&std::fs::read_to_string(f).unwrap()).unwrap();
        if assert_same_both_ways(&name, &s, &golden_dir()) {
            lazy.push(name);
        }
    }
    // Lazy lines apply wherever no switch policy, shared buffer or bit error reads the ports.
    for must in [
        "lb_reps",
        "lb_ops",
        "lb_ecmp",
        "cc_eqds_trim",
        "fail_down",
        "fail_flapping_switch",
        "stuck_guard",
    ] {
        assert!(lazy.iter().any(|n| n == must), "{must} ran with lazy lines: {lazy:?}");
    }
    for never in ["lb_adaptive", "queue_shared_pfc"] {
        assert!(!lazy.iter().any(|n| n == never), "{never} must keep TxDone events");
    }
}

/// Queue samples every 100 ns on the busy uplinks of an incast-heavy
/// permutation, and a link that fails and comes back at instants where
/// lines free: the time series and drops are the same.
#[test]
fn sampled_queues_and_failures_at_line_instants_are_the_same() {
    let dir = std::env::temp_dir();
    let toml = "stop_at = \"500us\"\npreset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"ops\"\n\
                [workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n\
                [[failures]]\nlinks = \"tor_uplinks\"\nof = \"t0_0\"\nfraction = 0.5\nat = \"3us\"\nduration = \"4us\"\n\
                [observe]\nports = [\"t0_0\", \"t1_0\", \"h3->t0_0\"]\ndrops = true\nbucket = \"100ns\"\n";
    let s = Scenario::from_toml(toml).unwrap();
    assert!(
        assert_same_both_ways("sampled", &s, &dir),
        "the sampled run had lazy lines"
    );
}

/// Host NICs have lazy lines too: a flow's timer, an ACK or a new flow
/// first brings its NIC up to date. Black-holed uplinks make flows time
/// out again and again (the timeout RTS asks whether the NIC is free),
/// with websearch flows starting while others run.
#[test]
fn timeouts_and_flow_starts_at_lazy_nics_are_the_same() {
    let dir = std::env::temp_dir();
    let toml =
        "stop_at = \"2ms\"\npreset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"ops\"\n\
                [routing]\nconvergence = \"never\"\n\
                [workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.6\nduration = \"100us\"\n\
                [[failures]]\nlinks = \"tor_uplinks\"\nof = \"t0_0\"\nfraction = 0.5\nat = \"0us\"\n";
    let s = Scenario::from_toml(toml).unwrap();
    let (eager, _) = run(&s, &dir, LineMode::Eager);
    assert!(eager.counters.timeouts > 0, "no flow timed out");
    assert!(assert_same_both_ways("timeouts", &s, &dir), "the run had lazy lines");
}

#[test]
fn auto_chooses_lazy_lines_on_small_networks_only_where_allowed() {
    let load = |name: &str| {
        let path = golden_dir().join(format!("{name}.toml"));
        Scenario::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let lazy = |s: &Scenario| run(s, &golden_dir(), LineMode::Auto).0.lazy_lines;
    assert!(lazy(&load("lb_reps")));
    assert!(!lazy(&load("lb_adaptive")), "a switch policy reads queues");
}
