//! lbsim-cli: run a scenario or the engine benchmark without Python.
//!
//!   lbsim-cli run FILE [--set key=value]... [--out DIR] [--max-memory SIZE]
//!   lbsim-cli validate FILE [--set key=value]... [--max-memory SIZE]
//!   lbsim-cli flow-level FILE [--set key=value]... [--out DIR] [--max-memory SIZE]
//!   lbsim-cli bench [--case reps|rdma|flow-level] [--hosts N] [--tiers 2|3] [--radix K] [--lb KIND]
//!                   [--size SIZE] [--flows N] [--repeat N] [--lines auto|lazy|eager] [--json]
//!
//! Errors (bad arguments, an unreadable file, an invalid scenario, a results
//! directory that cannot be written, a run estimated to need more memory than
//! `--max-memory`) print one line on stderr and exit with status 2, before
//! anything runs.

use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand};
use lbsim_core::build::Limits;
use lbsim_core::{RunOutput, Scenario};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXIT_USER: u8 = 2;

#[derive(Parser)]
#[command(
    name = "lbsim-cli",
    version,
    about = "Packet-level datacenter network simulator (the engine without Python)",
    arg_required_else_help = false
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario and write its results (scenario.toml, summary.json, flows.csv, ...) to DIR.
    Run {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Results directory (default results/<scenario name>); an earlier run there is replaced whole.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Flow-level mode: no packets; each flow on its ECMP/WCMP/FaCa path at its max-min fair rate
    /// (message sizes do not apply).
    /// Writes scenario.toml, flows.csv, ports.csv and summary.json to DIR.
    FlowLevel {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Results directory (default results/<scenario name>-flow-level); an earlier result there is replaced whole.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Parse a scenario and build its network without running it.
    Validate {
        #[command(flatten)]
        scenario: ScenarioArgs,
    },
    /// Time the engine on the 400G permutation benchmark (artifact preset, radix 64 unless --radix
    /// says; 2 tiers up to 2048 hosts, 3 beyond).
    Bench(BenchArgs),
}

#[derive(Args)]
struct ScenarioArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Override a scenario key, e.g. --set lb.kind=ops (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value)]
    sets: Vec<(String, String)>,
    /// Refuse a run estimated to need more memory than this (e.g. 8GiB, 64GiB).
    #[arg(long, value_name = "SIZE", default_value = "8GiB", value_parser = memory)]
    max_memory: u64,
}

fn memory(text: &str) -> Result<u64, String> {
    match lbsim_core::scenario::units::parse_amount(text) {
        Ok(lbsim_core::scenario::AmountValue::Bytes(b)) if b > 0 => Ok(b),
        _ => Err(format!(
            "expected an amount of memory such as \"8GiB\" (B, KiB, MiB, GiB, TiB, KB, MB, GB or TB), got \"{text}\""
        )),
    }
}

/// How switch ports and NICs schedule transmissions (`lbsim_core::LineMode`; results are the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Lines {
    /// Lazy lines on networks of up to 6144 switch ports (NICs too up to 1024 hosts), TxDone events beyond.
    Auto,
    /// No TxDone events at switch ports or NICs: a line starts its next packet when it is next looked at.
    Lazy,
    /// A TxDone event for every transmission something waits behind.
    Eager,
}

/// The benchmark cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BenchCase {
    /// REPS world: a permutation on the 400G fat tree of radix 64 (artifact preset; or
    /// --radix): 2 tiers up to 2048 hosts, 3 tiers beyond (up to 65 536), or as --tiers says.
    Reps,
    /// RDMA world: ConWeave's 128-host leaf-spine, PFC + Go-Back-N + DCQCN, AliStorage
    /// at 50 % load for 3 ms (preset rdma_lossless; --lb conweave for ConWeave's own
    /// benchmark); --hosts, --tiers, --radix and --size do not apply.
    Rdma,
    /// Flow-level mode: --flows random host pairs (seeded) on a 3-tier fat tree of 16-port
    /// switches (up to 1024 hosts), ECMP by default; times placing the flows and their max-min rates.
    FlowLevel,
}

#[derive(Args)]
struct BenchArgs {
    #[arg(long, value_enum, default_value_t = BenchCase::Reps)]
    case: BenchCase,
    /// Hosts of the fat tree.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    hosts: u32,
    /// Tiers of the reps case's fat tree (default: 2 when a 2-tier tree of the radix holds
    /// the hosts, radix^2/2: 2048 at radix 64; else 3).
    #[arg(long, value_name = "2|3", value_parser = clap::value_parser!(u8).range(2..=3))]
    tiers: Option<u8>,
    /// Ports per switch of the reps case's fat tree (topology.radix): 64 as in the REPS
    /// artifact; 128 (51.2 Tb/s switches of 400G ports) holds 8192 hosts on 2 tiers.
    #[arg(long, value_name = "K", default_value_t = 64)]
    radix: u32,
    /// Load balancer (lb.kind); default reps, or ecmp for --case rdma.
    #[arg(long, value_name = "KIND")]
    lb: Option<String>,
    /// Message size of the permutation (workload.size), e.g. 8MiB.
    #[arg(long, value_name = "SIZE", default_value = "8MiB")]
    size: String,
    /// Flows of the flow-level case.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    flows: u32,
    /// Run the packet-level case N times and report the fastest and the median
    /// (timings on a shared machine vary by up to 2x; the results must not).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// How switch ports schedule transmissions (results do not change).
    #[arg(long, value_enum, default_value_t = Lines::Auto)]
    lines: Lines,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected key=value, got \"{text}\"")),
    }
}

#[global_allocator]
static ALLOCATOR: lbsim_core::alloc::Allocator = lbsim_core::alloc::Allocator;

fn main() -> ExitCode {
    lbsim_core::alloc::configure();
    quit_quietly_on_closed_stdout();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // The first paragraph names the problem; tips and usage follow it.
            let rendered = e.to_string();
            let problem = rendered.split("\n\n").next().unwrap_or(&rendered);
            eprintln!("{} (see lbsim-cli --help)", one_line(problem));
            return ExitCode::from(EXIT_USER);
        }
    };
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {}", one_line(&msg));
            ExitCode::from(EXIT_USER)
        }
    }
}

/// `lbsim-cli run ... | head -1`: when the reader goes away, end the way
/// Unix tools do (SIGPIPE) instead of panicking in `println!`. The results
/// are on disk by the time the summary is printed.
fn quit_quietly_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A message on one line: its lines trimmed and joined by spaces.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn load(a: &ScenarioArgs) -> Result<(Scenario, Option<PathBuf>), String> {
    let file = &a.file;
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "{}: not a scenario file: a scenario is TOML text (UTF-8)",
            file.display()
        )
    })?;
    let s = Scenario::from_toml_with(&text, &a.sets).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((s, file.parent().map(Path::to_path_buf)))
}

fn dispatch(cmd: Command) -> Result<(), String> {
    match cmd {
        Command::Run { scenario, out } => {
            let (s, base) = load(&scenario)?;
            for w in lbsim_core::scenario::warnings(&s) {
                eprintln!("warning: {w}");
            }
            let dir = out.unwrap_or_else(|| PathBuf::from("results").join(s.name.clone().unwrap_or("run".into())));
            // Before the run, not after it: a bad --out must not cost the simulation.
            lbsim_core::check_output_dir(&dir)?;
            let limits = Limits {
                max_memory: scenario.max_memory,
            };
            let output = lbsim_core::run_with(&s, base.as_deref(), &limits, u64::MAX, &mut |_| true)
                .map_err(|e| e.to_string())?;
            output
                .write_dir(&dir)
                .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
            print_summary(&output.summary);
            if let Some(note) = &output.stop_note {
                println!("stopped early: {note}");
            }
            println!("results: {}", dir.display());
            Ok(())
        }
        Command::Validate { scenario } => {
            let (s, base) = load(&scenario)?;
            for w in lbsim_core::scenario::warnings(&s) {
                eprintln!("warning: {w}");
            }
            let limits = Limits {
                max_memory: scenario.max_memory,
            };
            let (sim, est) = lbsim_core::build::build_with(&s, base.as_deref(), &limits).map_err(|e| e.to_string())?;
            println!(
                "ok: {} flows, about {:.0} MiB estimated",
                sim.flows.len(),
                (est.bytes / (1u64 << 20) as f64).ceil()
            );
            Ok(())
        }
        Command::FlowLevel { scenario, out } => {
            let (s, base) = load(&scenario)?;
            let dir = out.unwrap_or_else(|| {
                PathBuf::from("results").join(format!("{}-flow-level", s.name.clone().unwrap_or("run".into())))
            });
            lbsim_core::check_output_dir(&dir)?;
            let limits = Limits {
                max_memory: scenario.max_memory,
            };
            let out = lbsim_core::flowlevel::run_with(&s, base.as_deref(), &limits).map_err(|e| e.to_string())?;
            out.write_dir(&dir)
                .map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
            let sm = &out.summary;
            println!(
                "flows {}  rate min {:.2} / mean {:.2} / max {:.2} Gb/s  congestion rate {:.4} ({} flows)",
                sm.flows,
                sm.min_rate_bps / 1e9,
                sm.mean_rate_bps / 1e9,
                sm.max_rate_bps / 1e9,
                sm.congestion_rate,
                sm.congested_flows
            );
            for (class, c) in &sm.classes {
                println!(
                    "  {class:<10} ports {:>5}  max {:>8.2}  min {:>8.2}  drop {:>8.2}  std {:>8.2} Gb/s",
                    c.ports,
                    c.max_bps / 1e9,
                    c.min_bps / 1e9,
                    c.drop_bps / 1e9,
                    c.std_bps / 1e9
                );
            }
            println!("results: {}", dir.display());
            Ok(())
        }
        Command::Bench(b) => bench(&b),
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

/// CPU time this (single-threaded) process has used so far, from /proc
/// (Linux): unlike wall time, it does not count time other processes had the core.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Peak resident memory of this process, from /proc (Linux).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Repeated runs of one scenario must agree exactly (the engine is
/// deterministic); a difference is a bug worth stopping the benchmark for.
fn check_same_results(a: &RunOutput, b: &RunOutput) -> Result<(), String> {
    let key = |o: &RunOutput| {
        (
            o.summary.events,
            o.summary.max_fct_us.to_bits(),
            o.summary.mean_fct_us.to_bits(),
        )
    };
    if key(a) == key(b) {
        Ok(())
    } else {
        Err(format!(
            "bench: two runs of the same scenario differ ({} vs {} events): the engine is not deterministic",
            a.summary.events, b.summary.events
        ))
    }
}

/// The ideal workload completion time: the largest of the engine's per-message
/// ideals (each message alone on its path of the idle network), NaN without messages.
fn ideal_fct_us(out: &RunOutput) -> f64 {
    out.messages
        .iter()
        .map(|m| m.ideal_fct_us)
        .reduce(f64::max)
        .unwrap_or(f64::NAN)
}

/// The flow-level benchmark: `--flows` seeded random pairs of distinct hosts
/// (a flows file in a temporary folder), each a persistent flow; times the
/// whole of `flowlevel::run` (building the tree and flows, placing them,
/// the max-min rates and the summary).
fn bench_flow_level(b: &BenchArgs) -> Result<(), String> {
    let lb = b.lb.clone().unwrap_or_else(|| "ecmp".into());
    if b.hosts < 2 {
        return Err("--hosts: the flow-level case needs at least 2 hosts".into());
    }
    let dir = std::env::temp_dir().join(format!("lbsim-bench-flow-level-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut rng = lbsim_core::rng::Rng::new(1, lbsim_core::rng::StreamTag::Workload, u64::MAX);
    let mut rows = String::from("src,dst,size_bytes,start_us\n");
    for _ in 0..b.flows {
        let src = rng.below(b.hosts as u64);
        let dst = (src + 1 + rng.below(b.hosts as u64 - 1)) % b.hosts as u64;
        rows += &format!("{src},{dst},1000000,0\n");
    }
    std::fs::write(dir.join("flows.csv"), rows).map_err(|e| e.to_string())?;
    let text = "[topology]\ntiers = 3\nradix = 16\n[workload]\nkind = \"flows\"\nfile = \"flows.csv\"\n";
    let overrides = vec![
        ("topology.hosts".to_string(), b.hosts.to_string()),
        ("lb.kind".to_string(), lb.clone()),
    ];
    let result = Scenario::from_toml_with(text, &overrides)
        .map_err(|e| e.to_string())
        .and_then(|s| {
            let t0 = std::time::Instant::now();
            let out = lbsim_core::flowlevel::run(&s, Some(&dir)).map_err(|e| e.to_string())?;
            Ok((out, t0.elapsed().as_secs_f64()))
        });
    let _ = std::fs::remove_dir_all(&dir);
    let (out, wall) = result?;
    let sm = &out.summary;
    let rss = peak_rss_mb();
    if b.json {
        let j = serde_json::json!({
            "case": "flow-level",
            "hosts": b.hosts,
            "lb": lb,
            "flows": sm.flows,
            "wall_seconds": wall,
            "peak_rss_mb": rss,
            "congestion_rate": sm.congestion_rate,
            "mean_rate_bps": sm.mean_rate_bps,
        });
        println!("{j}");
        return Ok(());
    }
    println!(
        "bench: flow-level, {} random flows on a {}-host 3-tier fat tree (16-port switches), {}",
        sm.flows, b.hosts, lb
    );
    println!(
        "wall {:.3} s  peak RSS {:.1} MB  mean rate {:.2} Gb/s  congestion rate {:.4}",
        wall,
        rss.unwrap_or(f64::NAN),
        sm.mean_rate_bps / 1e9,
        sm.congestion_rate
    );
    Ok(())
}

/// The packet-level benchmarks: the REPS world's permutation on a 400G fat
/// tree of radix 64 (artifact preset), or the RDMA world's leaf-spine. The
/// arguments reach the scenario as overrides, so the core checks them and
/// names the key.
fn bench(b: &BenchArgs) -> Result<(), String> {
    const BASE: &str = "preset = \"reps_artifact\"\n[workload]\nkind = \"permutation\"\n";
    const RDMA: &str = "preset = \"rdma_lossless\"\n";
    // A 2-tier tree of radix k holds k ToRs of k/2 hosts (64 x 32 at radix 64; the
    // core's hosts per ToR at 1:1, rounded down for an odd k).
    let two_tier_hosts = u64::from(b.radix) * u64::from(b.radix / 2);
    let tiers = b
        .tiers
        .unwrap_or(if u64::from(b.hosts) <= two_tier_hosts { 2 } else { 3 });
    // The packet-level cases: their scenario, the default balancer and how the text output names them.
    let (base, default_lb, title) = match b.case {
        BenchCase::Reps => (
            BASE,
            "reps",
            format!(
                "{}-host {tiers}-tier radix-{} 400G, {} permutation",
                b.hosts, b.radix, b.size
            ),
        ),
        BenchCase::Rdma => (
            RDMA,
            "ecmp",
            "128-host leaf-spine 100G, PFC + Go-Back-N + DCQCN, AliStorage 50 % for 3 ms".to_string(),
        ),
        BenchCase::FlowLevel => return bench_flow_level(b),
    };
    let lb = b.lb.clone().unwrap_or_else(|| default_lb.into());
    let mut overrides = vec![("lb.kind".to_string(), lb.clone())];
    if b.case == BenchCase::Reps {
        overrides.push(("topology.hosts".to_string(), b.hosts.to_string()));
        overrides.push(("topology.tiers".to_string(), tiers.to_string()));
        overrides.push(("topology.radix".to_string(), b.radix.to_string()));
        overrides.push(("workload.size".to_string(), b.size.clone()));
    }
    let s = Scenario::from_toml_with(base, &overrides).map_err(|e| e.to_string())?;
    let dir = std::env::current_dir().map_err(|e| e.to_string())?;
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut out = None;
    let mode = match b.lines {
        Lines::Auto => lbsim_core::LineMode::Auto,
        Lines::Lazy => lbsim_core::LineMode::Lazy,
        Lines::Eager => lbsim_core::LineMode::Eager,
    };
    let mut lazy = false;
    // Packets put on links: the same work whether lines are lazy or eager,
    // which changes the event count (docs/performance.md, "Lazy lines").
    let mut hops = 0u64;
    for _ in 0..b.repeat {
        let cpu0 = cpu_seconds();
        let (mut sim, estimate) =
            lbsim_core::build::build_with(&s, Some(&dir), &Limits::default()).map_err(|e| e.to_string())?;
        sim.set_line_mode(mode);
        let run = lbsim_core::run_built(&s, &mut sim, estimate, u64::MAX, &mut |_| true);
        lazy = run.lazy_lines;
        hops = sim.net.ports.iter().map(|p| p.tx_packets).sum();
        walls.push(run.summary.wall_seconds);
        cpus.extend(cpu0.zip(cpu_seconds()).map(|(a, b)| b - a));
        if let Some(first) = &out {
            check_same_results(first, &run)?;
        }
        out.get_or_insert(run);
    }
    let out = out.expect("at least one run");
    walls.sort_by(f64::total_cmp);
    let (fastest, median) = (walls[0], walls[walls.len() / 2]);
    let cpu = cpus.into_iter().reduce(f64::min);
    let sm = &out.summary;
    let ideal_us = ideal_fct_us(&out);
    let rss = peak_rss_mb();
    if b.json {
        let size_bytes = out.messages.first().map(|m| m.size_bytes);
        let j = serde_json::json!({
            "case": format!("{:?}", b.case).to_lowercase(),
            "hosts": s.topology.hosts,
            "tiers": s.topology.tiers,
            "radix": s.topology.radix,
            "lb": lb,
            "size": b.size,
            "size_bytes": size_bytes,
            "events": sm.events,
            "lines": if lazy { "lazy" } else { "eager" },
            "repeat": b.repeat,
            "wall_seconds": fastest,
            "wall_seconds_median": median,
            "cpu_seconds": cpu,
            "events_per_second": sm.events as f64 / fastest,
            "hops": hops,
            "hops_per_second": hops as f64 / fastest,
            "peak_rss_mb": rss,
            "max_fct_us": sm.max_fct_us,
            "ideal_fct_us": ideal_us,
        });
        println!("{j}");
        return Ok(());
    }
    let lines = if lazy { "lazy lines" } else { "eager lines" };
    match b.case {
        BenchCase::Reps => println!("bench: {title}, {lb}, artifact preset, {lines}"),
        _ => println!("bench: {title}, {lb}, {lines}"),
    }
    print_summary(sm);
    if b.repeat > 1 {
        println!("{} runs: fastest {fastest:.2} s, median {median:.2} s", b.repeat);
    }
    println!(
        "wall {:.2} s  events/s {:.2} M  hops/s {:.2} M  peak RSS {:.1} MB  max FCT {:.1} us = {:.3} x ideal ({:.1} us)",
        fastest,
        sm.events as f64 / fastest / 1e6,
        hops as f64 / fastest / 1e6,
        rss.unwrap_or(f64::NAN),
        sm.max_fct_us,
        sm.max_fct_us / ideal_us,
        ideal_us
    );
    Ok(())
}
