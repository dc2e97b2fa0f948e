//! Packets and the pool they live in. Packets move through the network by
//! id; freed slots are reused, so steady state allocates nothing. Packets
//! are made by the constructors here, never by struct literals elsewhere.

use crate::time::SimTime;

pub type PacketId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    /// Acknowledges packet `seq`.
    Ack,
    /// A coalesced ACK (`transport.ack_ratio` > 1): acknowledges the `span`
    /// seqs the receiver logged from position `seq` of the flow's ACK log.
    AckBatch,
    /// The REPS artifact's ACK (`transport.ack_info = "cumulative_sack"`):
    /// a cumulative ACK and a 64-packet SACK bitmap. They do not fit in 40
    /// bytes, so the receiver keeps them in its ACK log and the ACK carries
    /// the position, `seq` (`transport::receiver::SackRecord`).
    SackAck,
    /// A trimmed packet `seq` reached the receiver.
    Nack,
    /// EQDS credit: `seq` is the cumulative number of credits the receiver
    /// has granted the flow, so a lost credit is made up by the next one.
    Credit,
    /// EQDS request-to-send: a sender that cannot send asks for credit.
    /// `seq` is the highest cumulative credit count it heard, `span` the
    /// credits it needs beyond that.
    Rts,
    /// PFC (IEEE 802.1Qbb) pause frame, one hop: `span` is the priority
    /// class, `seq` the pause duration in nanoseconds (0: resume). It
    /// belongs to no flow (`flow` is `NO_FLOW`).
    Pause,
    /// Made by a switch policy for its counterpart at another switch (a
    /// ConWeave REPLY, CLEAR or NOTIFY): travels in its route class, which
    /// policy alone reads `tag`, and is consumed by the switch it is for
    /// (counted as delivered there). Never reaches a host.
    SwitchControl,
    /// A host agent's probe (FaCa §5.3): `ev` is the entropy value it
    /// tests, `tag` its serial, under which the switches it crosses file
    /// their INT records (`lb::faca::int`). It belongs to no flow.
    Probe,
    /// The destination's answer to a probe, back to its source, carrying
    /// the probe's records (same `tag`, same size).
    ProbeEcho,
}

/// The `flow` of packets that belong to no flow (PFC frames).
pub const NO_FLOW: u32 = u32::MAX;

/// Priority class of control packets (ACK, NACK, credits, RTS, trimmed headers).
pub const CLASS_CONTROL: u8 = 0;
/// Priority class of data packets.
pub const CLASS_DATA: u8 = 1;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: PacketKind,
    pub flow: u32,
    /// Packet index within the message (data) or the index acknowledged (ACK/NACK); see `PacketKind`.
    pub seq: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire (shrinks to the header size when trimmed).
    pub size: u32,
    /// Entropy value: the sender's choice for data; echoed by ACK/NACK (REPS §3.1).
    pub ev: u16,
    /// Congestion experienced (data); echoed mark (ACK).
    pub ecn: bool,
    /// Payload cut by a full queue (packet trimming).
    pub trimmed: bool,
    /// Which switch policy chooses its way up: 0 hashes the EV (ECMP), k > 0
    /// is the k-th switch policy of the run (`net::policy`).
    pub route: u8,
    /// `AckBatch`: how many logged seqs it acknowledges; `Rts`: credits needed;
    /// `Data`: 1 when it asks for an ACK at once (`transport.ack_request`),
    /// echoed by the answer (`ack_requested`).
    pub span: u16,
    /// Bits owned by the packet's switch policy (route class > 0), for the
    /// header fields a switch-side balancer adds (CONGA's path tag and
    /// congestion metric, ConWeave's epoch, flags and timestamp). Zero
    /// otherwise; it fits the struct's padding, so it costs no memory.
    pub tag: u32,
    /// When the data packet (this copy) left the sender; echoed by the ACK for RTT samples.
    pub sent_at: SimTime,
}

impl Packet {
    /// A packet of `kind` from `src` to `dst` with every optional field zero.
    pub fn new(kind: PacketKind, flow: u32, src: u32, dst: u32, size: u32, now: SimTime) -> Packet {
        Packet {
            kind,
            flow,
            seq: 0,
            src,
            dst,
            size,
            ev: 0,
            ecn: false,
            trimmed: false,
            route: 0,
            span: 0,
            tag: 0,
            sent_at: now,
        }
    }

    /// Data packet `seq` of `flow`, sent now on entropy `ev`.
    #[allow(clippy::too_many_arguments)]
    pub fn data(flow: u32, seq: u32, src: u32, dst: u32, size: u32, ev: u16, route: u8, now: SimTime) -> Packet {
        Packet {
            seq,
            ev,
            route,
            ..Packet::new(PacketKind::Data, flow, src, dst, size, now)
        }
    }

    /// The receiver's answer to a data packet (ACK or NACK): back to its
    /// sender, echoing its seq, EV, ECN mark, route and send time (REPS §3.1).
    pub fn reply(data: &Packet, kind: PacketKind, size: u32) -> Packet {
        Packet {
            kind,
            size,
            src: data.dst,
            dst: data.src,
            trimmed: false,
            tag: 0,
            ..*data
        }
    }

    /// A PFC frame for `class`: pause for `duration` (zero: resume).
    pub fn pause(class: u8, duration: SimTime, size: u32, now: SimTime) -> Packet {
        let ns = (duration.ps() / 1000).min(u32::MAX as u64) as u32;
        Packet {
            seq: ns,
            span: class as u16,
            ..Packet::new(PacketKind::Pause, NO_FLOW, u32::MAX, u32::MAX, size, now)
        }
    }

    /// A data packet that asks for an ACK at once (the REPS artifact's AR
    /// flag, `transport.ack_request`), or the ACK answering one.
    #[inline]
    pub fn ack_requested(&self) -> bool {
        matches!(self.kind, PacketKind::Data | PacketKind::SackAck) && self.span != 0
    }

    /// Control packets travel in the priority class: everything but untrimmed data.
    #[inline]
    pub fn class(&self) -> u8 {
        if self.kind != PacketKind::Data || self.trimmed {
            CLASS_CONTROL
        } else {
            CLASS_DATA
        }
    }

    /// A switch routes it by hashing its entropy (ECMP), with no switch
    /// policy involved: route class 0, and not a PFC frame (one hop, no route).
    #[inline]
    pub fn routed_by_hash(&self) -> bool {
        self.route == 0 && self.kind != PacketKind::Pause
    }

    #[inline]
    pub fn is_priority(&self) -> bool {
        self.class() == CLASS_CONTROL
    }
}

#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketPool {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Move a packet out of its slot to travel by value (on a link), still
    /// counted live. Its slot is reused first, so the slots in use stay the
    /// few packets that wait in queues, and stay in cache.
    #[inline]
    pub fn take(&mut self, id: PacketId) -> Packet {
        self.free.push(id);
        self.slots[id as usize]
    }

    /// Ask the cache for a packet's slot (see `Simulation::prefetch`).
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id as usize) {
            crate::cache::prefetch(slot);
        }
    }

    /// Give a packet taken out with `take` a slot again.
    #[inline]
    pub fn put(&mut self, p: Packet) -> PacketId {
        let id = self.alloc(p);
        self.live -= 1;
        id
    }

    /// Packets in the network (in queues, on links, held by switches).
    pub fn live(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_swaps_ends_and_echoes_the_data() {
        let mut d = Packet::data(7, 42, 3, 9, 4096, 1234, 2, SimTime::from_us(5));
        d.ecn = true;
        d.trimmed = true;
        let n = Packet::reply(&d, PacketKind::Nack, 64);
        assert_eq!((n.src, n.dst, n.seq, n.ev, n.route, n.size), (9, 3, 42, 1234, 2, 64));
        assert!(n.ecn && !n.trimmed);
        assert_eq!(n.sent_at, SimTime::from_us(5));
        assert_eq!(d.class(), CLASS_CONTROL, "a trimmed header travels as control");
        d.trimmed = false;
        assert_eq!(d.class(), CLASS_DATA);
        assert_eq!(n.class(), CLASS_CONTROL);
    }

    /// A packet taken out to travel by value still counts as in the network,
    /// and its slot is the next one lent.
    #[test]
    fn a_taken_packet_stays_live_and_frees_its_slot() {
        let mut pool = PacketPool::default();
        let a = pool.alloc(Packet::data(1, 7, 0, 1, 4096, 3, 0, SimTime::ZERO));
        let b = pool.alloc(Packet::data(1, 8, 0, 1, 4096, 3, 0, SimTime::ZERO));
        let on_link = pool.take(a);
        assert_eq!((pool.live(), on_link.seq), (2, 7));
        let back = pool.put(on_link);
        assert_eq!(
            (back, pool.live(), pool.get(back).seq),
            (a, 2, 7),
            "the freed slot is reused"
        );
        pool.free(back);
        pool.free(b);
        assert_eq!(pool.live(), 0);
    }

    /// Links hold packets by value: the switch policies' `tag` must stay in the padding.
    #[test]
    fn a_packet_is_forty_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 40);
    }
}
