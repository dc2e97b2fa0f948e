//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test file uses its own subset

use lbsim_core::{run, RunOutput, Scenario};
use std::path::{Path, PathBuf};

pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml(toml).unwrap_or_else(|e| panic!("bad test scenario: {e}"))
}

/// Every packet a host created reached a host or was dropped, and nothing
/// is left in the network once the run drained.
pub fn assert_conservation(out: &RunOutput) {
    let c = &out.counters;
    assert_eq!(out.packets_in_network, 0, "packets left in the network");
    assert_eq!(
        c.packets_sent,
        c.delivered + c.drops_congestion + c.drops_failure,
        "conservation: {c:?}"
    );
    assert_eq!(c.packets_sent, c.sent_by_kind(), "packets counted by kind: {c:?}");
}

pub fn run_ok(s: &Scenario, dir: Option<&Path>) -> RunOutput {
    let out = run(s, dir).expect("scenario builds");
    assert_conservation(&out);
    out
}

/// The golden scenarios' folder (`tests/golden`, see golden.rs).
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The golden scenarios, in name order.
pub fn golden_scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// A fresh folder of this process for test `tag`, holding `name` with `text`
/// (a workload file a scenario names relative to the folder).
pub fn dir_with_file(tag: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lbsim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
    dir
}
