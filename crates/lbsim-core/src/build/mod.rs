//! From a parsed scenario to a ready simulation, in named steps: resolve
//! sizes and the topology, build the tree, derive base RTT, BDP, queues and
//! RTO from it, prepare the parts the run uses, generate the workload and
//! its flows, then failures, asymmetry and observation. Every error names
//! the scenario key.

pub mod checks;
pub mod derive;
pub mod estimate;
pub mod flows;

use crate::engine::{SimParams, Simulation};
use crate::failure;
use crate::net::PortId;
use crate::observe::Observer;
use crate::scenario::{Scenario, ScenarioError};
use crate::time::SimTime;
use crate::topo;
use crate::transport::{AckPolicy, TransportParams};
use crate::workload::{self, NetInfo};
use derive::{Derived, Sizes};
pub use estimate::{Estimate, Limits};
use flows::Parts;
use std::path::Path;

/// Build a simulation from a scenario, within the default `Limits`.
/// `base_dir` resolves relative file paths (the scenario file's folder).
pub fn build(s: &Scenario, base_dir: Option<&Path>) -> Result<Simulation, ScenarioError> {
    build_with(s, base_dir, &Limits::default()).map(|(sim, _)| sim)
}

/// Build a simulation, first estimating what it takes: a scenario whose
/// estimate exceeds `limits` is refused before anything large is allocated.
pub fn build_with(
    s: &Scenario,
    base_dir: Option<&Path>,
    limits: &Limits,
) -> Result<(Simulation, Estimate), ScenarioError> {
    build_estimated(s, base_dir, limits, estimate::Holds::Packets)
}

/// Build the network and flows for the flow-level mode, which sends no
/// packet: the estimate counts the tree and the flows (with their paths and
/// rows), not packet state.
pub fn build_for_flow_level(
    s: &Scenario,
    base_dir: Option<&Path>,
    limits: &Limits,
) -> Result<(Simulation, Estimate), ScenarioError> {
    build_estimated(s, base_dir, limits, estimate::Holds::FlowsOnly)
}

fn build_estimated(
    s: &Scenario,
    base_dir: Option<&Path>,
    limits: &Limits,
    holds: estimate::Holds,
) -> Result<(Simulation, Estimate), ScenarioError> {
    let sizes = Sizes::of(s)?;
    checks::before_build(s, sizes)?;
    let topo_params = derive::topo_params(s)?;
    let net_bytes = estimate::network(&topo_params, !s.failures.is_empty(), limits)?;
    let mut net = topo::build(topo_params);
    let d = Derived::of(s, &net, sizes)?;
    checks::derived(s, &d)?;
    let shape = workload::shape::shape(&s.workload, net_info(&net, &d), base_dir)?;
    let estimate = estimate::run(s, &d, &shape, net_bytes, &net, limits, holds)?;
    derive::install_queues(&mut net, s, &d)?;
    let parts = Parts::prepare(s, &d, &net)?;
    let traffic = workload::generate(&s.workload, net_info(&net, &d), s.seed, base_dir)?;
    let (flows, meta) = flows::create(s, &net, &d, &parts, &traffic)?;
    // Failures and asymmetry act on the tree whose base RTT, BDP and queues were derived above.
    let plans = failure::plan(s, &net)?;
    failure::apply_rate_overrides(s, &mut net)?;
    // After the overrides: a policy built from the ports' rates (WCMP's capacity weights) sees them.
    parts.install_policies(&mut net);
    let observer = observer(s, &net)?;
    let receiver_cc = parts.receiver_cc(&net, flows.len());
    let lb_agent = parts.host_agent(&net, &flows);

    let paced = flows.iter().any(|f| matches!(f.cc, crate::cc::Cc::Dcqcn(_)));
    let mut sim = Simulation::new(net, flows, SimParams { paced, ..params(s, &d) });
    sim.set_workload_meta(meta);
    if let Some(agent) = receiver_cc {
        sim.set_receiver_cc(agent);
    }
    if let Some(mut agent) = lb_agent {
        agent.record(s.observe.host_lb);
        sim.set_lb_agent(agent);
    }
    sim.set_failures(plans, s.routing.convergence.value);
    sim.set_stall_window(checks::stall_window(s, &d));
    if let Some(q) = s.queue.shared.as_ref().filter(|q| q.pfc && !sim.net.buffers.is_empty()) {
        sim.set_pfc_watchdog(q.deadlock_after.value);
    }
    if let Some(obs) = observer {
        sim.set_observer(obs);
    }
    sim.set_port_totals(s.observe.port_totals);
    Ok((sim, estimate))
}

/// What a workload needs to know about the network.
fn net_info(net: &crate::net::Network, d: &Derived) -> NetInfo {
    let sh = net.shape;
    NetInfo {
        hosts: sh.hosts,
        hosts_per_tor: sh.hosts_per_tor,
        host_rate: d.host_rate,
        fabric_share: (sh.uplinks_per_tor as f64 / sh.hosts_per_tor as f64).min(1.0),
    }
}

fn params(s: &Scenario, d: &Derived) -> SimParams {
    SimParams {
        transport: TransportParams {
            rto: d.rto,
            trimming: s.queue.trimming,
            rtt_outstanding_only: s.transport.rtt_samples == crate::scenario::RttSamples::Outstanding,
            timeout_rts: s.transport.timeout_rts,
            ack_request: s.transport.ack_request,
            timeout_nic_turn: s.transport.timeout_nic_turn,
            acks: AckPolicy {
                ratio: s.transport.ack_ratio,
                delay: s.transport.ack_delay.value,
                nack_interval: s
                    .transport
                    .rdma
                    .as_ref()
                    .map_or(SimTime::ZERO, |r| r.nack_interval.value),
                cnp_on_ooo: s.transport.rdma.as_ref().is_some_and(|r| r.cnp_on_ooo),
                irn_nack_in_recovery: s.transport.rdma.as_ref().is_some_and(|r| {
                    s.transport.kind == crate::scenario::TransportKind::Irn
                        && r.irn_recovery == crate::scenario::IrnRecovery::Rewind
                }),
                cumulative: s.transport.ack_info == crate::scenario::AckInfo::CumulativeSack,
                marked_at_once: s.transport.ack_marked_at_once,
            },
        },
        control_bytes: d.sizes.control as u32,
        stop_at: s.stop_at.value,
        base_rtt: d.base_rtt,
        bdp_bytes: d.bdp,
        queue_bytes: d.queue.capacity,
        paced: false,
        resume_pair_state: s.transport.resume_pair_state,
    }
}

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(key, msg))
}

/// The time-series recorder `[observe]` asks for, if any.
fn observer(s: &Scenario, net: &crate::net::Network) -> Result<Option<Observer>, ScenarioError> {
    let o = &s.observe;
    let mut ports: Vec<PortId> = Vec::new();
    for (i, name) in o.ports.iter().enumerate() {
        if let Some(p) = net.port_by_name(name) {
            ports.push(p);
        } else if let Some(sw) = net.switch_by_name(name).map(|i| &net.switches[i as usize]) {
            ports.extend(if sw.up.is_empty() { &sw.down } else { &sw.up });
        } else {
            return err(
                &format!("observe.ports[{i}]"),
                format!("no link or switch named \"{name}\" (like \"t0_0\" for a ToR's uplinks, or \"t0_0->t1_0\")"),
            );
        }
    }
    if o.bucket.value == SimTime::ZERO {
        return err("observe.bucket", "must be positive");
    }
    if o.buffers && net.buffers.is_empty() {
        return err("observe.buffers", "needs a shared buffer (queue.kind = \"shared\")");
    }
    if o.switch_lb && !s.lb.kinds().any(|k| crate::lb::entry(k).switch_side) {
        return err(
            "observe.switch_lb",
            "needs a switch-side load balancer (lb.kind such as \"conweave\")",
        );
    }
    if o.host_lb && !s.lb.kinds().any(|k| crate::lb::entry(k).int_probes) {
        return err(
            "observe.host_lb",
            "needs a host-side balancer with a host agent (lb.kind = \"faca\")",
        );
    }
    if ports.is_empty() && !o.drops && !o.rtt && !o.buffers && !o.switch_lb {
        return Ok(None);
    }
    Ok(Some(Observer::new(
        o.bucket.value,
        ports,
        o.drops,
        o.rtt,
        o.buffers,
        o.switch_lb,
    )))
}
