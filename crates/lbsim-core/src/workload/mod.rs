//! Traffic patterns (REPS §4.2): permutation, tornado, N-to-1 incast, and an
//! explicit flow list from a CSV file.

pub mod cdf;

use crate::rng::{Rng, StreamTag};
use crate::scenario::{Arrivals, ScenarioError, Workload, WorkloadKind};
use crate::time::{Rate, SimTime};
use crate::transport::FlowSpec;
use cdf::SizeCdf;
use std::path::Path;

/// A seeded random derangement: every host sends one message and receives
/// one, never to itself (shuffle, rejecting fixed points).
pub fn permutation(hosts: u32, rng: &mut Rng) -> Vec<u32> {
    let mut dst: Vec<u32> = (0..hosts).collect();
    loop {
        rng.shuffle(&mut dst);
        if dst.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return dst;
        }
    }
}

/// Host i sends to the host in the same position in the other half of the
/// tree (REPS §4.2: with 128 nodes, 0 sends to 64 and 64 to 0).
pub fn tornado(hosts: u32) -> Vec<u32> {
    (0..hosts).map(|i| (i + hosts / 2) % hosts).collect()
}

/// Flows with sizes from `cdf` arriving at every host from `start` for
/// `duration`, offering `load` × `rate` on average, each to a uniformly random
/// other host. Each host draws from its own stream (so hosts are independent
/// and adding one does not move the others' flows). Flows are ordered by start.
pub fn trace(
    cdf: &SizeCdf,
    hosts: u32,
    rate: Rate,
    load: f64,
    start: SimTime,
    duration: SimTime,
    arrivals: Arrivals,
    seed: u64,
) -> Vec<FlowSpec> {
    let mean_gap_s = cdf.mean() * 8.0 / (load * rate.bps() as f64);
    let end = start + duration;
    let mut flows = Vec::new();
    for src in 0..hosts {
        let mut rng = Rng::new(seed, StreamTag::Workload, 1 + src as u64);
        let mut t = start.ps() as f64;
        loop {
            let size = cdf.sample(&mut rng);
            let at = match arrivals {
                // Exponential gap, mean = mean size at the load's rate (ConWeave traffic_gen.py).
                Arrivals::Poisson => {
                    t += -(1.0 - rng.unit()).ln() * mean_gap_s * 1e12;
                    t
                }
                // Back to back at the load's rate: the next flow waits this one's size (REPS artifact traffic_gen.py).
                Arrivals::Deterministic => {
                    let at = t;
                    t += size as f64 * 8.0 / (load * rate.bps() as f64) * 1e12;
                    at
                }
            };
            if at >= end.ps() as f64 {
                break;
            }
            let mut dst = rng.below(hosts as u64 - 1) as u32;
            if dst >= src {
                dst += 1;
            }
            flows.push(FlowSpec {
                src,
                dst,
                size,
                start: SimTime(at as u64),
            });
        }
    }
    flows.sort_by_key(|f| (f.start, f.src));
    flows
}

pub fn generate(
    w: &Workload,
    hosts: u32,
    rate: Rate,
    seed: u64,
    base_dir: Option<&Path>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let size = w
        .size
        .as_ref()
        .map(|a| a.bytes(0, 0, None))
        .transpose()
        .map_err(|e| ScenarioError::new("workload.size", e))?;
    if let (Some(0), Some(a)) = (size, w.size.as_ref()) {
        return Err(ScenarioError::new(
            "workload.size",
            format!("must be positive, got \"{}\"", a.text),
        ));
    }
    let start = w.start.as_ref().map(|t| t.value).unwrap_or(SimTime::ZERO);
    let mut rng = Rng::new(seed, StreamTag::Workload, 0);
    let specs = match w.kind {
        WorkloadKind::Permutation | WorkloadKind::Tornado => {
            if hosts < 2 {
                return Err(ScenarioError::new(
                    "topology.hosts",
                    "a permutation needs at least 2 hosts",
                ));
            }
            let dst = if w.kind == WorkloadKind::Permutation {
                permutation(hosts, &mut rng)
            } else {
                tornado(hosts)
            };
            let size = size.expect("checked by the scenario");
            dst.iter()
                .enumerate()
                .map(|(s, &d)| FlowSpec {
                    src: s as u32,
                    dst: d,
                    size,
                    start,
                })
                .collect()
        }
        WorkloadKind::Incast => {
            let n = w.senders.expect("checked by the scenario");
            let receiver = w.receiver.unwrap_or(0);
            if receiver >= hosts {
                return Err(ScenarioError::new(
                    "workload.receiver",
                    format!("host {receiver} does not exist ({hosts} hosts)"),
                ));
            }
            if n == 0 || n >= hosts {
                return Err(ScenarioError::new(
                    "workload.senders",
                    format!("must be between 1 and {} (hosts - 1), got {n}", hosts - 1),
                ));
            }
            // Senders: a seeded random choice among the other hosts.
            let mut others: Vec<u32> = (0..hosts).filter(|&h| h != receiver).collect();
            rng.shuffle(&mut others);
            let size = size.expect("checked by the scenario");
            others[..n as usize]
                .iter()
                .map(|&s| FlowSpec {
                    src: s,
                    dst: receiver,
                    size,
                    start,
                })
                .collect()
        }
        WorkloadKind::Trace => {
            let name = w.cdf.as_ref().expect("checked by the scenario");
            let cdf = match SizeCdf::builtin(name) {
                Some(c) => c,
                None => {
                    let path = base_dir.map_or_else(|| Path::new(name).to_path_buf(), |d| d.join(name));
                    let text = std::fs::read_to_string(&path).map_err(|e| {
                        let known: Vec<&str> = cdf::BUILTIN.iter().map(|(n, _)| *n).collect();
                        ScenarioError::new(
                            "workload.cdf",
                            format!(
                                "\"{name}\" is neither a built-in ({}) nor a readable file: {e}",
                                known.join(", ")
                            ),
                        )
                    })?;
                    SizeCdf::parse(&text)
                        .map_err(|m| ScenarioError::new("workload.cdf", format!("{}: {m}", path.display())))?
                }
            };
            let load = w.load.expect("checked by the scenario");
            if !(load > 0.0 && load <= 1.0) {
                return Err(ScenarioError::new(
                    "workload.load",
                    format!("must be in (0, 1], got {load}"),
                ));
            }
            if hosts < 2 {
                return Err(ScenarioError::new("topology.hosts", "a trace needs at least 2 hosts"));
            }
            let duration = w.duration.as_ref().expect("checked by the scenario").value;
            let arrivals = w.arrivals.unwrap_or(Arrivals::Poisson);
            trace(&cdf, hosts, rate, load, start, duration, arrivals, seed)
        }
        WorkloadKind::Flows => {
            let file = w.file.as_ref().expect("checked by the scenario");
            let path = match base_dir {
                Some(d) => d.join(file),
                None => Path::new(file).to_path_buf(),
            };
            let text = std::fs::read_to_string(&path)
                .map_err(|e| ScenarioError::new("workload.file", format!("cannot read {}: {e}", path.display())))?;
            parse_flow_csv(&text, hosts)
                .map_err(|m| ScenarioError::new("workload.file", format!("{}: {m}", path.display())))?
        }
    };
    Ok(specs)
}

/// CSV with a header naming the columns src, dst, size_bytes, start_us (any order).
pub fn parse_flow_csv(text: &str, hosts: u32) -> Result<Vec<FlowSpec>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines.next().ok_or("empty file")?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |name: &str| {
        cols.iter().position(|c| *c == name).ok_or(format!(
            "header lacks column \"{name}\" (need src,dst,size_bytes,start_us)"
        ))
    };
    let (ci, di, zi, ti) = (find("src")?, find("dst")?, find("size_bytes")?, find("start_us")?);
    let mut out = Vec::new();
    for (ln, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |i: usize, what: &str| f.get(i).copied().ok_or(format!("line {}: missing {what}", ln + 1));
        let host = |i: usize, what: &str| -> Result<u32, String> {
            let v: u32 = get(i, what)?
                .parse()
                .map_err(|_| format!("line {}: {what} is not a host number", ln + 1))?;
            if v >= hosts {
                return Err(format!("line {}: {what} {v} does not exist ({hosts} hosts)", ln + 1));
            }
            Ok(v)
        };
        let (src, dst) = (host(ci, "src")?, host(di, "dst")?);
        if src == dst {
            return Err(format!("line {}: src and dst are both {src}", ln + 1));
        }
        let size: u64 = get(zi, "size_bytes")?
            .parse()
            .map_err(|_| format!("line {}: size_bytes is not an integer", ln + 1))?;
        if size == 0 {
            return Err(format!("line {}: size_bytes must be positive", ln + 1));
        }
        let us: f64 = get(ti, "start_us")?
            .parse()
            .map_err(|_| format!("line {}: start_us is not a number", ln + 1))?;
        if !(us >= 0.0) {
            return Err(format!("line {}: start_us must be >= 0", ln + 1));
        }
        out.push(FlowSpec {
            src,
            dst,
            size,
            start: SimTime((us * 1e6).round() as u64),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offered load: the bytes of the flows that start in the window, over
    /// hosts × rate × window, is the target within 2 % (issue "traces").
    #[test]
    fn trace_offers_the_target_load() {
        let rate = Rate::gbps(400);
        // Windows long enough that the sum's standard error is under 0.5 %.
        for (name, arrivals, window) in [
            ("websearch", Arrivals::Poisson, SimTime::from_us(200_000)),
            ("alistorage2019", Arrivals::Poisson, SimTime::from_us(20_000)),
            ("websearch", Arrivals::Deterministic, SimTime::from_us(200_000)),
        ] {
            let cdf = SizeCdf::builtin(name).unwrap();
            for load in [0.4, 0.8] {
                let flows = trace(&cdf, 128, rate, load, SimTime::ZERO, window, arrivals, 3);
                let bytes: u64 = flows.iter().map(|f| f.size).sum();
                let offered = bytes as f64 * 8.0 / (128.0 * rate.bps() as f64 * window.as_us_f64() * 1e-6);
                assert!(
                    (offered / load - 1.0).abs() < 0.02,
                    "{name} {arrivals:?} {load}: offered {offered}"
                );
                assert!(flows.iter().all(|f| f.src != f.dst && f.dst < 128 && f.start < window));
            }
        }
        let cdf = SizeCdf::builtin("solar2022").unwrap();
        let gen = || {
            trace(
                &cdf,
                16,
                rate,
                0.5,
                SimTime::ZERO,
                SimTime::from_us(100),
                Arrivals::Poisson,
                1,
            )
        };
        let a = gen();
        assert_eq!(a, gen(), "same seed, same trace");
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
    }

    #[test]
    fn permutation_is_a_derangement() {
        let mut rng = Rng::new(3, StreamTag::Workload, 0);
        let p = permutation(128, &mut rng);
        let mut seen = vec![false; 128];
        for (i, &d) in p.iter().enumerate() {
            assert_ne!(i as u32, d);
            assert!(!seen[d as usize]);
            seen[d as usize] = true;
        }
    }

    #[test]
    fn tornado_pairs_halves() {
        let t = tornado(128);
        assert_eq!(t[0], 64);
        assert_eq!(t[64], 0);
        assert_eq!(t[127], 63);
    }

    #[test]
    fn csv_errors_name_the_line() {
        let ok = parse_flow_csv("src,dst,size_bytes,start_us\n0,1,4096,0\n2,0,10,1.5\n", 4).unwrap();
        assert_eq!(ok[1].start, SimTime(1_500_000));
        let e = parse_flow_csv("src,dst,size_bytes,start_us\n0,9,4096,0\n", 4).unwrap_err();
        assert!(e.contains("line 2") && e.contains("dst 9"), "{e}");
        assert!(parse_flow_csv("a,b\n", 4).unwrap_err().contains("src"));
    }
}
