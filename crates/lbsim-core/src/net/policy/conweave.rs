//! ConWeave (Song et al., SIGCOMM '23) in the ToR switches: the source ToR
//! watches each flow's path with one RTT_REQUEST per epoch and reroutes it
//! at most once per epoch when the reply is late; the destination ToR holds
//! rerouted packets that overtake the old path's last packet (TAIL) in a
//! reorder queue until the TAIL arrives or its estimated arrival passes, so
//! the receiving NIC sees the flow in order (ConWeave §3, App. A).
//!
//! Where the paper leaves a rule open we follow the authors' ns-3 code
//! (`conweave-routing.cc`), read for its logic: the source ToR decides per
//! data packet with no timers of its own; a REPLY or CLEAR makes the next
//! packet start a new epoch on the same path; a flow idle for θ_inactive (or
//! new) starts a new epoch on a freshly drawn path; the new path is the
//! first not-busy of two uniform draws (with replacement), and when both are
//! busy the flow stays, though its TAIL is still sent. ACKs, NACKs and
//! ConWeave's own control packets are hashed (ECMP) like the artifact's.
//! Choices of ours are in docs/conweave.md.
//!
//! Header (`Packet::tag`), as the paper sizes it (§3.4): a 16-bit timestamp
//! in microseconds, the 8-bit path ID, a 2-bit epoch, the REROUTED flag and
//! a 3-bit opcode. One timestamp field suffices: packets of the old path
//! carry their departure time (TX_TSTAMP), rerouted ones the TAIL's
//! (TAIL_TX_TSTAMP), and the TAIL both, as they are equal.

use super::{Counter, Decision, Gauge, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::{PortId, Shape, Switch, SwitchRole};
use crate::packet::{Packet, PacketId, PacketKind};
use crate::rng::{Rng, StreamTag};
use crate::time::SimTime;
use rustc_hash::FxHashMap;

/// What every switch's ConWeave needs to know (`lb.conweave`, resolved).
#[derive(Clone, Copy, Debug)]
pub struct ConWeaveConfig {
    /// θ_reply: None = the ToR-to-ToR base RTT plus `reply_extra` (the artifact's rule).
    pub reply_timeout: Option<SimTime>,
    pub reply_extra: SimTime,
    /// θ_path_busy: a path stays out of the draw this long after a NOTIFY for it.
    pub path_busy: SimTime,
    /// θ_inactive: an idle flow starts a new epoch on a new path.
    pub inactive: SimTime,
    /// θ_resume_default: a reorder queue's wait when no old-path timing is known.
    pub resume_default: SimTime,
    /// θ_resume_extra: added to every T_resume estimate.
    pub resume_extra: SimTime,
    /// Reorder queues per ToR downlink (the paper: 31 of a port's 32).
    pub reorder_queues: u32,
    /// Size of a REPLY, CLEAR or NOTIFY.
    pub control_bytes: u32,
    /// Draw new paths among those no NOTIFY made busy (false: any path).
    pub path_aware: bool,
    pub shape: Shape,
    /// One hop's propagation: link plus switch latency.
    pub hop_latency: SimTime,
}

impl ConWeaveConfig {
    /// Paths from one ToR to another (`Shape::tor_paths`).
    pub fn paths(&self, src_tor: u32, dst_tor: u32) -> u32 {
        self.shape.tor_paths(src_tor, dst_tor)
    }

    /// Propagation round trip between two ToRs (the artifact's base RTT for θ_reply).
    pub fn tor_rtt(&self, src_tor: u32, dst_tor: u32) -> SimTime {
        let s = &self.shape;
        let one_way = if s.tiers == 3 && src_tor / s.tors_per_pod != dst_tor / s.tors_per_pod {
            4
        } else {
            2
        };
        self.hop_latency * (2 * one_way)
    }

    fn reply_timeout(&self, src_tor: u32, dst_tor: u32) -> SimTime {
        self.reply_timeout
            .unwrap_or_else(|| self.tor_rtt(src_tor, dst_tor) + self.reply_extra)
    }
}

/// The opcode field (3 bits). `None`: a packet the source ToR did not tag (intra-rack).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    None = 0,
    Data = 1,
    Request = 2,
    Tail = 3,
    Reply = 4,
    Clear = 5,
    Notify = 6,
}

/// The ConWeave header in `Packet::tag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Microseconds modulo 2^16: TX_TSTAMP before rerouting, TAIL_TX_TSTAMP after.
    pub ts: u16,
    pub path: u8,
    /// The epoch modulo 4.
    pub epoch: u8,
    pub rerouted: bool,
    pub op: Op,
}

impl Header {
    pub fn pack(self) -> u32 {
        self.ts as u32
            | (self.path as u32) << 16
            | ((self.epoch & 3) as u32) << 24
            | (self.rerouted as u32) << 26
            | (self.op as u32) << 27
    }

    pub fn unpack(tag: u32) -> Header {
        let op = match (tag >> 27) & 7 {
            1 => Op::Data,
            2 => Op::Request,
            3 => Op::Tail,
            4 => Op::Reply,
            5 => Op::Clear,
            6 => Op::Notify,
            _ => Op::None,
        };
        Header {
            ts: tag as u16,
            path: (tag >> 16) as u8,
            epoch: ((tag >> 24) & 3) as u8,
            rerouted: (tag >> 26) & 1 == 1,
            op,
        }
    }
}

/// A time as the header carries it: whole microseconds modulo 2^16.
fn stamp(t: SimTime) -> u16 {
    (t.ps() / 1_000_000) as u16
}

/// `later − earlier` of two stamps, zero when `later` is in fact earlier
/// (the most significant bit tells a wrap-around from a negative gap, §3.4).
fn stamp_gap(later: u16, earlier: u16) -> SimTime {
    let d = later.wrapping_sub(earlier);
    if d >= 0x8000 {
        SimTime::ZERO
    } else {
        SimTime::from_us(d as u64)
    }
}

/// A flow at its source ToR.
struct TxFlow {
    epoch: u32,
    /// Phase 1: packets after the TAIL go on the new path, marked REROUTED.
    rerouted: bool,
    path: u8,
    active: SimTime,
    /// Until when a REPLY counts as timely; None after the TAIL or a REPLY.
    reply_deadline: Option<SimTime>,
    /// A REPLY or CLEAR came: the next packet starts a new epoch.
    stabilized: bool,
    tail_time: SimTime,
}

/// A flow at its destination ToR.
struct RxFlow {
    epoch: u32,
    /// The TAIL has passed (or the reorder queue was flushed without it).
    rerouted: bool,
    /// The latest old-path packet's departure stamp and arrival time.
    phase0_tx: u16,
    phase0_rx: SimTime,
    phase0_known: bool,
    tail_ts: Option<u16>,
    /// The reorder queue holding its rerouted packets, if any.
    voq: Option<usize>,
    /// T_resume (without θ_resume_extra) of a queue the timer flushed before its TAIL came.
    flushed_estimate: Option<SimTime>,
}

/// A reorder queue: a flow's rerouted packets, held until `deadline` or the TAIL.
struct Voq {
    flow: u32,
    port: PortId,
    /// The downlink's index below the ToR (for the per-port queue count).
    slot: usize,
    held: Vec<PacketId>,
    bytes: u64,
    deadline: SimTime,
}

/// What ConWeave counts at one switch (summed over switches in the summary).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConWeaveStats {
    pub reroutes: u64,
    pub epochs: u64,
    pub tails: u64,
    pub replies: u64,
    pub clears: u64,
    pub notifies: u64,
    pub held_packets: u64,
    /// Rerouted packets that arrived early but found no free reorder queue.
    pub unheld_early_packets: u64,
    pub voqs_used: u64,
    pub flushed_by_tail: u64,
    pub flushed_by_timer: u64,
    pub max_voqs_on_a_port: u64,
    pub max_reorder_bytes: u64,
    /// T_resume estimates compared with their TAIL's arrival (`ConWeave::resume_errors`).
    pub resume_error_count: u64,
    /// TAILs that arrived after the timer had flushed their reorder queue (premature T_resume).
    pub tails_after_timer_flush: u64,
}

pub struct ConWeave {
    cfg: ConWeaveConfig,
    rng: Rng,
    tx: FxHashMap<u32, TxFlow>,
    rx: FxHashMap<u32, RxFlow>,
    /// Per destination ToR and path: busy until (after a NOTIFY).
    busy_until: FxHashMap<(u32, u8), SimTime>,
    voqs: Vec<Option<Voq>>,
    /// Reorder queues in use per downlink.
    voqs_per_port: Vec<u32>,
    reorder_bytes: u64,
    pub stats: ConWeaveStats,
    /// T_resume estimate errors (ps), for ConWeave Fig. 21.
    pub resume_errors: Vec<i64>,
}

impl ConWeave {
    pub fn new(cfg: ConWeaveConfig, seed: u64, switch: u32) -> Self {
        let slots = cfg.shape.hosts_per_tor as usize;
        ConWeave {
            cfg,
            rng: Rng::new(seed, StreamTag::ConWeave, switch as u64),
            tx: FxHashMap::default(),
            rx: FxHashMap::default(),
            busy_until: FxHashMap::default(),
            voqs: Vec::new(),
            voqs_per_port: vec![0; slots],
            reorder_bytes: 0,
            stats: ConWeaveStats::default(),
            resume_errors: Vec::new(),
        }
    }

    fn tor_of(&self, host: u32) -> u32 {
        host / self.cfg.shape.hosts_per_tor
    }

    /// The uplink a path leaves a switch by, at the ToR or (3 tiers) the aggregation switch.
    fn uplink(&self, sw: &Switch, path: u8) -> Option<PortId> {
        let agg_up = self.cfg.shape.agg_uplinks.max(1);
        let k = match sw.role {
            SwitchRole::Tor { .. } if self.cfg.shape.tiers == 3 => path as u32 / agg_up,
            SwitchRole::Tor { .. } => path as u32,
            SwitchRole::Agg { .. } => path as u32 % agg_up,
            SwitchRole::Spine | SwitchRole::Core => return None,
        };
        sw.up.get(k as usize).copied()
    }

    /// Whether routing believes the path's uplink at this switch still reaches the
    /// destination (`ctx.group`; a link failure removes the uplink once routing converges).
    /// A path leaving by a dead uplink would be lost at the link.
    #[inline]
    fn path_usable(&self, ctx: &RouteCtx, path: u8) -> bool {
        // A routing group lists some of the switch's uplinks: all of them when none is down.
        ctx.group.len() == ctx.sw.up.len() || self.uplink(ctx.sw, path).is_some_and(|u| ctx.group.contains(&u))
    }

    /// A new path: the first of two uniform draws that no NOTIFY made busy (found = true),
    /// else the first draw (found = false). Draws are over the paths routing believes
    /// usable (`path_usable`); while no link is down that is every path, drawn as before.
    fn draw_path(&mut self, ctx: &RouteCtx, src_tor: u32, dst_tor: u32) -> (u8, bool) {
        let now = ctx.now;
        let paths = self.cfg.paths(src_tor, dst_tor) as u64;
        // Within a pod of a 3-tier tree only the ToR's digit of the path ID counts.
        let scale = if paths == self.cfg.shape.uplinks_per_tor as u64 {
            self.cfg.shape.agg_uplinks.max(1) as u64
        } else {
            1
        };
        let scale = if self.cfg.shape.tiers == 3 { scale } else { 1 };
        let (a, b) = if ctx.group.len() == ctx.sw.up.len() {
            let a = (self.rng.below(paths) * scale) as u8;
            (a, (self.rng.below(paths) * scale) as u8)
        } else {
            let usable: Vec<u8> = (0..paths)
                .map(|p| (p * scale) as u8)
                .filter(|&p| self.path_usable(ctx, p))
                .collect();
            if usable.is_empty() {
                return (0, false); // no uplink reaches the destination: the caller drops
            }
            let n = usable.len() as u64;
            (usable[self.rng.below(n) as usize], usable[self.rng.below(n) as usize])
        };
        if !self.cfg.path_aware {
            return (a, true);
        }
        let free = |p: u8| self.busy_until.get(&(dst_tor, p)).is_none_or(|&t| t <= now);
        if free(a) {
            (a, true)
        } else if free(b) {
            (b, true)
        } else {
            (a, false)
        }
    }

    /// Source ToR: tag a data packet of a flow leaving the rack and choose its uplink.
    fn at_source(&mut self, ctx: &RouteCtx, pkt: &mut Packet, src_tor: u32) -> Decision {
        let now = ctx.now;
        let dst_tor = self.tor_of(pkt.dst);
        let reply_timeout = self.cfg.reply_timeout(src_tor, dst_tor);
        let known = self.tx.contains_key(&pkt.flow);
        // A flow whose path routing now knows to be down starts a new epoch on a usable
        // path, as if it had been idle: ConWeave leaves failures to routing (the paper
        // models none), and a path through a dead uplink only loses packets.
        let degraded = ctx.group.len() != ctx.sw.up.len(); // no look-up while every uplink is up
        let lost = degraded && self.tx.get(&pkt.flow).is_some_and(|e| !self.path_usable(ctx, e.path));
        let draw = {
            let e = self.tx.get(&pkt.flow);
            let expired = lost || e.is_none_or(|e| e.active + self.cfg.inactive < now);
            let timeout = e.is_some_and(|e| !expired && !e.stabilized && e.reply_deadline.is_some_and(|d| d < now));
            (expired || timeout).then(|| self.draw_path(ctx, src_tor, dst_tor))
        };
        let e = self.tx.entry(pkt.flow).or_insert(TxFlow {
            epoch: 0,
            rerouted: false,
            path: draw.map_or(0, |d| d.0),
            active: now,
            reply_deadline: None,
            stabilized: false,
            tail_time: SimTime::ZERO,
        });
        let expired = !known || lost || e.active + self.cfg.inactive < now;
        let stabilized = !expired && e.stabilized;
        e.stabilized = false;
        e.active = now;
        let mut timeout = false;
        if expired || stabilized {
            e.reply_deadline = Some(now + reply_timeout);
        } else if e.reply_deadline.is_some_and(|d| d < now) {
            e.reply_deadline = None;
            timeout = true;
        }
        let pkt_path;
        let pkt_rerouted;
        if expired || stabilized {
            e.epoch = e.epoch.wrapping_add(1);
            e.rerouted = false;
            e.tail_time = SimTime::ZERO;
            pkt_rerouted = false;
            if expired && known {
                // Off a dead path even when both draws are busy.
                if let Some((p, _)) = draw.filter(|&(_, found)| found || lost) {
                    self.stats.reroutes += (p != e.path) as u64;
                    e.path = p;
                }
            }
            pkt_path = e.path;
            self.stats.epochs += 1;
        } else if timeout {
            // One more packet on the old path, the TAIL; the rest on the new one.
            e.rerouted = true;
            e.tail_time = now;
            pkt_rerouted = false;
            pkt_path = e.path;
            if let Some((p, true)) = draw {
                self.stats.reroutes += (p != e.path) as u64;
                e.path = p;
            }
            self.stats.tails += 1;
        } else {
            pkt_rerouted = e.rerouted;
            pkt_path = e.path;
        }
        let op = if expired || stabilized {
            Op::Request
        } else if timeout {
            Op::Tail
        } else {
            Op::Data
        };
        let ts = if pkt_rerouted { stamp(e.tail_time) } else { stamp(now) };
        pkt.tag = Header {
            ts,
            path: pkt_path,
            epoch: (e.epoch & 3) as u8,
            rerouted: pkt_rerouted,
            op,
        }
        .pack();
        match self
            .uplink(ctx.sw, pkt_path)
            .filter(|_| self.path_usable(ctx, pkt_path))
        {
            Some(p) => Decision::Forward(p),
            None => Decision::Drop, // no uplink reaches the destination, as under the hash
        }
    }

    /// Source ToR: a REPLY, CLEAR or NOTIFY from a destination ToR.
    fn on_control(&mut self, now: SimTime, pkt: &Packet) {
        let h = Header::unpack(pkt.tag);
        match h.op {
            Op::Reply | Op::Clear => {
                let Some(e) = self.tx.get_mut(&pkt.flow) else { return };
                if (e.epoch & 3) as u8 != h.epoch || e.rerouted != (h.op == Op::Clear) {
                    return; // an answer from an earlier epoch or phase
                }
                let timely = h.op == Op::Clear || e.reply_deadline.is_some_and(|d| now < d);
                if timely {
                    e.stabilized = true;
                    e.reply_deadline = None;
                }
            }
            Op::Notify => {
                let dst_tor = self.tor_of(pkt.src);
                self.busy_until.insert((dst_tor, h.path), now + self.cfg.path_busy);
            }
            _ => {}
        }
    }

    /// A control packet from this (destination) ToR back to the flow's source ToR.
    fn answer(&self, ctx: &RouteCtx, data: &Packet, h: Header, out: &mut PolicyOut) {
        let mut c = Packet::new(
            PacketKind::SwitchControl,
            data.flow,
            data.dst,
            data.src,
            self.cfg.control_bytes,
            ctx.now,
        );
        c.route = data.route;
        c.ev = data.ev;
        c.tag = h.pack();
        if let Some(up) = ctx.sw.ecmp_pick(ctx.sw.group(self.tor_of(data.src)), &c) {
            out.emit.push((c, up));
        }
    }

    /// Destination ToR: a tagged data packet from another rack, bound for host port `down`.
    fn at_destination(
        &mut self,
        ctx: &RouteCtx,
        id: PacketId,
        pkt: &Packet,
        h: Header,
        down: PortId,
        out: &mut PolicyOut,
    ) -> Decision {
        let now = ctx.now;
        let cfg = self.cfg;
        let e = self.rx.entry(pkt.flow).or_insert(RxFlow {
            epoch: 1,
            rerouted: false,
            phase0_tx: 0,
            phase0_rx: SimTime::ZERO,
            phase0_known: false,
            tail_ts: None,
            voq: None,
            flushed_estimate: None,
        });
        // The 2-bit epoch: 0 ahead is this epoch, 1-2 ahead a new one, 3 ahead (one behind) the last.
        let ahead = h.epoch.wrapping_sub((e.epoch & 3) as u8) & 3;
        if ahead == 3 {
            return Decision::Forward(down); // a straggler of the previous epoch
        }
        let new_epoch = ahead != 0;
        if !h.rerouted {
            e.phase0_tx = h.ts;
            e.phase0_rx = now;
        }
        let mut early = false;
        if new_epoch {
            e.epoch = e.epoch.wrapping_add(ahead as u32);
            e.rerouted = h.op == Op::Tail;
            early = h.rerouted && !e.rerouted;
            e.phase0_known = !h.rerouted;
            e.tail_ts = None;
            e.flushed_estimate = None;
        } else {
            if h.op == Op::Tail {
                if e.voq.is_none() {
                    e.rerouted = true;
                }
            } else if h.rerouted && !e.rerouted {
                early = true;
            }
            e.phase0_known |= !h.rerouted;
        }
        if h.op == Op::Tail || h.rerouted {
            e.tail_ts = Some(h.ts);
        }
        // How long after the latest old-path packet the TAIL left the source.
        let gap = if e.phase0_known {
            e.tail_ts.map_or(SimTime::ZERO, |t| stamp_gap(t, e.phase0_tx))
        } else {
            cfg.resume_default
        };
        let estimate = if e.phase0_known { e.phase0_rx + gap } else { now + gap };
        if h.op == Op::Tail {
            if let Some(est) = e.flushed_estimate.take() {
                // The timer flushed this TAIL's queue first: its error is below −θ_resume_extra.
                let err = est.ps() as i64 - now.ps() as i64;
                self.stats.resume_error_count += 1;
                self.stats.tails_after_timer_flush += 1;
                self.resume_errors.push(err);
            }
        }
        let mut flush_now = None;
        let mut hold = None; // the reorder queue that takes this packet
        if !h.rerouted {
            if let Some(v) = e.voq {
                let voq = self.voqs[v].as_mut().expect("a flow's reorder queue exists");
                if h.op == Op::Tail {
                    // T_resume's error (App. A, Fig. 21): the estimate without the extra term against now.
                    let err = voq.deadline.ps() as i64 - cfg.resume_extra.ps() as i64 - now.ps() as i64;
                    self.stats.resume_error_count += 1;
                    self.resume_errors.push(err);
                    self.stats.flushed_by_tail += 1;
                    flush_now = Some(v);
                } else {
                    // Fresher old-path timing moves the deadline (App. A).
                    voq.deadline = (now + gap + cfg.resume_extra).max(now);
                    out.timers.push(voq.deadline);
                }
            }
        } else if early {
            let slot = (pkt.dst % cfg.shape.hosts_per_tor) as usize;
            if e.voq.is_some() {
                hold = e.voq;
            } else if self.voqs_per_port[slot] < cfg.reorder_queues {
                let deadline = (estimate + cfg.resume_extra).max(now);
                let voq = Voq {
                    flow: pkt.flow,
                    port: down,
                    slot,
                    held: Vec::new(),
                    bytes: 0,
                    deadline,
                };
                let v = match self.voqs.iter().position(Option::is_none) {
                    Some(v) => {
                        self.voqs[v] = Some(voq);
                        v
                    }
                    None => {
                        self.voqs.push(Some(voq));
                        self.voqs.len() - 1
                    }
                };
                e.voq = Some(v);
                self.voqs_per_port[slot] += 1;
                self.stats.voqs_used += 1;
                self.stats.max_voqs_on_a_port = self.stats.max_voqs_on_a_port.max(self.voqs_per_port[slot] as u64);
                out.timers.push(deadline);
                hold = Some(v);
            } else {
                self.stats.unheld_early_packets += 1;
            }
        }
        // Answers: NOTIFY for a congestion mark, REPLY for a request, CLEAR for a TAIL.
        if cfg.path_aware && pkt.ecn {
            self.stats.notifies += 1;
            let n = Header { op: Op::Notify, ..h };
            self.answer(ctx, pkt, n, out);
        }
        match h.op {
            Op::Request => {
                self.stats.replies += 1;
                self.answer(
                    ctx,
                    pkt,
                    Header {
                        op: Op::Reply,
                        rerouted: false,
                        ..h
                    },
                    out,
                );
            }
            Op::Tail => {
                self.stats.clears += 1;
                self.answer(
                    ctx,
                    pkt,
                    Header {
                        op: Op::Clear,
                        rerouted: true,
                        ..h
                    },
                    out,
                );
            }
            _ => {}
        }
        if let Some(v) = hold {
            let voq = self.voqs[v].as_mut().expect("a flow's reorder queue exists");
            voq.held.push(id);
            voq.bytes += pkt.size as u64;
            self.reorder_bytes += pkt.size as u64;
            self.stats.max_reorder_bytes = self.stats.max_reorder_bytes.max(self.reorder_bytes);
            self.stats.held_packets += 1;
            return Decision::Hold;
        }
        if let Some(v) = flush_now {
            self.flush(v, out); // after the TAIL: the engine queues it before the released packets
        }
        Decision::Forward(down)
    }

    /// Release a reorder queue's packets to its port, in arrival order, and free it.
    fn flush(&mut self, v: usize, out: &mut PolicyOut) {
        let voq = self.voqs[v].take().expect("a flow's reorder queue exists");
        self.voqs_per_port[voq.slot] -= 1;
        self.reorder_bytes -= voq.bytes;
        out.release.extend(voq.held.iter().map(|&id| (id, voq.port)));
        if let Some(e) = self.rx.get_mut(&voq.flow) {
            e.voq = None;
            e.rerouted = true;
        }
    }
}

/// ECMP for what ConWeave does not steer (ACKs, NACKs, its own control packets).
fn hashed(ctx: &RouteCtx, pkt: &Packet) -> Decision {
    if let Some(d) = ctx.down {
        return Decision::Forward(d);
    }
    match ctx.sw.ecmp_pick(ctx.group, pkt) {
        Some(p) => Decision::Forward(p),
        None => Decision::Drop,
    }
}

impl SwitchPolicy for ConWeave {
    fn route(&mut self, ctx: &RouteCtx, id: PacketId, pkt: &mut Packet, out: &mut PolicyOut) -> Decision {
        let tor = match ctx.sw.role {
            SwitchRole::Tor { tor } => Some(tor),
            _ => None,
        };
        match pkt.kind {
            PacketKind::SwitchControl => {
                if tor.is_some() && ctx.down.is_some() {
                    self.on_control(ctx.now, pkt);
                    return Decision::Consume;
                }
                hashed(ctx, pkt)
            }
            PacketKind::Data if !pkt.trimmed => match (tor, ctx.down) {
                (Some(_), Some(down)) => {
                    let h = Header::unpack(pkt.tag);
                    if h.op == Op::None {
                        return Decision::Forward(down); // within the rack: one way only
                    }
                    self.at_destination(ctx, id, pkt, h, down, out)
                }
                (Some(tor), None) => self.at_source(ctx, pkt, tor),
                (None, Some(down)) => Decision::Forward(down),
                // An aggregation switch: the path's uplink, or the hash while routing knows it down.
                (None, None) => {
                    let path = Header::unpack(pkt.tag).path;
                    match self.uplink(ctx.sw, path).filter(|_| self.path_usable(ctx, path)) {
                        Some(p) => Decision::Forward(p),
                        None => hashed(ctx, pkt),
                    }
                }
            },
            _ => hashed(ctx, pkt),
        }
    }

    fn on_timer(&mut self, now: SimTime, _sw: &Switch, _ports: &[crate::net::Port], out: &mut PolicyOut) {
        for v in 0..self.voqs.len() {
            if let Some(q) = self.voqs[v].as_ref().filter(|q| q.deadline <= now) {
                let (flow, estimate) = (q.flow, q.deadline.saturating_sub(self.cfg.resume_extra));
                self.stats.flushed_by_timer += 1;
                self.flush(v, out);
                if let Some(e) = self.rx.get_mut(&flow) {
                    e.flushed_estimate = Some(estimate);
                }
            }
        }
    }

    fn counters(&self, out: &mut Vec<Counter>) {
        let s = &self.stats;
        for (name, v) in [
            ("reroutes", s.reroutes),
            ("epochs", s.epochs),
            ("tails", s.tails),
            ("replies", s.replies),
            ("clears", s.clears),
            ("notifies", s.notifies),
            ("held_packets", s.held_packets),
            ("unheld_early_packets", s.unheld_early_packets),
            ("reorder_queues_used", s.voqs_used),
            ("flushed_by_tail", s.flushed_by_tail),
            ("flushed_by_timer", s.flushed_by_timer),
            ("resume_error_count", s.resume_error_count),
            ("tails_after_timer_flush", s.tails_after_timer_flush),
        ] {
            out.push(Counter::Sum(name, v));
        }
        out.push(Counter::Max("max_reorder_queues_on_a_port", s.max_voqs_on_a_port));
        out.push(Counter::Max("max_reorder_bytes_at_a_switch", s.max_reorder_bytes));
    }

    /// T_resume's error at each TAIL that found its reorder queue (ConWeave Fig. 21), in µs:
    /// positive when the estimate would have flushed after the TAIL arrived.
    fn records(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend(self.resume_errors.iter().map(|&e| ("resume_error_us", e as f64 / 1e6)));
    }

    /// At a ToR: reorder queues in use per downlink (ConWeave Fig. 15) and bytes held (Fig. 16).
    fn gauges(&self, sw: &Switch, out: &mut Vec<Gauge>) {
        if !matches!(sw.role, SwitchRole::Tor { .. }) {
            return;
        }
        for (slot, &port) in sw.down.iter().enumerate() {
            out.push(Gauge {
                name: "reorder_queues",
                port: Some(port),
                value: self.voqs_per_port[slot] as u64,
            });
        }
        out.push(Gauge {
            name: "reorder_bytes",
            port: None,
            value: self.reorder_bytes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;
    use crate::net::Network;
    use crate::Scenario;

    /// Two racks of 16 hosts under 8 spines (the rdma_lossless preset, 32 hosts).
    fn net() -> Network {
        let s = Scenario::from_toml("preset = \"rdma_lossless\"\n[topology]\nhosts = 32").unwrap();
        build::build(&s, None).unwrap().net
    }

    fn config(n: &Network) -> ConWeaveConfig {
        ConWeaveConfig {
            reply_timeout: Some(SimTime::from_us(8)),
            reply_extra: SimTime::from_us(4),
            path_busy: SimTime::from_us(16),
            inactive: SimTime::from_us(300),
            resume_default: SimTime::from_us(200),
            resume_extra: SimTime::from_us(16),
            reorder_queues: 31,
            control_bytes: 64,
            path_aware: true,
            shape: n.shape,
            hop_latency: SimTime::from_us(1),
        }
    }

    /// Route one data packet of flow 0 (h0 -> h16) at the source ToR t0_0 at `us`.
    fn send(n: &Network, cw: &mut ConWeave, us: u64) -> (Header, PortId) {
        let now = SimTime::from_us(us);
        let sw = n.switch_by_name("t0_0").unwrap();
        let s = &n.switches[sw as usize];
        let mut pkt = Packet::data(0, 0, 0, 16, 1048, 7, 1, now);
        let ctx = RouteCtx {
            now,
            switch: sw,
            sw: s,
            ports: &n.ports,
            ingress: n.hosts[0].nic,
            down: None,
            group: s.group(1),
        };
        let Decision::Forward(p) = cw.route(&ctx, 0, &mut pkt, &mut PolicyOut::default()) else {
            panic!("a data packet goes up")
        };
        (Header::unpack(pkt.tag), p)
    }

    /// A REPLY or CLEAR for flow 0 reaching t0_0.
    fn answer(cw: &mut ConWeave, us: u64, op: Op, epoch: u8) {
        let mut c = Packet::new(PacketKind::SwitchControl, 0, 16, 0, 64, SimTime::from_us(us));
        c.tag = Header {
            ts: 0,
            path: 0,
            epoch,
            rerouted: op == Op::Clear,
            op,
        }
        .pack();
        cw.on_control(SimTime::from_us(us), &c);
    }

    #[test]
    fn the_header_round_trips_and_stamps_wrap() {
        let h = Header {
            ts: 65_535,
            path: 200,
            epoch: 3,
            rerouted: true,
            op: Op::Notify,
        };
        assert_eq!(Header::unpack(h.pack()), h);
        assert_eq!(Header::unpack(0).op, Op::None);
        assert_eq!(stamp(SimTime::from_us(65_536 + 5)), 5);
        // 3 us after a stamp taken just before the wrap; a "negative" gap is none.
        assert_eq!(stamp_gap(2, 65_535), SimTime::from_us(3));
        assert_eq!(stamp_gap(10, 20), SimTime::ZERO);
    }

    /// A late REPLY reroutes once: the TAIL on the old path, REROUTED
    /// packets on the new one, and no second TAIL however late the epoch
    /// runs, until a CLEAR (or θ_inactive of silence) starts a new epoch.
    #[test]
    fn a_flow_reroutes_at_most_once_per_epoch() {
        let n = net();
        let mut cw = ConWeave::new(config(&n), 1, 0);
        let (first, old) = send(&n, &mut cw, 0);
        assert_eq!((first.op, first.epoch, first.rerouted), (Op::Request, 1, false));
        assert_eq!(
            send(&n, &mut cw, 5).0.op,
            Op::Data,
            "the reply may still come until 8 us"
        );
        let (tail, port) = send(&n, &mut cw, 9);
        assert_eq!((tail.op, tail.rerouted, port), (Op::Tail, false, old));
        assert_eq!(tail.ts, 9, "the TAIL carries its own departure");
        let mut ports = std::collections::BTreeSet::new();
        for us in 10..200 {
            let (h, p) = send(&n, &mut cw, us);
            assert_eq!((h.op, h.rerouted, h.epoch, h.ts), (Op::Data, true, 1, 9), "at {us} us");
            ports.insert(p);
        }
        assert_eq!(ports.len(), 1, "one new path for the rest of the epoch");
        assert_eq!(cw.stats.tails, 1);
        // A REPLY of the old phase changes nothing; the CLEAR ends the epoch.
        answer(&mut cw, 200, Op::Reply, 1);
        assert_eq!(send(&n, &mut cw, 201).0.op, Op::Data);
        answer(&mut cw, 202, Op::Clear, 1);
        let (next, p) = send(&n, &mut cw, 203);
        assert_eq!((next.op, next.epoch, next.rerouted), (Op::Request, 2, false));
        assert_eq!(Some(&p), ports.first(), "a new epoch keeps the path");
    }

    /// The CLEAR never comes: the flow stays rerouted (no new TAIL) until it
    /// has been idle for θ_inactive, then starts a new epoch.
    #[test]
    fn a_lost_clear_is_recovered_by_the_inactivity_timeout() {
        let n = net();
        let mut cw = ConWeave::new(config(&n), 1, 0);
        send(&n, &mut cw, 0);
        assert_eq!(send(&n, &mut cw, 9).0.op, Op::Tail);
        assert_eq!(send(&n, &mut cw, 300).0.op, Op::Data, "busy flows wait for their CLEAR");
        let (h, _) = send(&n, &mut cw, 300 + 300);
        assert_eq!(
            (h.op, h.rerouted),
            (Op::Data, true),
            "exactly θ_inactive idle is not yet expired"
        );
        let (h, _) = send(&n, &mut cw, 600 + 301);
        assert_eq!((h.op, h.epoch, h.rerouted), (Op::Request, 2, false));
    }

    /// A NOTIFY takes a path out of the draw for θ_path_busy: with every
    /// path but one busy, a new epoch's draw moves the flow only to that
    /// one, and once there it never leaves.
    #[test]
    fn new_paths_avoid_notified_ones() {
        let n = net();
        let mut cw = ConWeave::new(config(&n), 3, 0);
        let paths = n.shape.uplinks_per_tor as u8;
        let free = n.switches[0].up[0];
        let mut arrived = None;
        for round in 0..60u64 {
            let at = round * 1000; // idle > θ_inactive: every round is a new epoch with a new draw
            for path in 1..paths {
                let mut c = Packet::new(PacketKind::SwitchControl, 0, 16, 0, 64, SimTime::ZERO);
                c.tag = Header {
                    ts: 0,
                    path,
                    epoch: 0,
                    rerouted: false,
                    op: Op::Notify,
                }
                .pack();
                cw.on_control(SimTime::from_us(at.saturating_sub(10)), &c); // busy for 16 us
            }
            let (_, p) = send(&n, &mut cw, at);
            if arrived.is_some() {
                assert_eq!(p, free, "left the only free path in round {round}");
            } else if p == free {
                arrived = Some(round);
            }
        }
        // Two draws among 8 find the free path with probability 1 − (7/8)² ≈ 0.23 per round.
        assert!(arrived.is_some_and(|r| r < 40), "{arrived:?}");
        let moved = (arrived != Some(0)) as u64; // a new flow's first path is no reroute
        assert_eq!(cw.stats.reroutes, moved, "the only move is onto the free path");
    }

    /// On a 3-tier tree new flows spread over every ToR uplink, within the
    /// pod as across pods, and across pods over every aggregation uplink.
    #[test]
    fn three_tier_paths_use_every_uplink() {
        let text = "preset = \"rdma_lossless\"\n[topology]\ntiers = 3\nhosts = 256\nradix = 8\ntor_radix = 12\n\
                    hosts_per_tor = 8\nuplinks_per_tor = 4\n";
        let s = Scenario::from_toml(text).unwrap();
        let n = build::build(&s, None).unwrap().net;
        let mut cfg = config(&n);
        cfg.reply_timeout = None;
        let mut cw = ConWeave::new(cfg, 5, 0);
        let sw = n.switch_by_name("t0_0").unwrap();
        let tor = &n.switches[sw as usize];
        // ToR 1 is in t0_0's pod (4 ToRs of 8 hosts per pod); ToR 8 is not.
        for dst in [8u32, 64] {
            let mut seen = std::collections::BTreeSet::new();
            let mut paths = std::collections::BTreeSet::new();
            for flow in 0..200 {
                let mut pkt = Packet::data(flow + 1000 * dst, 0, 0, dst, 1048, 7, 1, SimTime::ZERO);
                let ctx = RouteCtx {
                    now: SimTime::ZERO,
                    switch: sw,
                    sw: tor,
                    ports: &n.ports,
                    ingress: n.hosts[0].nic,
                    down: None,
                    group: tor.group(n.tor_of(dst)),
                };
                let Decision::Forward(p) = cw.route(&ctx, 0, &mut pkt, &mut PolicyOut::default()) else {
                    panic!()
                };
                seen.insert(p);
                paths.insert(Header::unpack(pkt.tag).path);
            }
            assert_eq!(seen.len(), 4, "to h{dst}: every ToR uplink");
            let expected = if dst < 32 { 4 } else { 16 };
            assert_eq!(paths.len(), expected, "to h{dst}: distinct path IDs {paths:?}");
        }
        assert_eq!(cfg.tor_rtt(0, 1), SimTime::from_us(4), "within a pod: 2 hops each way");
        assert_eq!(cfg.tor_rtt(0, 8), SimTime::from_us(8), "across pods: 4 hops each way");
    }
}
