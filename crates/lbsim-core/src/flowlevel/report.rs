//! What the flow-level mode reports: link classes, FaCa's "Drop" and
//! spread per class, the congestion rate, and the flows and ports tables.
//!
//! - Drop (FaCa §2, Fig. 1): "the difference between the maximum and
//!   minimum throughput" of a switch's ports. Here per link class (every
//!   port from one tier to another, like all ToR uplinks "t0->t1"), over
//!   every port of the class, idle ones included (an idle uplink next to a
//!   doubly loaded one is the imbalance Drop shows).
//! - Standard deviation of the ports' throughput per class (FaCa §7.1
//!   measures the balance of a switch's ports by it): the population's.
//! - Congestion rate (FaCa §7.2 Fig. 8, §7.3 Fig. 9a): the paper measures
//!   "the proportion of the amount of competitive paths" without a formula.
//!   Here: the share of flows that compete for a fabric link, that is, flows
//!   with a switch-to-switch port on their path that (1) carries at least
//!   one other flow, (2) is full, and (3) gives no flow more than this one:
//!   a bottleneck of the flow in the max-min sense (Bertsekas and Gallager,
//!   "Data Networks", §6.5.2) that it shares. Host links (NICs and ToR
//!   downlinks to hosts) are left out: no balancer can move a flow off
//!   them, so a flow limited by an incast or by sharing its NIC is not a
//!   path collision. Also reported: the share of fabric ports that are such
//!   shared bottlenecks (the "competitive paths" counted per link).

use super::{FlowRate, PortLoad};
use crate::net::{Network, Node, PortId};
use crate::table::{Column, Table};
use serde::Serialize;
use std::collections::BTreeMap;

/// Relative slack for "full" and "gets the most" (the rates are sums and
/// differences of f64: exact ties may differ in the last bits).
const TOLERANCE: f64 = 1e-9;

/// A node's tier name: "host", or "t0", "t1", "t2" for switches.
fn tier(net: &Network, n: Node) -> String {
    match n {
        Node::Host(_) => "host".into(),
        Node::Switch(s) => format!("t{}", net.switches[s as usize].tier),
    }
}

/// A port's link class: the tiers it leads from and to, like "t0->t1".
pub fn class(net: &Network, p: PortId) -> String {
    let port = &net.ports[p as usize];
    format!("{}->{}", tier(net, port.from), tier(net, port.to))
}

fn is_fabric(net: &Network, p: PortId) -> bool {
    let port = &net.ports[p as usize];
    matches!((port.from, port.to), (Node::Switch(_), Node::Switch(_)))
}

/// Whether each fabric port is a shared bottleneck: full, with at least two flows.
fn shared_bottlenecks(net: &Network, ports: &[PortLoad]) -> Vec<bool> {
    ports
        .iter()
        .map(|p| is_fabric(net, p.id) && p.flows >= 2 && p.throughput_bps >= p.capacity_bps * (1.0 - TOLERANCE))
        .collect()
}

/// Whether each flow is congested (the module's definition).
pub fn congested(net: &Network, ports: &[PortLoad], routes: &[Vec<PortId>], rates: &[f64]) -> Vec<bool> {
    let shared = shared_bottlenecks(net, ports);
    let mut most = vec![0.0f64; ports.len()];
    for (path, &r) in routes.iter().zip(rates) {
        for &p in path {
            most[p as usize] = most[p as usize].max(r);
        }
    }
    routes
        .iter()
        .zip(rates)
        .map(|(path, &r)| {
            path.iter()
                .any(|&p| shared[p as usize] && r >= most[p as usize] * (1.0 - TOLERANCE))
        })
        .collect()
}

/// Throughput statistics of one link class, bits/s.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassStats {
    pub ports: usize,
    /// Ports carrying at least one flow.
    pub used_ports: usize,
    pub capacity_bps: f64,
    pub max_bps: f64,
    pub min_bps: f64,
    /// max − min (FaCa §2 Fig. 1's "Drop").
    pub drop_bps: f64,
    pub mean_bps: f64,
    /// Population standard deviation.
    pub std_bps: f64,
}

/// The flow-level mode's headline numbers (`summary.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowLevelSummary {
    pub mode: &'static str,
    pub flows: usize,
    /// Sum of the flows' rates.
    pub total_rate_bps: f64,
    pub mean_rate_bps: f64,
    pub min_rate_bps: f64,
    pub max_rate_bps: f64,
    /// Flows that compete for a fabric link, and their share of all flows.
    pub congested_flows: usize,
    pub congestion_rate: f64,
    /// Fabric (switch-to-switch) ports, and those that are full with two or more flows.
    pub fabric_ports: usize,
    pub shared_bottleneck_ports: usize,
    /// Flows whose rate was frozen by a host link (NIC or ToR-to-host).
    pub host_limited_flows: usize,
    /// Per link class ("host->t0", "t0->t1", "t1->t0", "t0->host", ...).
    pub classes: BTreeMap<String, ClassStats>,
}

fn stats(values: &[f64], capacity: f64, used: usize) -> ClassStats {
    let n = values.len() as f64;
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    ClassStats {
        ports: values.len(),
        used_ports: used,
        capacity_bps: capacity,
        max_bps: max,
        min_bps: min,
        drop_bps: max - min,
        mean_bps: mean,
        std_bps: var.sqrt(),
    }
}

/// The summary of placed and rated flows.
pub fn summary(net: &Network, flows: &[FlowRate], ports: &[PortLoad]) -> FlowLevelSummary {
    let mut by_class: BTreeMap<String, (Vec<f64>, f64, usize)> = BTreeMap::new();
    for p in ports {
        let e = by_class.entry(p.class.clone()).or_default();
        e.0.push(p.throughput_bps);
        e.1 += p.capacity_bps;
        e.2 += (p.flows > 0) as usize;
    }
    let classes = by_class
        .into_iter()
        .map(|(k, (v, cap, used))| (k, stats(&v, cap, used)))
        .collect();
    let rates: Vec<f64> = flows.iter().map(|f| f.rate_bps).collect();
    let n = flows.len();
    let total: f64 = rates.iter().sum();
    let congested = flows.iter().filter(|f| f.congested).count();
    let shared = shared_bottlenecks(net, ports);
    FlowLevelSummary {
        mode: "flow_level",
        flows: n,
        total_rate_bps: total,
        mean_rate_bps: if n > 0 { total / n as f64 } else { 0.0 },
        min_rate_bps: rates.iter().copied().reduce(f64::min).unwrap_or(0.0),
        max_rate_bps: rates.iter().copied().reduce(f64::max).unwrap_or(0.0),
        congested_flows: congested,
        congestion_rate: if n > 0 { congested as f64 / n as f64 } else { 0.0 },
        fabric_ports: ports.iter().filter(|p| is_fabric(net, p.id)).count(),
        shared_bottleneck_ports: shared.iter().filter(|&&s| s).count(),
        host_limited_flows: flows
            .iter()
            .filter(|f| f.bottleneck.is_some_and(|b| !is_fabric(net, b)))
            .count(),
        classes,
    }
}

/// The summary as JSON text (what `summary.json` holds).
pub fn summary_json(s: &FlowLevelSummary) -> String {
    serde_json::to_string_pretty(s).expect("the summary serializes")
}

/// Node names along a path: "h0>t0_0>t1_3>t0_5>h40".
pub fn hops(net: &Network, path: &[PortId]) -> String {
    let mut names: Vec<String> = Vec::with_capacity(path.len() + 1);
    if let Some(&first) = path.first() {
        names.push(net.node_name(net.ports[first as usize].from));
    }
    names.extend(path.iter().map(|&p| net.node_name(net.ports[p as usize].to)));
    names.join(">")
}

/// The flows table: one row per flow.
pub fn flow_table(flows: &[FlowRate], ports: &[PortLoad]) -> Table {
    let col = |f: &dyn Fn(&FlowRate) -> u32| Column::U32(flows.iter().map(f).collect());
    let name = |p: Option<PortId>| p.map_or(String::new(), |p| ports[p as usize].name.clone());
    Table::new("flows")
        .with("flow", col(&|f| f.id))
        .with("src", col(&|f| f.src))
        .with("dst", col(&|f| f.dst))
        .with("lb", Column::Str(flows.iter().map(|f| f.lb.to_string()).collect()))
        .with("rate_bps", Column::F64(flows.iter().map(|f| f.rate_bps).collect()))
        .with("hops", col(&|f| f.path.len() as u32))
        .with("path", Column::Str(flows.iter().map(|f| f.nodes.clone()).collect()))
        .with(
            "port_ids",
            Column::Str(
                flows
                    .iter()
                    .map(|f| f.path.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "))
                    .collect(),
            ),
        )
        .with(
            "bottleneck",
            Column::Str(flows.iter().map(|f| name(f.bottleneck)).collect()),
        )
        .with("congested", Column::Bool(flows.iter().map(|f| f.congested).collect()))
}

/// The ports table: one row per port (link direction).
pub fn port_table(ports: &[PortLoad]) -> Table {
    Table::new("ports")
        .with("port", Column::U32(ports.iter().map(|p| p.id).collect()))
        .with("name", Column::Str(ports.iter().map(|p| p.name.clone()).collect()))
        .with("class", Column::Str(ports.iter().map(|p| p.class.clone()).collect()))
        .with(
            "capacity_bps",
            Column::F64(ports.iter().map(|p| p.capacity_bps).collect()),
        )
        .with(
            "throughput_bps",
            Column::F64(ports.iter().map(|p| p.throughput_bps).collect()),
        )
        .with(
            "utilization",
            Column::F64(
                ports
                    .iter()
                    .map(|p| {
                        if p.capacity_bps > 0.0 {
                            p.throughput_bps / p.capacity_bps
                        } else {
                            f64::NAN
                        }
                    })
                    .collect(),
            ),
        )
        .with("flows", Column::U32(ports.iter().map(|p| p.flows).collect()))
}
