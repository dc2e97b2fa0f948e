//! The network: ports (output queue + link), switches with their forwarding
//! rule and policies, and host NICs. Everything lives in arenas indexed by
//! small ids.

pub mod paths;
pub mod policy;
pub mod port;
pub mod queue;
pub mod routing;
pub mod switch;

pub use policy::{Counter, Decision, Gauge, Policies, PolicyOut, PolicySite, RouteCtx, SwitchPolicy};
pub use port::{Node, PfcPort, Port, PortFault, PortId};
pub use queue::{Queue, QueueDiscipline, QueueParams, SharedBuffer};
pub use switch::{Forwarding, Switch, SwitchRole};

use crate::packet::{Packet, PacketId};
use crate::time::SimTime;
use std::collections::VecDeque;

/// A host: one NIC port towards its ToR and the flows it is sending.
pub struct Host {
    pub nic: PortId,
    pub tor: u32,
    /// Flows that may have a packet to send, served round-robin one packet
    /// at a time whenever the NIC is free.
    pub ready: VecDeque<u32>,
}

/// Shape of the fat tree, kept for routing and for naming.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub tiers: u8,
    pub hosts: u32,
    pub hosts_per_tor: u32,
    pub uplinks_per_tor: u32,
    pub tors: u32,
    /// 3-tier only: ToRs per pod, uplinks per aggregation switch, pods.
    pub tors_per_pod: u32,
    pub agg_uplinks: u32,
    pub pods: u32,
}

impl Shape {
    /// Equal-cost paths from one ToR to another: its uplinks, times the
    /// aggregation switch's uplinks when the way crosses pods.
    pub fn tor_paths(&self, src_tor: u32, dst_tor: u32) -> u32 {
        if self.tiers == 3 && src_tor / self.tors_per_pod != dst_tor / self.tors_per_pod {
            self.uplinks_per_tor * self.agg_uplinks
        } else {
            self.uplinks_per_tor
        }
    }
}

pub struct Network {
    pub shape: Shape,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    /// Per switch, what hashed forwarding reads (`Forwarding`); kept in
    /// step with `switches` by `index_forwarding`.
    pub forwarding: Vec<Forwarding>,
    pub hosts: Vec<Host>,
    /// Switch-side load balancers, per route class and switch.
    pub policies: Policies,
    /// Each switch's shared buffer, for shared-buffer queues (empty otherwise).
    pub buffers: Vec<SharedBuffer>,
}

impl Network {
    #[inline]
    pub fn tor_of(&self, host: u32) -> u32 {
        host / self.shape.hosts_per_tor
    }

    #[inline]
    pub fn pod_of_tor(&self, tor: u32) -> u32 {
        tor / self.shape.tors_per_pod
    }

    /// Where switch `sw` sends a packet that arrived by `ingress`: ECMP for
    /// route class 0, else the class's policy at this switch (which may
    /// also hold the packet or ask for more through `out`).
    /// Always inlined, the policy call kept out of line: route class 0 is
    /// every packet of a plain run, and a call per hop costs it 2 %.
    #[inline(always)]
    pub fn forward(
        &mut self,
        sw: u32,
        ingress: PortId,
        id: PacketId,
        pkt: &mut Packet,
        now: SimTime,
        out: &mut PolicyOut,
    ) -> Decision {
        if pkt.route == 0 {
            return match self.route_hashed(sw, pkt) {
                Some(p) => Decision::Forward(p),
                None => Decision::Drop, // routing knows no way there
            };
        }
        self.forward_by_policy(sw, ingress, id, pkt, now, out)
    }

    /// `forward` for a packet of a switch policy's class.
    #[inline(never)]
    fn forward_by_policy(
        &mut self,
        sw: u32,
        ingress: PortId,
        id: PacketId,
        pkt: &mut Packet,
        now: SimTime,
        out: &mut PolicyOut,
    ) -> Decision {
        let s = &self.switches[sw as usize];
        let dst_tor = self.tor_of(pkt.dst);
        let down = self.down_port(s, dst_tor, pkt.dst);
        let ctx = RouteCtx {
            now,
            switch: sw,
            sw: s,
            ports: &self.ports,
            ingress,
            down,
            group: if down.is_some() { &[] } else { s.group(dst_tor) },
        };
        self.policies.get(pkt.route, sw).route(&ctx, id, pkt, out)
    }

    /// Where a packet goes by its hash: down if below, else ECMP over the
    /// uplinks routing believes reach the destination (None: none does).
    #[inline(always)]
    pub fn route_hashed(&self, sw: u32, pkt: &Packet) -> Option<PortId> {
        let f = &self.forwarding[sw as usize];
        if !f.fast {
            return self.route_hashed_by_switch(sw, pkt);
        }
        let dst_tor = self.tor_of(pkt.dst);
        match self.down_index(f.role, dst_tor, pkt.dst) {
            Some(i) => Some(f.down(i)),
            None => f.ecmp_up(pkt),
        }
    }

    /// `route_hashed` through the `Switch` itself: its ports are not at a
    /// fixed stride, or routing has trimmed its groups after a failure.
    #[inline(never)]
    pub(crate) fn route_hashed_by_switch(&self, sw: u32, pkt: &Packet) -> Option<PortId> {
        let s = &self.switches[sw as usize];
        let dst_tor = self.tor_of(pkt.dst);
        match self.down_port(s, dst_tor, pkt.dst) {
            Some(p) => Some(p),
            None => s.ecmp_pick(s.group(dst_tor), pkt),
        }
    }

    /// Rebuild `forwarding` from `switches` (after building, and when routing changes groups).
    pub fn index_forwarding(&mut self) {
        self.forwarding = self.switches.iter().map(Forwarding::of).collect();
    }

    /// The downlink towards a destination below this switch, None when the destination is not below.
    #[inline]
    pub fn down_port(&self, s: &Switch, dst_tor: u32, dst_host: u32) -> Option<PortId> {
        self.down_index(s.role, dst_tor, dst_host).map(|i| s.down[i as usize])
    }

    /// Which of a switch's downlinks leads to a destination below it, None when it is not below.
    #[inline(always)]
    fn down_index(&self, role: SwitchRole, dst_tor: u32, dst_host: u32) -> Option<u32> {
        match role {
            SwitchRole::Tor { tor } => (dst_tor == tor).then(|| dst_host % self.shape.hosts_per_tor),
            SwitchRole::Spine => Some(dst_tor),
            SwitchRole::Agg { pod } => (self.pod_of_tor(dst_tor) == pod).then(|| dst_tor % self.shape.tors_per_pod),
            SwitchRole::Core => Some(self.pod_of_tor(dst_tor)),
        }
    }

    /// The pair of hosts farthest apart (first host and last host: they
    /// differ in ToR and, on a 3-tier tree with several pods, in pod).
    pub fn farthest_pair(&self) -> (u32, u32) {
        (0, self.shape.hosts - 1)
    }

    pub fn port_by_name(&self, name: &str) -> Option<PortId> {
        self.ports.iter().position(|p| p.name == name).map(|i| i as PortId)
    }

    pub fn switch_by_name(&self, name: &str) -> Option<u32> {
        self.switches.iter().position(|s| s.name == name).map(|i| i as u32)
    }

    pub fn node_name(&self, n: Node) -> String {
        match n {
            Node::Host(h) => format!("h{h}"),
            Node::Switch(s) => self.switches[s as usize].name.clone(),
        }
    }
}
