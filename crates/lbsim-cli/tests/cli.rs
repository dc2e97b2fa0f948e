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

/// Issue 20: a bad --out fails before the run, a binary scenario file and a
/// run over --max-memory are one-line errors, a stuck run says why it stopped.
#[test]
fn hardening_errors_come_before_the_run() {
    let dir = std::env::temp_dir().join(format!("lbsim-cli-h20-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    // Minutes of simulation if it ran: the --out check must come first.
    std::fs::write(&file, "[workload]\nkind = \"permutation\"\nsize = \"1GiB\"\n").unwrap();
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    let (f, b, under) = (
        file.to_str().unwrap(),
        blocker.to_str().unwrap(),
        blocker.join("run").to_str().unwrap().to_string(),
    );
    let t0 = std::time::Instant::now();
    user_error(&["run", f, "--out", b, "--max-memory", "64GiB"], "is a file");
    user_error(&["run", f, "--out", &under, "--max-memory", "64GiB"], "is a file");
    assert!(t0.elapsed().as_secs() < 10);
    user_error(&["validate", f, "--set", "workload.size=1TB"], "workload.size");
    user_error(&["validate", f, "--max-memory", "lots"], "--max-memory");
    let bin = dir.join("b.toml");
    std::fs::write(&bin, [0xffu8, 0xfe, 0x00, 0x81, 0x9c]).unwrap();
    user_error(&["validate", bin.to_str().unwrap()], "not a scenario file");
    let stuck = dir.join("stuck.toml");
    std::fs::write(
        &stuck,
        "stop_at = \"1000s\"\npreset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n\
         [workload]\nkind = \"permutation\"\nsize = \"64KiB\"\n\
         [[failures]]\nlinks = \"tor_uplinks\"\nof = \"t0_0\"\nfraction = 1.0\nallow_disconnect = true\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = cli(&["run", stuck.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("stopped early: no progress"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A reader that goes away (`lbsim-cli bench | head -0`) ends the run the
/// Unix way, by SIGPIPE, not with a panic and a backtrace. The pipe's read
/// end is closed before the run starts, so its first line already fails.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_no_panic() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader); // nobody reads
    let o = Command::new(env!("CARGO_BIN_EXE_lbsim-cli"))
        .args(["bench", "--hosts", "32", "--size", "64KiB", "--lb", "ops"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("lbsim-cli runs");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        o.status.signal(),
        Some(13),
        "SIGPIPE (13 on Linux): {:?} {err}",
        o.status
    );
}
