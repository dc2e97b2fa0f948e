//! The regression anchors of docs/validation.md: lbsim's own 128-host 8 MiB
//! permutations on the REPS artifact's tree (`scenarios/reps/`), healthy and
//! with one ToR uplink dead, and Fig. 19's 32-host run as the artifact runs
//! it, whose numbers the validation page records next to the artifact's.
//! lbsim is deterministic, so these move only when a change means them to;
//! such a change updates this table and the page together.

mod common;
use common::run_ok;
use lbsim_core::{RunOutput, Scenario};

/// (scenario, lb.kind, mean, max sender-side completion time in us, timeouts, REPS freeze entries).
const ANCHORS: &[(&str, &str, f64, f64, u64, u64)] = &[
    ("permutation_8mib", "ecmp", 341.798, 639.600, 4976, 0),
    ("permutation_8mib", "ops", 186.243, 199.249, 21, 0),
    ("permutation_8mib", "reps", 183.284, 185.010, 0, 0),
    ("permutation_8mib_dead_uplink", "ops", 285.112, 2339.629, 2073, 0),
    ("permutation_8mib_dead_uplink", "reps", 183.499, 190.667, 117, 7),
    // BitMap's 256 EVs and Flowlet's gap from the latest ACK (issue 15): both learn to avoid the dead uplink.
    ("permutation_8mib_dead_uplink", "bitmap", 187.621, 255.576, 439, 0),
    ("permutation_8mib_dead_uplink", "flowlet", 350.456, 765.875, 5053, 0),
    // Fig. 19 as the artifact runs it (32 hosts, three of ToR 0's uplinks dying, routing never
    // converging, `transport.rts_in_flight = false`): the OPS / REPS ratio the paper reports comes from these.
    ("fig19_as_the_artifact_runs_it", "ops", 12356.243, 94762.861, 82831, 0),
    ("fig19_as_the_artifact_runs_it", "reps", 806.751, 1606.895, 479, 5),
];

fn run(name: &str, lb: &str) -> RunOutput {
    let path = format!("{}/../../scenarios/reps/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let s = Scenario::from_toml_with(&text, &[("lb.kind".into(), lb.into())]).unwrap();
    run_ok(&s, None)
}

#[test]
fn validation_anchors_stay_within_one_percent() {
    let mut moved = Vec::new();
    for &(name, lb, mean, max, timeouts, freezes) in ANCHORS {
        let out = run(name, lb);
        assert_eq!(out.summary.unfinished_flows, 0, "{name} {lb}");
        let fct: Vec<f64> = out.flows.iter().map(|f| f.sender_finish_us - f.start_us).collect();
        let got_mean = fct.iter().sum::<f64>() / fct.len() as f64;
        let got_max = fct.iter().cloned().fold(0.0, f64::max);
        let got_timeouts: u64 = out.flows.iter().map(|f| f.timeouts).sum();
        let got_freezes: u64 = out.flows.iter().map(|f| f.freeze_entries).sum();
        let off = |got: f64, want: f64| (got - want).abs() > 0.01 * want;
        let count_off = |got: u64, want: u64| got.abs_diff(want) as f64 > 0.01 * want as f64;
        if off(got_mean, mean) || off(got_max, max) || count_off(got_timeouts, timeouts) || got_freezes != freezes {
            moved.push(format!(
                "{name} {lb}: mean {got_mean:.3} (recorded {mean}), max {got_max:.3} ({max}), \
                 timeouts {got_timeouts} ({timeouts}), freeze entries {got_freezes} ({freezes})"
            ));
        }
    }
    assert!(
        moved.is_empty(),
        "validation anchors moved by more than 1 %; if meant, update ANCHORS and docs/validation.md:\n{}",
        moved.join("\n")
    );
}
