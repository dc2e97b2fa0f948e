//! Paths on the healthy tree and what they imply: the ports an entropy
//! value's packets cross, the idle round-trip time, and the exact ideal
//! completion time of a message alone on its path.

use super::{Decision, Network, Node, PolicyOut, PortId};
use crate::packet::Packet;
use crate::time::SimTime;

impl Network {
    /// Ports a packet from `src` to `dst` with entropy `ev` crosses, in order.
    pub fn path(&self, src: u32, dst: u32, ev: u16) -> Vec<PortId> {
        let probe = Packet::data(0, 0, src, dst, 0, ev, 0, SimTime::ZERO);
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

    /// Ports a data packet of route class `route` from `src` to `dst` with
    /// entropy `ev` crosses on an idle network at time 0, asking each switch's
    /// policy of that class as the engine does (class 0: `path`). None when
    /// some switch does not simply forward it (drops, holds or consumes it),
    /// or the policy asks for more than a verdict: such policies have no
    /// path of their own. Mutable because policies are; stateless ones
    /// (WCMP) are left as they were.
    pub fn path_routed(&mut self, src: u32, dst: u32, ev: u16, route: u8) -> Option<Vec<PortId>> {
        if route == 0 {
            return Some(self.path(src, dst, ev));
        }
        let mut probe = Packet::data(0, 0, src, dst, 0, ev, route, SimTime::ZERO);
        let mut ports = vec![self.hosts[src as usize].nic];
        let mut out = PolicyOut::default();
        loop {
            let last = *ports.last().unwrap();
            match self.ports[last as usize].to {
                Node::Host(_) => return Some(ports),
                Node::Switch(sw) => match self.forward(sw, last, 0, &mut probe, SimTime::ZERO, &mut out) {
                    Decision::Forward(p) if out.is_empty() && ports.len() < 64 => ports.push(p),
                    _ => return None,
                },
            }
        }
    }

    /// Time a `bytes` packet takes from `src` to `dst` on an idle network
    /// (store and forward at every hop).
    pub fn one_way(&self, src: u32, dst: u32, bytes: u64) -> SimTime {
        self.path(src, dst, 0)
            .iter()
            .map(|&p| {
                let port = &self.ports[p as usize];
                port.rate.serialization(bytes) + port.latency
            })
            .fold(SimTime::ZERO, |x, y| x + y)
    }

    /// Round-trip time on an idle network: a `data_bytes` packet along the
    /// forward path and an `ack_bytes` packet back.
    pub fn base_rtt(&self, src: u32, dst: u32, data_bytes: u64, ack_bytes: u64) -> SimTime {
        self.one_way(src, dst, data_bytes) + self.one_way(dst, src, ack_bytes)
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
}
