//! What a workload will generate, known without generating it: how many
//! messages, how many bytes, the largest message, and which keys set them.
//! `build::estimate` turns this into the memory a run needs before anything
//! is materialised, so `lbsim validate` on a 10 s trace or a 10^8-iteration
//! collective answers at once instead of filling memory.

use super::{cdf::SizeCdf, trace, NetInfo};
use crate::scenario::{LoadBasis, ScenarioError, Workload, WorkloadKind};
use std::path::Path;

/// A workload's size, exact except for a trace's (its expectation).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub messages: f64,
    pub bytes: f64,
    /// The largest message, in bytes.
    pub largest: f64,
    /// The key that sets how many messages there are, and the one that sets their size.
    pub count_key: &'static str,
    pub size_key: &'static str,
}

/// The shape of `[workload]` on a network like `net` (files relative to `base_dir`).
pub fn shape(w: &Workload, net: NetInfo, base_dir: Option<&Path>) -> Result<Shape, ScenarioError> {
    let size = super::message_size(w)?.unwrap_or(0) as f64;
    let n = net.hosts as f64;
    let iterations = w.iterations.unwrap_or(1) as f64;
    let fixed = |messages: f64, each: f64, count_key| Shape {
        messages,
        bytes: messages * each,
        largest: each,
        count_key,
        size_key: "workload.size",
    };
    Ok(match w.kind {
        WorkloadKind::Permutation | WorkloadKind::Tornado => {
            fixed(n * w.parallel.unwrap_or(1) as f64, size, "topology.hosts")
        }
        WorkloadKind::Incast => fixed(w.senders.unwrap_or(0) as f64, size, "workload.senders"),
        WorkloadKind::RingAllreduce => fixed(
            n * 2.0 * (n - 1.0).max(0.0) * iterations,
            (size / n).ceil(),
            "workload.iterations",
        ),
        WorkloadKind::ButterflyAllreduce => {
            let rounds = n.log2().ceil().max(1.0);
            Shape {
                bytes: 2.0 * size * n * iterations,
                ..fixed(
                    n * 2.0 * rounds * iterations,
                    (size / 2.0).ceil(),
                    "workload.iterations",
                )
            }
        }
        WorkloadKind::Alltoall => fixed(
            n * (n - 1.0).max(0.0) * iterations,
            (size / n).ceil(),
            "workload.iterations",
        ),
        WorkloadKind::Trace => {
            let name = w.cdf.as_ref().expect("checked by the scenario");
            let cdf: SizeCdf = trace::size_cdf(name, base_dir)?;
            let load = w.load.unwrap_or(0.0).clamp(0.0, 1.0);
            let load = match w.load_basis.unwrap_or(LoadBasis::Host) {
                LoadBasis::Host => load,
                LoadBasis::Fabric => load * net.fabric_share,
            };
            let seconds = w.duration.as_ref().map_or(0.0, |d| d.value.ps() as f64 / 1e12);
            let bytes = n * seconds * load * net.host_rate.bps() as f64 / 8.0;
            Shape {
                // Each host's arrivals: the expectation plus a margin for the draw, at least one.
                messages: bytes / cdf.mean().max(1.0) * 1.1 + n,
                bytes: bytes * 1.1 + n * cdf.max(),
                largest: cdf.max(),
                count_key: "workload.duration",
                size_key: "workload.cdf",
            }
        }
        WorkloadKind::Flows | WorkloadKind::ConnectionMatrix => {
            // The file is the workload: reading it costs what the file does.
            let file = w.file.as_ref().expect("checked by the scenario");
            let parse = match w.kind {
                WorkloadKind::Flows => super::parse_flow_csv,
                _ => super::parse_connection_matrix,
            };
            let t = super::read(file, base_dir, net.hosts, parse)?;
            let sizes = t.flows.iter().map(|f| f.size as f64);
            Shape {
                messages: t.flows.len() as f64,
                bytes: sizes.clone().sum(),
                largest: sizes.fold(0.0, f64::max),
                count_key: "workload.file",
                size_key: "workload.file",
            }
        }
    })
}
