//! IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM '18),
//! the lossy RDMA transport ConWeave also runs (ConWeave §5). The receiver
//! keeps what arrives out of order and answers every arrival with the
//! cumulative count; an arrival beyond a gap is a NACK that also names the
//! packet it selectively acknowledges (a repeated one at most once per
//! `nack_interval`). The sender resends only what it infers lost: on a NACK
//! it enters recovery, and every packet still in flight below the one the
//! NACK names is lost (IRN §3.1), judged once per episode; the episode ends
//! when the cumulative count passes what was sent when it began. At most a
//! window (a BDP) lies between the cumulative count and the highest packet
//! sent (IRN's BDP flow control). The timer (RTO_low with few packets
//! outstanding, RTO_high otherwise) declares every in-flight packet lost.
//!
//! `transport.rdma.irn_recovery = "rewind"` (the rdma presets) is the
//! ConWeave artifact's IRN instead (rdma-hw.cc `ReceiverCheckSeq`,
//! `ReceiveAck`, `RecoverQueue`): a NACK that finds the sender outside
//! recovery rewinds it to the cumulative count, and every packet not yet
//! selectively acknowledged, in flight or not, is sent again; any ACK without
//! a selective one ends the recovery. Its receiver answers an in-order or
//! duplicate arrival with a NACK while a gap remains above it. So a packet a
//! balancer merely delays costs retransmissions there, as on the artifact's
//! NICs (docs/rdma.md).

use super::receiver::{AckPolicy, Arrival, Receive, Reply};
use super::sender::{Acked, PktState, Sender};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// The selective-repeat receiver.
#[derive(Debug)]
pub struct Irn {
    expected: u32,
    /// One past the highest seq received: a gap remains while it is above `expected`.
    above: u32,
    /// One bit per packet received.
    got: Vec<u64>,
    nack_quiet_until: SimTime,
    finish: Option<SimTime>,
}

impl Irn {
    pub fn new(npkts: u32) -> Self {
        Irn {
            expected: 0,
            above: 0,
            got: vec![0; (npkts as usize).div_ceil(64)],
            nack_quiet_until: SimTime::ZERO,
            finish: None,
        }
    }

    fn has(&self, seq: u32) -> bool {
        self.got[(seq / 64) as usize] & (1 << (seq % 64)) != 0
    }

    fn mark(&mut self, seq: u32) {
        self.got[(seq / 64) as usize] |= 1 << (seq % 64);
        self.above = self.above.max(seq + 1);
    }

    /// The answer to an in-order or duplicate arrival: an ACK, or under the
    /// artifact's rule a NACK naming nothing while a gap remains (its sender
    /// then rewinds unless it is recovering already).
    fn in_order_answer(&self, ecn: bool, policy: &AckPolicy) -> Reply {
        let gap = self.finish.is_none() && self.above > self.expected;
        let kind = if policy.irn_nack_in_recovery && gap {
            PacketKind::Nack
        } else {
            PacketKind::Ack
        };
        self.answer(kind, 0, ecn)
    }

    fn answer(&self, kind: PacketKind, sacked: u32, cnp: bool) -> Reply {
        Reply::Cumulative {
            kind,
            cumulative: self.expected,
            sacked: sacked.saturating_sub(self.expected).min(u16::MAX as u32) as u16,
            cnp,
        }
    }
}

impl Receive for Irn {
    fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, policy: &AckPolicy) -> Arrival {
        let seq = pkt.seq;
        if self.finish.is_some() || seq < self.expected {
            let reply = self.in_order_answer(pkt.ecn, policy);
            return Arrival {
                new: false,
                complete: false,
                reply,
            };
        }
        let new = !self.has(seq);
        if seq == self.expected {
            self.mark(seq);
            while self.expected < npkts && self.has(self.expected) {
                self.expected += 1;
            }
            let complete = self.expected == npkts;
            if complete {
                self.finish = Some(now);
                self.got = Vec::new();
            }
            let reply = self.in_order_answer(pkt.ecn, policy);
            return Arrival { new, complete, reply };
        }
        let reply = if new || now >= self.nack_quiet_until {
            self.mark(seq);
            self.nack_quiet_until = now + policy.nack_interval;
            self.answer(PacketKind::Nack, seq, pkt.ecn || policy.cnp_on_ooo)
        } else {
            Reply::Nothing
        };
        Arrival {
            new,
            complete: false,
            reply,
        }
    }
    fn finish(&self) -> Option<SimTime> {
        self.finish
    }
    fn release(&mut self) {
        self.got = Vec::new();
    }
    fn allocate(&mut self, npkts: u32) {
        if self.got.is_empty() && self.finish.is_none() {
            self.got = vec![0; (npkts as usize).div_ceil(64)];
        }
    }
}

impl Sender {
    /// An IRN ACK, or a NACK (`nack`) that may selectively acknowledge `sacked`.
    pub fn irn_on_answer(&mut self, cumulative: u32, sacked: Option<u32>, nack: bool, now: SimTime) -> Acked {
        let mut acked = self.ack_below(cumulative, now);
        let sacked = sacked.filter(|&s| s < self.npkts);
        if let Some(s) = sacked {
            let one = self.on_ack(s);
            acked.bytes += one.bytes;
            acked.all |= one.all;
        }
        if self.irn.rewind {
            self.irn_rewind_on_answer(nack);
            return acked;
        }
        if let Some(s) = sacked {
            self.nacks += 1;
            if !self.irn.active {
                self.irn.active = true;
                self.irn.until = self.next_new();
                self.irn.scan = self.una();
            }
            for seq in self.irn.scan.max(self.una())..s {
                self.declare_lost(seq, true);
            }
            self.irn.scan = self.irn.scan.max(s + 1);
        }
        if self.irn.active && self.una() >= self.irn.until {
            self.irn.active = false;
        }
        acked
    }

    /// The artifact's rule (`irn_recovery = "rewind"`): a NACK outside recovery
    /// declares every packet in flight above the cumulative count lost, to be
    /// sent again in order; recovery ends when the count passes what was sent
    /// then, or at any answer that is not a NACK.
    fn irn_rewind_on_answer(&mut self, nack: bool) {
        if nack {
            self.nacks += 1;
            if !self.irn.active {
                self.irn.active = true;
                self.irn.until = self.next_new();
                for seq in self.una()..self.next_new() {
                    self.declare_lost(seq, true);
                }
            }
        } else {
            self.irn.active = false;
        }
        if self.irn.active && self.una() >= self.irn.until {
            self.irn.active = false;
        }
    }

    /// The timer fired: every packet in flight is lost; a new episode.
    pub(super) fn irn_timeout(&mut self) -> u64 {
        let mut n = 0;
        for seq in self.una()..self.next_new() {
            if self.state_of(seq) == PktState::InFlight {
                n += self.declare_lost(seq, true) as u64;
            }
        }
        self.irn.active = true;
        self.irn.until = self.next_new();
        self.irn.scan = self.next_new();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::receiver::tests::{data, PER_PACKET};
    use crate::transport::sender::{RdmaTimer, Recovery};

    /// The receiver keeps out-of-order packets and names them in its NACKs.
    #[test]
    fn the_receiver_keeps_what_overtakes_a_gap() {
        let mut r = Irn::new(4);
        let t = SimTime::ZERO;
        let replies: Vec<Reply> = [0, 2, 3, 1]
            .iter()
            .map(|&s| r.on_data(&data(s), 4, t, &PER_PACKET).reply)
            .collect();
        let nack = |sacked| Reply::Cumulative {
            kind: PacketKind::Nack,
            cumulative: 1,
            sacked,
            cnp: true,
        };
        assert_eq!(replies[1], nack(1), "2 arrived beyond the gap at 1");
        assert_eq!(replies[2], nack(2));
        assert_eq!(
            replies[3],
            Reply::Cumulative {
                kind: PacketKind::Ack,
                cumulative: 4,
                sacked: 0,
                cnp: false
            },
            "1 fills the gap: all four"
        );
        assert_eq!(r.finish(), Some(t));
    }

    /// An IRN sender of a 10-packet message (RTO_low 100 us, RTO_high 320 us)
    /// that sent packets 0..8 at t = 0; `rewind`: the artifact's recovery.
    fn eight_sent(rewind: bool) -> Sender {
        let mut s = Sender::new(10 * 1000, 10, 1048, 48);
        s.active = true;
        let us = SimTime::from_us;
        s.set_rdma(Recovery::Irn, RdmaTimer::new(us(100), us(320), 3));
        s.set_irn_rewind(rewind);
        for _ in 0..8 {
            s.take_next(SimTime::ZERO);
        }
        s
    }

    /// Packet 1 of 0..8 lost: NACKs for 2..7 make the sender resend 1 and
    /// nothing else; the episode ends when the cumulative count passes 8.
    #[test]
    fn one_loss_is_one_retransmission() {
        let us = SimTime::from_us;
        let mut s = eight_sent(false);
        s.irn_on_answer(1, None, false, us(1));
        for sacked in 2..8 {
            s.irn_on_answer(1, Some(sacked), true, us(1));
        }
        assert_eq!(s.take_next(us(2)), (1, 1048, true));
        assert_eq!(s.take_next(us(2)).0, 8, "then new data");
        assert_eq!(s.retransmissions, 1);
        s.irn_on_answer(8, None, false, us(3));
        assert!(!s.irn.active, "the episode ended");
        assert_eq!(s.timer.deadline, us(103), "two outstanding: RTO_low");
    }

    /// The ConWeave artifact's rule: packet 1 of 0..8 only delayed (a balancer
    /// reordered it). The NACK for 2 rewinds the sender to 1: 1 and 3..7 go
    /// again, in order, though all but 1 are still on their way; their NACKs
    /// change nothing, and the ACK once 1 arrives ends the recovery.
    #[test]
    fn the_artifacts_rewind_resends_what_is_in_flight() {
        let us = SimTime::from_us;
        let mut s = eight_sent(true);
        s.irn_on_answer(1, None, false, us(1));
        s.irn_on_answer(1, Some(2), true, us(1));
        assert!(s.irn.active);
        let resent: Vec<u32> = (0..6).map(|_| s.take_next(us(2)).0).collect();
        assert_eq!(resent, [1, 3, 4, 5, 6, 7]);
        assert_eq!(s.retransmissions, 6);
        for sacked in 3..8 {
            s.irn_on_answer(1, Some(sacked), true, us(2));
        }
        assert_eq!(
            s.take_next(us(3)),
            (8, 1048, false),
            "no second rewind within the episode"
        );
        s.irn_on_answer(8, None, false, us(4));
        assert!(!s.irn.active, "an ACK ends the recovery");
    }

    /// The artifact's receiver: while a gap remains above it, an in-order or
    /// duplicate arrival is answered with a NACK naming nothing.
    #[test]
    fn the_artifacts_receiver_nacks_in_order_arrivals_above_a_gap() {
        let policy = AckPolicy {
            irn_nack_in_recovery: true,
            ..PER_PACKET
        };
        let mut r = Irn::new(4);
        let t = SimTime::ZERO;
        let kinds: Vec<(PacketKind, u16)> = [0, 2, 0, 1, 3]
            .iter()
            .map(|&s| match r.on_data(&data(s), 4, t, &policy).reply {
                Reply::Cumulative { kind, sacked, .. } => (kind, sacked),
                other => panic!("{other:?}"),
            })
            .collect();
        use PacketKind::{Ack, Nack};
        assert_eq!(kinds, [(Ack, 0), (Nack, 1), (Nack, 0), (Ack, 0), (Ack, 0)]);
    }
}
