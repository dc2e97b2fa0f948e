//! lbsim-cli: run a scenario or the engine benchmark without Python.
//!
//!   lbsim-cli run FILE [--set key=value]... [--out DIR]
//!   lbsim-cli validate FILE [--set key=value]...
//!   lbsim-cli bench [--hosts N] [--lb KIND]

use lbsim_core::{Scenario, ScenarioError};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage:
  lbsim-cli run FILE [--set key=value]... [--out DIR]   run a scenario, write results to DIR
  lbsim-cli validate FILE [--set key=value]...          parse and check only
  lbsim-cli bench [--hosts N] [--lb KIND] [--size BYTES]
                                                         time the 2-tier 400G permutation benchmark";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

struct Opts {
    file: Option<PathBuf>,
    sets: Vec<(String, String)>,
    out: Option<PathBuf>,
    flags: Vec<(String, String)>,
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        file: None,
        sets: Vec::new(),
        out: None,
        flags: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--set" => {
                let kv = value("--set")?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or(format!("--set expects key=value, got \"{kv}\""))?;
                o.sets.push((k.trim().to_string(), v.trim().to_string()));
            }
            "--out" => o.out = Some(PathBuf::from(value("--out")?)),
            f if f.starts_with("--") => o.flags.push((f.to_string(), value(f)?)),
            f if o.file.is_none() => o.file = Some(PathBuf::from(f)),
            f => return Err(format!("unexpected argument \"{f}\"\n{USAGE}")),
        }
    }
    Ok(o)
}

fn load(o: &Opts) -> Result<(Scenario, Option<PathBuf>), String> {
    let file = o.file.as_ref().ok_or(format!("missing scenario FILE\n{USAGE}"))?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let s = Scenario::from_toml_with(&text, &o.sets).map_err(|e: ScenarioError| format!("{}: {e}", file.display()))?;
    Ok((s, file.parent().map(Path::to_path_buf)))
}

fn dispatch(args: &[String]) -> Result<(), String> {
    let Some(cmd) = args.first() else {
        return Err(USAGE.into());
    };
    let o = parse_opts(&args[1..])?;
    match cmd.as_str() {
        "run" => {
            let (s, base) = load(&o)?;
            let out = lbsim_core::run(&s, base.as_deref()).map_err(|e| e.to_string())?;
            let dir = o
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("results").join(s.name.clone().unwrap_or("run".into())));
            out.write_dir(&dir)
                .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
            print_summary(&out.summary);
            println!("results: {}", dir.display());
            Ok(())
        }
        "validate" => {
            let (s, base) = load(&o)?;
            lbsim_core::build::build(&s, base.as_deref()).map_err(|e| e.to_string())?;
            println!("ok");
            Ok(())
        }
        "bench" => bench(&o),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command \"{other}\"\n{USAGE}")),
    }
}

fn print_summary(s: &lbsim_core::Summary) {
    println!(
        "flows {}/{} finished  max FCT {:.2} us  mean {:.2} us  p99 {:.2} us",
        s.finished_flows, s.flows, s.max_fct_us, s.mean_fct_us, s.p99_fct_us
    );
    println!(
        "drops: congestion {} failure {} (trimmed {})  retransmissions {}  events {} in {:.2} s ({:.2} M/s)",
        s.drops.congestion,
        s.drops.failure,
        s.drops.trimmed,
        s.retransmissions,
        s.events,
        s.wall_seconds,
        s.events_per_second / 1e6
    );
}

/// Peak resident memory of this process, from /proc (Linux).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The benchmark: 2-tier 400G fat tree, 32 hosts per ToR and 32
/// uplinks (radix 64), 8 MiB permutation, artifact preset.
fn bench(o: &Opts) -> Result<(), String> {
    let get = |k: &str, d: &str| {
        o.flags
            .iter()
            .find(|(f, _)| f == k)
            .map(|(_, v)| v.clone())
            .unwrap_or(d.to_string())
    };
    let hosts = get("--hosts", "1024");
    let lb = get("--lb", "reps");
    let size = get("--size", "8MiB");
    let toml = format!(
        "preset = \"reps_artifact\"\n[topology]\nhosts = {hosts}\nradix = 64\n[lb]\nkind = \"{lb}\"\n[workload]\nkind = \"permutation\"\nsize = \"{size}\"\n"
    );
    let s = Scenario::from_toml(&toml).map_err(|e| e.to_string())?;
    let out = lbsim_core::run(&s, None).map_err(|e| e.to_string())?;
    let sm = &out.summary;
    let size_b = out.messages.first().map(|m| m.size_bytes).unwrap_or(0);
    // Ideal: size at line rate plus one base RTT.
    let ideal_us = size_b as f64 * 8.0 / 400e9 * 1e6 + sm.base_rtt_us;
    println!("bench: {hosts}-host 2-tier 400G, {size} permutation, {lb}, artifact preset");
    print_summary(sm);
    println!(
        "wall {:.2} s  events/s {:.2} M  peak RSS {:.1} MB  max FCT {:.1} us = {:.3} x ideal ({:.1} us)",
        sm.wall_seconds,
        sm.events_per_second / 1e6,
        peak_rss_mb().unwrap_or(f64::NAN),
        sm.max_fct_us,
        sm.max_fct_us / ideal_us,
        ideal_us
    );
    Ok(())
}
