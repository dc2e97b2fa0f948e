//! The REPS artifact's bit errors (`kind = "switch_ber"` and `"cable_ber"`),
//! as its simulator models them, so that the two simulators can be compared
//! on the same loss (REPS artifact, commit b751588, `failuregenerator.cpp`
//! `switchBER`, `cableBER` and `dropPacketsSwitchBER`, `uec.cpp`
//! `UecSink::receivePacket`).
//!
//! It is not a per-link coin flip. One counter covers every packet arriving
//! at any switch (`switch_ber`) or entering any link (`cable_ber`), data and
//! control alike. While the share of those that marked something is at most
//! `loss` (the artifact's `*-BER-Max-Percent`, 0.01 in its `ber_*_one_percent.txt`
//! files), and at least the file's period has passed since the last mark, a
//! packet marks its id in one network-wide set. An id is what the artifact's
//! packets carry: a data packet's sequence number, 0 for ACKs and RTS. When a
//! data packet (or RTS) reaches a receiver and its id is marked, it is lost
//! and the mark removed. Ids are per-flow sequence numbers, so a mark made by
//! one flow's packet, or by any ACK (id 0), costs the next packet of any flow
//! with that number: losses are spread over every path and lean to low
//! sequence numbers (each flow's first packet above all). ACKs are never lost.
//!
//! The two kinds differ where the artifact's two functions differ: at
//! switches an id already marked marks nothing (the next packet may try); on
//! links (which include each switch's own zero-delay pipe, see `Site::Links`)
//! it counts as a mark all the same, and marks are at least 10 ns apart
//! (`ber_cable_one_percent.txt`: `Cable-BER-Period: 10000` ps; the switch
//! file's period is 0). The artifact's cable function also has a drop of its
//! own, after both branches have returned: it never runs, so its marks cost
//! packets only through the receiver's check, as the switches' do. No
//! randomness: it is deterministic given the packet order.

use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// Where a bit-error failure counts packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// Every packet arriving at a switch (`switch_ber`).
    Switches,
    /// Every packet entering a link, at hosts and switches, and every packet
    /// crossing a switch (`cable_ber`): the artifact's switch hands each packet
    /// through a pipe of its own (`FatTreeSwitch::_pipe`, no delay), which
    /// `Pipe::receivePacket` counts as a cable like any other. A packet from
    /// one ToR to another counts 7 times (4 links, 3 switches).
    Links,
}

/// The artifact's `Cable-BER-Period` (ber_cable_one_percent.txt: 10000 ps).
pub const CABLE_MARK_GAP: SimTime = SimTime(10_000);

/// The network-wide state of a `switch_ber` or `cable_ber` failure.
#[derive(Clone, Debug)]
pub struct BitErrors {
    pub site: Site,
    /// The share of counted packets that may mark, as the artifact's `float`.
    max_share: f32,
    /// While false (before the entry starts, after it ends) nothing marks or is lost.
    pub active: bool,
    /// Packets counted while active, and how many marked.
    arrivals: u64,
    marked: u64,
    /// No mark before this time (the file's period after the last mark).
    next_mark: SimTime,
    /// Marked ids, one bit each (ids are sequence numbers, dense from 0).
    bits: Vec<u64>,
    /// Packets lost to a mark.
    pub losses: u64,
}

impl BitErrors {
    pub fn new(share: f64, site: Site) -> Self {
        BitErrors {
            site,
            max_share: share as f32,
            active: false,
            arrivals: 0,
            marked: 0,
            next_mark: SimTime::ZERO,
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

    /// A packet arrived at a switch (`Site::Switches`) or entered a link (`Site::Links`).
    pub fn count(&mut self, pkt: &Packet, now: SimTime) {
        if !self.active || pkt.kind == PacketKind::Pause {
            return; // a PFC frame is one hop and no flow's packet
        }
        // 64-bit where the artifact's are 32-bit: a long run's counts must not wrap or stick.
        self.arrivals += 1;
        if now < self.next_mark {
            return;
        }
        // The artifact compares in `float`: (float)marked / arrivals > max.
        if self.marked as f32 / self.arrivals as f32 > self.max_share {
            return;
        }
        let id = Self::id(pkt);
        if self.site == Site::Switches && self.is_marked(id) {
            return;
        }
        let w = (id / 64) as usize;
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (id % 64);
        self.marked += 1;
        if self.site == Site::Links {
            self.next_mark = now + CABLE_MARK_GAP;
        }
    }

    /// Packets counted while active, and how many of them marked.
    pub fn counted(&self) -> (u64, u64) {
        (self.arrivals, self.marked)
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
        let mut b = BitErrors::new(0.01, Site::Switches);
        b.active = true;
        // 10 000 arrivals with distinct ids: the first marks (0/1 <= 0.01), then the
        // 100th, 200th, ... (k/100k is not above 0.01).
        for s in 0..10_000 {
            b.count(&pkt(PacketKind::Data, 0, s), SimTime::ZERO);
        }
        assert_eq!(b.marked, 101);
        assert!(b.is_marked(0) && !b.is_marked(1) && b.is_marked(99) && !b.is_marked(100));
    }

    #[test]
    fn a_mark_costs_the_next_packet_of_any_flow_with_that_number() {
        let mut b = BitErrors::new(0.01, Site::Switches);
        b.active = true;
        // An ACK (id 0) marks 0 at a switch ...
        b.count(&pkt(PacketKind::Ack, 7, 5), SimTime::ZERO);
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
        let mut b = BitErrors::new(0.5, Site::Switches);
        b.active = true;
        b.count(&pkt(PacketKind::Data, 0, 3), SimTime::ZERO); // 0/1: marks 3
        b.count(&pkt(PacketKind::Data, 1, 3), SimTime::ZERO); // 1/2: may mark, 3 already is
        b.count(&pkt(PacketKind::Data, 1, 9), SimTime::ZERO); // 1/3: marks 9
        assert_eq!(b.marked, 2);
        assert!(b.is_marked(9));
    }

    #[test]
    fn inactive_does_nothing() {
        let mut b = BitErrors::new(1.0, Site::Switches);
        b.count(&pkt(PacketKind::Data, 0, 1), SimTime::ZERO);
        assert_eq!((b.arrivals, b.marked), (0, 0));
        b.active = true;
        b.count(&pkt(PacketKind::Data, 0, 1), SimTime::ZERO);
        b.active = false;
        assert!(!b.take(&pkt(PacketKind::Data, 0, 1)));
    }

    /// On links (the artifact's `cableBER`): an id already marked counts as
    /// a mark all the same, and after a mark nothing marks for 10 ns.
    #[test]
    fn on_links_repeat_marks_count_and_marks_are_10_ns_apart() {
        let mut b = BitErrors::new(0.5, Site::Links);
        b.active = true;
        let ns = |n: u64| SimTime(n * 1000);
        b.count(&pkt(PacketKind::Data, 0, 3), ns(0)); // 0/1: marks 3
        b.count(&pkt(PacketKind::Data, 1, 4), ns(5)); // within 10 ns: no mark
        assert!(!b.is_marked(4));
        b.count(&pkt(PacketKind::Data, 1, 3), ns(10)); // 1/3: 3 again, counted
        assert_eq!(b.marked, 2);
        b.count(&pkt(PacketKind::Data, 2, 9), ns(20)); // 2/4 = 0.5: not above, marks 9
        assert_eq!(b.marked, 3);
        assert!(b.is_marked(9));
        b.count(&pkt(PacketKind::Data, 2, 11), ns(40)); // 3/5 > 0.5: no mark
        assert!(!b.is_marked(11));
        // The same packets at switches: the repeat marks nothing, the gap is 0.
        let mut s = BitErrors::new(0.5, Site::Switches);
        s.active = true;
        s.count(&pkt(PacketKind::Data, 0, 3), ns(0));
        s.count(&pkt(PacketKind::Data, 1, 4), ns(5)); // 1/2: marks 4 at once
        s.count(&pkt(PacketKind::Data, 1, 3), ns(10)); // 2/3 > 0.5
        assert!(s.is_marked(4));
        assert_eq!(s.marked, 2);
    }
}
