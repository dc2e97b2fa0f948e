//! `[workload]`: the workload kinds and their options, and which keys each
//! kind takes or requires (a key that does not apply is an error naming it).

use super::{Amount, ScenarioError, Time};
use crate::workload::collective::{ButterflySchedule, Layout, Refill};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Permutation,
    Tornado,
    Incast,
    Flows,
    /// An htsim connection matrix (`workload::connection_matrix`).
    ConnectionMatrix,
    /// Flow sizes from a CDF, arriving per host at a target load.
    Trace,
    /// AI collectives (REPS §4.2), each node's buffer `size`.
    RingAllreduce,
    ButterflyAllreduce,
    Alltoall,
}

/// What a trace's `load` is a fraction of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadBasis {
    /// Each host's link rate (REPS artifact).
    Host,
    /// The fabric's capacity: on a k:1 tree each host offers load / k (ConWeave run.py).
    Fabric,
}

/// How a trace's flows arrive at each host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Exponential gaps with the mean that gives the load (ConWeave's generator).
    Poisson,
    /// Each flow starts when the previous one would have finished at `load` × line rate (the REPS artifact's generator).
    Deterministic,
}

/// Who a trace's flows go from and to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TracePattern {
    /// Every host sends, each flow to a uniformly random other host (ConWeave §4.1, REPS §4.2).
    Uniform,
    /// The first half of the hosts are clients, each flow to a uniformly random host of the
    /// second half (the servers, which send nothing): ConWeave §4.2's testbed, clients under one
    /// leaf and servers under the other (Fig. 18a).
    ClientServer,
    /// Every host sends; each has one partner under another ToR, receiving from
    /// it alone (a permutation), and each flow goes to the partner with
    /// probability `workload.partner_share`, else to a uniformly random other
    /// host. REPS §4.2 says only "for each node we select randomly the
    /// receiver"; this is what the REPS artifact's generator does
    /// (traffic_gen_utils.py `generate_traffic_matrix`, `get_dst`).
    Partners,
}

/// When a finished message lets the messages that wait for it start
/// (`workload.release`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    /// Its last byte has reached the receiver.
    #[default]
    Arrival,
    /// Its sender holds the last ACK: the REPS artifact's `send_done_trigger`
    /// (htsim's connection matrices, which its collectives use).
    Ack,
}

/// The traffic. Keys that do not apply to `kind` are rejected.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// Message size (permutation, tornado, incast).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Amount>,
    /// Start time of every message (permutation, tornado, incast).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// Incast: number of senders and the receiving host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<u32>,
    /// Flows: CSV file with columns src,dst,size_bytes,start_us; connection_matrix: an htsim
    /// connection matrix (relative to the scenario file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Trace: a built-in distribution ("websearch", "alistorage2019", ...) or a CDF file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<String>,
    /// Trace: offered load per host, a fraction of the host link rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Trace: how long flows keep arriving (from `start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Time>,
    /// Trace: "poisson" (default) or "deterministic".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Trace: "host" (default) or "fabric".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_basis: Option<LoadBasis>,
    /// Trace: "uniform" (default), "client_server" or "partners".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<TracePattern>,
    /// Trace with pattern "partners": the share of flows to the host's partner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_share: Option<f64>,
    /// Flows starting within this time after `start` are left out of the statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Time>,
    /// Trace: flows finishing later than this after the arrival window are left out of the statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<Time>,
    /// Collectives: "host_order" (default) or "cross_spine".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// AllToAll: messages each node has under way at once. Permutation and
    /// tornado: flows from each host to its partner at once (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
    /// Collectives: how many times it runs back to back (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// Collectives: how many hosts take part (default all), the first ones of `layout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// Butterfly AllReduce: "halving_doubling" (default) or "doubling".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ButterflySchedule>,
    /// AllToAll: "any" (default) or "lane".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill: Option<Refill>,
    /// Collectives and flow files: "arrival" (default) or "ack".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
}

impl WorkloadKind {
    /// Whether its messages take their size from `workload.size`.
    pub fn sized(self) -> bool {
        self.keys().contains(&"size")
    }

    /// The `[workload]` keys this kind takes besides `kind`.
    fn keys(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Permutation | WorkloadKind::Tornado => &["size", "start", "parallel", "warmup"],
            WorkloadKind::Incast => &["size", "start", "senders", "receiver", "warmup"],
            WorkloadKind::Flows => &["file", "warmup", "release"],
            WorkloadKind::ConnectionMatrix => &["file", "warmup"],
            WorkloadKind::Trace => &[
                "start",
                "cdf",
                "load",
                "duration",
                "arrivals",
                "load_basis",
                "pattern",
                "partner_share",
                "warmup",
                "cooldown",
            ],
            WorkloadKind::RingAllreduce => &["size", "start", "layout", "ranks", "iterations", "warmup", "release"],
            WorkloadKind::ButterflyAllreduce => &[
                "size",
                "start",
                "layout",
                "ranks",
                "schedule",
                "iterations",
                "warmup",
                "release",
            ],
            WorkloadKind::Alltoall => &[
                "size",
                "start",
                "layout",
                "ranks",
                "iterations",
                "parallel",
                "refill",
                "warmup",
                "release",
            ],
        }
    }
}

impl Workload {
    /// Keys that do not apply to `kind` are rejected, and the ones it needs required.
    pub(super) fn check_keys(&self) -> Result<(), ScenarioError> {
        let allowed = self.kind.keys();
        for (k, is) in self.given_keys() {
            if is && !allowed.contains(&k) {
                return Err(ScenarioError::new(
                    format!("workload.{k}"),
                    format!("does not apply to workload kind \"{}\"", kind_name(&self.kind)),
                ));
            }
        }
        for k in allowed {
            if self.lacks_required(k) {
                return Err(ScenarioError::new(
                    format!("workload.{k}"),
                    format!("is required for workload kind \"{}\"", kind_name(&self.kind)),
                ));
            }
        }
        Ok(())
    }

    /// Every optional key, and whether the scenario gives it.
    fn given_keys(&self) -> [(&'static str, bool); 21] {
        let w = self;
        [
            ("size", w.size.is_some()),
            ("start", w.start.is_some()),
            ("senders", w.senders.is_some()),
            ("receiver", w.receiver.is_some()),
            ("file", w.file.is_some()),
            ("cdf", w.cdf.is_some()),
            ("load", w.load.is_some()),
            ("duration", w.duration.is_some()),
            ("arrivals", w.arrivals.is_some()),
            ("load_basis", w.load_basis.is_some()),
            ("pattern", w.pattern.is_some()),
            ("partner_share", w.partner_share.is_some()),
            ("warmup", w.warmup.is_some()),
            ("cooldown", w.cooldown.is_some()),
            ("layout", w.layout.is_some()),
            ("parallel", w.parallel.is_some()),
            ("iterations", w.iterations.is_some()),
            ("ranks", w.ranks.is_some()),
            ("schedule", w.schedule.is_some()),
            ("refill", w.refill.is_some()),
            ("release", w.release.is_some()),
        ]
    }

    /// Whether key `k`, one of the kind's keys, is required and missing.
    fn lacks_required(&self, k: &str) -> bool {
        let w = self;
        match (w.kind, k) {
            (WorkloadKind::Flows | WorkloadKind::ConnectionMatrix, "file") => w.file.is_none(),
            (WorkloadKind::Incast, "senders") => w.senders.is_none(),
            (WorkloadKind::Trace, "cdf") => w.cdf.is_none(),
            (WorkloadKind::Trace, "load") => w.load.is_none(),
            (WorkloadKind::Trace, "duration") => w.duration.is_none(),
            (WorkloadKind::Alltoall, "parallel") => w.parallel.is_none(),
            // `size` is required when the workload is built (`workload::message_size`):
            // the flow-level mode builds the same workloads without one.
            _ => false,
        }
    }
}

impl WorkloadKind {
    /// Its name in a scenario file ("permutation", "trace", ...).
    pub fn name(&self) -> String {
        kind_name(self)
    }
}

fn kind_name<T: Serialize>(k: &T) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

    #[test]
    fn workload_keys_checked_per_kind() {
        let e = Scenario::from_toml("[workload]\nkind = \"tornado\"\nsize = \"1MiB\"\nsenders = 3").unwrap_err();
        assert_eq!(e.key, "workload.senders");
        let e = Scenario::from_toml("[workload]\nkind = \"incast\"\nsize = \"1MiB\"").unwrap_err();
        assert_eq!(e.key, "workload.senders");
        assert!(Scenario::from_toml("[workload]\nkind = \"incast\"\nsize = \"1MiB\"\nsenders = 4").is_ok());
    }
}
