//! Traffic patterns (REPS §4.2): permutation, tornado, N-to-1 incast,
//! datacenter traces, AI collectives, and an explicit flow list from a CSV
//! file. Flows may wait for others to arrive first (`Traffic::after`).
//!
//! One file per kind: `permutation` (permutation and tornado), `incast`,
//! `trace` (sizes from a `cdf`), `collective`, `flow_csv`, `connection_matrix`
//! (htsim's traffic files); this file holds
//! what they produce and `generate`, which picks one.

pub mod cdf;
pub mod collective;
mod connection_matrix;
mod flow_csv;
mod incast;
mod permutation;
pub mod shape;
mod trace;

pub use connection_matrix::parse_connection_matrix;
pub use flow_csv::parse_flow_csv;
pub use permutation::{permutation, tornado};
pub use trace::{trace, TraceParams};

use crate::rng::{Rng, StreamTag};
use crate::scenario::{Release, ScenarioError, Workload, WorkloadKind};
use crate::time::{Rate, SimTime};
use crate::transport::FlowSpec;
use std::path::Path;

/// What a workload generates: the flows, what each waits for, and which of
/// them the statistics count.
#[derive(Clone, Debug, Default)]
pub struct Traffic {
    pub flows: Vec<FlowSpec>,
    /// Per flow, the flows whose data must have reached their receiver
    /// before it starts (never before its own `start`). Always earlier ids.
    pub after: Vec<Vec<u32>>,
    /// Triggers between messages (htsim's; none for most workloads).
    pub triggers: Vec<Trigger>,
    /// Per flow, its step within a collective (0 for other workloads).
    pub step: Vec<u32>,
    /// The collective these flows form, if any (its completion is reported).
    pub collective: Option<&'static str>,
    /// Flows that start before this are warm-up: left out of the statistics.
    pub measure_from: SimTime,
    /// Flows that finish after this are left out too (None: no limit).
    pub measure_until: Option<SimTime>,
}

/// A trigger between messages (htsim's connection matrices): its
/// `activators` activate it when they are done (in the sense `on` names, or
/// `workload.release`'s), and it starts its `targets` as `fires` says. Its
/// targets count as waiting for it from the start (and also wait for their
/// `after` and their own start time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    pub activators: Vec<u32>,
    pub targets: Vec<u32>,
    pub fires: Fires,
    pub on: Option<Release>,
}

/// Which targets a trigger starts, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fires {
    /// The k-th activation starts the k-th target (htsim's multishot).
    Each,
    /// The n-th activation starts them all (htsim's oneshot: n = 1; barrier: its count).
    AllAt(u32),
}

impl Traffic {
    /// Independent flows, all measured.
    fn plain(flows: Vec<FlowSpec>) -> Self {
        let n = flows.len();
        Traffic {
            flows,
            after: vec![Vec::new(); n],
            step: vec![0; n],
            ..Traffic::default()
        }
    }
}

/// What a workload needs to know about the network.
#[derive(Clone, Copy, Debug)]
pub struct NetInfo {
    pub hosts: u32,
    pub hosts_per_tor: u32,
    pub host_rate: Rate,
    /// A ToR's uplink capacity over its hosts' capacity, at most 1 (0.5 on a 2:1 tree).
    pub fabric_share: f64,
}

/// The traffic `[workload]` describes on a network like `net`; random
/// choices draw from `seed`, files are relative to `base_dir`.
pub fn generate(w: &Workload, net: NetInfo, seed: u64, base_dir: Option<&Path>) -> Result<Traffic, ScenarioError> {
    let size = message_size(w)?;
    let start = w.start.as_ref().map(|t| t.value).unwrap_or(SimTime::ZERO);
    let mut rng = Rng::new(seed, StreamTag::Workload, 0);
    let mut traffic = match w.kind {
        WorkloadKind::Permutation | WorkloadKind::Tornado => {
            permutation::traffic(w.kind, net.hosts, size, w.parallel.unwrap_or(1), start, &mut rng)?
        }
        WorkloadKind::Incast => incast::traffic(w, net.hosts, size, start, &mut rng)?,
        WorkloadKind::Trace => trace::traffic(w, net, start, seed, base_dir)?,
        WorkloadKind::RingAllreduce | WorkloadKind::ButterflyAllreduce | WorkloadKind::Alltoall => {
            collective::traffic(w, net, size, start, &mut rng)?
        }
        WorkloadKind::Flows => {
            let file = w.file.as_ref().expect("checked by the scenario");
            read(file, base_dir, net.hosts, parse_flow_csv)?
        }
        WorkloadKind::ConnectionMatrix => {
            let file = w.file.as_ref().expect("checked by the scenario");
            let mut t = read(file, base_dir, net.hosts, parse_connection_matrix)?;
            if !t.triggers.is_empty() {
                t.collective = Some("connection_matrix"); // its completion is reported
            }
            t
        }
    };
    if let Some(warmup) = &w.warmup {
        traffic.measure_from = start + warmup.value;
        // Without dependencies a flow starts at its own time: if all start within the
        // warm-up, none would be measured and every statistic would be empty.
        let waits = traffic.after.iter().any(|a| !a.is_empty()) || !traffic.triggers.is_empty();
        let last = traffic.flows.iter().map(|f| f.start).max();
        if let (false, Some(last)) = (waits, last) {
            if last < traffic.measure_from {
                return Err(ScenarioError::new(
                    "workload.warmup",
                    format!(
                        "(\"{}\") leaves out every flow: the last starts {} after the workload's start, within it",
                        warmup.text,
                        last.saturating_sub(start)
                    ),
                ));
            }
        }
    }
    Ok(traffic)
}

/// Read `workload.file` (relative to `base_dir`) and parse it with `parse`.
fn read(
    file: &str,
    base_dir: Option<&Path>,
    hosts: u32,
    parse: fn(&str, u32) -> Result<Traffic, String>,
) -> Result<Traffic, ScenarioError> {
    let path = match base_dir {
        Some(d) => d.join(file),
        None => Path::new(file).to_path_buf(),
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ScenarioError::new("workload.file", format!("cannot read {}: {e}", path.display())))?;
    parse(&text, hosts).map_err(|m| ScenarioError::new("workload.file", format!("{}: {m}", path.display())))
}

/// `workload.size` in bytes, if given (a positive absolute amount).
fn message_size(w: &Workload) -> Result<Option<u64>, ScenarioError> {
    let size = w
        .size
        .as_ref()
        .map(|a| a.bytes(0, 0, None))
        .transpose()
        .map_err(|e| ScenarioError::new("workload.size", e))?;
    if size.is_none() && w.kind.sized() {
        return Err(ScenarioError::new(
            "workload.size",
            format!("is required for workload kind \"{}\"", w.kind.name()),
        ));
    }
    if let (Some(0), Some(a)) = (size, w.size.as_ref()) {
        return Err(ScenarioError::new(
            "workload.size",
            format!("must be positive, got \"{}\"", a.text),
        ));
    }
    Ok(size)
}
