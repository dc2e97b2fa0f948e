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
    ] {
        let e = Scenario::from_toml(&format!("{base}{extra}"))
            .and_then(|s| build::build(&s, None).map(|_| ()))
            .expect_err(extra);
        assert_eq!(e.key, key, "{extra}: {e}");
    }
}
