//! The receiver half of a transport: which arrivals it accepts and how it
//! answers them (its ACK policy). The engine calls only the `Receive`
//! interface; a transport with another rule (Go-Back-N, IRN) is a new
//! implementation and one `Receiver` variant.
//!
//! `Sack` is the out-of-order tolerant receiver of Ultra Ethernet (REPS
//! §2.1, §3.1): it accepts packets in any order and acknowledges each one,
//! echoing its entropy value and ECN mark; a trimmed header gets a NACK at
//! once. With `transport.ack_ratio` n > 1 it sends one ACK per n packets
//! (REPS §4.5.1), at once for the packet that ends the message and for any
//! after it is whole, and `transport.ack_delay` bounds how long a partial
//! batch waits (`transport::ack_coalescing`).
//!
//! With `transport.ack_info = "cumulative_sack"` every ACK says what the
//! REPS artifact's ACK says (htsim uec.cpp `UecSink::processData`, `sack`,
//! `sackBitmapBase`): the cumulative ACK (the lowest seq not yet received)
//! and a 64-packet bitmap of what arrived from a base at or above it, so the
//! sender learns of a packet whose own ACK was lost from the next ACK. The
//! receiver logs each such ACK's contents (`SackRecord`) and the ACK names
//! its log position; a duplicate is answered too, as in the artifact.

use super::ack_coalescing::{AckLog, Trigger};
pub use super::gbn::GoBackN;
pub use super::irn::Irn;
use crate::packet::{Packet, PacketKind};
use crate::scenario::TransportKind;
use crate::time::SimTime;

/// Run-wide ACK settings.
#[derive(Clone, Copy, Debug)]
pub struct AckPolicy {
    /// One ACK per this many data packets (REPS §4.5.1); 1: every packet.
    pub ratio: u32,
    /// Longest a partial batch waits; None: until it fills or the message ends.
    pub delay: Option<SimTime>,
    /// RDMA receivers: at most one NACK per gap per this.
    pub nack_interval: SimTime,
    /// RDMA receivers: an out-of-order arrival also asks for a rate cut (CNP).
    pub cnp_on_ooo: bool,
    /// IRN receivers answer an in-order or duplicate arrival with a NACK while
    /// a gap remains above it (the ConWeave artifact, `irn_recovery = "rewind"`).
    pub irn_nack_in_recovery: bool,
    /// SACK receiver: ACKs carry a cumulative ACK and a bitmap (`SackRecord`).
    pub cumulative: bool,
    /// Under coalescing, an ECN-marked arrival is acknowledged at once.
    pub marked_at_once: bool,
}

/// What one cumulative SACK tells the sender (the REPS artifact's ACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackRecord {
    /// The data packet it answers (its RTT sample and echoed EV).
    pub trigger: u32,
    /// Every seq below this arrived.
    pub cumulative: u32,
    /// Bit i: seq `bitmap_base(..) + i` arrived.
    pub bitmap: u64,
}

/// The first seq of a cumulative SACK's bitmap: the 64 packets ending at the
/// trigger, but none at or below the cumulative ACK; a trigger that is
/// ECN-marked or asked for an ACK at once starts the bitmap at itself
/// (artifact `UecSink::processData`: `(ecn || pkt.ar()) ? epsn : sackBitmapBase(epsn)`).
#[inline]
pub fn bitmap_base(trigger: u32, cumulative: u32, from_trigger: bool) -> u32 {
    if from_trigger {
        trigger
    } else {
        trigger.saturating_sub(63).max(cumulative + 1)
    }
}

/// How the receiver answers an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Nothing now.
    Nothing,
    /// Answer this packet with a packet of this kind (ACK or NACK) echoing it.
    Echo(PacketKind),
    /// Acknowledge the pending batch (`Receive::take_batch`).
    Batch,
    /// Nothing now; call `on_flush` at this time.
    FlushAt(SimTime),
    /// A cumulative SACK: the receiver's log entry at this position (`SackRecord`).
    Sack(u32),
    /// An RDMA answer (ACK or NACK): every packet below `cumulative` arrived;
    /// a NACK's `sacked` > 0 says packet `cumulative + sacked` arrived too
    /// (IRN); `cnp` asks the sender to cut its rate.
    Cumulative {
        kind: PacketKind,
        cumulative: u32,
        sacked: u16,
        cnp: bool,
    },
}

/// What a data arrival did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Its payload was new to the receiver.
    pub new: bool,
    /// It completed the message.
    pub complete: bool,
    pub reply: Reply,
}

/// A batch of coalesced ACKs: the log position and length it covers, and the packet it echoes.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    pub start: u32,
    pub span: u16,
    pub echo: Trigger,
}

pub trait Receive {
    /// A data packet (or trimmed header) of this flow, a message of `npkts` packets, arrived.
    fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, policy: &AckPolicy) -> Arrival;
    /// A flush it asked for is due: `Batch` to acknowledge now, `FlushAt` to wait more.
    /// (Receivers that never coalesce never ask for one.)
    fn on_flush(&mut self, _now: SimTime, _policy: &AckPolicy) -> Reply {
        Reply::Nothing
    }
    /// Close the pending batch for an ACK to carry.
    fn take_batch(&mut self) -> Batch {
        unreachable!("this receiver never replies with a batch")
    }
    /// The seqs a batch acknowledges (the sender reads them through the ACK).
    fn covered(&self, _start: u32, _span: u16) -> &[u32] {
        &[]
    }
    /// What the cumulative SACK at log position `index` said (None: too old, forgotten).
    fn sack_record(&self, _index: u32) -> Option<SackRecord> {
        unreachable!("this receiver never sends cumulative SACKs")
    }
    /// Close the pending batch with a cumulative SACK: (its log position, what it echoes).
    fn take_sack(&mut self, _npkts: u32) -> (u32, Trigger) {
        unreachable!("this receiver never sends cumulative SACKs")
    }
    /// A timeout RTS of this flow (or its resend as data), a seq beyond
    /// the message's `npkts` packets (`transport::timeout_rts`): answer it at once.
    fn on_rts(&mut self, _pkt: &Packet, _npkts: u32, _policy: &AckPolicy) -> Reply {
        unreachable!("only the sack transport's senders send timeout RTSs")
    }
    /// When the message became whole.
    fn finish(&self) -> Option<SimTime>;
    /// The sender has every ACK it needs: free what the receiver keeps for it.
    fn release(&mut self);
    /// The flow starts: allocate per-packet state for a message of `npkts` packets.
    fn allocate(&mut self, _npkts: u32) {}
}

/// The receivers lbsim has (`transport.kind`).
pub enum Receiver {
    Sack(Sack),
    Gbn(GoBackN),
    Irn(Irn),
    #[cfg(test)]
    InOrder(tests::InOrder),
}

impl Receiver {
    /// The receiver `transport.kind` names, its per-packet state allocated
    /// when the flow starts (`Receive::allocate`).
    pub fn of(kind: TransportKind) -> Receiver {
        match kind {
            TransportKind::Sack => Receiver::Sack(Sack::new(0)),
            TransportKind::Gbn => Receiver::Gbn(GoBackN::default()),
            TransportKind::Irn => Receiver::Irn(Irn::new(0)),
            #[cfg(test)]
            TransportKind::InOrder => Receiver::InOrder(tests::InOrder::new()),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $r:ident => $e:expr) => {
        match $self {
            Receiver::Sack($r) => $e,
            Receiver::Gbn($r) => $e,
            Receiver::Irn($r) => $e,
            #[cfg(test)]
            Receiver::InOrder($r) => $e,
        }
    };
}

impl Receive for Receiver {
    #[inline]
    fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, policy: &AckPolicy) -> Arrival {
        dispatch!(self, r => r.on_data(pkt, npkts, now, policy))
    }
    fn on_flush(&mut self, now: SimTime, policy: &AckPolicy) -> Reply {
        dispatch!(self, r => r.on_flush(now, policy))
    }
    fn take_batch(&mut self) -> Batch {
        dispatch!(self, r => r.take_batch())
    }
    fn covered(&self, start: u32, span: u16) -> &[u32] {
        dispatch!(self, r => r.covered(start, span))
    }
    #[inline]
    fn sack_record(&self, index: u32) -> Option<SackRecord> {
        dispatch!(self, r => r.sack_record(index))
    }
    fn take_sack(&mut self, npkts: u32) -> (u32, Trigger) {
        dispatch!(self, r => r.take_sack(npkts))
    }
    fn on_rts(&mut self, pkt: &Packet, npkts: u32, policy: &AckPolicy) -> Reply {
        dispatch!(self, r => r.on_rts(pkt, npkts, policy))
    }
    #[inline]
    fn finish(&self) -> Option<SimTime> {
        dispatch!(self, r => r.finish())
    }
    fn release(&mut self) {
        dispatch!(self, r => r.release())
    }
    fn allocate(&mut self, npkts: u32) {
        dispatch!(self, r => r.allocate(npkts))
    }
}

/// The out-of-order tolerant receiver (module docs).
pub struct Sack {
    /// One bit per packet received.
    got: Vec<u64>,
    count: u32,
    finish: Option<SimTime>,
    /// Seqs received and their coalesced ACKs (`ratio` > 1).
    log: AckLog,
    /// The lowest seq not yet received (kept with `cumulative` ACKs only).
    cumulative: u32,
    /// The latest cumulative SACKs sent (a ring of `SACK_LOG` at most).
    sacks: Vec<SackRecord>,
    sacks_sent: u32,
}

/// Cumulative SACKs a receiver remembers (a message of fewer packets: its
/// packet count rounded up to a power of two): an ACK that reaches its sender
/// after that many newer ACKs of its flow were sent reads as saying nothing,
/// and the ACKs after it cover what it said. It would have to wait behind
/// that many of its own flow's arrivals; control packets have priority, so
/// it does not happen in lbsim's scenarios.
const SACK_LOG: u32 = 256;

impl Sack {
    /// Ask the cache for what data packet `seq` arriving touches: its word
    /// of the arrival bitmap and the SACK record it may write.
    #[inline(always)]
    pub fn prefetch_arrival(&self, seq: u32) {
        if let Some(word) = self.got.get((seq / 64) as usize) {
            crate::cache::prefetch(word);
        }
        self.prefetch_record(self.sacks_sent);
    }

    /// Ask the cache for SACK record `index` (what a `SackAck` names).
    #[inline(always)]
    pub fn prefetch_record(&self, index: u32) {
        if let Some(record) = self.sacks.get((index as usize) & self.sacks.len().wrapping_sub(1)) {
            crate::cache::prefetch(record);
        }
    }

    pub fn new(npkts: u32) -> Self {
        Sack {
            got: vec![0; (npkts as usize).div_ceil(64)],
            count: 0,
            finish: None,
            log: AckLog::default(),
            cumulative: 0,
            sacks: Vec::new(),
            sacks_sent: 0,
        }
    }

    /// Log the cumulative SACK answering packet `trigger` and say where.
    fn log_sack(&mut self, trigger: u32, from_trigger: bool, npkts: u32) -> Reply {
        if self.sacks.is_empty() {
            let len = npkts.next_power_of_two().min(SACK_LOG);
            self.sacks = vec![SackRecord::default(); len as usize];
        }
        let base = bitmap_base(trigger, self.cumulative, from_trigger);
        let index = self.sacks_sent;
        let mask = self.sacks.len() as u32 - 1;
        self.sacks[(index & mask) as usize] = SackRecord {
            trigger,
            cumulative: self.cumulative,
            bitmap: self.bits_from(base),
        };
        self.sacks_sent += 1;
        Reply::Sack(index)
    }

    /// Whether `seq` arrived (every packet has once the message is whole).
    #[inline]
    fn received(&self, seq: u32) -> bool {
        self.finish.is_some() || self.got[(seq / 64) as usize] & (1 << (seq % 64)) != 0
    }

    /// The 64 received bits from seq `base` on (none once the message is
    /// whole: the cumulative ACK then covers everything).
    fn bits_from(&self, base: u32) -> u64 {
        if self.finish.is_some() {
            return 0;
        }
        let (w, off) = ((base / 64) as usize, base % 64);
        let word = |i: usize| self.got.get(i).copied().unwrap_or(0);
        let low = word(w) >> off;
        if off == 0 {
            low
        } else {
            low | word(w + 1) << (64 - off)
        }
    }

    /// Mark `seq` received: (it was new, it completed the message).
    /// `cumulative`: also advance the cumulative ACK.
    fn accept(&mut self, seq: u32, npkts: u32, now: SimTime, cumulative: bool) -> (bool, bool) {
        if self.finish.is_some() {
            return (false, false);
        }
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if self.got[w] & (1 << b) != 0 {
            return (false, false);
        }
        self.got[w] |= 1 << b;
        self.count += 1;
        if self.count < npkts {
            if cumulative && seq == self.cumulative {
                while self.received(self.cumulative) {
                    self.cumulative += 1;
                }
            }
            return (true, false);
        }
        self.finish = Some(now);
        self.got = Vec::new();
        self.cumulative = npkts;
        (true, true)
    }
}

impl Receive for Sack {
    #[inline]
    fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, policy: &AckPolicy) -> Arrival {
        if pkt.trimmed {
            let reply = Reply::Echo(PacketKind::Nack);
            return Arrival {
                new: false,
                complete: false,
                reply,
            };
        }
        let (new, complete) = self.accept(pkt.seq, npkts, now, policy.cumulative);
        if policy.ratio <= 1 {
            let reply = match policy.cumulative {
                true => self.log_sack(pkt.seq, pkt.ecn || pkt.ack_requested(), npkts),
                false => Reply::Echo(PacketKind::Ack),
            };
            return Arrival { new, complete, reply };
        }
        let trigger = Trigger {
            ev: pkt.ev,
            ecn: pkt.ecn,
            ack_requested: pkt.ack_requested(),
            route: pkt.route,
            sent_at: pkt.sent_at,
        };
        let pending = self.log.push(pkt.seq, trigger, now);
        // The message's end, a packet that asks for it (the artifact's
        // `force_ack` on `pkt.ar()`) and, if so set, a marked one are acknowledged at once.
        let at_once = pkt.seq + 1 == npkts
            || self.finish.is_some()
            || trigger.ack_requested
            || (pkt.ecn && policy.marked_at_once);
        let reply = if pending >= policy.ratio as usize || at_once {
            Reply::Batch
        } else {
            match policy.delay.filter(|_| !self.log.flush_armed) {
                Some(delay) => {
                    self.log.flush_armed = true;
                    Reply::FlushAt(now + delay)
                }
                None => Reply::Nothing,
            }
        };
        if policy.cumulative && reply == Reply::Batch {
            let (index, _) = self.take_sack(npkts);
            return Arrival {
                new,
                complete,
                reply: Reply::Sack(index),
            };
        }
        Arrival { new, complete, reply }
    }

    /// Nothing to accept (an RTS carries no payload and the cumulative ACK
    /// covers data only): an ACK echoing it, at once whatever the ACK ratio
    /// (artifact `UecSink::processRts`).
    fn on_rts(&mut self, pkt: &Packet, npkts: u32, policy: &AckPolicy) -> Reply {
        match (pkt.trimmed, policy.cumulative) {
            (true, _) => Reply::Echo(PacketKind::Nack),
            (false, false) => Reply::Echo(PacketKind::Ack),
            // The RTS asks for an ACK, so the artifact's bitmap starts at its
            // seq, beyond the message: empty, as the ECN rule of `log_sack` gives.
            (false, true) => self.log_sack(pkt.seq, true, npkts),
        }
    }

    fn on_flush(&mut self, now: SimTime, policy: &AckPolicy) -> Reply {
        let delay = policy.delay.expect("armed only with a delay");
        self.log.flush_armed = false;
        if self.log.pending() == 0 {
            return Reply::Nothing;
        }
        let due = self.log.batch_since + delay;
        if due <= now {
            return Reply::Batch;
        }
        self.log.flush_armed = true;
        Reply::FlushAt(due)
    }

    fn take_batch(&mut self) -> Batch {
        let (start, span) = self.log.take();
        Batch {
            start,
            span,
            echo: self.log.last,
        }
    }

    fn covered(&self, start: u32, span: u16) -> &[u32] {
        self.log.covered(start, span)
    }

    #[inline]
    fn sack_record(&self, index: u32) -> Option<SackRecord> {
        let len = self.sacks.len() as u32;
        (len > 0 && self.sacks_sent - index <= len).then(|| self.sacks[(index & (len - 1)) as usize])
    }

    /// Close the pending batch of coalesced arrivals with a cumulative SACK
    /// answering the latest (what it echoes).
    fn take_sack(&mut self, npkts: u32) -> (u32, Trigger) {
        let (start, span) = self.log.take();
        let latest = *self.log.covered(start, span).last().expect("a batch is never empty");
        let echo = self.log.last;
        let Reply::Sack(index) = self.log_sack(latest, echo.ecn || echo.ack_requested, npkts) else {
            unreachable!("log_sack answers with a Sack")
        };
        (index, echo)
    }

    #[inline]
    fn finish(&self) -> Option<SimTime> {
        self.finish
    }

    fn release(&mut self) {
        self.log.release();
        self.sacks = Vec::new();
    }

    fn allocate(&mut self, npkts: u32) {
        if self.got.is_empty() && self.finish.is_none() {
            self.got = vec![0; (npkts as usize).div_ceil(64)];
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! How to add a transport's receiver, proved: an in-order-only receiver
    //! (it discards anything but the next expected packet and acknowledges
    //! only what it accepts, as a Go-Back-N receiver without NACKs would),
    //! in one small type, one `Receiver` variant and one dispatch arm.

    use super::*;

    pub struct InOrder {
        next: u32,
        finish: Option<SimTime>,
    }

    impl InOrder {
        pub fn new() -> Self {
            InOrder { next: 0, finish: None }
        }
    }

    impl Receive for InOrder {
        fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, _policy: &AckPolicy) -> Arrival {
            if pkt.trimmed || pkt.seq != self.next || self.finish.is_some() {
                return Arrival {
                    new: false,
                    complete: false,
                    reply: Reply::Nothing,
                };
            }
            self.next += 1;
            let complete = self.next == npkts;
            if complete {
                self.finish = Some(now);
            }
            Arrival {
                new: true,
                complete,
                reply: Reply::Echo(PacketKind::Ack),
            }
        }
        fn finish(&self) -> Option<SimTime> {
            self.finish
        }
        fn release(&mut self) {}
    }

    pub(crate) fn data(seq: u32) -> Packet {
        Packet::data(0, seq, 0, 1, 4096, 9, 0, SimTime::ZERO)
    }

    pub(crate) const PER_PACKET: AckPolicy = AckPolicy {
        ratio: 1,
        delay: None,
        nack_interval: SimTime::from_us(4),
        cnp_on_ooo: true,
        irn_nack_in_recovery: false,
        cumulative: false,
        marked_at_once: false,
    };

    #[test]
    fn sack_accepts_any_order_once_and_nacks_trimmed_headers() {
        let mut r = Sack::new(3);
        let t = SimTime::from_us(1);
        let got: Vec<Arrival> = [2, 0, 2, 1]
            .iter()
            .map(|&s| r.on_data(&data(s), 3, t, &PER_PACKET))
            .collect();
        assert_eq!(got.iter().map(|a| a.new).collect::<Vec<_>>(), [true, true, false, true]);
        assert!(got[3].complete && got.iter().all(|a| a.reply == Reply::Echo(PacketKind::Ack)));
        assert_eq!(r.finish(), Some(t));
        let mut trimmed = data(1);
        trimmed.trimmed = true;
        assert_eq!(
            r.on_data(&trimmed, 3, t, &PER_PACKET).reply,
            Reply::Echo(PacketKind::Nack)
        );
    }

    /// The REPS artifact's ACK, arrival by arrival: the cumulative ACK and
    /// the bitmap of what arrived from `max(trigger - 63, cumulative + 1)`
    /// (from the trigger itself when it is ECN-marked); a duplicate is answered too.
    #[test]
    fn cumulative_sacks_carry_the_cumulative_ack_and_a_bitmap() {
        let policy = AckPolicy {
            cumulative: true,
            ..PER_PACKET
        };
        let mut r = Sack::new(100);
        let t = SimTime::from_us(1);
        let mut arrive = |seq: u32, ecn: bool| {
            let mut p = data(seq);
            p.ecn = ecn;
            let Reply::Sack(i) = r.on_data(&p, 100, t, &policy).reply else {
                panic!("every arrival gets a cumulative SACK")
            };
            r.sack_record(i).expect("just sent")
        };
        let rec = |trigger, cumulative, bitmap| SackRecord {
            trigger,
            cumulative,
            bitmap,
        };
        assert_eq!(arrive(0, false), rec(0, 1, 0));
        assert_eq!(arrive(2, false), rec(2, 1, 0b1), "1 missing: the bitmap starts at 2");
        assert_eq!(arrive(3, false), rec(3, 1, 0b11));
        assert_eq!(arrive(1, false), rec(1, 4, 0), "the gap filled: everything below 4");
        assert_eq!(arrive(70, false), rec(70, 4, 1 << 63), "bitmap 7..=70");
        assert_eq!(
            arrive(5, true),
            rec(5, 4, 0b1),
            "ECN-marked: the bitmap starts at the trigger"
        );
        assert_eq!(arrive(2, false), rec(2, 4, 0b1), "a duplicate: bitmap from 5");
        assert_eq!(bitmap_base(70, 4, false), 7);
        // The receiver remembers its latest SACK_LOG (256) ACKs, no more.
        let mut r = Sack::new(1000);
        let sent: Vec<u32> = (0..300)
            .map(|s| match r.on_data(&data(s), 1000, t, &policy).reply {
                Reply::Sack(i) => i,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sent[299], 299);
        assert_eq!(r.sack_record(299).map(|s| s.cumulative), Some(300));
        assert_eq!(r.sack_record(44).map(|s| (s.trigger, s.cumulative)), Some((44, 45)));
        assert_eq!(r.sack_record(43), None, "overwritten by the 300th");
    }

    /// A packet that asks for an ACK (`transport.ack_request`) gets a SACK
    /// whose bitmap starts at itself, and is acknowledged at once under
    /// coalescing (the REPS artifact's `force_ack` on `pkt.ar()`).
    #[test]
    fn a_packet_asking_for_an_ack_gets_a_bitmap_from_itself_and_flushes_a_batch() {
        let policy = AckPolicy {
            cumulative: true,
            ..PER_PACKET
        };
        let t = SimTime::from_us(1);
        let asking = |seq: u32| Packet { span: 1, ..data(seq) };
        let mut r = Sack::new(100);
        let mut arrive = |p: Packet| {
            let Reply::Sack(i) = r.on_data(&p, 100, t, &policy).reply else {
                panic!("every arrival gets a cumulative SACK")
            };
            r.sack_record(i).expect("just sent")
        };
        for seq in [1, 2, 7, 8] {
            arrive(data(seq));
        }
        let rec = |trigger, bitmap| SackRecord {
            trigger,
            cumulative: 0,
            bitmap,
        };
        assert_eq!(arrive(asking(5)), rec(5, 0b1101), "5, 7 and 8 of 5..=68");
        assert_eq!(arrive(data(6)), rec(6, 0b1111_0011), "1, 2 and 5..=8 of 1..=64");
        let coalescing = AckPolicy { ratio: 4, ..policy };
        let mut r = Sack::new(100);
        assert_eq!(r.on_data(&data(0), 100, t, &coalescing).reply, Reply::Nothing);
        let Reply::Sack(i) = r.on_data(&asking(2), 100, t, &coalescing).reply else {
            panic!("a packet asking for an ACK is answered at once")
        };
        assert_eq!(
            r.sack_record(i),
            Some(SackRecord {
                trigger: 2,
                cumulative: 1,
                bitmap: 0b1
            })
        );
        // An ECN-marked packet waits for its batch, unless `marked_at_once`.
        let marked = Packet { ecn: true, ..data(5) };
        for (at_once, sack) in [(false, false), (true, true)] {
            let policy = AckPolicy {
                marked_at_once: at_once,
                ..coalescing
            };
            let reply = Sack::new(100).on_data(&marked, 100, t, &policy).reply;
            assert_eq!(matches!(reply, Reply::Sack(_)), sack, "{reply:?}");
        }
    }

    /// Ratio 4 with a 2 us delay: one batch per four packets, the message's
    /// last packet flushes at once, and a partial batch waits for its delay.
    #[test]
    fn sack_coalesces_acks_by_ratio_end_and_delay() {
        let policy = AckPolicy {
            ratio: 4,
            delay: Some(SimTime::from_us(2)),
            ..PER_PACKET
        };
        let mut r = Sack::new(6);
        let at = |us| SimTime::from_us(us);
        let replies: Vec<Reply> = (0..4).map(|s| r.on_data(&data(s), 6, at(1), &policy).reply).collect();
        assert_eq!(
            replies,
            [Reply::FlushAt(at(3)), Reply::Nothing, Reply::Nothing, Reply::Batch]
        );
        let b = r.take_batch();
        assert_eq!(r.covered(b.start, b.span), [0, 1, 2, 3]);
        assert_eq!(
            r.on_data(&data(4), 6, at(5), &policy).reply,
            Reply::Nothing,
            "a flush is still armed"
        );
        assert_eq!(
            r.on_flush(at(3), &policy),
            Reply::FlushAt(at(7)),
            "the new batch began at 5 us"
        );
        assert_eq!(r.on_flush(at(7), &policy), Reply::Batch);
        r.take_batch();
        assert_eq!(
            r.on_data(&data(5), 6, at(8), &policy).reply,
            Reply::Batch,
            "the last packet"
        );
    }

    fn run(kind: &str, transport: &str) -> crate::RunOutput {
        let toml = format!(
            "[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"{kind}\"\n[transport]\nkind = \"{transport}\"\n\
             [queue]\ncapacity = \"10bdp\"\n[workload]\nkind = \"permutation\"\nsize = \"512KiB\"\n"
        );
        crate::run(&crate::Scenario::from_toml(&toml).unwrap(), None).unwrap()
    }

    /// Selected by `transport.kind`: on ECMP without loss (queues of 10
    /// BDP) every flow keeps one path, so packets arrive in order and the
    /// in-order receiver behaves exactly as SACK; sprayed (OPS), packets
    /// overtake each other, the in-order receiver discards them and the
    /// senders must retransmit, yet finish.
    #[test]
    fn a_new_receiver_is_chosen_by_transport_kind() {
        let fct = |o: &crate::RunOutput| o.flows.iter().map(|f| f.fct_us).collect::<Vec<_>>();
        let ecmp = run("ecmp", "sack");
        assert_eq!(ecmp.counters.drops_congestion, 0);
        assert_eq!(fct(&run("ecmp", "in_order")), fct(&ecmp));
        let (sack, in_order) = (run("ops", "sack"), run("ops", "in_order"));
        assert_eq!(sack.counters.retransmissions, 0);
        assert!(
            in_order.counters.retransmissions > 100,
            "{}",
            in_order.counters.retransmissions
        );
        assert!(in_order.flows.iter().all(|f| f.finished));
    }

    #[test]
    fn a_new_receiver_plugs_in_behind_the_interface() {
        let mut r = Receiver::InOrder(InOrder::new());
        let replies: Vec<bool> = [1, 0, 1]
            .iter()
            .map(|&s| r.on_data(&data(s), 2, SimTime::ZERO, &PER_PACKET).new)
            .collect();
        assert_eq!(
            replies,
            [false, true, true],
            "1 before 0 is discarded, then taken in order"
        );
        assert_eq!(r.finish(), Some(SimTime::ZERO));
    }
}
