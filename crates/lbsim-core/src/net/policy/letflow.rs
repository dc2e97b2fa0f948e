//! LetFlow (Vanini et al., "Let It Flow: Resilient Asymmetric Load
//! Balancing with Flowlet Switching", NSDI '17) in the switch: a data
//! packet going up continues its flow's flowlet on the same uplink; a packet
//! after an idle gap longer than the flowlet timeout starts a new flowlet on
//! an uplink drawn uniformly at random among those routing says reach the
//! destination (LetFlow §3: "picks a path at random for each flowlet").
//!
//! Every switch that goes up decides on its own, with its own flowlet table:
//! on a 2-tier leaf-spine that is the source ToR only, exactly as the
//! ConWeave artifact runs it (`letflow-routing.cc`: the ToR draws one of its
//! paths to the destination ToR per flowlet); on a 3-tier tree the
//! aggregation switch draws its uplink per flowlet too, where the artifact
//! draws the whole path at the ToR (the same uniform choice of paths when
//! both see the same gaps). The way down is unique.
//!
//! ACKs, NACKs and CNPs are hashed like ECMP, as the artifact routes control
//! packets (`switch-node.cc`, `GetOutDev`). A switch sees its own links go
//! down at once: a dead uplink is never drawn, and a flowlet whose uplink
//! died or left the routing group starts anew.

use super::flowlets::{Flowlet, Flowlets};
use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::{Port, PortId};
use crate::packet::{Packet, PacketId, PacketKind};
use crate::rng::{Rng, StreamTag};
use crate::time::SimTime;

pub struct LetFlow {
    flowlets: Flowlets,
    /// The switch's draws of uplinks.
    rng: Rng,
}

impl LetFlow {
    pub fn new(seed: u64, switch: u32, timeout: SimTime) -> Self {
        LetFlow {
            flowlets: Flowlets::new(timeout, timeout),
            rng: Rng::new(seed, StreamTag::LetFlow, switch as u64),
        }
    }
}

/// Whether a port can take a flowlet: up, and in the group routing believes reaches the destination.
#[inline]
pub fn usable(ctx: &RouteCtx, port: PortId) -> bool {
    ctx.ports[port as usize].up && (ctx.sw.groups_by_dst.is_none() || ctx.group.contains(&port))
}

/// A live port of `group` drawn uniformly at random; None when none is up.
#[inline]
pub fn random_live(ports: &[Port], group: &[PortId], rng: &mut Rng) -> Option<PortId> {
    if group.is_empty() {
        return None;
    }
    let p = group[rng.below(group.len() as u64) as usize];
    if ports[p as usize].up {
        return Some(p);
    }
    // Some uplink is down (before routing converges): draw among the live ones.
    let live = group.iter().filter(|&&q| ports[q as usize].up).count();
    if live == 0 {
        return None;
    }
    let k = rng.below(live as u64) as usize;
    group.iter().copied().filter(|&q| ports[q as usize].up).nth(k)
}

impl SwitchPolicy for LetFlow {
    #[inline]
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        if ctx.down.is_some() || pkt.kind != PacketKind::Data {
            return ctx.hashed(pkt);
        }
        if let Flowlet::Continues(port) = self.flowlets.lookup(pkt.flow, ctx.now) {
            if usable(ctx, port) {
                return Decision::Forward(port);
            }
        }
        match random_live(ctx.ports, ctx.group, &mut self.rng) {
            Some(port) => {
                self.flowlets.set(pkt.flow, ctx.now, port);
                Decision::Forward(port)
            }
            None => Decision::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{net, route_at, uplinks};
    use super::*;

    const GAP: SimTime = SimTime(100_000_000); // 100 us

    fn data(flow: u32) -> Packet {
        Packet::data(flow, 0, 0, 31, 1048, 7, 1, SimTime::ZERO)
    }

    fn port_of(d: Decision) -> PortId {
        match d {
            Decision::Forward(p) => p,
            other => panic!("{other:?}"),
        }
    }

    /// Packets no more than the timeout apart are one flowlet, on one uplink,
    /// however long the flowlet lasts; the same packets spaced one picosecond
    /// more each start a new flowlet, and the draws are uniform over the uplinks.
    #[test]
    fn one_flowlet_one_uplink_and_each_new_flowlet_a_uniform_draw() {
        let n = net();
        let up = uplinks(&n, "t0_0");
        let mut lf = LetFlow::new(1, 0, GAP);
        let first = port_of(route_at(&n, &mut lf, "t0_0", &data(1), SimTime::ZERO));
        for k in 1..10_000u64 {
            let at = SimTime(k * GAP.ps());
            assert_eq!(
                port_of(route_at(&n, &mut lf, "t0_0", &data(1), at)),
                first,
                "packet {k}"
            );
        }
        let mut counts = [0u32; 4];
        let mut moved = 0;
        let mut last = first;
        let start = SimTime(10_000 * GAP.ps());
        for k in 0..40_000u64 {
            let at = start + SimTime(k * (GAP.ps() + 1));
            let p = port_of(route_at(&n, &mut lf, "t0_0", &data(2), at));
            counts[up.iter().position(|&u| u == p).unwrap()] += 1;
            moved += (p != last) as u32;
            last = p;
        }
        for c in counts {
            // 10 000 expected each; 4.5 standard deviations is about 390.
            assert!((9_610..10_390).contains(&c), "{counts:?}");
        }
        // A new draw lands elsewhere 3 times in 4 (30 000 expected; sd about 87).
        assert!((29_600..30_400).contains(&moved), "{moved}");
    }

    #[test]
    fn flows_have_their_own_flowlets_down_is_unique_and_acks_hash() {
        let n = net();
        let mut lf = LetFlow::new(3, 0, GAP);
        let now = SimTime::from_us(1);
        // Two flows on t0_0 draw independently: over 64 flows, several uplinks are used.
        let mut used: Vec<PortId> = (0..64)
            .map(|f| port_of(route_at(&n, &mut lf, "t0_0", &data(f), now)))
            .collect();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 4);
        // Down to its own host 2: the one port.
        let down = n.port_by_name("t0_0->h2").unwrap();
        let to_local = Packet::data(5, 0, 31, 2, 1048, 7, 1, now);
        assert_eq!(route_at(&n, &mut lf, "t0_0", &to_local, now), Decision::Forward(down));
        // An ACK goes where class 0 (ECMP) would send it.
        let ack = Packet {
            ev: 77,
            route: 1,
            ..Packet::new(PacketKind::Ack, 9, 0, 31, 60, now)
        };
        let s = &n.switches[n.switch_by_name("t0_0").unwrap() as usize];
        let expect = s.ecmp_pick(&s.up, &ack).unwrap();
        assert_eq!(route_at(&n, &mut lf, "t0_0", &ack, now), Decision::Forward(expect));
    }

    #[test]
    fn a_dead_uplink_is_never_drawn_and_its_flowlet_moves() {
        let mut n = net();
        let up = uplinks(&n, "t0_0");
        let mut lf = LetFlow::new(5, 0, GAP);
        let first = port_of(route_at(&n, &mut lf, "t0_0", &data(1), SimTime::ZERO));
        n.ports[first as usize].up = false;
        let moved = port_of(route_at(&n, &mut lf, "t0_0", &data(1), SimTime::from_us(1)));
        assert_ne!(moved, first, "the flowlet left the dead uplink at once");
        assert_eq!(
            port_of(route_at(&n, &mut lf, "t0_0", &data(1), SimTime::from_us(2))),
            moved,
            "and stays on its new one"
        );
        for k in 0..2_000u64 {
            let at = SimTime::from_us(1_000) + SimTime(k * 2 * GAP.ps());
            assert_ne!(port_of(route_at(&n, &mut lf, "t0_0", &data(1), at)), first);
        }
        for &p in &up {
            n.ports[p as usize].up = false;
        }
        let at = SimTime::from_us(1_000_000);
        assert_eq!(route_at(&n, &mut lf, "t0_0", &data(1), at), Decision::Drop);
    }
}
