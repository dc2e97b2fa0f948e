//! Adaptive routing in the switch, as NVIDIA's adaptive RoCE (Spectrum-X)
//! does and the REPS paper's "Adaptive RoCE" baseline models (REPS §4.1):
//! a packet going up leaves by the uplink with the shortest queue, among
//! the uplinks routing says reach its destination. The way down a fat tree
//! is unique, so only upward hops choose; the sender's entropy value plays
//! no part. The paper is silent on two details, each a key of `lb.adaptive`:
//!
//! - `backlog`, what a queue's length is: `bytes_left`, the data bytes
//!   waiting plus what is left of the packet on the line (what a data packet
//!   joining now waits behind); or `whole_packets`, every packet the port
//!   holds, control ones included, the one on the line whole until the
//!   picosecond its last bit leaves, inclusive (the REPS artifact's
//!   `queuesize()`, read before a completion due at the same time).
//! - `ties`, which of several equally short queues: `random`, drawn afresh
//!   from the switch's stream for each packet; or `route_order`, the first
//!   in a random order of the uplinks fixed per ToR, and per aggregation
//!   switch and destination host (the REPS artifact's switch keeps the first
//!   strictly shortest queue of the destination's route list, which
//!   `permute_paths` shuffled once: a ToR shares one list among all
//!   destinations, an aggregation switch builds one per destination).
//!
//! A switch sees its own links go down at once, so a dead uplink is skipped
//! even before routing converges (docs/model-choices.md).

use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::{Port, PortId, SwitchRole};
use crate::packet::{Packet, PacketId};
use crate::rng::{mix64, Rng, StreamTag};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.adaptive.backlog`: what a switch reads as a queue's length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backlog {
    /// Data bytes waiting plus what is left of the packet on the line.
    BytesLeft,
    /// Every packet held, control included, the one on the line whole until it has left.
    WholePackets,
}

/// `lb.adaptive.ties`: which of several equally short queues a packet takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The first in a random order of the uplinks fixed per ToR, and per
    /// aggregation switch and destination host (the REPS artifact's route lists).
    RouteOrder,
    /// Uniformly at random, drawn afresh for each packet.
    Random,
}

/// How `shortest_queue` breaks a tie.
pub enum TieBreak<'a> {
    /// The tied port with the smallest `mix64(order ^ port)`: one fixed random order per `order`.
    Order(u64),
    /// Each tied port equally likely, from this stream.
    Draw(&'a mut Rng),
}

pub struct Adaptive {
    backlog: Backlog,
    ties: Ties,
    /// Seeds the switch's route orders (`Ties::RouteOrder`).
    order_salt: u64,
    /// The switch's tie-break stream (`Ties::Random`).
    rng: Rng,
}

impl Adaptive {
    pub fn new(seed: u64, switch: u32, backlog: Backlog, ties: Ties) -> Self {
        Adaptive {
            backlog,
            ties,
            order_salt: Rng::new(seed, StreamTag::SwitchTieBreak, switch as u64).next_u64(),
            rng: Rng::new(seed, StreamTag::SwitchTieBreak, switch as u64),
        }
    }
}

impl SwitchPolicy for Adaptive {
    #[inline]
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        if let Some(down) = ctx.down {
            return Decision::Forward(down);
        }
        let ties = match self.ties {
            Ties::RouteOrder => TieBreak::Order(match ctx.sw.role {
                SwitchRole::Tor { .. } => self.order_salt,
                _ => mix64(self.order_salt ^ pkt.dst as u64),
            }),
            Ties::Random => TieBreak::Draw(&mut self.rng),
        };
        match shortest_queue(ctx.ports, ctx.group, ctx.now, self.backlog, ties) {
            Some(p) => Decision::Forward(p),
            None => Decision::Drop,
        }
    }
}

/// The live port of `group` with the shortest backlog; None when none is up.
#[inline]
pub fn shortest_queue(
    ports: &[Port],
    group: &[PortId],
    now: SimTime,
    backlog: Backlog,
    mut ties: TieBreak,
) -> Option<PortId> {
    let mut best = None;
    let mut best_bytes = u64::MAX;
    let mut tied = 0u64;
    for &p in group {
        let port = &ports[p as usize];
        if !port.up {
            continue;
        }
        let bytes = match backlog {
            Backlog::BytesLeft => port.backlog_bytes(now),
            Backlog::WholePackets => port.backlog_whole_packets(now),
        };
        if bytes < best_bytes {
            (best, best_bytes, tied) = (Some(p), bytes, 1);
        } else if bytes == best_bytes {
            let take = match &mut ties {
                TieBreak::Order(order) => {
                    let rank = |q: PortId| mix64(*order ^ q as u64);
                    best.is_some_and(|b| rank(p) < rank(b))
                }
                // Reservoir sampling: each of the k tied ports ends up chosen with probability 1/k.
                TieBreak::Draw(rng) => {
                    tied += 1;
                    rng.below(tied) == 0
                }
            };
            if take {
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
    use crate::net::queue::{Queue, QueueDiscipline};
    use crate::net::Network;
    use crate::packet::PacketKind;
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

    /// Where switch `sw` sends `pkt` at `now`.
    fn route_at(n: &Network, a: &mut Adaptive, sw: u32, pkt: &Packet, now: SimTime) -> Decision {
        let s = &n.switches[sw as usize];
        let dst_tor = n.tor_of(pkt.dst);
        let down = n.down_port(s, dst_tor, pkt.dst);
        let ctx = RouteCtx {
            now,
            switch: sw,
            sw: s,
            ports: &n.ports,
            ingress: 0,
            down,
            group: if down.is_some() { &[] } else { s.group(dst_tor) },
        };
        a.route(&ctx, 0, &mut pkt.clone(), &mut PolicyOut::default())
    }

    fn route(n: &Network, a: &mut Adaptive, pkt: &Packet, now: SimTime) -> Decision {
        route_at(n, a, n.switch_by_name("t0_0").unwrap(), pkt, now)
    }

    /// Which of `up` a packet to `dst` leaves by.
    fn pick(n: &Network, a: &mut Adaptive, sw: u32, up: &[u32], dst: u32, now: SimTime) -> usize {
        match route_at(n, a, sw, &packet(0, dst), now) {
            Decision::Forward(p) => up.iter().position(|&u| u == p).unwrap(),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn picks_the_uplink_with_the_fewest_bytes_queued() {
        let mut n = net();
        let mut a = Adaptive::new(1, 0, Backlog::BytesLeft, Ties::Random);
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
        let mut a = Adaptive::new(1, 0, Backlog::BytesLeft, Ties::Random);
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

    /// `whole_packets` counts control packets waiting and the packet on the
    /// line whole, up to and including the picosecond its last bit leaves;
    /// `bytes_left` counts neither control packets nor what has left.
    #[test]
    fn whole_packets_counts_control_packets_and_the_packet_on_the_line_whole() {
        let mut n = net();
        let up = uplinks(&n);
        let now = SimTime::from_us(5);
        // up[0]: 300 B of data waiting.
        set_backlog(&mut n, up[0], 300);
        // up[1]: five 64 B ACKs waiting (320 B), no data.
        for i in 0..5 {
            let mut ack = Packet::new(PacketKind::Ack, 0, 1, 0, 64, now);
            let Queue::TwoClass(q) = &mut n.ports[up[1] as usize].queue else {
                unreachable!()
            };
            q.admit(i, &mut ack, false);
            assert_eq!(q.all_bytes_waiting(), 64 * (i as u64 + 1));
        }
        // up[2]: a 4150 B packet whose last bit leaves 1 ps from now; up[3]
        // the same but 2 ps from now, and 5 B of data waiting.
        for (j, left) in [(2, 1), (3, 2)] {
            let port = &mut n.ports[up[j] as usize];
            port.busy_until = now + SimTime(left);
            let arrival = port.busy_until + port.latency;
            port.wire
                .push_back((arrival, Packet::new(PacketKind::Data, 0, 0, 31, 4150, now)));
        }
        set_backlog(&mut n, up[3], 5);
        let bytes_left = |n: &Network, t| {
            up.iter()
                .map(|&p| n.ports[p as usize].backlog_bytes(t))
                .collect::<Vec<_>>()
        };
        let whole = |n: &Network, t| {
            up.iter()
                .map(|&p| n.ports[p as usize].backlog_whole_packets(t))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            bytes_left(&n, now),
            [300, 0, 0, 5],
            "under a byte left on the line counts as 0 B"
        );
        assert_eq!(whole(&n, now), [300, 320, 4150, 4155]);
        let mut left = Adaptive::new(1, 0, Backlog::BytesLeft, Ties::RouteOrder);
        let mut whole_a = Adaptive::new(1, 0, Backlog::WholePackets, Ties::RouteOrder);
        let sw = n.switch_by_name("t0_0").unwrap();
        // bytes_left: up[1] and up[2] tie at 0; whole_packets: up[0] is shortest.
        assert!([1, 2].contains(&pick(&n, &mut left, sw, &up, 31, now)));
        assert_eq!(pick(&n, &mut whole_a, sw, &up, 31, now), 0);
        // At the picosecond up[2]'s packet ends it still counts; one later it is gone.
        let end = now + SimTime(1);
        assert_eq!(whole(&n, end)[2], 4150);
        assert_eq!(
            whole(&n, end + SimTime(1)),
            [300, 320, 0, 4155],
            "up[3]'s last picosecond"
        );
        assert_eq!(pick(&n, &mut whole_a, sw, &up, 31, end + SimTime(1)), 2);
        assert_eq!(whole(&n, end + SimTime(2)), [300, 320, 0, 5]);
        // A packet that ends now counts beside the next one already on the
        // line (the artifact reads the queue before the completion at the
        // same time): up[2] starts another 4150 B packet at its end.
        let port = &mut n.ports[up[2] as usize];
        port.busy_until = end + port.serialization(4150);
        let arrival = port.busy_until + port.latency;
        port.wire
            .push_back((arrival, Packet::new(PacketKind::Data, 0, 0, 31, 4150, end)));
        assert_eq!(whole(&n, end)[2], 8300);
        assert_eq!(whole(&n, end + SimTime(1))[2], 4150);
    }

    /// `route_order`: among equally short queues the first in a random
    /// order, one per ToR for every destination, one per aggregation switch
    /// and destination; a strictly shorter queue wins wherever it stands.
    #[test]
    fn route_order_ties_follow_one_order_per_tor_and_one_per_agg_destination() {
        let mut n = net();
        let up = uplinks(&n);
        let tor = n.switch_by_name("t0_0").unwrap();
        // Every destination above the ToR takes the same uplink; seeds differ in which.
        let mut firsts = std::collections::BTreeSet::new();
        for seed in 1..40 {
            let mut a = Adaptive::new(seed, tor, Backlog::WholePackets, Ties::RouteOrder);
            let first = pick(&n, &mut a, tor, &up, 4, SimTime::ZERO);
            for dst in 4..32 {
                assert_eq!(
                    pick(&n, &mut a, tor, &up, dst, SimTime::ZERO),
                    first,
                    "seed {seed}, dst {dst}"
                );
            }
            firsts.insert(first);
        }
        assert_eq!(firsts.len(), 4, "each uplink comes first for some seed");
        let mut a = Adaptive::new(1, tor, Backlog::WholePackets, Ties::RouteOrder);
        let first = pick(&n, &mut a, tor, &up, 31, SimTime::ZERO);
        set_backlog(&mut n, up[first], 4096);
        let second = pick(&n, &mut a, tor, &up, 31, SimTime::ZERO);
        assert_ne!(second, first, "the next in the order once the first is longer");
        for (j, &p) in up.iter().enumerate() {
            set_backlog(&mut n, p, if j == first { 8192 } else { 100 });
        }
        set_backlog(&mut n, up[(first + 3) % 4], 50);
        assert_eq!(
            pick(&n, &mut a, tor, &up, 31, SimTime::ZERO),
            (first + 3) % 4,
            "strictly shorter wins"
        );

        // A 3-tier tree: an aggregation switch keeps one order per destination.
        let text = "[topology]\ntiers = 3\nhosts = 128\nradix = 8";
        let n3 = build::build(&Scenario::from_toml(text).unwrap(), None).unwrap().net;
        let agg = (0..n3.switches.len() as u32)
            .find(|&s| matches!(n3.switches[s as usize].role, SwitchRole::Agg { pod: 0 }))
            .unwrap();
        let far: Vec<u32> = (0..128).filter(|&h| n3.pod_of_tor(n3.tor_of(h)) != 0).collect();
        let ups = n3.switches[agg as usize].up.clone();
        assert!(ups.len() > 1);
        let mut a = Adaptive::new(1, agg, Backlog::WholePackets, Ties::RouteOrder);
        let mut firsts = std::collections::BTreeSet::new();
        for &dst in &far {
            let first = pick(&n3, &mut a, agg, &ups, dst, SimTime::ZERO);
            assert_eq!(pick(&n3, &mut a, agg, &ups, dst, SimTime::ZERO), first, "dst {dst}");
            firsts.insert(first);
        }
        assert_eq!(firsts.len(), ups.len(), "destinations differ in their first uplink");
    }
}
