//! Packets and the pool they live in. Packets move through the network by
//! id; freed slots are reused, so steady state allocates nothing.

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
    /// A trimmed packet `seq` reached the receiver.
    Nack,
    /// EQDS credit: `seq` is the cumulative number of credits the receiver
    /// has granted the flow, so a lost credit is made up by the next one.
    Credit,
    /// EQDS request-to-send: a sender that cannot send asks for credit.
    /// `seq` is the highest cumulative credit count it heard, `span` the
    /// credits it needs beyond that.
    Rts,
}

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
    /// Switches send it up the shortest uplink queue instead of hashing its EV (adaptive routing).
    pub adaptive: bool,
    /// `AckBatch`: how many logged seqs it acknowledges.
    pub span: u16,
    /// When the data packet (this copy) left the sender; echoed by the ACK for RTT samples.
    pub sent_at: SimTime,
}

impl Packet {
    /// Control packets (ACK, NACK, credits, RTS, trimmed headers) travel in the priority class.
    #[inline]
    pub fn is_priority(&self) -> bool {
        self.kind != PacketKind::Data || self.trimmed
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

    /// Packets currently allocated (in queues, on links).
    pub fn live(&self) -> usize {
        self.live
    }
}
