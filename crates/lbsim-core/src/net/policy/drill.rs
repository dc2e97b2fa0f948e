//! DRILL(d, m) (Ghorbani et al., "DRILL: Micro Load Balancing for
//! Low-latency Data Center Networks", SIGCOMM '17) in the switch: every data
//! packet going up leaves by the least loaded of d uplinks sampled at random
//! and the m least loaded the switch remembers from its previous decision;
//! the m least loaded of those candidates are remembered for the next packet.
//! ConWeave runs DRILL(2, 1) (§4.1, "Schemes compared").
//!
//! - Load is the bytes waiting in the uplink's egress queue (data classes),
//!   not counting the packet on the line: the ConWeave artifact compares
//!   `GetNBytesTotal()` of the device queue (`switch-node.cc`,
//!   `CalculateInterfaceLoad`), whose transmitting packet has left it. (Its
//!   count also holds the control class's bytes; lbsim's excludes them.)
//! - The d samples are distinct (the artifact shuffles the next hops and
//!   takes the first d). Ties keep the remembered port, then the earlier
//!   sample (the artifact replaces its best only when strictly less loaded).
//! - Memory is per switch, as DRILL keeps it per forwarding engine; the
//!   artifact keys it by destination address (`m_previousBestInterfaceMap`),
//!   which in a leaf-spine splits one memory into one per destination host.
//! - The way down is unique. ACKs, NACKs and CNPs are hashed like ECMP, as
//!   the artifact routes control packets (`GetOutDev`). A dead uplink (the
//!   switch sees its own links at once) is never chosen; a remembered port
//!   that left the routing group is ignored.

use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::queue::QueueDiscipline;
use crate::net::PortId;
use crate::packet::{Packet, PacketId, PacketKind};
use crate::rng::{Rng, StreamTag};

pub struct Drill {
    /// d: uplinks sampled per packet.
    samples: usize,
    /// m: least loaded ports remembered from the previous decision.
    memory_size: usize,
    memory: Vec<PortId>,
    rng: Rng,
    /// Scratch: candidates with their loads, and the group's indices for sampling.
    candidates: Vec<(u64, PortId)>,
    order: Vec<u32>,
}

impl Drill {
    pub fn new(seed: u64, switch: u32, samples: u32, memory: u32) -> Self {
        Drill {
            samples: samples as usize,
            memory_size: memory as usize,
            memory: Vec::new(),
            rng: Rng::new(seed, StreamTag::Drill, switch as u64),
            candidates: Vec::new(),
            order: Vec::new(),
        }
    }

    /// The ports remembered for the next packet (least loaded first).
    pub fn memory(&self) -> &[PortId] {
        &self.memory
    }
}

impl SwitchPolicy for Drill {
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        if ctx.down.is_some() || pkt.kind != PacketKind::Data {
            return ctx.hashed(pkt);
        }
        let group = ctx.group;
        let load = |p: PortId| ctx.ports[p as usize].queue.backlog_bytes();
        let live = |p: PortId| ctx.ports[p as usize].up;
        self.candidates.clear();
        // Remembered ports first, so that ties keep them.
        let every_uplink = ctx.sw.groups_by_dst.is_none();
        for &m in &self.memory {
            if live(m) && (every_uplink || group.contains(&m)) {
                self.candidates.push((load(m), m));
            }
        }
        // d distinct samples: a partial Fisher-Yates shuffle of the group's indices.
        let n = group.len();
        let d = self.samples.min(n);
        self.order.clear();
        self.order.extend(0..n as u32);
        for i in 0..d {
            let j = i + self.rng.below((n - i) as u64) as usize;
            self.order.swap(i, j);
            let p = group[self.order[i] as usize];
            if live(p) {
                self.candidates.push((load(p), p));
            }
        }
        if self.candidates.is_empty() {
            // Every sample was dead: any live port of the group, else no way on.
            return match group.iter().copied().find(|&p| live(p)) {
                Some(p) => Decision::Forward(p),
                None => Decision::Drop,
            };
        }
        // A stable sort keeps the order of equals: memory, then samples in the order drawn.
        self.candidates.sort_by_key(|&(bytes, _)| bytes);
        let best = self.candidates[0].1;
        self.memory.clear();
        for &(_, p) in &self.candidates {
            if self.memory.len() == self.memory_size {
                break;
            }
            if !self.memory.contains(&p) {
                self.memory.push(p);
            }
        }
        Decision::Forward(best)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{net, route_at, uplinks};
    use super::*;
    use crate::net::queue::Queue;
    use crate::net::{Network, Port, Switch};
    use crate::time::SimTime;
    use std::cell::Cell;
    use std::rc::Rc;

    fn data() -> Packet {
        Packet::data(1, 0, 0, 31, 1048, 7, 1, SimTime::ZERO)
    }

    fn set_backlog(n: &mut Network, p: PortId, bytes: u64) {
        let Queue::TwoClass(q) = &mut n.ports[p as usize].queue else {
            unreachable!()
        };
        q.set_backlog_for_test(bytes);
    }

    fn pick(n: &Network, d: &mut Drill) -> PortId {
        match route_at(n, d, "t0_0", &data(), SimTime::from_us(1)) {
            Decision::Forward(p) => p,
            other => panic!("{other:?}"),
        }
    }

    /// Once the least loaded uplink is remembered, DRILL(2, 1) keeps it
    /// while the loads stand; it leaves it for a sample strictly less
    /// loaded, never for an equal one.
    #[test]
    fn the_remembered_best_is_kept_until_a_sample_beats_it() {
        let mut n = net();
        let up = uplinks(&n, "t0_0");
        for (j, bytes) in [(0, 40_000), (1, 12_000), (2, 8_000), (3, 30_000)] {
            set_backlog(&mut n, up[j], bytes);
        }
        let mut d = Drill::new(1, 0, 2, 1);
        let first: Vec<PortId> = (0..50).map(|_| pick(&n, &mut d)).collect();
        assert!(first.contains(&up[2]), "sampled at last: {first:?}");
        assert!(
            first.iter().all(|&p| p != up[0]),
            "never the most loaded of two samples"
        );
        assert_eq!(d.memory(), &[up[2]]);
        for _ in 0..1_000 {
            assert_eq!(pick(&n, &mut d), up[2]);
        }
        // An equal load elsewhere does not move it; a smaller one does, once sampled.
        set_backlog(&mut n, up[1], 8_000);
        for _ in 0..1_000 {
            assert_eq!(pick(&n, &mut d), up[2]);
        }
        set_backlog(&mut n, up[3], 7_999);
        let moved = (0..1_000).map(|_| pick(&n, &mut d)).position(|p| p == up[3]);
        assert!(moved.is_some());
        assert_eq!(d.memory(), &[up[3]]);
    }

    /// The d samples are distinct: with no memory and one empty uplink of
    /// four, two samples find it with probability 1/2 (3/6 pairs miss it);
    /// drawn with replacement they would find it 7/16 of the time.
    #[test]
    fn samples_are_drawn_without_replacement() {
        let mut n = net();
        let up = uplinks(&n, "t0_0");
        for (j, &p) in up.iter().enumerate() {
            set_backlog(&mut n, p, if j == 1 { 0 } else { 5_000 });
        }
        let mut d = Drill::new(7, 0, 2, 0);
        let hits = (0..40_000).filter(|_| pick(&n, &mut d) == up[1]).count();
        // 20 000 expected, sd 100; with replacement 17 500.
        assert!((19_550..20_450).contains(&hits), "{hits}");
        // d = 4 samples every uplink: always the empty one.
        let mut all = Drill::new(7, 0, 4, 0);
        assert!((0..1_000).all(|_| pick(&n, &mut all) == up[1]));
    }

    #[test]
    fn dead_uplinks_are_skipped_down_is_unique_and_acks_hash() {
        let mut n = net();
        let up = uplinks(&n, "t0_0");
        let mut d = Drill::new(3, 0, 2, 1);
        for &p in &up[..3] {
            n.ports[p as usize].up = false;
        }
        assert!((0..100).all(|_| pick(&n, &mut d) == up[3]));
        n.ports[up[3] as usize].up = false;
        assert_eq!(route_at(&n, &mut d, "t0_0", &data(), SimTime::ZERO), Decision::Drop);
        let down = n.port_by_name("t0_0->h2").unwrap();
        let to_local = Packet::data(5, 0, 31, 2, 1048, 7, 1, SimTime::ZERO);
        assert_eq!(
            route_at(&n, &mut d, "t0_0", &to_local, SimTime::ZERO),
            Decision::Forward(down)
        );
        for &p in &up {
            n.ports[p as usize].up = true;
        }
        let s = &n.switches[n.switch_by_name("t0_0").unwrap() as usize];
        for ev in 0..64 {
            let ack = Packet {
                ev,
                route: 1,
                ..Packet::new(PacketKind::Ack, 9, 0, 31, 60, SimTime::ZERO)
            };
            let expect = s.ecmp_pick(&s.up, &ack).unwrap();
            assert_eq!(
                route_at(&n, &mut d, "t0_0", &ack, SimTime::ZERO),
                Decision::Forward(expect)
            );
        }
    }

    /// Watches one switch's uplink queues each time it routes a data packet
    /// up, then lets the inner policy decide.
    struct Probe {
        inner: Box<dyn SwitchPolicy>,
        at: u32,
        spread: Rc<Cell<(u64, u64)>>, // (largest max − min, samples)
    }

    impl SwitchPolicy for Probe {
        fn route(&mut self, ctx: &RouteCtx, id: PacketId, pkt: &mut Packet, out: &mut PolicyOut) -> Decision {
            if ctx.switch == self.at && ctx.down.is_none() && pkt.kind == PacketKind::Data {
                let loads = ctx.sw.up.iter().map(|&p| ctx.ports[p as usize].queue.backlog_bytes());
                let (lo, hi) = loads.fold((u64::MAX, 0), |(lo, hi), b| (lo.min(b), hi.max(b)));
                let (worst, n) = self.spread.get();
                self.spread.set((worst.max(hi - lo), n + 1));
            }
            self.inner.route(ctx, id, pkt, out)
        }
        fn on_timer(&mut self, now: SimTime, sw: &Switch, ports: &[Port], out: &mut PolicyOut) {
            self.inner.on_timer(now, sw, ports, out)
        }
    }

    /// ECMP as a policy: what class 0 does.
    struct Hashed;

    impl SwitchPolicy for Hashed {
        fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
            ctx.hashed(pkt)
        }
    }

    /// Three hosts under ToR t0_0 send 2 MiB each at 400 Gb/s to the other
    /// ToRs through its two uplinks: 1.5 times what the uplinks carry, so
    /// their queues build. The largest difference between the two uplinks'
    /// queues, looked at every time t0_0 routes a data packet up.
    fn uplink_spread(drill: bool) -> (u64, u64) {
        let dir = std::env::temp_dir().join(format!("lbsim-drill-spread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = "src,dst,size_bytes,start_us\n0,4,2097152,0\n1,8,2097152,0\n2,12,2097152,0\n";
        std::fs::write(dir.join("f.csv"), csv).unwrap();
        let toml = "[topology]\nhosts = 16\nhosts_per_tor = 4\nuplinks_per_tor = 2\nradix = 6\n\
                    [lb]\nkind = \"ecmp\"\n[workload]\nkind = \"flows\"\nfile = \"f.csv\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, Some(&dir)).unwrap();
        let tor = sim.net.switch_by_name("t0_0").unwrap();
        let spread = Rc::new(Cell::new((0, 0)));
        let per_switch = (0..sim.net.switches.len() as u32)
            .map(|sw| {
                let inner: Box<dyn SwitchPolicy> = if drill {
                    Box::new(Drill::new(1, sw, 2, 1))
                } else {
                    Box::new(Hashed)
                };
                Box::new(Probe {
                    inner,
                    at: tor,
                    spread: spread.clone(),
                }) as Box<dyn SwitchPolicy>
            })
            .collect();
        let class = sim.net.policies.add_class(per_switch);
        for f in &mut sim.flows {
            f.route = class;
        }
        sim.run();
        assert!(sim.flow_records().iter().all(|f| f.finished));
        spread.get()
    }

    /// DRILL(2, 1) at a switch with two uplinks: both are sampled for every
    /// packet, so it joins the shorter queue and the two stay within one
    /// packet (4 KiB) of each other at every look. ECMP, which put two of
    /// the three flows on one uplink, does not.
    #[test]
    fn drill_keeps_two_uplinks_within_one_packet_and_ecmp_does_not() {
        let mtu = 4096;
        let (drill, looks) = uplink_spread(true);
        assert!(looks > 1_000, "{looks} looks");
        assert!(drill <= mtu, "DRILL: queues {drill} B apart");
        let (ecmp, _) = uplink_spread(false);
        assert!(ecmp > 8 * mtu, "ECMP: queues only {ecmp} B apart");
        eprintln!("largest uplink queue difference: DRILL {drill} B over {looks} looks, ECMP {ecmp} B");
    }
}
