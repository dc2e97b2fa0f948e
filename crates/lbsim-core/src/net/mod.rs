//! The network: ports (output queue + link), switches with their forwarding
//! rule, and host NICs. Everything lives in arenas indexed by small ids.

pub mod adaptive;
pub mod port;
pub mod routing;
pub mod switch;

pub use port::{Node, Port, PortFault, PortId, QueueParams};
pub use switch::{Switch, SwitchRole, UplinkPolicy};

use crate::packet::Packet;
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

pub struct Network {
    pub shape: Shape,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
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

    /// The output port a switch forwards this packet to at `now`; None when
    /// routing knows no uplink that reaches the destination (after a failure).
    #[inline]
    pub fn route(&mut self, sw: u32, pkt: &Packet, now: SimTime) -> Option<PortId> {
        if !pkt.adaptive {
            return self.route_hashed(sw, pkt);
        }
        let s = &self.switches[sw as usize];
        let dst_tor = self.tor_of(pkt.dst);
        if let Some(p) = self.down_port(s, dst_tor, pkt.dst) {
            return Some(p);
        }
        let s = &mut self.switches[sw as usize];
        let group = match &s.groups_by_dst {
            None => &s.up,
            Some(g) => &g[dst_tor as usize],
        };
        adaptive::shortest_queue(&self.ports, group, now, &mut s.rng)
    }

    /// Where a packet goes by its hash (every packet not flagged adaptive).
    #[inline]
    fn route_hashed(&self, sw: u32, pkt: &Packet) -> Option<PortId> {
        let s = &self.switches[sw as usize];
        let dst_tor = self.tor_of(pkt.dst);
        match self.down_port(s, dst_tor, pkt.dst) {
            Some(p) => Some(p),
            None => self.uplink(s, dst_tor, pkt),
        }
    }

    /// The downlink towards a destination below this switch, None when the destination is not below.
    #[inline]
    pub fn down_port(&self, s: &Switch, dst_tor: u32, dst_host: u32) -> Option<PortId> {
        match s.role {
            SwitchRole::Tor { tor } => (dst_tor == tor).then(|| s.down[(dst_host % self.shape.hosts_per_tor) as usize]),
            SwitchRole::Spine => Some(s.down[dst_tor as usize]),
            SwitchRole::Agg { pod } => {
                (self.pod_of_tor(dst_tor) == pod).then(|| s.down[(dst_tor % self.shape.tors_per_pod) as usize])
            }
            SwitchRole::Core => Some(s.down[self.pod_of_tor(dst_tor) as usize]),
        }
    }

    #[inline]
    fn uplink(&self, s: &Switch, dst_tor: u32, pkt: &Packet) -> Option<PortId> {
        match s.policy {
            UplinkPolicy::Ecmp => s.ecmp_pick(s.group(dst_tor), pkt),
        }
    }

    /// Ports a packet from `src` to `dst` with entropy `ev` crosses, in order.
    pub fn path(&self, src: u32, dst: u32, ev: u16) -> Vec<PortId> {
        let probe = Packet {
            kind: crate::packet::PacketKind::Data,
            flow: 0,
            seq: 0,
            src,
            dst,
            size: 0,
            ev,
            ecn: false,
            trimmed: false,
            adaptive: false,
            span: 0,
            sent_at: SimTime::ZERO,
        };
        let mut ports = vec![self.hosts[src as usize].nic];
        loop {
            let last = &self.ports[*ports.last().unwrap() as usize];
            match last.to {
                Node::Host(_) => return ports,
                Node::Switch(sw) => ports.push(
                    self.route_hashed(sw, &probe)
                        .expect("the healthy tree routes everywhere"),
                ),
            }
        }
    }

    /// Round-trip time on an idle network: a `data_bytes` packet along the
    /// forward path and an `ack_bytes` packet back (store and forward at
    /// every hop).
    pub fn base_rtt(&self, src: u32, dst: u32, data_bytes: u64, ack_bytes: u64) -> SimTime {
        let one_way = |a, b, bytes| {
            self.path(a, b, 0)
                .iter()
                .map(|&p| {
                    let port = &self.ports[p as usize];
                    port.rate.serialization(bytes) + port.latency
                })
                .fold(SimTime::ZERO, |x, y| x + y)
        };
        one_way(src, dst, data_bytes) + one_way(dst, src, ack_bytes)
    }

    /// Completion time of a message of `npkts` packets (all `full` bytes on
    /// the wire but the last, `last` bytes) sent back to back from `src` to
    /// `dst` on an idle network, until its last byte reaches `dst`: store and
    /// forward at every hop, as the engine does.
    ///
    /// Packet i leaves hop k at D(k,i) = max(D(k−1,i) + latency(k−1), D(k,i−1)) + ser_k(i).
    /// Unrolled, the last departure is the heaviest monotone path through the
    /// (hop, packet) grid: packet 0 up to hop j, all but the last packet at j,
    /// the second-to-last packet on to hop j' ≥ j, the last packet from j' on.
    /// That is O(hops²) per message, exact to the picosecond.
    pub fn ideal_fct(&self, src: u32, dst: u32, npkts: u64, full: u64, last: u64) -> SimTime {
        let path = self.path(src, dst, 0);
        let ser = |bytes: u64| -> Vec<u64> {
            path.iter()
                .map(|&p| self.ports[p as usize].rate.serialization(bytes).ps())
                .collect()
        };
        let (sf, sl) = (ser(full), ser(last));
        let latency: u64 = path.iter().map(|&p| self.ports[p as usize].latency.ps()).sum();
        if npkts <= 1 {
            return SimTime(latency + sl.iter().sum::<u64>());
        }
        let h = path.len();
        let mut best = 0;
        for j in 0..h {
            let before: u64 = sf[..j].iter().sum();
            let at_j = (npkts - 1) * sf[j];
            let mut between = 0; // sf over (j, j']
            for jj in j..h {
                if jj > j {
                    between += sf[jj];
                }
                let after: u64 = sl[jj..].iter().sum();
                best = best.max(before + at_j + between + after);
            }
        }
        SimTime(latency + best)
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
