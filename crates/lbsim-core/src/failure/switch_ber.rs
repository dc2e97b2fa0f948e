//! The REPS artifact's switch bit errors (`kind = "switch_ber"`), as its
//! simulator models them, so that the two simulators can be compared on the
//! same loss (REPS artifact, commit b751588, `failuregenerator.cpp`
//! `switchBER` and `dropPacketsSwitchBER`, `uec.cpp` `UecSink::receivePacket`).
//!
//! It is not a per-link coin flip. One counter covers every packet arriving
//! at any switch (data and control alike). While the share of those that
//! marked something is at most `loss` (the artifact's
//! `Switch-BER-Max-Percent`, 0.01 in its `ber_switch_one_percent.txt`), an
//! arriving packet marks its id in one network-wide set, unless the id is
//! already there. An id is what the artifact's packets carry: a data packet's
//! sequence number, 0 for ACKs and RTS. When a data packet (or RTS) reaches a
//! receiver and its id is marked, it is lost and the mark removed. Ids are
//! per-flow sequence numbers, so a mark made by one flow's packet, or by any
//! ACK (id 0), costs the next packet of any flow with that number: losses are
//! spread over every path and lean to low sequence numbers (each flow's
//! first packet above all). ACKs are never lost. No randomness: it is
//! deterministic given the packet order.

use crate::packet::{Packet, PacketKind};

/// The network-wide state of a `switch_ber` failure.
#[derive(Clone, Debug)]
pub struct SwitchBer {
    /// The share of switch arrivals that may mark, as the artifact's `float`.
    max_share: f32,
    /// While false (before the entry starts, after it ends) nothing marks or is lost.
    pub active: bool,
    /// Packets that arrived at a switch while active, and how many marked.
    arrivals: u64,
    marked: u64,
    /// Marked ids, one bit each (ids are sequence numbers, dense from 0).
    bits: Vec<u64>,
    /// Packets lost to a mark.
    pub losses: u64,
}

impl SwitchBer {
    pub fn new(share: f64) -> Self {
        SwitchBer {
            max_share: share as f32,
            active: false,
            arrivals: 0,
            marked: 0,
            bits: Vec::new(),
            losses: 0,
        }
    }

    /// The id the artifact's packet of this kind carries (`Packet::id()`):
    /// data its sequence number, a NACK the one it refers to, everything else 0.
    #[inline]
    fn id(pkt: &Packet) -> u32 {
        match pkt.kind {
            PacketKind::Data | PacketKind::Nack => pkt.seq,
            _ => 0,
        }
    }

    fn is_marked(&self, id: u32) -> bool {
        self.bits
            .get((id / 64) as usize)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// A packet arrived at a switch.
    pub fn on_switch_arrival(&mut self, pkt: &Packet) {
        if !self.active || pkt.kind == PacketKind::Pause {
            return; // a PFC frame is one hop and no flow's packet
        }
        // 64-bit where the artifact's are 32-bit: a long run's counts must not wrap or stick.
        self.arrivals += 1;
        // The artifact compares in `float`: (float)marked / arrivals > max.
        if self.marked as f32 / self.arrivals as f32 > self.max_share {
            return;
        }
        let id = Self::id(pkt);
        if !self.is_marked(id) {
            let w = (id / 64) as usize;
            if w >= self.bits.len() {
                self.bits.resize(w + 1, 0);
            }
            self.bits[w] |= 1 << (id % 64);
            self.marked += 1;
        }
    }

    /// A packet reached its receiver: true if it is lost to a mark (which it
    /// clears). Only what the artifact's receiver (`UecSink`) gets can be
    /// lost: data and RTS.
    pub fn take(&mut self, pkt: &Packet) -> bool {
        if !self.active || !matches!(pkt.kind, PacketKind::Data | PacketKind::Rts) {
            return false;
        }
        let id = Self::id(pkt);
        if !self.is_marked(id) {
            return false;
        }
        self.bits[(id / 64) as usize] &= !(1 << (id % 64));
        self.losses += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn pkt(kind: PacketKind, flow: u32, seq: u32) -> Packet {
        Packet {
            seq,
            ..Packet::new(kind, flow, 0, 1, 4096, SimTime::ZERO)
        }
    }

    #[test]
    fn marks_one_arrival_in_a_hundred_at_one_percent() {
        let mut b = SwitchBer::new(0.01);
        b.active = true;
        // 10 000 arrivals with distinct ids: the first marks (0/1 <= 0.01), then the
        // 100th, 200th, ... (k/100k is not above 0.01).
        for s in 0..10_000 {
            b.on_switch_arrival(&pkt(PacketKind::Data, 0, s));
        }
        assert_eq!(b.marked, 101);
        assert!(b.is_marked(0) && !b.is_marked(1) && b.is_marked(99) && !b.is_marked(100));
    }

    #[test]
    fn a_mark_costs_the_next_packet_of_any_flow_with_that_number() {
        let mut b = SwitchBer::new(0.01);
        b.active = true;
        // An ACK (id 0) marks 0 at a switch ...
        b.on_switch_arrival(&pkt(PacketKind::Ack, 7, 5));
        assert!(b.is_marked(0));
        // ... ACKs are never lost ...
        assert!(!b.take(&pkt(PacketKind::Ack, 3, 0)));
        // ... another flow's first data packet is, once.
        assert!(b.take(&pkt(PacketKind::Data, 3, 0)));
        assert!(!b.take(&pkt(PacketKind::Data, 4, 0)));
        assert_eq!(b.losses, 1);
    }

    #[test]
    fn an_id_already_marked_marks_nothing_and_the_next_arrival_tries() {
        let mut b = SwitchBer::new(0.5);
        b.active = true;
        b.on_switch_arrival(&pkt(PacketKind::Data, 0, 3)); // 0/1: marks 3
        b.on_switch_arrival(&pkt(PacketKind::Data, 1, 3)); // 1/2: may mark, 3 already is
        b.on_switch_arrival(&pkt(PacketKind::Data, 1, 9)); // 1/3: marks 9
        assert_eq!(b.marked, 2);
        assert!(b.is_marked(9));
    }

    #[test]
    fn inactive_does_nothing() {
        let mut b = SwitchBer::new(1.0);
        b.on_switch_arrival(&pkt(PacketKind::Data, 0, 1));
        assert_eq!((b.arrivals, b.marked), (0, 0));
        b.active = true;
        b.on_switch_arrival(&pkt(PacketKind::Data, 0, 1));
        b.active = false;
        assert!(!b.take(&pkt(PacketKind::Data, 0, 1)));
    }
}
