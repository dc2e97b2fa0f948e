//! Where each flow goes in the flow-level mode: the seam between the load
//! balancer and the rate model. A `PathChooser` gives each flow, in flow id
//! order, the ports its data crosses; it may look at the candidate paths
//! (`candidates`) and at how many flows the ones before it put on each port
//! (`PathCtx::placed`), which a load-aware balancer (FaCa's
//! Flowing&Jumping, `FacaPlacement`) needs. ECMP and WCMP need neither: their
//! path is the one the packet-level engine's switches hash the flow's entropy
//! onto.

use crate::lb::faca::flowing::FlowingJumping;
use crate::lb::{LbStats, LoadBalancer};
use crate::net::{Network, Node, PortId};
use crate::scenario::{LbKind, ScenarioError};
use crate::time::SimTime;
use crate::transport::Flow;
use std::collections::HashMap;

/// What a chooser knows when it places a flow.
pub struct PathCtx<'a> {
    /// The network as the packet engine would start it (policies installed, rate overrides applied).
    pub net: &'a mut Network,
    /// Flows placed so far on each port (indexed by port id).
    pub placed: &'a [u32],
}

/// Picks one path per flow.
pub trait PathChooser {
    /// The ports flow `flow` crosses from its source's NIC to its destination's downlink.
    fn choose(&mut self, ctx: &mut PathCtx, flow: &mut Flow) -> Result<Vec<PortId>, ScenarioError>;
}

/// ECMP and WCMP: the flow's balancer gives its one entropy value (drawn
/// from the flow's own seeded stream when the run was built, as in the
/// packet engine); the switches hash it (route class 0) or ask their
/// policy (WCMP's class), exactly as they route its data packets.
pub struct Hashed;

impl PathChooser for Hashed {
    fn choose(&mut self, ctx: &mut PathCtx, flow: &mut Flow) -> Result<Vec<PortId>, ScenarioError> {
        // ECMP's and WCMP's balancers return their stored value and draw nothing.
        let ev = flow.lb.next_ev(SimTime::ZERO, &mut flow.rng, &mut LbStats::default());
        let (src, dst) = (flow.spec.src, flow.spec.dst);
        ctx.net.path_routed(src, dst, ev, flow.route).ok_or_else(|| {
            ScenarioError::new(
                "lb.kind",
                format!(
                    "the {} policy gives flow {src}->{dst} no single path",
                    flow.lb_kind.name()
                ),
            )
        })
    }
}

/// FaCa (§5.5) with perfect knowledge: each flow goes where Flowing &
/// Jumping puts it on the ring of its candidate up-down paths (in uplink
/// order), the load of a path being the flows already placed on its busiest
/// switch-to-switch link per Gb/s of that link. What the packet engine's FaCa
/// learns from probes, with delay and smoothing (`lb::faca`), is here exact
/// and instantaneous: the flows placed before this one, in flow id order, by
/// every host (an upper bound on what probing can see). The placement is a
/// path, not an entropy value: FaCa's probes find an EV for every path.
/// The anchor is drawn from the flow's own stream; the anchor state is kept
/// per (source, destination), as the host agent keeps it.
#[derive(Default)]
pub struct FacaPlacement {
    anchors: HashMap<(u32, u32), FlowingJumping>,
}

impl PathChooser for FacaPlacement {
    fn choose(&mut self, ctx: &mut PathCtx, flow: &mut Flow) -> Result<Vec<PortId>, ScenarioError> {
        let (src, dst) = (flow.spec.src, flow.spec.dst);
        let mut ring = candidates(ctx.net, src, dst);
        let loads: Vec<f64> = ring
            .iter()
            .map(|path| {
                path.iter()
                    .filter(|&&p| {
                        let port = &ctx.net.ports[p as usize];
                        matches!((port.from, port.to), (Node::Switch(_), Node::Switch(_)))
                    })
                    .map(|&p| ctx.placed[p as usize] as f64 / (ctx.net.ports[p as usize].rate.bps() as f64 / 1e9))
                    .fold(0.0, f64::max)
            })
            .collect();
        let rng = &mut flow.rng;
        let k = self
            .anchors
            .entry((src, dst))
            .or_default()
            .place(&loads, &mut |n| rng.below(n as u64) as usize);
        Ok(ring.swap_remove(k))
    }
}

/// The chooser for a balancer kind; None for kinds the flow-level mode does not model.
pub fn chooser(kind: LbKind) -> Option<Box<dyn PathChooser>> {
    match kind.name() {
        "ecmp" | "wcmp" => Some(Box::new(Hashed)),
        "faca" => Some(Box::<FacaPlacement>::default()),
        _ => None,
    }
}

/// Every up-down path from `src` to `dst` on the healthy tree, in uplink
/// order at each switch: the choices a host-side balancer has.
pub fn candidates(net: &Network, src: u32, dst: u32) -> Vec<Vec<PortId>> {
    let dst_tor = net.tor_of(dst);
    let mut out = Vec::new();
    let mut stack = vec![vec![net.hosts[src as usize].nic]];
    while let Some(path) = stack.pop() {
        let last = &net.ports[*path.last().unwrap() as usize];
        let sw = match last.to {
            Node::Host(_) => {
                out.push(path);
                continue;
            }
            Node::Switch(sw) => &net.switches[sw as usize],
        };
        match net.down_port(sw, dst_tor, dst) {
            Some(p) => stack.push([path.as_slice(), &[p]].concat()),
            // Reversed so that the stack pops the first uplink first.
            None => stack.extend(
                sw.group(dst_tor)
                    .iter()
                    .rev()
                    .map(|&p| [path.as_slice(), &[p]].concat()),
            ),
        }
    }
    out
}
