//! Trace workloads end to end (issue "Datacenter traces and AI collectives").

mod common;
use common::{run_ok, scenario};
use lbsim_core::{build, Scenario};

#[test]
fn a_trace_runs_to_completion() {
    let s = scenario(
        "preset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n\
         [workload]\nkind = \"trace\"\ncdf = \"alistorage2019\"\nload = 0.5\nduration = \"50us\"\n",
    );
    let out = run_ok(&s, None);
    assert!(out.flows.len() > 100, "{} flows", out.flows.len());
    assert_eq!(out.summary.unfinished_flows, 0);
    assert!(out.flows.iter().all(|f| f.start_us < 50.0 && f.src != f.dst));
}

#[test]
fn bad_trace_keys_are_named() {
    let base = "[workload]\nkind = \"trace\"\n";
    for (extra, key) in [
        ("cdf = \"websearch\"\nduration = \"1ms\"\n", "workload.load"),
        ("cdf = \"nope\"\nload = 0.5\nduration = \"1ms\"\n", "workload.cdf"),
        ("cdf = \"websearch\"\nload = 1.5\nduration = \"1ms\"\n", "workload.load"),
        (
            "cdf = \"websearch\"\nload = 0.5\nduration = \"1ms\"\nsize = \"1MiB\"\n",
            "workload.size",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5\nduration = \"1ms\"\npartner_share = 0.9\n",
            "workload.partner_share",
        ),
        (
            "cdf = \"websearch\"\nload = 0.5\nduration = \"1ms\"\npattern = \"partners\"\npartner_share = 1.5\n",
            "workload.partner_share",
        ),
    ] {
        let e = Scenario::from_toml(&format!("{base}{extra}"))
            .and_then(|s| build::build(&s, None).map(|_| ()))
            .expect_err(extra);
        assert_eq!(e.key, key, "{extra}: {e}");
    }
}

/// ConWeave's load: "50 %" on a 2:1 tree offers each host 25 % of its link,
/// so the fabric-basis trace is the host-basis trace at half the load, flow for flow.
#[test]
fn fabric_load_halves_host_load_on_a_2_to_1_tree() {
    let trace = |load: f64, basis: &str| {
        let s = scenario(&format!(
            "[topology]\nhosts = 128\nradix = 24\noversubscription = 2\n\
             [workload]\nkind = \"trace\"\ncdf = \"alistorage2019\"\nload = {load}\nduration = \"200us\"\nload_basis = \"{basis}\"\n"
        ));
        let sim = build::build(&s, None).unwrap();
        sim.flows.iter().map(|f| f.spec).collect::<Vec<_>>()
    };
    let fabric = trace(0.5, "fabric");
    assert!(fabric.len() > 500);
    assert_eq!(fabric, trace(0.25, "host"));
    assert_ne!(fabric, trace(0.5, "host"));
}

/// Warm-up and cool-down: a flow counts exactly when it started after
/// start + warmup, finished, and finished by start + duration + cooldown
/// (ConWeave run.py: 5 ms warm-up, 50 ms after the window).
#[test]
fn warmup_and_cooldown_select_the_measured_flows() {
    let s = scenario(
        "preset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n\
         [workload]\nkind = \"trace\"\ncdf = \"websearch\"\nload = 0.8\nstart = \"10us\"\nduration = \"100us\"\n\
         warmup = \"20us\"\ncooldown = \"30us\"\n",
    );
    let out = run_ok(&s, None);
    let (mut early, mut late) = (0, 0);
    for f in &out.flows {
        let expect = f.finished && f.start_us >= 30.0 && f.receiver_finish_us <= 140.0;
        assert_eq!(f.measured, expect, "flow {}", f.id);
        early += (f.start_us < 30.0) as u32;
        late += (f.finished && f.start_us >= 30.0 && f.receiver_finish_us > 140.0) as u32;
    }
    assert!(
        early > 0 && late > 0,
        "both exclusions happen: {early} early, {late} late"
    );
    let measured: Vec<f64> = out.flows.iter().filter(|f| f.measured).map(|f| f.slowdown).collect();
    assert_eq!(out.summary.measured_flows, measured.len());
    let mean = measured.iter().sum::<f64>() / measured.len() as f64;
    assert!((out.summary.mean_slowdown - mean).abs() < 1e-9 * mean);
    assert!(measured.iter().all(|&x| x >= 1.0));
}
