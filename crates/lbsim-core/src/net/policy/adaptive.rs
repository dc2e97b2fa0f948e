//! Adaptive routing in the switch, as NVIDIA's adaptive RoCE (Spectrum-X)
//! does and the REPS paper's "Adaptive RoCE" baseline models (REPS §4.1):
//! a packet going up leaves by the uplink with the fewest bytes queued,
//! counting what is left of the packet on the line, among the uplinks
//! routing says reach its destination. Ties are broken uniformly at random
//! from the switch's own stream. The way down a fat tree is unique, so only
//! upward hops choose; the sender's entropy value plays no part.
//!
//! A switch sees its own links go down at once, so a dead uplink is skipped
//! even before routing converges (docs/model-choices.md).

use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::{Port, PortId};
use crate::packet::{Packet, PacketId};
use crate::rng::{Rng, StreamTag};
use crate::time::SimTime;

pub struct Adaptive {
    /// The switch's tie-break stream.
    rng: Rng,
}

impl Adaptive {
    pub fn new(seed: u64, switch: u32) -> Self {
        Adaptive {
            rng: Rng::new(seed, StreamTag::SwitchTieBreak, switch as u64),
        }
    }
}

impl SwitchPolicy for Adaptive {
    #[inline]
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, _pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        if let Some(down) = ctx.down {
            return Decision::Forward(down);
        }
        match shortest_queue(ctx.ports, ctx.group, ctx.now, &mut self.rng) {
            Some(p) => Decision::Forward(p),
            None => Decision::Drop,
        }
    }
}

/// The live port of `group` with the shortest backlog; None when none is up.
#[inline]
pub fn shortest_queue(ports: &[Port], group: &[PortId], now: SimTime, rng: &mut Rng) -> Option<PortId> {
    let mut best = None;
    let mut best_bytes = u64::MAX;
    let mut ties = 0u64;
    for &p in group {
        let port = &ports[p as usize];
        if !port.up {
            continue;
        }
        let bytes = port.backlog_bytes(now);
        if bytes < best_bytes {
            (best, best_bytes, ties) = (Some(p), bytes, 1);
        } else if bytes == best_bytes {
            // Reservoir sampling: each of the k tied ports ends up chosen with probability 1/k.
            ties += 1;
            if rng.below(ties) == 0 {
                best = Some(p);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;
    use crate::net::queue::Queue;
    use crate::net::Network;
    use crate::Scenario;

    /// 32 hosts, radix 8: ToR t0_0 has hosts 0-3 and 4 uplinks.
    fn net() -> Network {
        let s = Scenario::from_toml("[topology]\nhosts = 32\nradix = 8").unwrap();
        build::build(&s, None).unwrap().net
    }

    fn packet(src: u32, dst: u32) -> Packet {
        Packet::data(0, 0, src, dst, 4096, 0, 1, SimTime::ZERO)
    }

    /// t0_0's uplinks, to t1_0 ... t1_3.
    fn uplinks(n: &Network) -> Vec<u32> {
        (0..4)
            .map(|j| n.port_by_name(&format!("t0_0->t1_{j}")).unwrap())
            .collect()
    }

    fn set_backlog(n: &mut Network, p: u32, bytes: u64) {
        let Queue::TwoClass(q) = &mut n.ports[p as usize].queue else {
            unreachable!()
        };
        q.set_backlog_for_test(bytes);
    }

    fn route(n: &Network, a: &mut Adaptive, pkt: &Packet, now: SimTime) -> Decision {
        let sw = n.switch_by_name("t0_0").unwrap();
        let s = &n.switches[sw as usize];
        let dst_tor = n.tor_of(pkt.dst);
        let ctx = RouteCtx {
            now,
            switch: sw,
            sw: s,
            ports: &n.ports,
            ingress: n.hosts[pkt.src as usize].nic,
            down: n.down_port(s, dst_tor, pkt.dst),
            group: s.group(dst_tor),
        };
        a.route(&ctx, 0, &mut pkt.clone(), &mut PolicyOut::default())
    }

    #[test]
    fn picks_the_uplink_with_the_fewest_bytes_queued() {
        let mut n = net();
        let mut a = Adaptive::new(1, 0);
        let now = SimTime::from_us(5);
        let up = uplinks(&n);
        for (j, bytes) in [(0, 40_000), (1, 12_000), (2, 8_192), (3, 30_000)] {
            set_backlog(&mut n, up[j], bytes);
        }
        assert_eq!(route(&n, &mut a, &packet(0, 31), now), Decision::Forward(up[2]));
        // What is left of the packet on the line counts: 8192 B queued plus
        // 1 us of a 400 Gb/s line (50 000 B) is longer than 12 000 B.
        n.ports[up[2] as usize].busy_until = now + SimTime::from_us(1);
        assert_eq!(route(&n, &mut a, &packet(0, 31), now), Decision::Forward(up[1]));
        // A dead uplink is skipped even before routing converges.
        n.ports[up[1] as usize].up = false;
        assert_eq!(route(&n, &mut a, &packet(0, 31), now), Decision::Forward(up[3]));
        // Down is unique, whatever the queues: t0_0 delivers to its own host 2.
        let down = n.port_by_name("t0_0->h2").unwrap();
        assert_eq!(route(&n, &mut a, &packet(31, 2), now), Decision::Forward(down));
        for &p in &up {
            n.ports[p as usize].up = false;
        }
        assert_eq!(route(&n, &mut a, &packet(0, 31), now), Decision::Drop, "no live uplink");
    }

    #[test]
    fn ties_are_broken_uniformly_at_random() {
        let mut n = net();
        let mut a = Adaptive::new(1, 0);
        let up = uplinks(&n);
        set_backlog(&mut n, up[3], 4096); // 0, 1, 2 tie at empty
        let mut counts = [0u32; 4];
        for _ in 0..30_000 {
            let Decision::Forward(p) = route(&n, &mut a, &packet(0, 31), SimTime::ZERO) else {
                panic!()
            };
            counts[up.iter().position(|&u| u == p).unwrap()] += 1;
        }
        assert_eq!(counts[3], 0);
        for c in &counts[..3] {
            // 10 000 expected each; 4.5 standard deviations is about 370.
            assert!((9_630..10_370).contains(c), "{counts:?}");
        }
    }
}
