//! The command line, run as a user runs it: exit statuses, one-line errors, help, bench --json.

use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lbsim-cli"))
        .args(args)
        .output()
        .expect("lbsim-cli runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 2 and exactly one line on stderr that contains `needle`.
fn user_error(args: &[&str], needle: &str) {
    let o = cli(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
}

#[test]
fn errors_exit_2_with_one_line_naming_the_problem() {
    user_error(&["run", "--bogus", "x.toml"], "--bogus");
    user_error(&["run"], "<FILE>");
    user_error(&["run", "no/such/file.toml"], "no/such/file.toml");
    user_error(&["validate", "x.toml", "--set", "novalue"], "key=value");
    user_error(&["bench", "--hosts", "many"], "--hosts");
    user_error(&["frobnicate"], "frobnicate");
    user_error(&[], "subcommand");
    // A scenario error is the core's, on one line, naming the key.
    user_error(&["bench", "--hosts", "32", "--lb", "warp"], "lb.kind");
}

#[test]
fn help_exits_0() {
    for args in [&["--help"][..], &["bench", "--help"], &["help", "run"]] {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("Usage: lbsim-cli"));
    }
}

#[test]
fn bench_json_is_one_consistent_object() {
    let o = cli(&["bench", "--json", "--hosts", "32", "--size", "64KiB", "--lb", "ops"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.trim().lines().count(), 1);
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(j["hosts"], 32);
    assert_eq!(j["lb"], "ops");
    assert_eq!(j["size"], "64KiB");
    assert_eq!(j["size_bytes"], 65536);
    let events = j["events"].as_f64().unwrap();
    let wall = j["wall_seconds"].as_f64().unwrap();
    assert!(events > 0.0 && wall > 0.0);
    let rate = j["events_per_second"].as_f64().unwrap();
    assert!(
        (rate - events / wall).abs() <= 1e-6 * rate,
        "{rate} vs {}",
        events / wall
    );
    let (fct, ideal) = (j["max_fct_us"].as_f64().unwrap(), j["ideal_fct_us"].as_f64().unwrap());
    assert!(ideal > 0.0 && fct >= ideal * 0.9, "max FCT {fct} vs ideal {ideal}");
}
