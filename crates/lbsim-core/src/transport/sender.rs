//! The sender half of the out-of-order reliable transport (REPS §2.1,
//! §4.1): per-packet state, retransmissions first, and loss detection.
//! Losses are found by a NACK (a trimmed header reached the receiver) or by
//! the retransmission timer. The timer is one lazy event per flow: the
//! sender logs its sends in order and the timer, when it fires, declares
//! every send older than the RTO that is still unacknowledged lost, then
//! re-arms at the next oldest deadline. The RTO is fixed, as in the REPS
//! artifact.
//!
//! The RDMA transports keep the same per-packet record but recover
//! differently (`transport::gbn`, `transport::irn`): cumulative ACKs, and
//! one timer restarted by every send and ACK, as RDMA NICs do (IB spec
//! o9-85).

use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PktState {
    Unsent,
    InFlight,
    /// To be sent again (a retransmission when it goes).
    Lost,
    Acked,
}

/// One packet's send record. Sending a packet writes all of it and its ACK
/// reads the state, so the three share a line: in three arrays a send cost
/// three cache misses on a large network. 12 bytes (`packed(4)`), the state
/// first so that a prefetch of the record's start covers it.
#[derive(Clone, Copy, Debug)]
#[repr(C, packed(4))]
pub(super) struct PktRecord {
    pub state: PktState,
    /// The EV it was last sent on, for balancers that learn from timeouts.
    pub ev: u16,
    sent_at: SimTime,
}

impl PktRecord {
    const UNSENT: PktRecord = PktRecord::sent(PktState::Unsent, SimTime::ZERO);

    pub const fn sent(state: PktState, at: SimTime) -> Self {
        PktRecord {
            state,
            ev: 0,
            sent_at: at,
        }
    }

    /// When it was last sent (a copy: the field may be unaligned).
    #[inline(always)]
    pub fn sent_at(&self) -> SimTime {
        self.sent_at
    }
}

/// How the sender finds and repairs losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Per-packet ACKs and NACKs, a timer per send (REPS §2.1).
    Sack,
    /// RoCE Go-Back-N (`transport::gbn`).
    GoBackN,
    /// IRN's selective repeat (`transport::irn`).
    Irn,
}

/// The RDMA transports' one retransmission timer: restarted by every send
/// and ACK; its RTO is `low` with at most `low_inflight` packets
/// outstanding, `high` otherwise (IRN; Go-Back-N has one RTO).
#[derive(Clone, Copy, Debug)]
pub struct RdmaTimer {
    pub low: SimTime,
    pub high: SimTime,
    pub low_inflight: u32,
    pub(super) deadline: SimTime,
}

impl RdmaTimer {
    pub fn new(low: SimTime, high: SimTime, low_inflight: u32) -> Self {
        RdmaTimer {
            low,
            high,
            low_inflight,
            deadline: SimTime::ZERO,
        }
    }
}

/// IRN's recovery episode: from the first NACK until the cumulative ACK
/// passes `until`; packets below `scan` were already judged this episode.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IrnEpisode {
    pub active: bool,
    pub until: u32,
    pub scan: u32,
    /// A NACK outside an episode rewinds (`transport.rdma.irn_recovery = "rewind"`).
    pub rewind: bool,
}

/// `repr(C)`: the fields stay in this order. A flow is aligned to a cache
/// line and starts with its sender (`Flow`), so what `Flow::can_send` reads
/// of it is the first line; sending and acknowledging read the next two;
/// only losses, timeout RTSs and the RDMA transports read the rest.
#[repr(C)]
pub struct Sender {
    // `can_send`'s line (64 bytes).
    /// The flow may send (it started and waits for nothing).
    pub active: bool,
    pub recovery: Recovery,
    /// `rtx` is kept in sequence order (`transport.rtx_order = "seq"`), else in loss order.
    rtx_by_seq: bool,
    /// `inflight_drift` is not zero (`transport.rts_in_flight = false`): a
    /// copy on this line, so the window check reads the drift only when there is one.
    pub(super) drifted: bool,
    pub npkts: u32,
    next_new: u32,
    /// `una` + `ooo_limit` as last computed: new packets below it may go.
    send_limit: u32,
    pub inflight: u64,
    /// When the last ACK arrived (`finish_time`); `SimTime::MAX` before.
    finished: SimTime,
    pub(super) rtx: VecDeque<u32>,
    // Sending and acknowledging.
    /// Per packet, by seq.
    pub(super) pkts: Vec<PktRecord>,
    pub(super) send_log: VecDeque<(SimTime, u32)>,
    /// snd_una: every packet below it is acknowledged (advanced lazily, only under an `ooo_limit`).
    una: u32,
    acked: u32,
    /// Sequence numbers in use: the message's packets, then the timeout
    /// RTSs' (`transport::timeout_rts`); the flow is done when all are acknowledged.
    pub(super) seqs: u32,
    payload: u32,
    header: u32,
    /// New packets go out only below `una` + this (MP-RDMA's Δ); u32::MAX: no limit.
    ooo_limit: u32,
    /// The message's bytes (for the last packet's size).
    size: u64,
    /// Largest RTT in the current tumbling window of 2·RTO (REPS App. A;
    /// the artifact keeps it this way in `processAck`).
    rtt_window_end: SimTime,
    rtt_window_max: SimTime,
    /// One bit per acknowledged packet, kept only once cumulative SACKs
    /// arrive (`on_sack` reads a whole bitmap's news from it at once).
    acked_bits: Vec<u64>,
    // Losses, timeout RTSs, RDMA.
    /// When the last timeout RTS went (`transport::timeout_rts`).
    pub(super) last_rts: Option<SimTime>,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub nacks: u64,
    pub(super) timer: RdmaTimer,
    pub(super) irn: IrnEpisode,
    /// An RTS's first send is not counted in flight (`transport.rts_in_flight = false`).
    pub(super) rts_uncounted: bool,
    /// Bytes taken off the in-flight count that were never on it: the REPS
    /// artifact's count, which goes below zero by these (`transport::timeout_rts`).
    pub(super) inflight_drift: u64,
    /// One bit per RTS seq (from `npkts`): it was resent, so now counted.
    pub(super) rts_resent: Vec<u64>,
}

/// What a newly arrived ACK did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    /// Bytes (on the wire) newly acknowledged; 0 for a duplicate.
    pub bytes: u64,
    pub all: bool,
}

impl Sender {
    /// A sender with its per-packet state allocated.
    pub fn new(size: u64, npkts: u32, mtu: u32, header: u32) -> Self {
        let mut s = Sender::deferred(size, npkts, mtu, header);
        s.allocate();
        s
    }

    /// A sender whose per-packet state is allocated when its flow starts
    /// (`allocate`): flows waiting for their start time hold none of it.
    pub fn deferred(size: u64, npkts: u32, mtu: u32, header: u32) -> Self {
        Sender {
            npkts,
            seqs: npkts,
            last_rts: None,
            payload: mtu - header,
            header,
            size,
            pkts: Vec::new(),
            next_new: 0,
            una: 0,
            ooo_limit: u32::MAX,
            send_limit: u32::MAX,
            rtx: VecDeque::new(),
            rtx_by_seq: false,
            drifted: false,
            rts_uncounted: false,
            inflight_drift: 0,
            rts_resent: Vec::new(),
            acked_bits: Vec::new(),
            send_log: VecDeque::new(),
            inflight: 0,
            acked: 0,
            rtt_window_end: SimTime::ZERO,
            rtt_window_max: SimTime::ZERO,
            active: false,
            finished: SimTime::MAX,
            retransmissions: 0,
            timeouts: 0,
            nacks: 0,
            recovery: Recovery::Sack,
            timer: RdmaTimer::new(SimTime::ZERO, SimTime::ZERO, 0),
            irn: IrnEpisode::default(),
        }
    }

    /// Allocate the per-packet state, before the first send (a no-op once
    /// allocated, and after the sender finished).
    pub fn allocate(&mut self) {
        if self.pkts.is_empty() && !self.is_done() {
            self.pkts = vec![PktRecord::UNSENT; self.npkts as usize];
        }
    }

    /// Bytes of per-packet state it holds now.
    pub fn state_bytes(&self) -> usize {
        self.pkts.capacity() * std::mem::size_of::<PktRecord>()
            + (self.acked_bits.capacity() + self.rts_resent.capacity()) * std::mem::size_of::<u64>()
    }

    /// Recover as an RDMA transport does, with this timer.
    pub fn set_rdma(&mut self, recovery: Recovery, timer: RdmaTimer) {
        self.recovery = recovery;
        self.timer = timer;
    }

    /// IRN's recovery rewinds to the cumulative ACK (the ConWeave artifact's).
    pub fn set_irn_rewind(&mut self, on: bool) {
        self.irn.rewind = on;
    }

    /// Wire size of a header-only packet (a timeout RTS).
    pub fn header(&self) -> u32 {
        self.header
    }

    /// Wire size of a full packet.
    pub fn mtu(&self) -> u32 {
        self.payload + self.header
    }

    /// Wire size of packet `seq`: its share of the payload plus the header.
    #[inline]
    pub fn wire_size(&self, seq: u32) -> u32 {
        self.payload_of(seq) + self.header
    }

    /// Payload bytes packet `seq` carries (the last one at least one byte;
    /// a timeout RTS's seq, beyond the message, none).
    #[inline]
    pub fn payload_of(&self, seq: u32) -> u32 {
        if seq + 1 < self.npkts {
            self.payload
        } else if seq + 1 == self.npkts {
            (self.size - (self.npkts as u64 - 1) * self.payload as u64).max(1) as u32
        } else {
            0
        }
    }

    #[inline]
    pub fn is_done(&self) -> bool {
        self.finished != SimTime::MAX
    }

    /// In flight as the window sees it: less the drift of the artifact's
    /// count (`transport.rts_in_flight = false`; none otherwise).
    #[inline]
    pub fn window_inflight(&self) -> u64 {
        match self.drifted {
            false => self.inflight,
            true => self.inflight.saturating_sub(self.inflight_drift),
        }
    }

    /// When the last ACK arrived.
    pub fn finish_time(&self) -> Option<SimTime> {
        self.is_done().then_some(self.finished)
    }

    /// Drop retransmission entries whose packet got acknowledged meanwhile.
    #[inline]
    pub(super) fn clean_rtx_front(&mut self) {
        while let Some(&s) = self.rtx.front() {
            if self.pkts[s as usize].state == PktState::Lost {
                break;
            }
            self.rtx.pop_front();
        }
    }

    /// Active, not done, and a packet waits to be sent (new or retransmission).
    #[inline]
    pub fn has_work(&mut self) -> bool {
        if !self.active || self.is_done() {
            return false;
        }
        self.clean_rtx_front();
        !self.rtx.is_empty() || self.next_new < self.npkts
    }

    /// A retransmission is always below snd_una + Δ (it was sent once when
    /// snd_una was no higher); a new packet must be.
    #[inline]
    pub fn within_ooo_limit(&mut self) -> bool {
        self.next_new < self.send_limit || !self.rtx.is_empty() || self.raise_send_limit()
    }

    /// Advance snd_una past acknowledged packets and recompute the bound.
    #[cold]
    fn raise_send_limit(&mut self) -> bool {
        while self.una < self.next_new && self.pkts[self.una as usize].state == PktState::Acked {
            self.una += 1;
        }
        self.send_limit = self.una.saturating_add(self.ooo_limit);
        self.next_new < self.send_limit
    }

    /// Resend lost packets lowest sequence number first (`transport.rtx_order = "seq"`).
    pub fn set_rtx_by_seq(&mut self, on: bool) {
        self.rtx_by_seq = on;
    }

    /// `transport.rts_in_flight = false`: see `transport::timeout_rts`.
    pub fn set_rts_uncounted(&mut self, on: bool) {
        self.rts_uncounted = on;
    }

    /// Queue lost packet `seq` for retransmission, in loss or sequence order.
    fn queue_rtx(&mut self, seq: u32) {
        if self.rtx_by_seq {
            // Entries acknowledged meanwhile may linger; the order among the rest holds.
            let at = self.rtx.partition_point(|&s| s < seq);
            self.rtx.insert(at, seq);
        } else {
            self.rtx.push_back(seq);
        }
    }

    /// MP-RDMA's Δ: no new packet at or beyond snd_una + Δ.
    pub fn set_ooo_limit(&mut self, delta: u32) {
        self.ooo_limit = delta;
        self.send_limit = self.una.saturating_add(delta);
    }

    /// Sends still to make: retransmissions queued plus new packets (an EQDS RTS asks credit for them).
    pub fn pending_sends(&self) -> u32 {
        self.rtx.len() as u32 + (self.npkts - self.next_new)
    }

    /// Take the next packet to send (retransmissions first): (seq, wire size, is retransmission).
    #[inline]
    pub fn take_next(&mut self, now: SimTime) -> (u32, u32, bool) {
        self.clean_rtx_front();
        let (seq, rtx) = match self.rtx.pop_front() {
            Some(s) => (s, true),
            None => {
                self.next_new += 1;
                let seq = self.next_new - 1;
                // Go-Back-N resends rewound packets in order, as new ones.
                (seq, self.pkts[seq as usize].state == PktState::Lost)
            }
        };
        let size = self.wire_size(seq);
        let rec = &mut self.pkts[seq as usize];
        rec.state = PktState::InFlight;
        rec.sent_at = now;
        if self.recovery == Recovery::Sack {
            self.send_log.push_back((now, seq));
        } else {
            self.restart_timer(now);
        }
        self.inflight += size as u64;
        if rtx {
            self.retransmissions += 1;
        }
        (seq, size, rtx)
    }

    /// The load balancer put packet `seq` on `ev`.
    #[inline]
    pub fn record_ev(&mut self, seq: u32, ev: u16) {
        self.pkts[seq as usize].ev = ev;
    }

    /// Record an RTT sample into the tumbling 2·RTO window.
    #[inline]
    pub fn record_rtt(&mut self, now: SimTime, rtt: SimTime, rto: SimTime) {
        if now > self.rtt_window_end {
            self.rtt_window_max = SimTime::ZERO;
            self.rtt_window_end = now + rto * 2;
        }
        self.rtt_window_max = self.rtt_window_max.max(rtt);
    }

    /// Packet `seq` was sent and is neither acknowledged nor declared lost.
    #[inline]
    pub fn is_outstanding(&self, seq: u32) -> bool {
        self.pkts[seq as usize].state == PktState::InFlight
    }

    /// The largest RTT sampled in the current window (REPS App. A's input).
    pub fn recent_max_rtt(&self) -> SimTime {
        self.rtt_window_max
    }

    pub fn on_ack(&mut self, seq: u32) -> Acked {
        let st = self.pkts[seq as usize].state;
        if !matches!(st, PktState::InFlight | PktState::Lost) {
            return Acked::default();
        }
        let size = self.wire_size(seq) as u64;
        if st == PktState::InFlight {
            self.inflight -= size;
        }
        self.pkts[seq as usize].state = PktState::Acked;
        self.acked += 1;
        if let Some(w) = self.acked_bits.get_mut((seq / 64) as usize) {
            *w |= 1 << (seq % 64);
        }
        Acked {
            bytes: size,
            all: self.acked == self.seqs,
        }
    }

    /// A coalesced ACK: every seq it covers.
    pub fn on_ack_all(&mut self, seqs: &[u32]) -> Acked {
        let mut total = Acked::default();
        for &seq in seqs {
            let one = self.on_ack(seq);
            total.bytes += one.bytes;
            total.all |= one.all;
        }
        total
    }

    /// snd_una (see the field).
    #[inline(always)]
    pub(super) fn first_unacked(&self) -> u32 {
        self.una
    }

    /// Ask the cache for the state of packet `seq` (an ACK for it is coming).
    #[inline(always)]
    pub fn prefetch_seq(&self, seq: u32) {
        if let Some(st) = self.pkts.get(seq as usize) {
            crate::cache::prefetch(st);
        }
    }

    /// A cumulative SACK: every seq below `cumulative`, and `base + i` for
    /// each bit i of `bitmap` (the REPS artifact's `handleCumulativeAck`
    /// and `handleAckno`). A packet waiting to be resent is acknowledged
    /// too, and not resent.
    pub fn on_sack(&mut self, cumulative: u32, base: u32, bitmap: u64) -> Acked {
        let mut total = Acked::default();
        let mut add = |one: Acked| {
            total.bytes += one.bytes;
            total.all |= one.all;
        };
        while self.una < cumulative.min(self.npkts) {
            add(self.on_ack(self.una));
            self.una += 1;
        }
        if self.acked_bits.is_empty() {
            self.acked_bits = vec![0; (self.npkts as usize).div_ceil(64) + 1];
            for (seq, _) in self.pkts.iter().enumerate().filter(|(_, r)| r.state == PktState::Acked) {
                self.acked_bits[seq / 64] |= 1 << (seq % 64);
            }
        }
        // Only the bits of packets not acknowledged yet are news.
        let (w, off) = ((base / 64) as usize, base % 64);
        let word = |i: usize| self.acked_bits.get(i).copied().unwrap_or(0);
        let known = match off {
            0 => word(w),
            _ => word(w) >> off | word(w + 1) << (64 - off),
        };
        let mut bits = bitmap & !known;
        while bits != 0 {
            let seq = base + bits.trailing_zeros();
            bits &= bits - 1;
            if seq >= self.una && seq < self.npkts {
                add(self.on_ack(seq));
            }
        }
        total
    }

    /// A NACK for `seq` (its trimmed header reached the receiver): queue it
    /// again. Returns the packet's size if it was in flight.
    pub fn on_nack(&mut self, seq: u32) -> Option<u64> {
        if self.pkts[seq as usize].state != PktState::InFlight {
            return None;
        }
        let size = self.wire_size(seq) as u64;
        self.inflight -= size;
        self.pkts[seq as usize].state = PktState::Lost;
        self.queue_rtx(seq);
        self.nacks += 1;
        Some(size)
    }

    /// Timer fired at `now`: declare lost every in-flight send older than
    /// `rto`. Returns the size and EV of each packet declared lost (via
    /// `lost`) and the next deadline to re-arm at, if any send is still
    /// outstanding.
    pub fn on_timer(&mut self, now: SimTime, rto: SimTime, lost: &mut Vec<(u64, u16)>) -> Option<SimTime> {
        while let Some(&(t, seq)) = self.send_log.front() {
            let rec = self.pkts[seq as usize];
            let live = rec.state == PktState::InFlight && rec.sent_at() == t;
            if !live {
                self.send_log.pop_front();
                continue;
            }
            if t + rto > now {
                return Some(t + rto);
            }
            self.send_log.pop_front();
            let size = self.wire_size(seq) as u64;
            if seq >= self.npkts && !self.rts_counted(seq) {
                self.add_drift(size);
            } else {
                self.inflight -= size;
            }
            self.pkts[seq as usize].state = PktState::Lost;
            self.queue_rtx(seq);
            self.timeouts += 1;
            lost.push((size, rec.ev));
        }
        None
    }

    /// An RDMA cumulative ACK: every packet below `cumulative` arrived.
    pub(super) fn ack_below(&mut self, cumulative: u32, now: SimTime) -> Acked {
        let mut out = Acked::default();
        while self.una < cumulative.min(self.npkts) {
            let seq = self.una;
            let st = self.pkts[seq as usize].state;
            if st != PktState::Acked {
                let size = self.wire_size(seq) as u64;
                if st == PktState::InFlight {
                    self.inflight -= size;
                }
                self.pkts[seq as usize].state = PktState::Acked;
                self.acked += 1;
                out.bytes += size;
            }
            self.una += 1;
        }
        self.next_new = self.next_new.max(self.una);
        self.send_limit = self.una.saturating_add(self.ooo_limit);
        out.all = self.acked == self.npkts;
        self.restart_timer(now);
        out
    }

    /// Packets sent and not yet cumulatively acknowledged.
    #[inline]
    pub(super) fn outstanding(&self) -> u32 {
        self.next_new - self.una
    }

    /// The RDMA timer starts over from `now`.
    #[inline]
    pub(super) fn restart_timer(&mut self, now: SimTime) {
        let t = &self.timer;
        let rto = if self.outstanding() <= t.low_inflight {
            t.low
        } else {
            t.high
        };
        self.timer.deadline = now + rto;
    }

    pub(super) fn state_of(&self, seq: u32) -> PktState {
        self.pkts[seq as usize].state
    }

    /// Declare an in-flight packet lost; `queue`: resend it ahead of new
    /// data (IRN) rather than in order from `next_new` (Go-Back-N).
    pub(super) fn declare_lost(&mut self, seq: u32, queue: bool) -> bool {
        if self.pkts[seq as usize].state != PktState::InFlight {
            return false;
        }
        self.inflight -= self.wire_size(seq) as u64;
        self.pkts[seq as usize].state = PktState::Lost;
        if queue {
            self.queue_rtx(seq);
        }
        true
    }

    /// The RDMA timer fired: (packets it declared lost, when to look again).
    pub fn on_rdma_timer(&mut self, now: SimTime) -> (u64, Option<SimTime>) {
        if self.is_done() || (self.outstanding() == 0 && self.rtx.is_empty()) {
            return (0, None);
        }
        if now < self.timer.deadline {
            return (0, Some(self.timer.deadline));
        }
        let lost = match self.recovery {
            Recovery::GoBackN => self.rewind(self.una),
            Recovery::Irn => self.irn_timeout(),
            Recovery::Sack => unreachable!("the SACK sender times each send"),
        };
        self.timeouts += lost;
        self.restart_timer(now);
        (lost, Some(self.timer.deadline))
    }

    /// When a newly armed timer must first fire: one RTO after a send
    /// (`sack_due`), or the RDMA timer's own deadline.
    #[inline]
    pub fn timer_due(&self, sack_due: SimTime) -> SimTime {
        match self.recovery {
            Recovery::Sack => sack_due,
            _ => self.timer.deadline,
        }
    }

    pub(super) fn next_new(&self) -> u32 {
        self.next_new
    }

    pub(super) fn set_next_new(&mut self, seq: u32) {
        self.next_new = seq;
    }

    pub(super) fn una(&self) -> u32 {
        self.una
    }

    /// Every ACK arrived: release per-packet state.
    pub fn finish(&mut self, now: SimTime) {
        self.finished = now;
        self.pkts = Vec::new();
        self.rtx = VecDeque::new();
        self.acked_bits = Vec::new();
        self.send_log = VecDeque::new();
        self.rts_resent = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(npkts: u32) -> Sender {
        let mut s = Sender::new(npkts as u64 * 4032 - 100, npkts, 4096, 64);
        s.active = true;
        s
    }

    /// `transport.rtx_order`: packets lost in the order 5, 2, 7 (a packet
    /// acknowledged while queued, 4, is skipped) are resent 5, 2, 7 in loss
    /// order and 2, 5, 7 in sequence order (the REPS artifact's).
    #[test]
    fn retransmission_order_is_loss_or_sequence() {
        for (by_seq, expect) in [(false, [5, 2, 7]), (true, [2, 5, 7])] {
            let mut s = sender(9);
            s.set_rtx_by_seq(by_seq);
            for i in 0..8 {
                s.take_next(SimTime::from_us(i));
            }
            for seq in [5, 4, 2, 7] {
                s.on_nack(seq);
            }
            s.on_ack(4);
            let resent: Vec<u32> = (0..3)
                .map(|i| s.take_next(SimTime::from_us(10 + i)))
                .map(|(q, _, rtx)| {
                    assert!(rtx);
                    q
                })
                .collect();
            assert_eq!(resent, expect, "by seq: {by_seq}");
            assert_eq!(
                s.take_next(SimTime::from_us(20)),
                (8, s.wire_size(8), false),
                "then new data"
            );
        }
    }

    /// Exact packet sequences: a NACKed packet goes next; a timer declares
    /// lost exactly the sends older than the RTO, oldest first, and re-arms
    /// at the next deadline.
    #[test]
    fn retransmissions_go_first_and_the_timer_takes_only_overdue_sends() {
        let rto = SimTime::from_us(10);
        let mut s = sender(4);
        let sends: Vec<u32> = (0..3).map(|i| s.take_next(SimTime::from_us(i)).0).collect();
        assert_eq!(sends, [0, 1, 2]);
        assert_eq!(s.on_nack(1), Some(4096));
        assert_eq!(s.on_nack(1), None, "only an in-flight packet is queued again");
        assert_eq!(s.take_next(SimTime::from_us(3)), (1, 4096, true));
        assert_eq!(s.take_next(SimTime::from_us(4)).0, 3, "then new data");
        assert_eq!(s.wire_size(3), 4032 - 100 + 64, "the last packet carries the rest");
        let mut lost = Vec::new();
        // At 11 us packet 0 (sent at 0) is overdue; 2 (sent at 2 us) is not.
        let next = s.on_timer(SimTime::from_us(11), rto, &mut lost);
        assert_eq!(lost.len(), 1);
        assert_eq!(next, Some(SimTime::from_us(12)));
        assert_eq!(
            s.take_next(SimTime::from_us(11)).0,
            0,
            "the timed-out packet goes again"
        );
        assert_eq!(s.timeouts, 1);
        assert_eq!(s.retransmissions, 2);
    }

    /// A cumulative SACK acknowledges everything below its cumulative ACK and
    /// every bit of its bitmap, and nothing else: here seq 1 stays out and
    /// is the only packet the timer then declares lost.
    #[test]
    fn a_cumulative_sack_covers_packets_whose_own_acks_were_lost() {
        let rto = SimTime::from_us(10);
        let mut s = sender(6);
        for i in 0..5 {
            s.take_next(SimTime::from_us(i));
        }
        // Cumulative 1, bitmap from 2: seqs 2 and 3 (4 still on its way).
        let acked = s.on_sack(1, 2, 0b11);
        assert_eq!((acked.bytes, acked.all), (3 * 4096, false));
        assert_eq!(s.on_sack(1, 2, 0b11).bytes, 0, "nothing new the second time");
        assert_eq!(s.inflight, 2 * 4096, "1 and 4");
        let mut lost = Vec::new();
        assert_eq!(
            s.on_timer(SimTime::from_us(12), rto, &mut lost),
            Some(SimTime::from_us(14))
        );
        assert_eq!((lost.len(), s.take_next(SimTime::from_us(12)).0), (1, 1));
        // The last ACK: everything below 6.
        s.take_next(SimTime::from_us(13));
        assert!(s.on_sack(6, 7, 0).all);
        assert_eq!(s.inflight, 0);
    }

    #[test]
    fn acks_count_once_and_finish_the_message() {
        let mut s = sender(2);
        s.take_next(SimTime::ZERO);
        s.take_next(SimTime::ZERO);
        assert_eq!(s.on_ack(0).bytes, 4096);
        assert_eq!(s.on_ack(0).bytes, 0, "a duplicate acknowledges nothing");
        let last = s.on_ack_all(&[0, 1]);
        assert!(last.all);
        assert_eq!(s.inflight, 0);
        assert!(!s.has_work());
    }
}
