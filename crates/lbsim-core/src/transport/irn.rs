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
//! The ConWeave artifact's IRN rewinds to the cumulative count and resends
//! every packet not yet selectively acknowledged, including ones still in
//! flight; lbsim follows the paper's rule (docs/rdma.md).

use super::receiver::{AckPolicy, Arrival, Receive, Reply};
use super::sender::{Acked, PktState, Sender};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// The selective-repeat receiver.
#[derive(Debug)]
pub struct Irn {
    expected: u32,
    /// One bit per packet received.
    got: Vec<u64>,
    nack_quiet_until: SimTime,
    finish: Option<SimTime>,
}

impl Irn {
    pub fn new(npkts: u32) -> Self {
        Irn {
            expected: 0,
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
            let reply = self.answer(PacketKind::Ack, 0, pkt.ecn);
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
            let reply = self.answer(PacketKind::Ack, 0, pkt.ecn);
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
    /// An IRN ACK, or a NACK that selectively acknowledges `sacked`.
    pub fn irn_on_answer(&mut self, cumulative: u32, sacked: Option<u32>, now: SimTime) -> Acked {
        let mut acked = self.ack_below(cumulative, now);
        if let Some(s) = sacked.filter(|&s| s < self.npkts) {
            let one = self.on_ack(s);
            acked.bytes += one.bytes;
            acked.all |= one.all;
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

    /// Packet 1 of 0..8 lost: NACKs for 2..7 make the sender resend 1 and
    /// nothing else; the episode ends when the cumulative count passes 8.
    #[test]
    fn one_loss_is_one_retransmission() {
        let mut s = Sender::new(10 * 1000, 10, 1048, 48);
        s.active = true;
        let us = SimTime::from_us;
        s.set_rdma(Recovery::Irn, RdmaTimer::new(us(100), us(320), 3));
        for _ in 0..8 {
            s.take_next(SimTime::ZERO);
        }
        s.irn_on_answer(1, None, us(1));
        for sacked in 2..8 {
            s.irn_on_answer(1, Some(sacked), us(1));
        }
        assert_eq!(s.take_next(us(2)), (1, 1048, true));
        assert_eq!(s.take_next(us(2)).0, 8, "then new data");
        assert_eq!(s.retransmissions, 1);
        s.irn_on_answer(8, None, us(3));
        assert!(!s.irn.active, "the episode ended");
        assert_eq!(s.timer.deadline, us(103), "two outstanding: RTO_low");
    }
}
