//! Fuzzing (issue 20), as seeded property tests so they run everywhere
//! `cargo test` does (no nightly toolchain, no extra crates):
//!
//! - `random_small_valid_scenarios`: random small scenarios (topology, tiers,
//!   radix, rates, packet sizes, queues (two-class, and shared buffers with
//!   or without PFC), transports (the out-of-order one with or without the
//!   timeout RTS, Go-Back-N, IRN),
//!   every load balancer and
//!   congestion control, every workload, random failures of every kind):
//!   each either is refused with a `ScenarioError`, or runs to the end of a
//!   bounded horizon without a panic, within a wall-clock bound, with the
//!   engine's invariants holding (`lbsim_core::run` checks them), and gives
//!   the same flow table and counters when run again with the same seed;
//! - `mutated_scenario_text`: those scenarios' text mutated (values replaced
//!   by extreme or malformed ones, lines dropped, duplicated or swapped,
//!   garbage inserted, text truncated): parsing, building and (for what fits
//!   a small budget) running never panic or hang.
//!
//! Each case is a pure function of its number: `LBSIM_FUZZ_CASES` (default
//! 60, the CI budget) cases from `LBSIM_FUZZ_SEED` (default 0). A failure
//! prints the case number and its scenario text.

use lbsim_core::build::{self, Limits};
use lbsim_core::rng::{Rng, StreamTag};
use lbsim_core::{metrics, Scenario};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Longest a case may take on a loaded 2-core machine.
const WALL_LIMIT: Duration = Duration::from_secs(60);

struct G(Rng);

impl G {
    fn new(case: u64, salt: u64) -> G {
        G(Rng::new(case, StreamTag::Workload, 0xF022_0000 + salt))
    }
    fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.0.below(xs.len() as u64) as usize]
    }
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.0.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.0.unit() < p
    }
}

/// A random small scenario (most of them valid).
fn scenario_text(case: u64) -> String {
    let mut g = G::new(case, 0);
    let mut t = String::new();
    let preset = g.pick(&["reps_paper", "reps_artifact"]);
    let tiers = g.int(2, 3);
    let radix = *g.pick(&[&4u64, &8]);
    let over = *g.pick(&[&1u64, &1, &2]);
    let uplinks = (radix / (over + 1)).max(1);
    let hpt = uplinks * over;
    let max_tors = if tiers == 2 { radix } else { radix * (radix / 2).max(1) };
    let tors = g.int(1, max_tors.min(8));
    t += &format!(
        "preset = \"{preset}\"\nseed = {case}\nstop_at = \"{}\"\n",
        g.pick(&["2ms", "5ms", "10ms"])
    );
    if g.chance(0.2) {
        t += &format!("stall_rtos = {}\n", g.pick(&["0", "10", "100"]));
    }
    t += &format!(
        "[topology]\ntiers = {tiers}\nradix = {radix}\noversubscription = {over}\nhosts = {}\nlink_rate = \"{}\"\nlink_latency = \"{}\"\nswitch_latency = \"{}\"\n",
        tors * hpt,
        g.pick(&["10Gbps", "100Gbps", "400Gbps"]),
        g.pick(&["100ns", "500ns", "1us"]),
        g.pick(&["0ns", "500ns"]),
    );
    t += &format!("[packet]\nmtu = \"{}\"\n", g.pick(&["1500B", "4096B", "9000B"]));
    let cc = g.pick(&["dctcp", "dctcp", "mprdma", "eqds"]);
    let trimming = if cc == "eqds" { g.chance(0.8) } else { g.chance(0.3) };
    // The RDMA transports (Go-Back-N, IRN) and DCQCN, from their own stream so the other draws
    // stay as they were; they acknowledge every packet and do not trim.
    let mut r = G::new(case, 3);
    let rdma = r.chance(0.25);
    let trimming = trimming && !rdma;
    let (kmin, kmax) = *g.pick(&[&("20%", "80%"), &("10pkt", "15pkt"), &("0%", "100%")]);
    let capacity = g.pick(&["1bdp", "0.5bdp", "2bdp", "20pkt"]);
    let ecn_at = g.pick(&["enqueue", "dequeue"]);
    // Shared-buffer switches with or without PFC, from their own stream so the other draws stay as they were.
    let mut h = G::new(case, 2);
    if h.chance(0.2) {
        let (kmin, kmax) = *h.pick(&[&("10pkt", "15pkt"), &("20KB", "200KB"), &("0B", "1pkt")]);
        t += &format!(
            "[queue]\nkind = \"shared\"\ncapacity = \"{capacity}\"\necn_kmin = \"{kmin}\"\necn_kmax = \"{kmax}\"\necn_pmax = {}\n\
             ecn_at = \"dequeue\"\ntrimming = false\nfull_drop = \"tail\"\ncount_in_service = false\n\
             [queue.shared]\nsize = \"{}\"\negress_alpha = {}\negress_limits_lossless = {}\ndata_class = {}\nscheduling = \"{}\"\npfc = {}\n\
             pfc_alpha = {}\nheadroom = \"{}\"\nhysteresis = \"{}\"\npause_time = \"{}\"\ndeadlock_after = \"{}\"\n",
            h.pick(&["0.2", "1.0"]),
            h.pick(&["512KiB", "2MiB", "4MiB"]),
            h.pick(&["1.0", "0.5", "8"]),
            h.chance(0.5),
            h.int(1, 7),
            h.pick(&["round_robin", "strict"]),
            h.chance(0.7),
            h.pick(&["0.0625", "0.25", "1", "8"]),
            h.pick(&["auto", "auto", "20KB"]),
            h.pick(&["2pkt", "0B", "10KB"]),
            h.pick(&["5us", "50us", "100ns", "1ns"]),
            h.pick(&["1ms", "100us"]),
        );
    } else {
        t += &format!(
            "[queue]\ncapacity = \"{capacity}\"\necn_kmin = \"{kmin}\"\necn_kmax = \"{kmax}\"\necn_at = \"{ecn_at}\"\ntrimming = {trimming}\n",
        );
    }
    let rto = g.pick(&["70us", "auto", "20us"]);
    let ack_ratio = g.pick(&["1", "1", "2", "4", "8"]);
    t += &format!(
        "[transport]\nrto = \"{rto}\"\nack_ratio = {}\nack_delay = \"{}\"\nack_info = \"{}\"\n",
        if rdma { "1" } else { ack_ratio },
        g.pick(&["2us", "never", "500ns"]),
        if rdma {
            "per_packet"
        } else {
            g.pick(&["per_packet", "cumulative_sack"])
        },
    );
    // The window CC's timeout RTS under either preset, from its own stream so the other draws stay as they were.
    if !rdma && matches!(cc, "dctcp" | "mprdma") && G::new(case, 4).chance(0.4) {
        t += "timeout_rts = true\n";
    }
    // The artifact's ACK request on the "sack" transport, from its own stream too.
    if !rdma && G::new(case, 5).chance(0.4) {
        t += "ack_request = true\n";
    }
    let mut cc = cc;
    if rdma {
        t += &format!(
            "kind = \"{}\"\n[transport.rdma]\nnack_interval = \"{}\"\ncnp_on_ooo = {}\nirn_window = \"{}\"\n\
             irn_rto_low = \"{}\"\nirn_rto_high = \"{}\"\nirn_low_inflight = {}\n",
            r.pick(&["gbn", "irn"]),
            r.pick(&["4us", "500ns", "50us"]),
            r.chance(0.5),
            r.pick(&["auto", "1bdp", "20pkt"]),
            r.pick(&["100us", "20us"]),
            r.pick(&["320us", "100us"]),
            r.int(1, 5),
        );
        if r.chance(0.6) {
            cc = "dcqcn";
        }
    }
    t += &format!(
        "[cc]\nkind = \"{cc}\"\nwait_to_decrease = {}\ninitial_cwnd = \"{}\"\n",
        g.chance(0.3),
        g.pick(&["1.5bdp", "1bdp", "10pkt"]),
    );
    let lbs = [
        "ecmp", "ops", "reps", "plb", "flowlet", "subflows", "mprdma", "bitmap", "arcane", "adaptive",
    ];
    t += &format!("[lb]\nkind = \"{}\"\n", g.pick(&lbs.iter().collect::<Vec<_>>()));
    if g.chance(0.15) {
        t += &format!(
            "[[lb.mix]]\nkind = \"{}\"\nfraction = 0.25\n",
            g.pick(&lbs.iter().collect::<Vec<_>>())
        );
    }
    let kind = g.pick(&[
        "permutation",
        "tornado",
        "incast",
        "trace",
        "ring_allreduce",
        "butterfly_allreduce",
        "alltoall",
    ]);
    t += &format!("[workload]\nkind = \"{kind}\"\n");
    let size = g.pick(&["1B", "1000B", "64KiB", "256KiB"]);
    match kind {
        "trace" => {
            t += &format!(
                "cdf = \"{}\"\nload = {}\nduration = \"{}\"\n",
                g.pick(&["websearch", "alistorage2019", "google_rpc2008", "fb_hadoop"]),
                g.pick(&["0.3", "0.8"]),
                g.pick(&["10us", "30us"]),
            )
        }
        "incast" => t += &format!("size = \"{size}\"\nsenders = {}\n", g.int(1, 6)),
        "alltoall" => t += &format!("size = \"{size}\"\nparallel = {}\n", g.int(1, 4)),
        _ => t += &format!("size = \"{size}\"\n"),
    }
    for _ in 0..g.int(0, 2) {
        t += "[[failures]]\n";
        t += match g.int(0, 2) {
            0 => "links = \"tor_uplinks\"\ncount = 1\n",
            1 => "links = \"fabric\"\nfraction = 0.25\n",
            _ => "switch = \"t1_0\"\n",
        };
        if g.chance(0.3) {
            t += "allow_disconnect = true\n";
        }
        let fkind = g.pick(&["down", "degrade", "loss", "drop_nth"]);
        t += &format!("kind = \"{fkind}\"\n");
        t += match fkind {
            "degrade" => "rate = \"1Gbps\"\n",
            "loss" => "loss = 0.05\n",
            "drop_nth" => "nth = 5\n",
            _ => "",
        };
        t += &format!("at = \"{}\"\n", g.pick(&["0us", "5us", "20us"]));
        match g.int(0, 3) {
            0 => t += "duration = \"30us\"\n",
            1 => t += "duration = \"10us\"\nevery = \"40us\"\ntimes = 3\n",
            2 => t += "stagger = \"10us\"\n",
            _ => {}
        }
    }
    t
}

/// What a run gives that must not depend on anything but the scenario.
fn outcome(text: &str, limits: &Limits) -> Result<(String, String), String> {
    let s = Scenario::from_toml(text).map_err(|e| e.to_string())?;
    let out = lbsim_core::run_with(&s, None, limits, u64::MAX, &mut |_| true).map_err(|e| e.to_string())?;
    Ok((
        metrics::flow_table(&out.flows).digest(),
        format!("{:?} {:?}", out.counters, out.stop_reason),
    ))
}

/// Run `f` on its own thread within the wall-clock limit; a panic or a hang fails with the case.
fn guarded<T: Send + 'static>(case: u64, text: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let t0 = Instant::now();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(WALL_LIMIT) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("fuzz case {case} panicked: {msg}\n--- scenario ---\n{text}")
        }
        Err(_) => panic!(
            "fuzz case {case} took longer than {WALL_LIMIT:?} ({:?})\n--- scenario ---\n{text}",
            t0.elapsed()
        ),
    }
}

#[test]
fn random_small_valid_scenarios() {
    let (first, n) = (env_u64("LBSIM_FUZZ_SEED", 0), env_u64("LBSIM_FUZZ_CASES", 60));
    let limits = Limits { max_memory: 1 << 30 };
    let (mut ran, mut refused) = (0, 0);
    let mut refused_by = std::collections::BTreeMap::new();
    let t0 = Instant::now();
    for case in first..first + n {
        let text = scenario_text(case);
        let tx = text.clone();
        let (a, b) = guarded(case, &text, move || (outcome(&tx, &limits), outcome(&tx, &limits)));
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "fuzz case {case}: same seed, different results\n{text}");
                ran += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "fuzz case {case}: refused differently");
                refused += 1;
                let key = a.split(':').next().unwrap_or("").to_string();
                *refused_by.entry(key).or_insert(0u32) += 1;
            }
            (a, b) => panic!("fuzz case {case}: {a:?} then {b:?}\n{text}"),
        }
    }
    eprintln!(
        "fuzz: {n} random scenarios from case {first}: {ran} ran twice with equal results, {refused} refused ({refused_by:?}), in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(ran * 2 > n as usize, "most random scenarios are valid ({ran} of {n})");
}

const NASTY: &[&str] = &[
    "\"1e30s\"",
    "-1",
    "nan",
    "inf",
    "\"\"",
    "9223372036854775807",
    "0",
    "1e308",
    "\"1e30Gbps\"",
    "\"0B\"",
    "\"1.5B\"",
    "\"150%\"",
    "\"-5us\"",
    "[]",
    "{}",
    "true",
    "\"\\u0000\"",
    "\"никогда\"",
    "\"never\"",
    "\"auto\"",
    "\"1000000s\"",
    "\"1000Tbps\"",
    "\"1Kbps\"",
    "\"1048576GiB\"",
    "4294967295",
    "65536",
    "\"0ns\"",
    "\"1e-9ps\"",
    "\"999999999999bdp\"",
    "\"1PiB\"",
];

fn mutate(text: &str, g: &mut G) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // Half the texts get one mutation, so that many still parse and reach the build and the run.
    let n = if g.chance(0.5) { 1 } else { g.int(2, 4) };
    for _ in 0..n {
        let i = g.int(0, lines.len().max(1) as u64 - 1) as usize;
        match g.int(0, 6) {
            0..=2 => {
                if let Some((k, v)) = lines[i].split_once('=') {
                    // Mostly a value of the same TOML type (a quoted quantity for a quoted one), so it parses.
                    let quoted = v.trim_start().starts_with('"');
                    let same: Vec<&str> = NASTY.iter().copied().filter(|x| x.starts_with('"') == quoted).collect();
                    let value = if g.chance(0.8) { g.pick(&same) } else { g.pick(NASTY) };
                    lines[i] = format!("{k}= {value}");
                }
            }
            3 => {
                lines.remove(i);
            }
            4 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            5 => {
                let j = g.int(0, lines.len() as u64 - 1) as usize;
                lines.swap(i, j);
            }
            _ => {
                let junk: String = (0..g.int(1, 12)).map(|_| char::from(g.int(0x20, 0x7e) as u8)).collect();
                lines.insert(i, junk);
            }
        }
        if lines.is_empty() {
            break;
        }
    }
    let mut out = lines.join("\n");
    if g.chance(0.1) {
        let cut = g.int(0, out.len() as u64) as usize;
        out = out
            .char_indices()
            .take_while(|(i, _)| *i < cut)
            .map(|(_, c)| c)
            .collect();
    }
    out
}

#[test]
fn mutated_scenario_text() {
    let (first, n) = (env_u64("LBSIM_FUZZ_SEED", 0), env_u64("LBSIM_FUZZ_CASES", 60));
    let (mut parsed, mut built, mut ran) = (0, 0, 0);
    for case in first..first + n {
        let mut g = G::new(case, 1);
        let text = mutate(&scenario_text(case), &mut g);
        let tx = text.clone();
        let r = guarded(case, &text, move || {
            let Ok(s) = Scenario::from_toml(&tx) else { return 0 };
            let limits = Limits { max_memory: 256 << 20 };
            let Ok((_, est)) = build::build_with(&s, None, &limits) else {
                return 1;
            };
            if est.packets > 2e5 || est.flows > 5e3 {
                return 2;
            }
            // A bounded horizon, whatever the text says.
            let capped = Scenario::from_toml_with(&tx, &[("stop_at".into(), "20ms".into())]).expect("parsed before");
            lbsim_core::run_with(&capped, None, &limits, u64::MAX, &mut |_| true).expect("built before");
            3
        });
        parsed += (r >= 1) as u32;
        built += (r >= 2) as u32;
        ran += (r == 3) as u32;
    }
    eprintln!("fuzz: {n} mutated scenario texts from case {first}: {parsed} parsed, {built} built, {ran} ran");
}

// ---- Key families (issue 45): the RDMA fabric, the switch balancers, FaCa and the flow-level
// mode, each with its own keys set to values drawn from ordinary and extreme ones.

/// Values a key of each kind is set to: ordinary ones and the extremes a hostile input tries.
const TIMES: &[&str] = &[
    "\"0ns\"",
    "\"1ps\"",
    "\"2ps\"",
    "\"1ns\"",
    "\"100ns\"",
    "\"1us\"",
    "\"5us\"",
    "\"100us\"",
    "\"10ms\"",
    "\"1000000s\"",
    "\"auto\"",
    "\"never\"",
];
const AMOUNTS: &[&str] = &[
    "\"0B\"", "\"1B\"", "\"64B\"", "\"1pkt\"", "\"2pkt\"", "\"20KB\"", "\"1bdp\"", "\"9MiB\"", "\"1PiB\"", "\"auto\"",
    "\"50%\"",
];
const FLOATS: &[&str] = &[
    "0", "1e-300", "1e-9", "0.0625", "0.5", "1", "8", "1e308", "-1", "nan", "inf",
];
const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "8",
    "31",
    "255",
    "65535",
    "65536",
    "4294967295",
    "9223372036854775807",
    "-1",
];
const BOOLS: &[&str] = &["true", "false"];
const RATES: &[&str] = &[
    "\"1Kbps\"",
    "\"1Mbps\"",
    "\"40Gbps\"",
    "\"100Gbps\"",
    "\"1000Tbps\"",
    "\"0Gbps\"",
];

/// A family's keys and the pool each draws its values from.
fn family_keys(family: &str) -> Vec<(&'static str, &'static [&'static str])> {
    match family {
        "rdma" => vec![
            ("transport.rdma.nack_interval", TIMES),
            ("transport.rdma.cnp_on_ooo", BOOLS),
            ("transport.rdma.irn_window", AMOUNTS),
            ("transport.rdma.irn_rto_low", TIMES),
            ("transport.rdma.irn_rto_high", TIMES),
            ("transport.rdma.irn_low_inflight", INTS),
            ("transport.rto", TIMES),
            ("queue.shared.size", AMOUNTS),
            ("queue.shared.egress_alpha", FLOATS),
            ("queue.shared.egress_limits_lossless", BOOLS),
            ("queue.shared.pfc_alpha", FLOATS),
            ("queue.shared.headroom", AMOUNTS),
            ("queue.shared.hysteresis", AMOUNTS),
            ("queue.shared.pause_time", TIMES),
            ("queue.shared.deadlock_after", TIMES),
            ("queue.shared.data_class", INTS),
            ("queue.ecn_kmin", AMOUNTS),
            ("queue.ecn_kmax", AMOUNTS),
            ("queue.ecn_pmax", FLOATS),
            ("cc.dcqcn.g", FLOATS),
            ("cc.dcqcn.alpha_interval", TIMES),
            ("cc.dcqcn.decrease_interval", TIMES),
            ("cc.dcqcn.increase_interval", TIMES),
            ("cc.dcqcn.rate_on_first_cnp", FLOATS),
            ("cc.dcqcn.fast_recovery", INTS),
            ("cc.dcqcn.ai", RATES),
            ("cc.dcqcn.hai", RATES),
            ("cc.dcqcn.min_rate", RATES),
        ],
        "switch_lb" => vec![
            ("lb.conga.flowlet_timeout", TIMES),
            ("lb.conga.dre_period", TIMES),
            ("lb.conga.dre_alpha", FLOATS),
            ("lb.conga.quantize_bits", INTS),
            ("lb.conga.aging", TIMES),
            ("lb.letflow.flowlet_timeout", TIMES),
            ("lb.drill.samples", INTS),
            ("lb.drill.memory", INTS),
            ("lb.conweave.reply_timeout", TIMES),
            ("lb.conweave.reply_extra", TIMES),
            ("lb.conweave.path_busy", TIMES),
            ("lb.conweave.inactive", TIMES),
            ("lb.conweave.resume_default", TIMES),
            ("lb.conweave.resume_extra", TIMES),
            ("lb.conweave.reorder_queues", INTS),
            ("lb.conweave.path_aware", BOOLS),
            (
                "lb.wcmp.weights",
                &[
                    "[1, 1, 1, 1]",
                    "[0, 0, 0, 1]",
                    "[4294967295, 1, 1, 1]",
                    "[9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807]",
                    "[1, 2]",
                    "[]",
                    "[-1, 1, 1, 1]",
                ],
            ),
            ("lb.entropy_space", INTS),
            ("routing.convergence", TIMES),
        ],
        "faca" => vec![
            ("lb.faca.probe_interval", TIMES),
            ("lb.faca.probe_rounds", INTS),
            ("lb.faca.probe_evs", INTS),
            ("lb.faca.k", FLOATS),
            ("lb.faca.beta", &["\"used\"", "\"capacity\"", "\"other\""]),
            ("lb.faca.probe_bytes", INTS),
            ("lb.faca.record_bytes", INTS),
            ("lb.entropy_space", INTS),
            ("observe.host_lb", BOOLS),
        ],
        "flow_level" => vec![
            ("lb.kind", &["\"ecmp\"", "\"wcmp\"", "\"faca\"", "\"reps\""]),
            (
                "lb.wcmp.weights",
                &[
                    "[1, 1, 1, 1]",
                    "[0, 0, 0, 1]",
                    "[4294967295, 4294967295, 4294967295, 4294967295]",
                    "[1]",
                ],
            ),
            ("lb.entropy_space", INTS),
            ("lb.faca.probe_evs", INTS),
            ("workload.parallel", INTS),
            ("topology.link_rate", RATES),
            ("topology.oversubscription", INTS),
            ("seed", INTS),
        ],
        _ => unreachable!("no family {family}"),
    }
}

/// A small base scenario of the family (32 hosts, 2 or 3 tiers) and 1 to 4 of its keys drawn.
fn family_case(family: &str, case: u64) -> (String, Vec<(String, String)>) {
    let mut g = G::new(case, 0x45_0000 + family.len() as u64);
    let three = g.chance(0.3);
    let topo = if three {
        "[topology]\ntiers = 3\nradix = 8\nhosts = 32\nhosts_per_tor = 4\nuplinks_per_tor = 4\n"
    } else {
        "[topology]\nhosts = 32\nradix = 24\nhosts_per_tor = 16\nuplinks_per_tor = 4\n"
    };
    let preset = g.pick(&["rdma_lossless", "rdma_irn"]);
    let lb = match family {
        "switch_lb" => g.pick(&["conga", "letflow", "drill", "conweave", "wcmp"]),
        "faca" => "faca",
        "flow_level" => g.pick(&["ecmp", "wcmp", "faca"]),
        _ => g.pick(&["ecmp", "conweave", "drill"]),
    };
    let workload = if family == "flow_level" {
        "[workload]\nkind = \"permutation\"\nparallel = 4\n".to_string()
    } else if g.chance(0.5) {
        format!(
            "[workload]\nkind = \"trace\"\ncdf = \"{}\"\nload = {}\nduration = \"20us\"\n",
            g.pick(&["alistorage2019", "websearch", "solar2022"]),
            g.pick(&["0.3", "0.8"])
        )
    } else {
        format!(
            "[workload]\nkind = \"incast\"\nsize = \"{}\"\nsenders = {}\n",
            g.pick(&["4KiB", "64KiB"]),
            g.int(1, 8)
        )
    };
    let failure = if family != "flow_level" && g.chance(0.3) {
        "[[failures]]\nlinks = \"tor_uplinks\"\nof = \"t0_0\"\ncount = 2\nat = \"5us\"\nduration = \"20us\"\n"
    } else {
        ""
    };
    let base = format!(
        "preset = \"{preset}\"\nseed = {case}\nstop_at = \"2ms\"\n{topo}[lb]\nkind = \"{lb}\"\n{workload}{failure}"
    );
    let keys = family_keys(family);
    let overrides = (0..g.int(1, 4))
        .map(|_| {
            let (k, pool) = keys[g.int(0, keys.len() as u64 - 1) as usize];
            (k.to_string(), g.pick(pool).to_string())
        })
        .collect();
    (base, overrides)
}

/// One case: refused, or built and run to its end within the limits, the
/// engine's invariants holding (`run_with` asserts them); flow-level: every
/// flow's rate within its path's capacities. Returns 0 refused, 1 too large to run here, 2 ran.
fn family_outcome(family: &str, base: &str, overrides: &[(String, String)]) -> u32 {
    let Ok(s) = Scenario::from_toml_with(base, overrides) else {
        return 0;
    };
    let limits = Limits { max_memory: 256 << 20 };
    if family == "flow_level" {
        let Ok(out) = lbsim_core::flowlevel::run_with(&s, None, &limits) else {
            return 0;
        };
        for f in &out.flows {
            let cap = f
                .path
                .iter()
                .map(|&p| out.ports[p as usize].capacity_bps)
                .fold(f64::INFINITY, f64::min);
            assert!(
                f.rate_bps >= 0.0 && f.rate_bps <= cap * (1.0 + 1e-9),
                "flow {} at {} > {cap}",
                f.id,
                f.rate_bps
            );
        }
        for p in &out.ports {
            assert!(
                p.throughput_bps <= p.capacity_bps * (1.0 + 1e-9),
                "{} over its capacity",
                p.name
            );
        }
        return 2;
    }
    let Ok((_, est)) = build::build_with(&s, None, &limits) else {
        return 0;
    };
    if est.packets > 2e5 || est.flows > 5e3 {
        return 1;
    }
    lbsim_core::run_with(&s, None, &limits, u64::MAX, &mut |_| true).expect("built before");
    2
}

/// `LBSIM_FUZZ_FAMILY_CASES` cases per family (default 25 in `cargo test`; the
/// issue's 10^4 per family is `LBSIM_FUZZ_FAMILY_CASES=10000 cargo test --release
/// --test fuzz key_families -- --nocapture`, docs/scenarios.md "Limits").
#[test]
fn key_families() {
    let (first, n) = (env_u64("LBSIM_FUZZ_SEED", 0), env_u64("LBSIM_FUZZ_FAMILY_CASES", 25));
    for family in ["rdma", "switch_lb", "faca", "flow_level"] {
        let t0 = Instant::now();
        let mut counts = [0u32; 3];
        let mut slowest = (Duration::ZERO, 0);
        for case in first..first + n {
            let (base, overrides) = family_case(family, case);
            let text = format!("{base}# --set {overrides:?}\n");
            let (b, o) = (base.clone(), overrides.clone());
            let started = Instant::now();
            let r = guarded(case, &text, move || family_outcome(family, &b, &o));
            slowest = slowest.max((started.elapsed(), case));
            counts[r as usize] += 1;
        }
        eprintln!(
            "fuzz {family}: {n} cases from {first}: {} refused, {} too large to run here, {} ran; {:.1} s, slowest case {} in {:.2} s",
            counts[0],
            counts[1],
            counts[2],
            t0.elapsed().as_secs_f64(),
            slowest.1,
            slowest.0.as_secs_f64()
        );
        assert!(counts[2] > 0 || n < 10, "{family}: some cases run");
    }
}
