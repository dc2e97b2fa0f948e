//! A shared-buffer switch (the RDMA fabric's, as the ConWeave artifact's
//! ns-3 models a Broadcom MMU): one buffer per switch, accounted per egress
//! port × class and per ingress port × priority group, with admission by
//! dynamic thresholds (Choudhury & Hahne, "Dynamic queue length thresholds
//! for shared-memory packet switches", ToN 1998): a queue may grow while its
//! bytes stay below α × the free part of its pool.
//!
//! - Eight priority classes per port. Class 0 (ACKs, NACKs, PFC frames,
//!   load-balancer control) has strict priority and is not accounted; data
//!   goes in `data_class`. The other classes are served round-robin or in
//!   strict priority (`Scheduling`), skipping classes the downstream paused.
//! - Lossy classes (no PFC): egress admission only, α = `egress_alpha` (1 in
//!   the artifact), over the whole buffer.
//! - Lossless classes (PFC): the ingress priority group may hold α_in ×
//!   (shared pool − ingress bytes in it) (α_in = 1/16 in the artifact); past
//!   that, arrivals are charged to the group's headroom (reserved per port
//!   and group for what is in flight after a pause; a departing packet of
//!   the group frees headroom first) and the switch asks the upstream
//!   to pause, refreshing the pause every half pause time (the engine's
//!   `PfcRefresh`) until the group has drained below its threshold less a
//!   hysteresis and its headroom is empty, when it sends a resume; a headroom
//!   overflow drops. The egress threshold applies to a lossless class only
//!   with `egress_limits_lossless` (as in the artifact's MMU, where a queue
//!   fed by many paused-late ingresses can then drop); without it PFC alone
//!   bounds the class and nothing is lost while the headroom suffices.
//! - ECN: RED on the egress queue's bytes at dequeue (Kmin, Kmax, Pmax).
//!
//! The per-switch state (`SharedBuffer`) lives in `Network::buffers`; each
//! port's queue (`SharedQueue`) holds its packets and reaches the buffer
//! through `QueueCtx`.

use super::{Admission, Dequeued, Ingress, PfcSignal, QueueCtx, QueueDiscipline, QueueStats};
use crate::packet::{Packet, PacketId, PacketPool, CLASS_CONTROL};
use crate::rng::Rng;
use crate::time::SimTime;
use std::collections::VecDeque;

/// Priority classes per port (IEEE 802.1Qbb).
pub const CLASSES: usize = 8;

/// How a port serves its classes 1..7 (class 0 always goes first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// One packet per non-empty class in turn (the artifact's `DequeueRR`).
    RoundRobin,
    /// The lowest class number first.
    Strict,
}

/// PFC settings of a lossless class.
#[derive(Clone, Copy, Debug)]
pub struct PfcParams {
    /// Ingress dynamic-threshold α: a priority group may hold α × the free shared pool.
    pub alpha: f64,
    /// Bytes reserved per port and group for what arrives after a pause.
    pub headroom: u64,
    /// Resume once the group is this far below its threshold (and its headroom empty).
    pub hysteresis: u64,
    /// Duration a pause frame asks for; re-sent while the condition holds.
    pub pause_time: SimTime,
}

/// A switch's buffer settings.
#[derive(Clone, Copy, Debug)]
pub struct SharedParams {
    pub size: u64,
    pub egress_alpha: f64,
    /// With PFC, the egress threshold also limits the lossless class (the
    /// ConWeave artifact's MMU, which can then drop under PFC).
    pub egress_limits_lossless: bool,
    /// Lossless data class (PFC) when set.
    pub pfc: Option<PfcParams>,
    pub data_class: u8,
    pub scheduling: Scheduling,
    /// RED at dequeue on the egress queue's bytes: no mark up to `kmin`, all above `kmax`,
    /// probability rising linearly to `pmax` between.
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

/// One switch's shared buffer: the accounting every port's queue updates.
pub struct SharedBuffer {
    pub params: SharedParams,
    /// Bytes in the buffer (data classes), and the most it held: over the
    /// run, and since the sampler last looked.
    pub used: u64,
    pub max_used: u64,
    window_max_used: u64,
    /// Ingress shared pool: the buffer less every port's headroom.
    ingress_pool: u64,
    ingress_used: u64,
    /// Per local port and class: egress bytes, ingress shared bytes, headroom bytes.
    egress: Vec<[u64; CLASSES]>,
    ingress: Vec<[u64; CLASSES]>,
    headroom: Vec<[u64; CLASSES]>,
    /// Ingress groups that have asked their upstream to pause (bit c: class c), per local port.
    paused: Vec<u8>,
    /// Most headroom bytes any group held.
    pub max_headroom: u64,
}

impl SharedBuffer {
    pub fn new(params: SharedParams, ports: usize) -> Self {
        let reserved = params.pfc.map_or(0, |p| p.headroom.saturating_mul(ports as u64));
        SharedBuffer {
            params,
            used: 0,
            max_used: 0,
            window_max_used: 0,
            ingress_pool: params.size.saturating_sub(reserved),
            ingress_used: 0,
            egress: vec![[0; CLASSES]; ports],
            ingress: vec![[0; CLASSES]; ports],
            headroom: vec![[0; CLASSES]; ports],
            paused: vec![0; ports],
            max_headroom: 0,
        }
    }

    /// The most the buffer held since the last call; then start a new window.
    pub fn take_window_max_used(&mut self) -> u64 {
        let max = self.window_max_used.max(self.used);
        self.window_max_used = self.used;
        max
    }

    /// Ports the buffer serves.
    pub fn ports(&self) -> usize {
        self.egress.len()
    }

    /// Egress dynamic threshold: the queue stays below α × the free buffer.
    fn egress_admits(&self, port: usize, class: usize, size: u64) -> bool {
        let free = self.params.size.saturating_sub(self.used) as f64;
        self.used + size <= self.params.size
            && (self.egress[port][class] + size) as f64 <= self.params.egress_alpha * free
    }

    /// The ingress group's dynamic threshold (lossless classes).
    fn ingress_threshold(&self, pfc: &PfcParams) -> f64 {
        pfc.alpha * self.ingress_pool.saturating_sub(self.ingress_used) as f64
    }

    /// Bytes an ingress group holds, shared part plus headroom.
    pub fn ingress_bytes(&self, port: usize, class: usize) -> u64 {
        self.ingress[port][class] + self.headroom[port][class]
    }

    /// Bytes an egress queue holds.
    pub fn egress_bytes(&self, port: usize, class: usize) -> u64 {
        self.egress[port][class]
    }

    /// Whether this ingress group should start pausing its upstream: over
    /// its threshold or into its headroom, and not pausing it already.
    fn should_pause(&self, pfc: &PfcParams, port: usize, class: usize) -> bool {
        let over = self.headroom[port][class] > 0 || self.ingress[port][class] as f64 > self.ingress_threshold(pfc);
        over && self.paused[port] & (1 << class) == 0
    }

    /// Whether a paused ingress group may resume: headroom empty and below its threshold less the hysteresis.
    fn should_resume(&self, pfc: &PfcParams, port: usize, class: usize) -> bool {
        self.paused[port] & (1 << class) != 0
            && self.headroom[port][class] == 0
            && (self.ingress[port][class] + pfc.hysteresis) as f64 <= self.ingress_threshold(pfc)
    }

    /// The classes the ingress group at `port` is pausing its upstream for
    /// (a refresh re-sends them), and how long a pause lasts.
    pub fn pausing(&self, port: usize) -> (u8, SimTime) {
        (
            self.paused[port],
            self.params.pfc.map_or(SimTime::ZERO, |p| p.pause_time),
        )
    }
}

/// One packet waiting, with what its departure releases.
#[derive(Clone, Copy, Debug)]
struct Entry {
    id: PacketId,
    size: u32,
    /// The ingress group it is charged to (None: made here, or a lossy class).
    ingress: Option<Ingress>,
}

/// One port's queues in a shared-buffer switch.
pub struct SharedQueue {
    /// This port's index among its switch's ports (the buffer's accounting index).
    local: usize,
    classes: [VecDeque<Entry>; CLASSES],
    /// The class round-robin serves next.
    next: usize,
    /// Bytes waiting in the data classes (1..): kept, not summed, because
    /// switch policies (DRILL, adaptive routing) read it on every packet.
    data_bytes: u64,
    /// The port's marking stream (`StreamTag::Port`).
    rng: Rng,
    stats: QueueStats,
}

impl SharedQueue {
    pub fn new(local: usize, rng: Rng) -> Self {
        SharedQueue {
            local,
            classes: Default::default(),
            next: 1,
            data_bytes: 0,
            rng,
            stats: QueueStats::default(),
        }
    }

    fn backlog(&self) -> u64 {
        debug_assert_eq!(
            self.data_bytes,
            self.classes[1..].iter().flatten().map(|e| e.size as u64).sum::<u64>()
        );
        self.data_bytes
    }

    /// The class to serve next, skipping empty and paused ones.
    fn pick(&mut self, paused: u8, scheduling: Scheduling) -> Option<usize> {
        if !self.classes[0].is_empty() {
            return Some(0);
        }
        let ready = |c: usize| !self.classes[c].is_empty() && paused & (1 << c) == 0;
        let class = match scheduling {
            Scheduling::Strict => (1..CLASSES).find(|&c| ready(c))?,
            Scheduling::RoundRobin => (0..CLASSES - 1)
                .map(|i| 1 + (self.next - 1 + i) % (CLASSES - 1))
                .find(|&c| ready(c))?,
        };
        self.next = 1 + class % (CLASSES - 1);
        Some(class)
    }

    /// RED at dequeue on the queue's bytes after the packet left (the artifact's `ShouldSendCN`).
    fn red(&mut self, p: &SharedParams, bytes: u64) -> bool {
        if bytes > p.kmax {
            return true;
        }
        bytes > p.kmin
            && p.kmin != p.kmax
            && self.rng.unit() < (bytes - p.kmin) as f64 / (p.kmax - p.kmin) as f64 * p.pmax
    }
}

impl QueueDiscipline for SharedQueue {
    fn enqueue(&mut self, id: PacketId, pkt: &mut Packet, ingress: Option<Ingress>, ctx: &mut QueueCtx) -> Admission {
        if pkt.class() == CLASS_CONTROL {
            self.classes[0].push_back(Entry {
                id,
                size: pkt.size,
                ingress: None,
            });
            return Admission::Queued;
        }
        let buf = ctx
            .buffer
            .as_deref_mut()
            .expect("a shared queue's switch has a shared buffer");
        let (class, size, port) = (buf.params.data_class as usize, pkt.size as u64, self.local);
        let lossless = buf.params.pfc.zip(ingress);
        let egress_limited = lossless.is_none() || buf.params.egress_limits_lossless;
        if egress_limited && !buf.egress_admits(port, class, size) {
            self.stats.drops += 1;
            return Admission::Dropped;
        }
        if let Some((pfc, ing)) = lossless {
            let g = ing.local as usize;
            if (buf.ingress[g][class] + size) as f64 > buf.ingress_threshold(&pfc) || buf.headroom[g][class] > 0 {
                if buf.headroom[g][class] + size > pfc.headroom {
                    self.stats.drops += 1;
                    return Admission::Dropped; // headroom overflow: a lossless class lost a packet
                }
                buf.headroom[g][class] += size;
                buf.max_headroom = buf.max_headroom.max(buf.headroom[g][class]);
            } else {
                buf.ingress[g][class] += size;
                buf.ingress_used += size;
            }
        }
        buf.used += size;
        buf.max_used = buf.max_used.max(buf.used);
        buf.window_max_used = buf.window_max_used.max(buf.used);
        buf.egress[port][class] += size;
        let queued = buf.egress[port][class];
        self.stats.max_bytes = self.stats.max_bytes.max(queued);
        self.stats.window_max = self.stats.window_max.max(queued);
        let charged = lossless.map(|(_, ing)| ing);
        self.classes[class].push_back(Entry {
            id,
            size: pkt.size,
            ingress: charged,
        });
        self.data_bytes += pkt.size as u64;
        if let Some((pfc, ing)) = lossless {
            if buf.should_pause(&pfc, ing.local as usize, class) {
                buf.paused[ing.local as usize] |= 1 << class;
                ctx.signals.push(PfcSignal {
                    port: ing.back,
                    class: class as u8,
                    duration: pfc.pause_time,
                });
            }
        }
        Admission::Queued
    }

    fn dequeue(&mut self, pool: &mut PacketPool, ctx: &mut QueueCtx) -> Option<Dequeued> {
        let scheduling = ctx
            .buffer
            .as_deref()
            .map_or(Scheduling::RoundRobin, |b| b.params.scheduling);
        let class = self.pick(ctx.paused, scheduling)?;
        let e = self.classes[class].pop_front().expect("picked a non-empty class");
        if class == 0 {
            return Some(Dequeued {
                id: e.id,
                size: e.size,
                marked: false,
            });
        }
        let buf = ctx
            .buffer
            .as_deref_mut()
            .expect("a shared queue's switch has a shared buffer");
        let size = e.size as u64;
        self.data_bytes -= size;
        buf.used -= size;
        buf.egress[self.local][class] -= size;
        if let Some(ing) = e.ingress {
            let g = ing.local as usize;
            let from_headroom = size.min(buf.headroom[g][class]);
            buf.headroom[g][class] -= from_headroom;
            buf.ingress[g][class] -= size - from_headroom;
            buf.ingress_used -= size - from_headroom;
            if let Some(pfc) = buf.params.pfc {
                if buf.should_resume(&pfc, g, class) {
                    buf.paused[g] &= !(1 << class);
                    ctx.signals.push(PfcSignal {
                        port: ing.back,
                        class: class as u8,
                        duration: SimTime::ZERO,
                    });
                }
            }
        }
        let params = buf.params;
        let marked = self.red(&params, buf.egress[self.local][class]);
        if marked {
            pool.get_mut(e.id).ecn = true;
        }
        Some(Dequeued {
            id: e.id,
            size: e.size,
            marked,
        })
    }

    fn is_empty(&self) -> bool {
        self.classes.iter().all(VecDeque::is_empty)
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog()
    }

    fn all_bytes_waiting(&self) -> u64 {
        self.classes.iter().flatten().map(|e| e.size as u64).sum()
    }

    fn stats(&self) -> &QueueStats {
        &self.stats
    }

    fn take_window_max(&mut self) -> u64 {
        let now = self.backlog();
        let max = self.stats.window_max.max(now);
        self.stats.window_max = now;
        max
    }
}
