//! Traffic patterns (REPS §4.2): permutation, tornado, N-to-1 incast, and an
//! explicit flow list from a CSV file.

pub mod cdf;

use crate::rng::{Rng, StreamTag};
use crate::scenario::{ScenarioError, Workload, WorkloadKind};
use crate::time::SimTime;
use crate::transport::FlowSpec;
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

pub fn generate(w: &Workload, hosts: u32, seed: u64, base_dir: Option<&Path>) -> Result<Vec<FlowSpec>, ScenarioError> {
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
