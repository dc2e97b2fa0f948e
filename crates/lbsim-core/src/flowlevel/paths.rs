//! Where each flow goes in the flow-level mode: the seam between the load
//! balancer and the rate model. A `PathChooser` gives each flow, in flow id
//! order, the ports its data crosses; it may look at the candidate paths
//! (`candidates`) and at how many flows the ones before it put on each port
//! (`PathCtx::placed`), which a load-aware balancer (FaCa's
//! Flowing&Jumping, later) needs. ECMP and WCMP need neither: their path is
//! the one the packet-level engine's switches hash the flow's entropy onto.

use crate::lb::{LbStats, LoadBalancer};
use crate::net::{Network, Node, PortId};
use crate::scenario::{LbKind, ScenarioError};
use crate::time::SimTime;
use crate::transport::Flow;

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

/// The chooser for a balancer kind; None for kinds the flow-level mode does not model.
pub fn chooser(kind: LbKind) -> Option<Box<dyn PathChooser>> {
    match kind.name() {
        "ecmp" | "wcmp" => Some(Box::new(Hashed)),
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
