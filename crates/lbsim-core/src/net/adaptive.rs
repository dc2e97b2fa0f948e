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

use super::port::{Port, PortId};
use crate::rng::Rng;
use crate::time::SimTime;

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
    use crate::build;
    use crate::net::Network;
    use crate::packet::{Packet, PacketKind};
    use crate::time::SimTime;
    use crate::Scenario;

    /// 32 hosts, radix 8: ToR t0_0 has hosts 0-3 and 4 uplinks.
    fn net() -> Network {
        let s = Scenario::from_toml("[topology]\nhosts = 32\nradix = 8").unwrap();
        build::build(&s, None).unwrap().net
    }

    fn packet(src: u32, dst: u32, adaptive: bool) -> Packet {
        Packet {
            kind: PacketKind::Data,
            flow: 0,
            seq: 0,
            src,
            dst,
            size: 4096,
            ev: 0,
            ecn: false,
            trimmed: false,
            adaptive,
            span: 0,
            sent_at: SimTime::ZERO,
        }
    }

    /// t0_0's uplinks, to t1_0 ... t1_3.
    fn uplinks(n: &Network) -> Vec<u32> {
        (0..4)
            .map(|j| n.port_by_name(&format!("t0_0->t1_{j}")).unwrap())
            .collect()
    }

    #[test]
    fn picks_the_uplink_with_the_fewest_bytes_queued() {
        let mut n = net();
        let t0 = n.switch_by_name("t0_0").unwrap();
        let now = SimTime::from_us(5);
        let up = uplinks(&n);
        for (j, bytes) in [(0, 40_000), (1, 12_000), (2, 8_192), (3, 30_000)] {
            n.ports[up[j] as usize].data_bytes = bytes;
        }
        assert_eq!(n.route(t0, &packet(0, 31, true), now), Some(up[2]));
        // What is left of the packet on the line counts: 8192 B queued plus
        // 1 us of a 400 Gb/s line (50 000 B) is longer than 12 000 B.
        n.ports[up[2] as usize].busy_until = now + SimTime::from_us(1);
        assert_eq!(n.route(t0, &packet(0, 31, true), now), Some(up[1]));
        // A dead uplink is skipped even before routing converges.
        n.ports[up[1] as usize].up = false;
        assert_eq!(n.route(t0, &packet(0, 31, true), now), Some(up[3]));
        // Down is unique, whatever the queues: t0_0 delivers to its own host 2.
        let down = n.port_by_name("t0_0->h2").unwrap();
        assert_eq!(n.route(t0, &packet(31, 2, true), now), Some(down));
        // A packet without the flag is hashed as before, queues or not.
        let hashed = packet(0, 31, false);
        let expect = {
            let s = &n.switches[t0 as usize];
            s.ecmp_pick(s.group(7), &hashed)
        };
        assert_eq!(n.route(t0, &hashed, now), expect);
    }

    #[test]
    fn ties_are_broken_uniformly_at_random() {
        let mut n = net();
        let t0 = n.switch_by_name("t0_0").unwrap();
        let up = uplinks(&n);
        n.ports[up[3] as usize].data_bytes = 4096; // 0, 1, 2 tie at empty
        let mut counts = [0u32; 4];
        for _ in 0..30_000 {
            let p = n.route(t0, &packet(0, 31, true), SimTime::ZERO).unwrap();
            counts[up.iter().position(|&u| u == p).unwrap()] += 1;
        }
        assert_eq!(counts[3], 0);
        for c in &counts[..3] {
            // 10 000 expected each; 4.5 standard deviations is about 370.
            assert!((9_630..10_370).contains(c), "{counts:?}");
        }
    }
}
