//! The REPS/htsim switch queue: two classes with strict priority, control
//! (ACK, NACK, credits, RTS, trimmed headers) ahead of data. Only the data
//! class has a byte capacity; control packets are a few tens of bytes and
//! are never dropped here. A data packet that does not fit is dropped or,
//! with trimming, cut to its header and sent on in the control class.
//! ECN marks are RED-style on the data backlog, at dequeue (the REPS and
//! ARCANE papers' choice, the artifact's `CompositeQueue`) or at enqueue.
//!
//! Two options reproduce the REPS artifact's `CompositeQueue::receivePacket`
//! (tommasobo/REPS_EuroSys_Artifact, htsim/sim/compositequeue.cpp) when a
//! data packet finds the data class full:
//! - `full_drop_coin` (`queue.full_drop = "coin_newest"`): a fair coin from
//!   the port's stream picks the loser. Heads, the newest waiting data
//!   packet (the tail: the artifact's `CircularBuffer::pop_front` steps its
//!   push index back, circular_buffer.h) is dropped, or with trimming cut to
//!   its header and moved to the control class, and the arrival takes its
//!   place at the tail; tails, the arrival is dropped (or trimmed) as with
//!   drop-tail. The coin is drawn only for a full queue, so runs that never
//!   fill a queue, and runs without the option, draw exactly as before.
//! - `count_in_service` (`queue.count_in_service = true`): the data packet
//!   being serialized still counts against the capacity until its last bit
//!   is sent (the artifact pops it in `completeService`), so a 101-packet
//!   queue holds 101 packets including the one on the wire, not 101 waiting.
//!   Only the capacity check changes: ECN marking keeps reading the bytes
//!   left waiting (which is also what the artifact's `decide_ECN` reads, at
//!   the end of service), and `backlog_bytes` stays the waiting bytes.

use super::{Admission, Dequeued, Ingress, QueueCtx, QueueDiscipline, QueueStats};
use crate::packet::{Packet, PacketId, PacketPool};
use crate::rng::Rng;
use std::collections::VecDeque;

/// Queue behaviour shared by all switch ports of a scenario.
#[derive(Clone, Copy, Debug)]
pub struct QueueParams {
    /// Data-class capacity in bytes (drop-tail or trim beyond it).
    pub capacity: u64,
    /// RED-style ECN: probability rises linearly from 0 at `kmin` to 1 at `kmax` (bytes).
    pub kmin: u64,
    pub kmax: u64,
    /// The probability at `kmax` (1: certainty, the REPS papers' linear RED).
    pub pmax: f64,
    /// Mark when a packet leaves the queue (REPS and ARCANE papers' choice) or when it joins.
    pub ecn_at_dequeue: bool,
    /// Cut a packet that does not fit to its header and forward it with priority.
    pub trimming: bool,
    /// Bytes a trimmed packet keeps.
    pub header_bytes: u32,
    /// A full data class: a coin picks the newest waiting data packet or the
    /// arrival as the loser (the REPS artifact); false: always the arrival.
    pub full_drop_coin: bool,
    /// The data packet on the line counts against `capacity` until it is sent (the REPS artifact).
    pub count_in_service: bool,
}

impl QueueParams {
    /// No capacity limit and no marking: a host NIC's queue, or a port before its queue is sized.
    pub const UNLIMITED: QueueParams = QueueParams {
        capacity: u64::MAX,
        kmin: u64::MAX,
        kmax: u64::MAX,
        pmax: 1.0,
        ecn_at_dequeue: true,
        trimming: false,
        header_bytes: 0,
        full_drop_coin: false,
        count_in_service: false,
    };
}

/// `repr(C)`: what admitting and sending a packet read or write comes
/// first, `HOT_BYTES` of it (the port prefetches that much); the coin's
/// victim, the random stream (marking, the coin) and the drop counts last.
#[repr(C)]
pub struct TwoClassQueue {
    /// Waiting packets with their wire size.
    control: VecDeque<(PacketId, u32)>,
    data: VecDeque<(PacketId, u32)>,
    data_bytes: u64,
    /// Size of the last packet `next` handed to the line if it was a data
    /// packet, else 0 (read only with `count_in_service`, while the line is busy).
    in_service: u32,
    pub params: QueueParams,
    /// Its high-water marks first (`QueueStats`): every admission writes them.
    stats: QueueStats,
    /// The packet a coin pushed out of the data class, until the engine takes it.
    victim: Option<PacketId>,
    /// The port's stream (`StreamTag::Port`): RED marking and the full-queue coin.
    rng: Rng,
}

impl TwoClassQueue {
    /// The hot part's size: up to and including the stats' high-water marks.
    pub(crate) const HOT_BYTES: usize = std::mem::offset_of!(TwoClassQueue, stats) + 2 * std::mem::size_of::<u64>();

    pub fn new(params: QueueParams, rng: Rng) -> Self {
        TwoClassQueue {
            params,
            control: VecDeque::new(),
            data: VecDeque::new(),
            data_bytes: 0,
            in_service: 0,
            victim: None,
            rng,
            stats: QueueStats::default(),
        }
    }

    /// RED marking decision for a data packet at the given occupancy.
    #[inline]
    pub fn ecn_mark(&mut self, occupancy: u64) -> bool {
        let QueueParams { kmin, kmax, pmax, .. } = self.params;
        if occupancy <= kmin {
            false
        } else if occupancy >= kmax {
            true
        } else {
            let p = (occupancy - kmin) as f64 / (kmax - kmin) as f64 * pmax;
            self.rng.unit() < p
        }
    }

    /// Set the data backlog directly (tests of policies that read it).
    #[cfg(test)]
    pub fn set_backlog_for_test(&mut self, bytes: u64) {
        self.data_bytes = bytes;
    }
}

impl TwoClassQueue {
    /// `enqueue` without a context: this queue needs none (the engine's fast
    /// path). `line_busy`: the port is still serializing the packet `next`
    /// last handed out (read only with `count_in_service`).
    #[inline(always)] // hot: once per packet per hop; the rare paths are out of line
    pub fn admit(&mut self, id: PacketId, pkt: &mut Packet, line_busy: bool) -> Admission {
        if pkt.is_priority() {
            self.control.push_back((id, pkt.size));
            return Admission::Queued;
        }
        let mut occupancy = self.data_bytes;
        if self.params.count_in_service && line_busy {
            occupancy += self.in_service as u64;
        }
        let mut evicted = None;
        if occupancy + pkt.size as u64 > self.params.capacity {
            evicted = self.full_coin(occupancy, pkt.size);
            if evicted.is_none() {
                if !self.params.trimming {
                    self.stats.drops += 1;
                    return Admission::Dropped;
                }
                pkt.trimmed = true;
                pkt.size = self.params.header_bytes;
                self.control.push_back((id, pkt.size));
                return Admission::Trimmed;
            }
        }
        let marked = !self.params.ecn_at_dequeue && self.ecn_mark(self.data_bytes);
        if marked {
            pkt.ecn = true;
        }
        self.data_bytes += pkt.size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.data_bytes);
        self.stats.window_max = self.stats.window_max.max(self.data_bytes);
        self.data.push_back((id, pkt.size));
        match evicted {
            None if marked => Admission::Marked,
            None => Admission::Queued,
            Some(trimmed) => Self::evicted(trimmed, marked),
        }
    }

    /// A packet reaches this queue while it is empty and its line is free:
    /// admit it and hand it to the line at once, as `admit` then `next`
    /// would, without writing it into the queue. False (nothing changed)
    /// unless the queue is empty and the packet fits.
    #[inline(always)]
    pub fn pass_through(&mut self, pkt: &Packet) -> bool {
        if !self.is_empty() || pkt.size as u64 > self.params.capacity {
            return false;
        }
        // An empty queue marks nothing, at enqueue or at dequeue (occupancy 0 <= kmin).
        if pkt.is_priority() {
            self.in_service = 0;
        } else {
            self.stats.max_bytes = self.stats.max_bytes.max(pkt.size as u64);
            self.stats.window_max = self.stats.window_max.max(pkt.size as u64);
            self.in_service = pkt.size;
        }
        true
    }

    /// A data packet of `size` B finds the data class full at `occupancy`
    /// B. With `full_drop_coin`, flip the port's coin (REPS artifact
    /// compositequeue.cpp, `receivePacket`: `drand() < 0.5`, drawn only
    /// when full); heads, push the newest waiting data packet out to make
    /// room: trimmed into the control class with trimming (the artifact
    /// strips it and queues it high), else dropped (`take_victim`). Returns
    /// whether it was trimmed; None leaves the arrival to lose.
    ///
    /// Two corners where lbsim keeps its own rule: with nothing waiting
    /// behind the line (a queue of one packet) the arrival loses (the
    /// artifact would pop the packet being served); and if the arrival is
    /// larger than the newest packet by more than the room left, the arrival
    /// loses (the artifact admits it and overshoots its size; lbsim keeps
    /// the capacity a hard bound, which the run's invariants check).
    #[cold]
    #[inline(never)]
    fn full_coin(&mut self, occupancy: u64, size: u32) -> Option<bool> {
        if !self.params.full_drop_coin || self.rng.unit() >= 0.5 {
            return None;
        }
        let &(victim, victim_size) = self.data.back()?;
        if occupancy - victim_size as u64 + size as u64 > self.params.capacity {
            return None;
        }
        self.data.pop_back();
        self.data_bytes -= victim_size as u64;
        self.victim = Some(victim);
        self.stats.pushed_out += 1;
        if self.params.trimming {
            self.control.push_back((victim, self.params.header_bytes));
        } else {
            self.stats.drops += 1;
        }
        Some(self.params.trimming)
    }

    #[cold]
    fn evicted(trimmed: bool, marked: bool) -> Admission {
        if trimmed {
            Admission::QueuedTrimming { marked }
        } else {
            Admission::QueuedEvicting { marked }
        }
    }

    /// After `Admission::QueuedTrimming`: cut the pushed-out packet to its
    /// header in the pool (its control-class entry already has that size).
    pub fn trim_victim(&mut self, pool: &mut PacketPool) {
        if let Some(victim) = self.victim.take() {
            let p = pool.get_mut(victim);
            p.trimmed = true;
            p.size = self.params.header_bytes;
        }
    }

    /// Where the next packet out waits (for a prefetch).
    #[inline(always)]
    pub fn head(&self) -> Option<&(PacketId, u32)> {
        self.control.front().or_else(|| self.data.front())
    }

    /// `dequeue` without a context (the engine's fast path).
    #[inline(always)] // hot: once per packet per hop
    pub fn next(&mut self, pool: &mut PacketPool) -> Option<Dequeued> {
        if let Some((id, size)) = self.control.pop_front() {
            self.in_service = 0;
            return Some(Dequeued {
                id,
                size,
                marked: false,
            });
        }
        let (id, size) = self.data.pop_front()?;
        self.data_bytes -= size as u64;
        self.in_service = size;
        // Dequeue marking on the occupancy the packet leaves behind (REPS artifact CompositeQueue).
        let marked = self.params.ecn_at_dequeue && self.ecn_mark(self.data_bytes);
        if marked {
            pool.get_mut(id).ecn = true;
        }
        Some(Dequeued { id, size, marked })
    }
}

impl QueueDiscipline for TwoClassQueue {
    #[inline]
    fn enqueue(&mut self, id: PacketId, pkt: &mut Packet, _ingress: Option<Ingress>, _ctx: &mut QueueCtx) -> Admission {
        // No line state through this interface: the last data packet handed
        // out counts as on the line (the engine calls `admit` with the truth).
        self.admit(id, pkt, true)
    }

    #[inline]
    fn dequeue(&mut self, pool: &mut PacketPool, _ctx: &mut QueueCtx) -> Option<Dequeued> {
        self.next(pool)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.control.is_empty() && self.data.is_empty()
    }

    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.data_bytes
    }
    fn all_bytes_waiting(&self) -> u64 {
        // Control packets are few and small: summed when asked, not kept on the hot path.
        self.data_bytes + self.control.iter().map(|&(_, size)| size as u64).sum::<u64>()
    }

    fn stats(&self) -> &QueueStats {
        &self.stats
    }

    fn take_window_max(&mut self) -> u64 {
        let max = self.stats.window_max.max(self.data_bytes);
        self.stats.window_max = self.data_bytes;
        max
    }

    fn take_victim(&mut self) -> Option<PacketId> {
        self.victim.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;
    use crate::time::SimTime;

    fn queue(capacity: u64, kmin: u64, kmax: u64, trimming: bool, at_dequeue: bool) -> TwoClassQueue {
        let params = QueueParams {
            capacity,
            kmin,
            kmax,
            pmax: 1.0,
            ecn_at_dequeue: at_dequeue,
            trimming,
            header_bytes: 64,
            full_drop_coin: false,
            count_in_service: false,
        };
        TwoClassQueue::new(params, Rng::new(1, StreamTag::Port, 0))
    }

    /// A queue of `packets` 4096 B packets, no marking, the REPS artifact's
    /// full-queue options, and a port stream of the given seed.
    fn artifact_queue(packets: u64, trimming: bool, count_in_service: bool, seed: u64) -> TwoClassQueue {
        let params = QueueParams {
            capacity: packets * 4096,
            kmin: u64::MAX,
            kmax: u64::MAX,
            pmax: 1.0,
            ecn_at_dequeue: true,
            trimming,
            header_bytes: 64,
            full_drop_coin: true,
            count_in_service,
        };
        TwoClassQueue::new(params, Rng::new(seed, StreamTag::Port, 0))
    }

    /// The first seed whose port stream draws heads (< 0.5) then tails: the
    /// draws are computed from the same stream the queue gets, not assumed.
    fn seed_heads_then_tails() -> u64 {
        (1..)
            .find(|&seed| {
                let mut r = Rng::new(seed, StreamTag::Port, 0);
                r.unit() < 0.5 && r.unit() >= 0.5
            })
            .unwrap()
    }

    /// Packets A..E of flows 0..4 in the pool (each its own flow, so a
    /// victim's flow differs from the arrival's).
    fn five(pool: &mut PacketPool) -> Vec<(PacketId, Packet)> {
        (0..5)
            .map(|f| {
                let p = Packet::data(f, 0, 0, 1, 4096, 0, 0, SimTime::ZERO);
                (pool.alloc(p), p)
            })
            .collect()
    }

    fn ctx(signals: &mut Vec<super::super::PfcSignal>) -> QueueCtx<'_> {
        QueueCtx {
            now: SimTime::ZERO,
            paused: 0,
            buffer: None,
            signals,
        }
    }

    fn data(seq: u32) -> Packet {
        Packet::data(0, seq, 0, 1, 4096, 0, 0, SimTime::ZERO)
    }

    /// An empty queue with a free line lets a packet through with the same
    /// effects as queueing it and taking it out at once, and only then.
    #[test]
    fn passing_through_an_empty_queue_is_admit_then_next() {
        let ack = Packet::reply(&data(3), crate::packet::PacketKind::Ack, 64);
        for (trimming, at_dequeue, pkt) in [(false, true, data(1)), (true, false, data(2)), (false, false, ack)] {
            // Marking thresholds at zero: an occupancy of one packet would be marked.
            let (mut queued, mut passed) = (
                queue(8192, 0, 0, trimming, at_dequeue),
                queue(8192, 0, 0, trimming, at_dequeue),
            );
            let mut pool = PacketPool::default();
            let mut p = pkt;
            let id = pool.alloc(p);
            assert_eq!(queued.admit(id, &mut p, false), Admission::Queued);
            let out = queued.next(&mut pool).expect("admitted");
            assert!(!out.marked && p.ecn == pkt.ecn && p.size == pkt.size);
            assert!(passed.pass_through(&pkt));
            let state = |q: &TwoClassQueue| {
                (
                    q.is_empty(),
                    q.data_bytes,
                    q.in_service,
                    q.stats.max_bytes,
                    q.stats.window_max,
                )
            };
            assert_eq!(state(&queued), state(&passed));
            // Not with something waiting, nor for a packet larger than the queue.
            assert_eq!(passed.admit(id, &mut data(4), true), Admission::Queued);
            assert!(!passed.pass_through(&pkt));
        }
        assert!(!queue(4000, 0, 0, false, true).pass_through(&data(5)));
    }

    #[test]
    fn red_marking_is_linear_between_thresholds() {
        let mut q = queue(1000, 200, 800, false, true);
        assert!(!q.ecn_mark(200));
        assert!(q.ecn_mark(800));
        let n = 20_000;
        let marked = (0..n).filter(|_| q.ecn_mark(350)).count() as f64 / n as f64;
        assert!((marked - 0.25).abs() < 0.02, "{marked}");
    }

    /// Control first whatever the arrival order; a full data class drops,
    /// or trims into the control class, which then goes first too.
    #[test]
    fn control_first_then_drop_or_trim_when_full() {
        let mut pool = PacketPool::default();
        let mut signals = Vec::new();
        let mut c = ctx(&mut signals);
        for trimming in [false, true] {
            let mut q = queue(8192, u64::MAX, u64::MAX, trimming, true);
            let mut order = Vec::new();
            for seq in 0..3 {
                let mut p = data(seq);
                let id = pool.alloc(p);
                order.push((id, q.enqueue(id, &mut p, None, &mut c)));
            }
            let mut ack = Packet::reply(&data(9), crate::packet::PacketKind::Ack, 64);
            let ack_id = pool.alloc(ack);
            assert_eq!(
                q.enqueue(ack_id, &mut ack, Some(Ingress { back: 3, local: 0 }), &mut c),
                Admission::Queued
            );
            let third = if trimming {
                Admission::Trimmed
            } else {
                Admission::Dropped
            };
            assert_eq!(order[2].1, third);
            let out: Vec<PacketId> = std::iter::from_fn(|| q.dequeue(&mut pool, &mut c))
                .map(|d| d.id)
                .collect();
            let want = if trimming {
                vec![order[2].0, ack_id, order[0].0, order[1].0]
            } else {
                vec![ack_id, order[0].0, order[1].0]
            };
            assert_eq!(out, want, "trimming {trimming}");
            assert_eq!(q.stats().drops, !trimming as u64);
            assert_eq!(q.stats().max_bytes, 8192);
        }
    }

    #[test]
    fn marks_at_enqueue_or_at_dequeue_on_the_backlog() {
        let mut pool = PacketPool::default();
        let mut signals = Vec::new();
        let mut c = ctx(&mut signals);
        // kmin 0, kmax 1 byte: any backlog marks.
        let mut enq = queue(1 << 20, 0, 1, false, false);
        let mut deq = queue(1 << 20, 0, 1, false, true);
        let (mut a, mut b) = (data(0), data(1));
        let (ia, ib) = (pool.alloc(a), pool.alloc(b));
        assert_eq!(
            enq.enqueue(ia, &mut a, None, &mut c),
            Admission::Queued,
            "empty queue: no mark"
        );
        assert_eq!(
            enq.enqueue(ib, &mut b, None, &mut c),
            Admission::Marked,
            "behind 4096 B"
        );
        assert!(b.ecn);
        for seq in 0..2 {
            let mut p = data(seq);
            let id = pool.alloc(p);
            deq.enqueue(id, &mut p, None, &mut c);
        }
        let marks: Vec<bool> = std::iter::from_fn(|| deq.dequeue(&mut pool, &mut c))
            .map(|d| d.marked)
            .collect();
        assert_eq!(marks, [true, false], "the first leaves 4096 B behind, the second none");
    }

    /// The start of both coin tests: a 3-packet artifact queue (coin heads,
    /// then tails; the packet on the line counts) takes A, B and C, and A
    /// goes on the line.
    fn full_with_a_on_the_line(trimming: bool) -> (PacketPool, TwoClassQueue, Vec<(PacketId, Packet)>) {
        let mut pool = PacketPool::default();
        let mut q = artifact_queue(3, trimming, true, seed_heads_then_tails());
        let mut p = five(&mut pool);
        for (pid, pkt) in p.iter_mut().take(3) {
            assert_eq!(q.admit(*pid, pkt, false), Admission::Queued);
        }
        assert_eq!(q.next(&mut pool).map(|d| d.id), Some(p[0].0), "A on the line");
        (pool, q, p)
    }

    fn id(p: &[(PacketId, Packet)], i: usize) -> PacketId {
        p[i].0
    }

    /// REPS artifact, full queue (compositequeue.cpp `receivePacket`): the
    /// 3-packet queue holds A on the line plus B and C. D arrives, the coin
    /// says heads: C, the newest waiting, is pushed out and D takes the tail.
    /// E arrives, tails: E is dropped. The line then serves B and D.
    #[test]
    fn full_queue_coin_drops_newest_or_arrival() {
        let (mut pool, mut q, mut p) = full_with_a_on_the_line(false);
        let (d, pkt) = &mut p[3];
        assert_eq!(q.admit(*d, pkt, true), Admission::QueuedEvicting { marked: false });
        assert_eq!(
            q.take_victim(),
            Some(id(&p, 2)),
            "heads: C, the newest waiting, is pushed out"
        );
        assert_eq!(q.take_victim(), None);
        let (e, pkt) = &mut p[4];
        assert_eq!(q.admit(*e, pkt, true), Admission::Dropped, "tails: the arrival E");
        assert_eq!(q.take_victim(), None);
        let out: Vec<PacketId> = std::iter::from_fn(|| q.next(&mut pool)).map(|d| d.id).collect();
        assert_eq!(out, [id(&p, 1), id(&p, 3)], "B then D");
        assert_eq!((q.stats().drops, q.stats().pushed_out), (2, 1));
        assert_eq!(q.stats().max_bytes, 3 * 4096, "A, B and C waited together, never more");
    }

    /// With trimming, heads cuts the newest waiting packet to its header and
    /// sends it on in the control class (the artifact strips it and queues it
    /// high); tails trims the arrival as before.
    #[test]
    fn full_queue_coin_trims_newest_or_arrival() {
        let (mut pool, mut q, mut p) = full_with_a_on_the_line(true);
        let (d, pkt) = &mut p[3];
        assert_eq!(q.admit(*d, pkt, true), Admission::QueuedTrimming { marked: false });
        q.trim_victim(&mut pool);
        let c = pool.get(id(&p, 2));
        assert!(c.trimmed && c.size == 64, "C cut to its header in the pool");
        let (e, pkt) = &mut p[4];
        assert_eq!(q.admit(*e, pkt, true), Admission::Trimmed, "tails: E trimmed");
        let out: Vec<(PacketId, u32)> = std::iter::from_fn(|| q.next(&mut pool))
            .map(|d| (d.id, d.size))
            .collect();
        let want = [(id(&p, 2), 64), (id(&p, 4), 64), (id(&p, 1), 4096), (id(&p, 3), 4096)];
        assert_eq!(out, want, "the headers C and E first, then B and D");
        assert_eq!((q.stats().drops, q.stats().pushed_out), (0, 1));
    }

    /// The packet on the line counts only with `count_in_service`, and only
    /// while the line is busy: A on the line plus B and C waiting fill a
    /// 3-packet queue with it, not without it. A queue that is not full
    /// draws no coin.
    #[test]
    fn the_packet_on_the_line_counts_only_with_count_in_service() {
        for (count, busy, verdict) in [
            (false, true, Admission::Queued),
            (true, false, Admission::Queued),
            (true, true, Admission::Dropped),
        ] {
            let mut pool = PacketPool::default();
            // A seed whose first draw is tails: a full queue drops the arrival.
            let seed = (1..).find(|&s| Rng::new(s, StreamTag::Port, 0).unit() >= 0.5).unwrap();
            let mut q = artifact_queue(3, false, count, seed);
            let mut p = five(&mut pool);
            for (pid, pkt) in p.iter_mut().take(3) {
                q.admit(*pid, pkt, false);
            }
            q.next(&mut pool);
            let (d, pkt) = &mut p[3];
            assert_eq!(
                q.admit(*d, pkt, busy),
                verdict,
                "count_in_service {count}, line busy {busy}"
            );
            let untouched = Rng::new(seed, StreamTag::Port, 0).next_u64();
            let drew = q.rng.clone().next_u64() != untouched;
            assert_eq!(
                drew,
                verdict == Admission::Dropped,
                "the coin is drawn only for a full queue"
            );
        }
    }

    /// A queue without the coin never draws for a full queue: drop-tail runs
    /// keep every marking draw they had.
    #[test]
    fn drop_tail_draws_nothing_when_full() {
        let mut pool = PacketPool::default();
        let mut q = queue(8192, u64::MAX, u64::MAX, false, true);
        let before = q.rng.clone().next_u64();
        let mut p = five(&mut pool);
        let verdicts: Vec<Admission> = p.iter_mut().map(|(pid, pkt)| q.admit(*pid, pkt, true)).collect();
        assert_eq!(verdicts[2..], [Admission::Dropped; 3]);
        assert_eq!(q.rng.clone().next_u64(), before);
    }
}
