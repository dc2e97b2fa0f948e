//! The flow-level mode: no packets. Every flow of the scenario's workload
//! is persistent (starts at 0 with an infinite backlog; sizes and start
//! times are ignored), sits on the one path its load balancer gives it,
//! and gets its max-min fair rate over the capacities of the ports (link
//! directions) it crosses, NIC and host downlink included. For questions
//! about path collisions among many long-lived flows (FaCa §2 Fig. 1, §7
//! Figs. 8 and 9a); `docs/flow-level.md` says what it leaves out.
//!
//! The network and the flows are built exactly as for a packet-level run
//! (`build::build_with`), so each flow has the same entropy value, route
//! class and therefore the same path as there.

pub mod maxmin;
pub mod paths;
pub mod report;

use crate::build::{self, Limits};
use crate::net::{Network, PortId};
use crate::scenario::{Scenario, ScenarioError};
use paths::PathCtx;
pub use report::{ClassStats, FlowLevelSummary};
use std::path::Path;

/// One flow's place and rate.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRate {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    /// Its balancer (`lb.kind`, or its `lb.mix` share's).
    pub lb: &'static str,
    /// The ports its data crosses, NIC first.
    pub path: Vec<PortId>,
    /// The nodes along it, like "h0>t0_0>t1_3>t0_5>h40".
    pub nodes: String,
    /// Its max-min fair rate, bits/s on the wire.
    pub rate_bps: f64,
    /// The port that froze its rate in the progressive filling.
    pub bottleneck: Option<PortId>,
    /// It has a full switch-to-switch port shared with another flow on which
    /// no flow gets more than it (see `report::congested`).
    pub congested: bool,
}

/// One port's load.
#[derive(Clone, Debug, PartialEq)]
pub struct PortLoad {
    pub id: PortId,
    pub name: String,
    /// Its link class: the tiers it connects, like "t0->t1" or "host->t0".
    pub class: String,
    pub capacity_bps: f64,
    /// The sum of its flows' rates.
    pub throughput_bps: f64,
    pub flows: u32,
}

/// Everything the flow-level mode reports.
pub struct FlowLevelOutput {
    pub scenario: Scenario,
    pub flows: Vec<FlowRate>,
    pub ports: Vec<PortLoad>,
    pub summary: FlowLevelSummary,
}

/// The scenario's balancers must have a flow-level path choice, and its
/// network must not change over time.
fn check(s: &Scenario) -> Result<(), ScenarioError> {
    let keys = std::iter::once(("lb.kind".to_string(), s.lb.kind)).chain(
        s.lb.mix
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("lb.mix[{i}].kind"), m.kind)),
    );
    for (key, kind) in keys {
        if paths::chooser(kind).is_none() {
            return Err(ScenarioError::new(
                key,
                format!(
                    "the flow-level mode supports only \"ecmp\", \"wcmp\" and \"faca\", got \"{}\"",
                    kind.name()
                ),
            ));
        }
    }
    if !s.failures.is_empty() {
        return Err(ScenarioError::new(
            "failures",
            "the flow-level mode has no time: failures do not apply (give static link rates with rate_overrides)",
        ));
    }
    Ok(())
}

impl FlowLevelOutput {
    /// The flows and ports tables.
    pub fn tables(&self) -> Vec<crate::table::Table> {
        vec![
            report::flow_table(&self.flows, &self.ports),
            report::port_table(&self.ports),
        ]
    }

    /// The summary as JSON text.
    pub fn summary_json(&self) -> String {
        report::summary_json(&self.summary)
    }
}

/// Place the scenario's flows and compute their max-min fair rates, within
/// the default `Limits`. `base_dir` resolves relative file paths (the
/// scenario file's folder).
pub fn run(s: &Scenario, base_dir: Option<&Path>) -> Result<FlowLevelOutput, ScenarioError> {
    run_with(s, base_dir, &Limits::default())
}

/// `run`, refusing a scenario estimated to need more memory than `limits`
/// (the tree and, per flow, its state, path and row; no packets).
pub fn run_with(s: &Scenario, base_dir: Option<&Path>, limits: &Limits) -> Result<FlowLevelOutput, ScenarioError> {
    check(s)?;
    // Flows are persistent, so message sizes do not apply; the packet-level workloads
    // that need one to make their pairs get a placeholder of one byte.
    let mut built = s.clone();
    if built.workload.size.is_none() {
        built.workload.size = Some(crate::scenario::Amount::new("1B"));
    }
    let (sim, _) = build::build_for_flow_level(&built, base_dir, limits)?;
    let (mut net, mut flows) = (sim.net, sim.flows);
    let mut placed = vec![0u32; net.ports.len()];
    let mut choosers: Vec<(crate::scenario::LbKind, Box<dyn paths::PathChooser>)> = Vec::new();
    let mut routes: Vec<Vec<PortId>> = Vec::with_capacity(flows.len());
    for f in flows.iter_mut() {
        let i = match choosers.iter().position(|(k, _)| *k == f.lb_kind) {
            Some(i) => i,
            None => {
                choosers.push((f.lb_kind, paths::chooser(f.lb_kind).expect("checked")));
                choosers.len() - 1
            }
        };
        let mut ctx = PathCtx {
            net: &mut net,
            placed: &placed,
        };
        let path = choosers[i].1.choose(&mut ctx, f)?;
        for &p in &path {
            placed[p as usize] += 1;
        }
        routes.push(path);
    }
    let capacity: Vec<f64> = net.ports.iter().map(|p| p.rate.bps() as f64).collect();
    let alloc = maxmin::max_min(&capacity, &routes);
    let ports = port_loads(&net, &capacity, &routes, &alloc.rates, &placed);
    let congested = report::congested(&net, &ports, &routes, &alloc.rates);
    let rates: Vec<FlowRate> = flows
        .iter()
        .zip(routes)
        .enumerate()
        .map(|(i, (f, path))| FlowRate {
            id: i as u32,
            src: f.spec.src,
            dst: f.spec.dst,
            lb: f.lb_kind.name(),
            nodes: report::hops(&net, &path),
            path,
            rate_bps: alloc.rates[i],
            bottleneck: alloc.bottleneck[i],
            congested: congested[i],
        })
        .collect();
    let summary = report::summary(&net, &rates, &ports);
    Ok(FlowLevelOutput {
        scenario: s.clone(),
        flows: rates,
        ports,
        summary,
    })
}

/// Each port's class, capacity, flows (`placed`: how many cross it) and throughput.
fn port_loads(net: &Network, capacity: &[f64], routes: &[Vec<PortId>], rates: &[f64], placed: &[u32]) -> Vec<PortLoad> {
    let mut throughput = vec![0.0; net.ports.len()];
    // Summed in flow id order: the same scenario gives the same bits.
    for (path, &r) in routes.iter().zip(rates) {
        for &p in path {
            throughput[p as usize] += r;
        }
    }
    net.ports
        .iter()
        .enumerate()
        .map(|(i, p)| PortLoad {
            id: i as PortId,
            name: p.name.clone(),
            class: report::class(net, i as PortId),
            capacity_bps: capacity[i],
            throughput_bps: throughput[i],
            flows: placed[i],
        })
        .collect()
}
