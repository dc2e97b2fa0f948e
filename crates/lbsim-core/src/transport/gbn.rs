//! RoCEv2's Go-Back-N (ConWeave §2; the InfiniBand spec's reliable
//! connection as NICs run it). The receiver takes only the packet it
//! expects next and answers every arrival with the cumulative count: an ACK
//! for an expected or duplicate packet; for a packet beyond a gap, a NACK,
//! at most one per `nack_interval` for the same gap (the ConWeave
//! artifact's 4 µs). The sender, on a NACK, rewinds to the gap and sends
//! everything from it again, in order; its one timer (restarted by every
//! send and ACK) rewinds to the oldest unacknowledged packet.
//!
//! Packets a load balancer reorders are therefore real retransmissions:
//! everything sent after the overtaken packet goes twice.

use super::receiver::{AckPolicy, Arrival, Receive, Reply};
use super::sender::{Acked, Sender};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// The in-order receiver.
#[derive(Debug, Default)]
pub struct GoBackN {
    expected: u32,
    /// No NACK for the same gap before this.
    nack_quiet_until: SimTime,
    /// The gap last NACKed.
    nacked: Option<u32>,
    finish: Option<SimTime>,
}

impl GoBackN {
    fn answer(&self, kind: PacketKind, cnp: bool) -> Reply {
        Reply::Cumulative {
            kind,
            cumulative: self.expected,
            sacked: 0,
            cnp,
        }
    }
}

impl Receive for GoBackN {
    fn on_data(&mut self, pkt: &Packet, npkts: u32, now: SimTime, policy: &AckPolicy) -> Arrival {
        let (mut new, mut complete) = (false, false);
        let reply = if pkt.seq == self.expected && self.finish.is_none() {
            self.expected += 1;
            new = true;
            complete = self.expected == npkts;
            if complete {
                self.finish = Some(now);
            }
            self.answer(PacketKind::Ack, pkt.ecn)
        } else if pkt.seq > self.expected {
            if now >= self.nack_quiet_until || self.nacked != Some(self.expected) {
                self.nack_quiet_until = now + policy.nack_interval;
                self.nacked = Some(self.expected);
                self.answer(PacketKind::Nack, pkt.ecn || policy.cnp_on_ooo)
            } else {
                Reply::Nothing
            }
        } else {
            // A duplicate: acknowledged again (IB spec C9-110).
            self.answer(PacketKind::Ack, pkt.ecn)
        };
        Arrival { new, complete, reply }
    }
    fn finish(&self) -> Option<SimTime> {
        self.finish
    }
    fn release(&mut self) {}
}

impl Sender {
    /// A Go-Back-N ACK or NACK carrying the receiver's cumulative count.
    pub fn gbn_on_answer(&mut self, kind: PacketKind, cumulative: u32, now: SimTime) -> Acked {
        let acked = self.ack_below(cumulative, now);
        if kind == PacketKind::Nack && !acked.all {
            self.nacks += 1;
            self.rewind(cumulative);
        }
        acked
    }

    /// Send again from `from`: every packet sent beyond it goes again, in
    /// order. Returns how many were in flight.
    pub(super) fn rewind(&mut self, from: u32) -> u64 {
        let mut n = 0;
        for seq in from..self.next_new() {
            n += self.declare_lost(seq, false) as u64;
        }
        self.set_next_new(from.max(self.una()));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::receiver::tests::{data, PER_PACKET};
    use crate::transport::sender::{RdmaTimer, Recovery};

    fn cumulative(r: Reply) -> Option<(PacketKind, u32)> {
        match r {
            Reply::Cumulative { kind, cumulative, .. } => Some((kind, cumulative)),
            _ => None,
        }
    }

    /// Only the expected packet is taken; a gap is NACKed once per
    /// interval; duplicates are acknowledged again.
    #[test]
    fn the_receiver_takes_only_the_next_packet_and_nacks_a_gap_once_per_interval() {
        let mut r = GoBackN::default();
        let at = SimTime::from_us;
        let mut arrive = |seq, t| r.on_data(&data(seq), 4, at(t), &PER_PACKET);
        assert_eq!(cumulative(arrive(0, 0).reply), Some((PacketKind::Ack, 1)));
        let gap = arrive(2, 1);
        assert!(!gap.new);
        assert_eq!(cumulative(gap.reply), Some((PacketKind::Nack, 1)));
        assert_eq!(arrive(3, 2).reply, Reply::Nothing, "the same gap within 4 us");
        assert_eq!(
            cumulative(arrive(3, 5).reply),
            Some((PacketKind::Nack, 1)),
            "4 us later"
        );
        assert_eq!(
            cumulative(arrive(0, 6).reply),
            Some((PacketKind::Ack, 1)),
            "a duplicate"
        );
        let done: Vec<bool> = [1, 2, 3].iter().map(|&s| arrive(s, 7).complete).collect();
        assert_eq!(done, [false, false, true]);
    }

    /// A NACK for packet 2 when 0..6 were sent: 2..6 go again, in order,
    /// each counted as a retransmission; then new data.
    #[test]
    fn a_nack_rewinds_the_sender_to_the_gap() {
        let mut s = Sender::new(8 * 1000, 8, 1048, 48);
        s.active = true;
        let timer = RdmaTimer::new(SimTime::from_us(4000), SimTime::from_us(4000), 0);
        s.set_rdma(Recovery::GoBackN, timer);
        let t = SimTime::ZERO;
        let first: Vec<u32> = (0..6).map(|_| s.take_next(t).0).collect();
        assert_eq!(first, [0, 1, 2, 3, 4, 5]);
        let acked = s.gbn_on_answer(PacketKind::Nack, 2, t);
        assert_eq!(acked.bytes, 2 * 1048);
        assert_eq!(s.inflight, 0, "everything beyond the gap is to be resent");
        let again: Vec<(u32, bool)> = (0..5).map(|_| s.take_next(t)).map(|(q, _, r)| (q, r)).collect();
        assert_eq!(again, [(2, true), (3, true), (4, true), (5, true), (6, false)]);
        assert_eq!(s.retransmissions, 4);
        // The timer rewinds to the oldest unacknowledged packet.
        let (lost, rearm) = s.on_rdma_timer(SimTime::from_us(5000));
        assert_eq!((lost, rearm), (5, Some(SimTime::from_us(9000))));
        assert_eq!(s.take_next(t).0, 2);
    }
}
