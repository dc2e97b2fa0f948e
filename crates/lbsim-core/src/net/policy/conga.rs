//! CONGA (Alizadeh et al., "CONGA: Distributed Congestion-Aware Load
//! Balancing for Datacenters", SIGCOMM '14, §3) on a 2-tier leaf-spine: the
//! source leaf sends each new flowlet on the uplink whose path to the
//! destination leaf looks least congested, judged by its own uplink's load
//! and by what the destination leaf reported about that path.
//!
//! - **DRE** (discounting rate estimator) at every fabric port (a leaf's
//!   uplinks, a spine's ports): a register X grows by the size of every
//!   packet leaving the port and shrinks to X·(1 − α) every `dre_period`;
//!   X/(C·τ), τ = `dre_period`/α, estimates the link's utilisation, which is
//!   quantised to `quantize_bits` bits (0 … 2^Q − 1). X is truncated to whole
//!   bytes at each decay, as the ConWeave artifact's 32-bit register is
//!   (`conga-routing.cc`, `DreEvent`); decays fall on multiples of the
//!   period and are applied when the register is next read.
//! - **Path congestion** (CE) travels in the data packet (`Packet::tag`):
//!   zero at the source leaf, then at each fabric hop's egress the larger of
//!   itself and that port's quantised DRE.
//! - The **destination leaf** keeps, per source leaf and LBTag (the source
//!   leaf's uplink), the last CE that arrived (Congestion-From-Leaf), and
//!   piggybacks one of them (FB_LBTag, FB_Metric) on every packet of this
//!   class it sends back to that leaf, data or ACK: round robin over the
//!   entries, those whose value changed since last fed back first (CONGA
//!   §3). The source leaf stores it in its Congestion-To-Leaf table.
//! - A **new flowlet** (idle gap > `flowlet_timeout`) takes, among the
//!   uplinks routing says reach the destination, one that minimises
//!   max(local quantised DRE, remote metric); ties keep the flowlet's
//!   previous uplink if it is among them, else are broken uniformly at
//!   random. Remote metrics and feedback entries older than `aging` count as
//!   zero and as absent.
//!
//! ACKs, NACKs and CNPs are hashed like ECMP (the artifact routes control
//! packets by flow ECMP, `switch-node.cc` `GetOutDev`), carry feedback, and
//! count in every DRE; so does every other packet leaving a fabric port.
//! Intra-rack packets go straight down. `docs/switch-balancers.md` lists
//! where this differs from the artifact.

use super::flowlets::{Flowlet, Flowlets};
use super::letflow::usable;
use super::{Decision, PolicyOut, PolicySite, RouteCtx, SwitchPolicy};
use crate::net::{PortId, SwitchRole};
use crate::packet::{Packet, PacketId, PacketKind};
use crate::rng::{Rng, StreamTag};
use crate::time::{Rate, SimTime};

/// CONGA's constants (`lb.conga`).
#[derive(Clone, Copy, Debug)]
pub struct CongaConfig {
    pub flowlet_timeout: SimTime,
    pub dre_period: SimTime,
    /// α: the fraction of the DRE register lost every period, in (0, 1].
    pub dre_alpha: f64,
    /// Q: metrics run from 0 to 2^Q − 1 (1 ≤ Q ≤ 7).
    pub quantize_bits: u32,
    pub aging: SimTime,
}

/// CONGA's header fields in `Packet::tag` (CONGA §3: LBTag, CE, FB_LBTag,
/// FB_Metric): bits 0-7 the LBTag, 8-14 the CE, 16-23 the feedback's LBTag,
/// 24-30 its metric, bit 31 set when the packet carries feedback.
pub mod tag {
    pub const FEEDBACK: u32 = 1 << 31;

    #[inline]
    pub fn forward(lbtag: usize, ce: u8) -> u32 {
        lbtag as u32 & 0xff | (ce as u32 & 0x7f) << 8
    }
    #[inline]
    pub fn lbtag(t: u32) -> usize {
        (t & 0xff) as usize
    }
    #[inline]
    pub fn ce(t: u32) -> u8 {
        (t >> 8 & 0x7f) as u8
    }
    #[inline]
    pub fn with_ce(t: u32, ce: u8) -> u32 {
        t & !(0x7f << 8) | (ce as u32 & 0x7f) << 8
    }
    #[inline]
    pub fn feedback(lbtag: usize, metric: u8) -> u32 {
        FEEDBACK | (lbtag as u32 & 0xff) << 16 | (metric as u32 & 0x7f) << 24
    }
    /// The feedback a packet carries: (LBTag, metric).
    #[inline]
    pub fn read_feedback(t: u32) -> Option<(usize, u8)> {
        (t & FEEDBACK != 0).then_some(((t >> 16 & 0xff) as usize, (t >> 24 & 0x7f) as u8))
    }
}

/// A discounting rate estimator's register.
#[derive(Clone, Copy)]
struct Dre {
    bytes: u64,
    /// The next decay is due at this time (a multiple of the period).
    next_decay: SimTime,
    /// Quantisation steps per byte at `rate` (2^Q / C·τ).
    per_byte: f64,
    rate: Rate,
}

/// A metric the destination leaf fed back (Congestion-To-Leaf), or a CE that
/// arrived from a source leaf (Congestion-From-Leaf).
#[derive(Clone, Copy, Default)]
struct Entry {
    value: u8,
    at: SimTime,
    valid: bool,
    /// From-leaf entries: the value last fed back, if any.
    fed: Option<u8>,
}

impl Entry {
    #[inline]
    fn fresh(&self, now: SimTime, aging: SimTime) -> bool {
        self.valid && now - self.at <= aging
    }
}

/// A leaf's own state.
struct Leaf {
    tor: u32,
    hosts_per_tor: u32,
    uplinks: usize,
    /// Congestion-To-Leaf: `[dst leaf · uplinks + LBTag]`.
    to_leaf: Vec<Entry>,
    /// Congestion-From-Leaf: `[src leaf · uplinks + LBTag]`.
    from_leaf: Vec<Entry>,
    /// Per leaf, where the feedback round robin resumes.
    fb_next: Vec<u16>,
    flowlets: Flowlets,
    /// Scratch: candidate uplinks and their congestion.
    scratch: Vec<(PortId, u8)>,
}

pub struct Conga {
    cfg: CongaConfig,
    /// The route class whose tags this policy owns.
    class: u8,
    rng: Rng,
    keep: f64,
    period_ps: u64,
    max_level: u8,
    /// This switch's ports' local indices (`Port::local`), by port id − `base`.
    index: Vec<u16>,
    base: PortId,
    /// Ports with a local index below this face hosts (a leaf's downlinks).
    first_fabric: usize,
    /// Per local port.
    dre: Vec<Dre>,
    leaf: Option<Leaf>,
}

impl Conga {
    /// The policy at `site`'s switch (a leaf or a spine of a 2-tier tree).
    pub fn new(site: &PolicySite, cfg: CongaConfig, seed: u64) -> Self {
        let net = site.net;
        let sw = &net.switches[site.switch as usize];
        let all = || sw.down.iter().chain(&sw.up).copied();
        let base = all().min().unwrap_or(0);
        let top = all().max().unwrap_or(0);
        let mut index = vec![u16::MAX; (top - base + 1) as usize];
        for p in all() {
            index[(p - base) as usize] = net.ports[p as usize].local;
        }
        let (first_fabric, leaf) = match sw.role {
            SwitchRole::Tor { tor } => {
                let (tors, n) = (net.shape.tors as usize, sw.up.len());
                let leaf = Leaf {
                    tor,
                    hosts_per_tor: net.shape.hosts_per_tor,
                    uplinks: n,
                    to_leaf: vec![Entry::default(); tors * n],
                    from_leaf: vec![Entry::default(); tors * n],
                    fb_next: vec![0; tors],
                    flowlets: Flowlets::new(cfg.flowlet_timeout, cfg.aging),
                    scratch: Vec::with_capacity(n),
                };
                (sw.down.len(), Some(leaf))
            }
            SwitchRole::Spine => (0, None),
            SwitchRole::Agg { .. } | SwitchRole::Core => {
                unreachable!("CONGA is built for 2-tier trees only (lb::conga checks topology.tiers)")
            }
        };
        let mut c = Conga {
            cfg,
            class: site.class,
            rng: Rng::new(seed, StreamTag::Conga, site.switch as u64),
            keep: 1.0 - cfg.dre_alpha,
            period_ps: cfg.dre_period.ps(),
            max_level: ((1u32 << cfg.quantize_bits) - 1) as u8,
            index,
            base,
            first_fabric,
            dre: vec![
                Dre {
                    bytes: 0,
                    next_decay: cfg.dre_period,
                    per_byte: 0.0,
                    rate: Rate(0),
                };
                sw.down.len() + sw.up.len()
            ],
            leaf,
        };
        for p in all() {
            let li = c.local(p).expect("its own port");
            if li >= first_fabric {
                c.set_rate(li, net.ports[p as usize].rate);
            }
        }
        c
    }

    #[inline]
    fn local(&self, port: PortId) -> Option<usize> {
        let i = port.checked_sub(self.base)? as usize;
        match self.index.get(i) {
            Some(&l) if l != u16::MAX => Some(l as usize),
            _ => None,
        }
    }

    /// A fabric port's capacity C (read when routing: rate overrides and failures change it).
    #[inline]
    fn set_rate(&mut self, li: usize, rate: Rate) {
        let d = &mut self.dre[li];
        if d.rate != rate {
            d.rate = rate;
            // C·τ in bytes, τ = period / α, split into 2^Q steps.
            let full = rate.bps() as f64 / 8.0 * (self.cfg.dre_period.ps() as f64 * 1e-12) / self.cfg.dre_alpha;
            d.per_byte = (1u64 << self.cfg.quantize_bits) as f64 / full;
        }
    }

    /// A fabric port's register at `now`, its decays applied.
    #[inline]
    fn dre_bytes(&mut self, li: usize, now: SimTime) -> u64 {
        let d = &mut self.dre[li];
        if now >= d.next_decay {
            let due = now.ps() / self.period_ps; // decays at periods 1 ..= due
            let mut k = due + 1 - d.next_decay.ps() / self.period_ps;
            while k > 0 && d.bytes > 0 {
                d.bytes = (d.bytes as f64 * self.keep) as u64;
                k -= 1;
            }
            d.next_decay = SimTime((due + 1) * self.period_ps);
        }
        d.bytes
    }

    /// The quantised utilisation of a register's value at a port.
    #[inline]
    fn level(&self, li: usize, bytes: u64) -> u8 {
        let q = bytes as f64 * self.dre[li].per_byte;
        if q >= self.max_level as f64 {
            self.max_level
        } else {
            q as u8
        }
    }

    /// A new flowlet's uplink towards `dst_leaf`: least max(local, remote) congestion.
    fn best_uplink(&mut self, ctx: &RouteCtx, dst_leaf: usize, prev: Option<PortId>) -> Option<PortId> {
        let mut scratch = std::mem::take(&mut self.leaf.as_mut().expect("a leaf").scratch);
        scratch.clear();
        let mut least = u8::MAX;
        for &p in ctx.group {
            if !ctx.ports[p as usize].up {
                continue;
            }
            let li = self.local(p).expect("an uplink of this leaf");
            self.set_rate(li, ctx.ports[p as usize].rate);
            let bytes = self.dre_bytes(li, ctx.now);
            let local = self.level(li, bytes);
            let leaf = self.leaf.as_ref().expect("a leaf");
            let remote = leaf.to_leaf[dst_leaf * leaf.uplinks + li - self.first_fabric];
            let remote = if remote.fresh(ctx.now, self.cfg.aging) {
                remote.value
            } else {
                0
            };
            let congestion = local.max(remote);
            least = least.min(congestion);
            scratch.push((p, congestion));
        }
        scratch.retain(|&(_, c)| c == least);
        let pick = if scratch.is_empty() {
            None
        } else if prev.is_some_and(|q| scratch.iter().any(|&(p, _)| p == q)) {
            prev
        } else {
            Some(scratch[self.rng.below(scratch.len() as u64) as usize].0)
        };
        self.leaf.as_mut().expect("a leaf").scratch = scratch;
        pick
    }
}

impl Leaf {
    /// A packet from `src_leaf` reached this leaf: record its path's CE and the feedback it carries.
    #[inline]
    fn receive(&mut self, pkt: &Packet, src_leaf: usize, now: SimTime) {
        let row = src_leaf * self.uplinks;
        if pkt.kind == PacketKind::Data {
            let i = tag::lbtag(pkt.tag);
            if i < self.uplinks {
                let e = &mut self.from_leaf[row + i];
                (e.value, e.at, e.valid) = (tag::ce(pkt.tag), now, true);
            }
        }
        if let Some((i, metric)) = tag::read_feedback(pkt.tag) {
            if i < self.uplinks {
                let e = &mut self.to_leaf[row + i];
                (e.value, e.at, e.valid) = (metric, now, true);
            }
        }
    }

    /// The feedback for a packet going to `dst_leaf` (0: nothing fresh to tell).
    #[inline]
    fn feedback_for(&mut self, dst_leaf: usize, now: SimTime, aging: SimTime) -> u32 {
        let (n, row) = (self.uplinks, dst_leaf * self.uplinks);
        let start = self.fb_next[dst_leaf] as usize;
        // One pass in round-robin order: the first changed entry, else the first fresh one.
        let (mut changed, mut fresh) = (None, None);
        for k in 0..n {
            let i = if start + k >= n { start + k - n } else { start + k };
            let e = &self.from_leaf[row + i];
            if e.fresh(now, aging) {
                if e.fed != Some(e.value) {
                    changed = Some(i);
                    break;
                }
                fresh = fresh.or(Some(i));
            }
        }
        let Some(i) = changed.or(fresh) else {
            return 0;
        };
        let e = &mut self.from_leaf[row + i];
        e.fed = Some(e.value);
        self.fb_next[dst_leaf] = if i + 1 == n { 0 } else { i as u16 + 1 };
        tag::feedback(i, e.value)
    }
}

impl SwitchPolicy for Conga {
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        let now = ctx.now;
        let Some(leaf) = self.leaf.as_mut() else {
            // A spine: the way down is unique; keep its rate current for the CE it adds.
            if let Some(down) = ctx.down {
                if let Some(li) = self.local(down) {
                    self.set_rate(li, ctx.ports[down as usize].rate);
                }
            }
            return ctx.hashed(pkt);
        };
        let hpt = leaf.hosts_per_tor;
        if let Some(down) = ctx.down {
            let src_leaf = pkt.src / hpt;
            if src_leaf != leaf.tor {
                leaf.receive(pkt, src_leaf as usize, now);
            }
            return Decision::Forward(down);
        }
        // Going up: this is the packet's source leaf.
        let dst_leaf = (pkt.dst / hpt) as usize;
        let feedback = leaf.feedback_for(dst_leaf, now, self.cfg.aging);
        if pkt.kind != PacketKind::Data {
            pkt.tag = feedback;
            return ctx.hashed(pkt);
        }
        let port = match leaf.flowlets.lookup(pkt.flow, now) {
            Flowlet::Continues(p) if usable(ctx, p) => p,
            seen => {
                let prev = match seen {
                    Flowlet::Continues(p) => Some(p),
                    Flowlet::Starts(prev) => prev,
                };
                let Some(p) = self.best_uplink(ctx, dst_leaf, prev) else {
                    return Decision::Drop;
                };
                self.leaf.as_mut().expect("a leaf").flowlets.set(pkt.flow, now, p);
                p
            }
        };
        let li = self.local(port).expect("an uplink of this leaf");
        self.set_rate(li, ctx.ports[port as usize].rate);
        pkt.tag = feedback | tag::forward(li - self.first_fabric, 0);
        Decision::Forward(port)
    }

    fn wants_egress(&self) -> bool {
        true
    }

    /// Every packet leaving a fabric port feeds its DRE; this class's data
    /// packets take the larger of their CE and the port's metric.
    #[inline]
    fn on_egress(&mut self, now: SimTime, port: PortId, pkt: &mut Packet) {
        let Some(li) = self.local(port) else {
            return;
        };
        if li < self.first_fabric {
            return;
        }
        let bytes = self.dre_bytes(li, now) + pkt.size as u64;
        self.dre[li].bytes = bytes;
        if pkt.route == self.class && pkt.kind == PacketKind::Data {
            let ce = tag::ce(pkt.tag).max(self.level(li, bytes));
            pkt.tag = tag::with_ce(pkt.tag, ce);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{net, route_out, uplinks};
    use super::*;
    use crate::net::Network;

    const CFG: CongaConfig = CongaConfig {
        flowlet_timeout: SimTime::from_us(100),
        dre_period: SimTime::from_us(50),
        dre_alpha: 0.2,
        quantize_bits: 3,
        aging: SimTime::from_us(500),
    };

    fn at(n: &Network, name: &str) -> Conga {
        let site = PolicySite {
            net: n,
            switch: n.switch_by_name(name).unwrap(),
            class: 1,
        };
        Conga::new(&site, CFG, 1)
    }

    fn data(flow: u32, src: u32, dst: u32) -> Packet {
        Packet::data(flow, 0, src, dst, 1048, 7, 1, SimTime::ZERO)
    }

    /// Route at `switch`; the packet as it leaves (tag written) and its port.
    fn go(n: &Network, c: &mut Conga, switch: &str, pkt: &mut Packet, now: SimTime) -> PortId {
        match route_out(n, c, switch, pkt, now, &mut PolicyOut::default()) {
            Decision::Forward(p) => p,
            other => panic!("{other:?}"),
        }
    }

    /// The DRE at a 400 Gb/s uplink: full scale C·τ = 50 GB/s × 250 us =
    /// 12.5 MB in 8 steps of 1 562 500 B. A packet's CE is the level after
    /// its own bytes; each 50 us boundary keeps ⌊0.8 X⌋.
    #[test]
    fn dre_levels_and_decay_are_exact() {
        let n = net();
        let mut c = at(&n, "t0_0");
        let up = uplinks(&n, "t0_0")[2];
        let li = c.local(up).unwrap();
        let mut pkt = data(1, 0, 31);
        pkt.size = 1_562_499;
        c.on_egress(SimTime::ZERO, up, &mut pkt);
        assert_eq!(tag::ce(pkt.tag), 0, "one byte short of a step");
        let mut one = data(1, 0, 31);
        one.size = 1;
        c.on_egress(SimTime::ZERO, up, &mut one);
        assert_eq!(tag::ce(one.tag), 1);
        // Another class's packet feeds the DRE but keeps its tag.
        let mut other = Packet {
            route: 2,
            tag: 0,
            ..data(2, 0, 31)
        };
        other.size = 10_000_000;
        c.on_egress(SimTime::ZERO, up, &mut other);
        assert_eq!(other.tag, 0);
        assert_eq!(c.dre_bytes(li, SimTime::from_us(50) - SimTime(1)), 11_562_500);
        // Two decays: ⌊⌊11 562 500 × 0.8⌋ × 0.8⌋ = 7 400 000 → level 4 (7 400 000 / 1 562 500 = 4.7).
        assert_eq!(c.dre_bytes(li, SimTime::from_us(100)), 7_400_000);
        assert_eq!(c.level(li, 7_400_000), 4);
        // Saturates at 2^Q − 1 = 7, however loaded.
        assert_eq!(c.level(li, u32::MAX as u64), 7);
        // The CE only grows along the path, and the downlink to a host has no DRE.
        let mut ce5 = Packet {
            tag: tag::forward(2, 5),
            ..data(1, 0, 31)
        };
        c.on_egress(SimTime::from_us(100), up, &mut ce5);
        assert_eq!(tag::ce(ce5.tag), 5);
        let host = n.port_by_name("t0_0->h1").unwrap();
        let mut down = data(3, 31, 1);
        down.size = 100_000_000;
        c.on_egress(SimTime::from_us(100), host, &mut down);
        assert_eq!(tag::ce(down.tag), 0);
    }

    /// The loop of CONGA §3 by hand: leaf t0_0 sends on uplink 1; spine
    /// t1_1 adds its downlink's congestion; leaf t0_7 records it and feeds
    /// it back on an ACK; t0_0 stores it and the next new flowlet avoids
    /// uplink 1 while the metric is fresh, and takes it again once it has aged.
    #[test]
    fn feedback_reaches_the_source_leaf_and_steers_new_flowlets() {
        let n = net();
        let (mut a, mut spine, mut b) = (at(&n, "t0_0"), at(&n, "t1_1"), at(&n, "t0_7"));
        let up = uplinks(&n, "t0_0");
        let t0 = SimTime::from_us(10);
        // Load spine t1_1's downlink to t0_7 to level 6: 6 steps of 1 562 500 B.
        let to_b = n.port_by_name("t1_1->t0_7").unwrap();
        let mut bulk = Packet {
            route: 2,
            ..data(9, 4, 30)
        };
        bulk.size = 6 * 1_562_500;
        spine.on_egress(t0, to_b, &mut bulk);
        // A data packet from host 0 to host 31, forced onto uplink 1 by a fresh flowlet table entry.
        let mut pkt = data(1, 0, 31);
        a.leaf.as_mut().unwrap().flowlets.set(1, t0, up[1]);
        assert_eq!(go(&n, &mut a, "t0_0", &mut pkt, t0), up[1]);
        assert_eq!((tag::lbtag(pkt.tag), tag::ce(pkt.tag)), (1, 0));
        assert_eq!(tag::read_feedback(pkt.tag), None, "t0_0 has heard nothing from t0_7");
        a.on_egress(t0, up[1], &mut pkt);
        assert_eq!(go(&n, &mut spine, "t1_1", &mut pkt, t0), to_b);
        spine.on_egress(t0, to_b, &mut pkt);
        assert_eq!(tag::ce(pkt.tag), 6);
        let h31 = n.port_by_name("t0_7->h31").unwrap();
        assert_eq!(go(&n, &mut b, "t0_7", &mut pkt, t0), h31);
        // The ACK back to host 0 carries (LBTag 1, metric 6).
        let mut ack = Packet {
            route: 1,
            ..Packet::new(PacketKind::Ack, 1, 31, 0, 60, t0)
        };
        go(&n, &mut b, "t0_7", &mut ack, t0);
        assert_eq!(tag::read_feedback(ack.tag), Some((1, 6)));
        go(&n, &mut a, "t0_0", &mut ack, t0);
        // New flows from t0_0 to t0_7 now avoid uplink 1 (metric 6; the others are 0) ...
        for f in 100..300 {
            let mut p = data(f, 1, 29);
            assert_ne!(go(&n, &mut a, "t0_0", &mut p, t0 + SimTime::from_us(1)), up[1]);
        }
        // ... but not to another leaf, whose paths it knows nothing about.
        let other: Vec<PortId> = (300..400)
            .map(|f| go(&n, &mut a, "t0_0", &mut data(f, 1, 20), t0 + SimTime::from_us(1)))
            .collect();
        assert!(other.contains(&up[1]));
        // After 500 us without news the metric counts as zero again.
        let late = t0 + SimTime::from_us(501);
        let picks: Vec<PortId> = (400..600)
            .map(|f| go(&n, &mut a, "t0_0", &mut data(f, 1, 29), late))
            .collect();
        assert!(picks.contains(&up[1]));
    }

    /// Feedback cycles through the fresh entries, changed values first.
    #[test]
    fn feedback_round_robin_favours_changed_metrics() {
        let n = net();
        let mut b = at(&n, "t0_7");
        let now = SimTime::from_us(1);
        // Data from t0_0 arrived on LBTags 0, 2 and 3 with CEs 1, 2, 3.
        for (lbtag, ce) in [(0, 1), (2, 2), (3, 3)] {
            let mut p = Packet {
                tag: tag::forward(lbtag, ce),
                ..data(1, 0, 31)
            };
            go(&n, &mut b, "t0_7", &mut p, now);
        }
        let fb = |b: &mut Conga| {
            let mut ack = Packet {
                route: 1,
                ..Packet::new(PacketKind::Ack, 1, 31, 0, 60, now)
            };
            go(&n, b, "t0_7", &mut ack, now);
            tag::read_feedback(ack.tag)
        };
        let got: Vec<_> = (0..5).map(|_| fb(&mut b)).collect();
        let expect = [(0, 1), (2, 2), (3, 3), (0, 1), (2, 2)].map(Some);
        assert_eq!(got, expect, "each fresh entry in turn, then round robin");
        // LBTag 0 changes: it goes next, out of turn.
        let mut p = Packet {
            tag: tag::forward(0, 4),
            ..data(1, 0, 31)
        };
        go(&n, &mut b, "t0_7", &mut p, now);
        assert_eq!(fb(&mut b), Some((0, 4)));
        assert_eq!(fb(&mut b), Some((2, 2)), "and the round robin resumes after it");
        // Entries age out: nothing to say 500 us later.
        let mut ack = Packet {
            route: 1,
            ..Packet::new(PacketKind::Ack, 1, 31, 0, 60, now)
        };
        go(&n, &mut b, "t0_7", &mut ack, now + SimTime::from_us(501));
        assert_eq!(tag::read_feedback(ack.tag), None);
    }

    /// A flowlet keeps its uplink however congested it gets; a new flowlet
    /// keeps it too when it is still among the least congested.
    #[test]
    fn flowlets_stick_and_ties_keep_the_previous_uplink() {
        let n = net();
        let mut a = at(&n, "t0_0");
        let up = uplinks(&n, "t0_0");
        let first = go(&n, &mut a, "t0_0", &mut data(1, 0, 31), SimTime::ZERO);
        let li = a.local(first).unwrap();
        a.dre[li].bytes = 12_000_000; // level 7
        assert_eq!(
            go(&n, &mut a, "t0_0", &mut data(1, 0, 31), SimTime::from_us(100)),
            first
        );
        let moved = go(&n, &mut a, "t0_0", &mut data(1, 0, 31), SimTime::from_us(201));
        assert_ne!(moved, first, "a new flowlet leaves the congested uplink");
        // Every new flowlet after it finds its uplink among the least congested and keeps it
        // (the congested one decays below one step by 400 us), 100 times out of 100.
        for k in 1..=100u64 {
            let at = SimTime::from_us(201 + 101 * k);
            assert_eq!(go(&n, &mut a, "t0_0", &mut data(1, 0, 31), at), moved);
        }
        assert!(up.contains(&moved));
        // Forgotten after `aging` of silence: then a uniform draw among the idle uplinks.
        let picks: Vec<PortId> = (0..200u64)
            .map(|k| {
                go(
                    &n,
                    &mut a,
                    "t0_0",
                    &mut data(1, 0, 31),
                    SimTime::from_us(20_000 + 600 * k),
                )
            })
            .collect();
        assert!(up.iter().all(|u| picks.contains(u)));
    }

    /// Counts the data packets of its class that leave `at` by each of its uplinks.
    struct Probe {
        inner: Box<dyn SwitchPolicy>,
        at: u32,
        counts: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
    }

    impl SwitchPolicy for Probe {
        fn route(&mut self, ctx: &RouteCtx, id: PacketId, pkt: &mut Packet, out: &mut PolicyOut) -> Decision {
            let d = self.inner.route(ctx, id, pkt, out);
            if let (true, Decision::Forward(p), PacketKind::Data) = (ctx.switch == self.at, d, pkt.kind) {
                if let Some(i) = ctx.sw.up.iter().position(|&u| u == p) {
                    self.counts.borrow_mut()[i] += 1;
                }
            }
            d
        }
        fn wants_egress(&self) -> bool {
            self.inner.wants_egress()
        }
        fn on_egress(&mut self, now: SimTime, port: PortId, pkt: &mut Packet) {
            self.inner.on_egress(now, port, pkt)
        }
    }

    /// Sends everything leaving ToR `at` upwards by its first uplink.
    struct Pin {
        at: u32,
    }

    impl SwitchPolicy for Pin {
        fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
            match (ctx.switch == self.at, ctx.down) {
                (true, None) => Decision::Forward(ctx.sw.up[0]),
                _ => ctx.hashed(pkt),
            }
        }
    }

    /// On the 32-host tree (4 uplinks per ToR, 400 Gb/s), one 64 MiB flow at
    /// line rate fills spine t1_0's way down to t0_1 and, when it comes from
    /// host 0 (`remote` false), t0_0's first uplink too; from host 8 (`remote`,
    /// pinned to t0_2's first uplink) t0_0 can learn of it only from t0_1's
    /// feedback. From 100 us on, hosts 1-3 start a 64 KiB flow every 5 us each
    /// (about 300 Gb/s in all), to hosts of t0_1 when `remote`, else of all
    /// other ToRs. Returns each t0_0 uplink's count of the small flows' packets.
    fn small_flows_per_uplink(kind: &str, remote: bool) -> Vec<u64> {
        let dir = std::env::temp_dir().join(format!("lbsim-conga-hot-{}-{kind}-{remote}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = if remote { 8 } else { 0 };
        let mut csv = format!("src,dst,size_bytes,start_us\n{big},4,67108864,0\n");
        for k in 0..200u32 {
            for src in 1..4u32 {
                let dst = if remote {
                    5 + (k + src) % 3
                } else {
                    4 + (k * 3 + src * 7) % 28
                };
                csv += &format!("{src},{dst},65536,{}\n", 100 + 5 * k + src);
            }
        }
        std::fs::write(dir.join("f.csv"), csv).unwrap();
        let toml = "[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"ecmp\"\n\
                    [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, Some(&dir)).unwrap();
        let tor = sim.net.switch_by_name("t0_0").unwrap();
        let counts = std::rc::Rc::new(std::cell::RefCell::new(vec![0u64; 4]));
        let per_switch: Vec<Box<dyn SwitchPolicy>> = (0..sim.net.switches.len() as u32)
            .map(|switch| {
                let site = PolicySite {
                    net: &sim.net,
                    switch,
                    class: 1,
                };
                let inner: Box<dyn SwitchPolicy> = match kind {
                    "conga" => Box::new(Conga::new(&site, CFG, 1)),
                    "letflow" => Box::new(super::super::letflow::LetFlow::new(1, switch, CFG.flowlet_timeout)),
                    _ => Box::new(Pin { at: u32::MAX }), // hashes everywhere: ECMP
                };
                Box::new(Probe {
                    inner,
                    at: tor,
                    counts: counts.clone(),
                }) as Box<dyn SwitchPolicy>
            })
            .collect();
        let class = sim.net.policies.add_class("conga", per_switch);
        assert_eq!(class, 1);
        let hot = sim.net.switch_by_name(if remote { "t0_2" } else { "t0_0" }).unwrap();
        let pins = (0..sim.net.switches.len()).map(|_| Box::new(Pin { at: hot }) as Box<dyn SwitchPolicy>);
        let pinned = sim.net.policies.add_class("pinned", pins.collect());
        for (i, f) in sim.flows.iter_mut().enumerate() {
            f.route = if i == 0 { pinned } else { class };
        }
        sim.run();
        assert!(sim.flow_records().iter().all(|f| f.finished), "{kind}");
        let c = counts.borrow().clone();
        c
    }

    /// CONGA keeps new flowlets off the path a test has filled, whether
    /// its own uplink shows it (local DRE 7 of 7) or only the destination
    /// leaf's feedback does; ECMP and LetFlow put about a quarter of the
    /// packets on it.
    #[test]
    fn new_flowlets_avoid_a_congested_path() {
        let share = |c: &[u64]| c[0] as f64 / c.iter().sum::<u64>() as f64;
        for remote in [false, true] {
            let conga = small_flows_per_uplink("conga", remote);
            let ecmp = small_flows_per_uplink("ecmp", remote);
            let letflow = small_flows_per_uplink("letflow", remote);
            eprintln!(
                "remote {remote}: small flows' packets on t0_0's uplinks: CONGA {conga:?}, ECMP {ecmp:?}, LetFlow {letflow:?}"
            );
            // 64 KiB in 4 KiB packets of 4032 B payload: 17 packets per flow, each sent once.
            assert_eq!(conga.iter().sum::<u64>(), 600 * 17);
            assert!(share(&conga) < 0.05, "remote {remote}: CONGA {conga:?}");
            for c in [&ecmp, &letflow] {
                assert!((0.15..0.35).contains(&share(c)), "remote {remote}: {c:?}");
            }
        }
    }
}
