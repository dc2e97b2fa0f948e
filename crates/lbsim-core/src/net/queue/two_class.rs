//! The REPS/htsim switch queue: two classes with strict priority, control
//! (ACK, NACK, credits, RTS, trimmed headers) ahead of data. Only the data
//! class has a byte capacity; control packets are a few tens of bytes and
//! are never dropped here. A data packet that does not fit is dropped or,
//! with trimming, cut to its header and sent on in the control class.
//! ECN marks are RED-style on the data backlog, at dequeue (the REPS and
//! ARCANE papers' choice, the artifact's `CompositeQueue`) or at enqueue.

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
    };
}

pub struct TwoClassQueue {
    pub params: QueueParams,
    /// Waiting packets with their wire size.
    control: VecDeque<(PacketId, u32)>,
    data: VecDeque<(PacketId, u32)>,
    data_bytes: u64,
    /// The port's marking stream (`StreamTag::Port`).
    rng: Rng,
    stats: QueueStats,
}

impl TwoClassQueue {
    pub fn new(params: QueueParams, rng: Rng) -> Self {
        TwoClassQueue {
            params,
            control: VecDeque::new(),
            data: VecDeque::new(),
            data_bytes: 0,
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
    /// `enqueue` without a context: this queue needs none (the engine's fast path).
    #[inline]
    pub fn admit(&mut self, id: PacketId, pkt: &mut Packet) -> Admission {
        if pkt.is_priority() {
            self.control.push_back((id, pkt.size));
            return Admission::Queued;
        }
        if self.data_bytes + pkt.size as u64 > self.params.capacity {
            if !self.params.trimming {
                self.stats.drops += 1;
                return Admission::Dropped;
            }
            pkt.trimmed = true;
            pkt.size = self.params.header_bytes;
            self.control.push_back((id, pkt.size));
            return Admission::Trimmed;
        }
        let marked = !self.params.ecn_at_dequeue && self.ecn_mark(self.data_bytes);
        if marked {
            pkt.ecn = true;
        }
        self.data_bytes += pkt.size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.data_bytes);
        self.stats.window_max = self.stats.window_max.max(self.data_bytes);
        self.data.push_back((id, pkt.size));
        if marked {
            Admission::Marked
        } else {
            Admission::Queued
        }
    }

    /// Where the next packet out waits (for a prefetch).
    #[inline(always)]
    pub fn head(&self) -> Option<&(PacketId, u32)> {
        self.control.front().or_else(|| self.data.front())
    }

    /// `dequeue` without a context (the engine's fast path).
    #[inline]
    pub fn next(&mut self, pool: &mut PacketPool) -> Option<Dequeued> {
        if let Some((id, size)) = self.control.pop_front() {
            return Some(Dequeued {
                id,
                size,
                marked: false,
            });
        }
        let (id, size) = self.data.pop_front()?;
        self.data_bytes -= size as u64;
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
        self.admit(id, pkt)
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

    fn stats(&self) -> &QueueStats {
        &self.stats
    }

    fn take_window_max(&mut self) -> u64 {
        let max = self.stats.window_max.max(self.data_bytes);
        self.stats.window_max = self.data_bytes;
        max
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
        };
        TwoClassQueue::new(params, Rng::new(1, StreamTag::Port, 0))
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
}
