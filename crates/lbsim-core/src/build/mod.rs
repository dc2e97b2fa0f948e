//! From a parsed scenario to a ready simulation, in named steps: resolve
//! sizes and the topology, build the tree, derive base RTT, BDP, queues and
//! RTO from it, prepare the parts the run uses, generate the workload and
//! its flows, then failures, asymmetry and observation. Every error names
//! the scenario key.

pub mod derive;
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
use flows::Parts;
use std::path::Path;

/// Build a simulation from a scenario. `base_dir` resolves relative file
/// paths (the scenario file's folder).
pub fn build(s: &Scenario, base_dir: Option<&Path>) -> Result<Simulation, ScenarioError> {
    let sizes = Sizes::of(s)?;
    let mut net = topo::build(derive::topo_params(s)?);
    let d = Derived::of(s, &net, sizes)?;
    derive::install_queues(&mut net, s, &d)?;
    let parts = Parts::prepare(s, &d)?;
    parts.install_policies(&mut net);
    let traffic = workload::generate(&s.workload, net_info(&net, &d), s.seed, base_dir)?;
    let (flows, meta) = flows::create(s, &net, &d, &parts, &traffic)?;
    // Failures and asymmetry act on the tree whose base RTT, BDP and queues were derived above.
    let plans = failure::plan(s, &net)?;
    failure::apply_rate_overrides(s, &mut net)?;
    let observer = observer(s, &net)?;
    let receiver_cc = parts.receiver_cc(&net, flows.len());

    let mut sim = Simulation::new(net, flows, params(s, &d));
    sim.set_workload_meta(meta);
    if let Some(agent) = receiver_cc {
        sim.set_receiver_cc(agent);
    }
    sim.set_failures(plans, s.routing.convergence.value);
    if let Some(q) = s.queue.shared.as_ref().filter(|q| q.pfc && !sim.net.buffers.is_empty()) {
        sim.set_pfc_watchdog(q.deadlock_after.value);
    }
    if let Some(obs) = observer {
        sim.set_observer(obs);
    }
    Ok(sim)
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
            acks: AckPolicy {
                ratio: s.transport.ack_ratio,
                delay: s.transport.ack_delay.value,
            },
        },
        control_bytes: d.sizes.control as u32,
        stop_at: s.stop_at.value,
        base_rtt: d.base_rtt,
        bdp_bytes: d.bdp,
        queue_bytes: d.queue.capacity,
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
    if ports.is_empty() && !o.drops && !o.rtt && !o.buffers {
        return Ok(None);
    }
    Ok(Some(Observer::new(o.bucket.value, ports, o.drops, o.rtt, o.buffers)))
}
