//! The event queue, ordered by (time, insertion sequence), so events at the
//! same instant run in the order they were scheduled.
//!
//! The pending set stays small by construction: a port has at most one
//! "transmission done" and one "link delivers" event pending (packets on a
//! link wait in that link's FIFO), and each flow has at most one lazy
//! retransmission timer.

use crate::time::SimTime;

/// What can happen. Indices are arena ids (see `net`, `transport`). The
/// declaration order is the order of classes at one instant: failures and
/// routing first, then the packets' walk, then the hosts' timers, new flows,
/// and sampling last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A failure (index into the simulation's plans) begins or ends.
    Failure { idx: u32, begin: bool },
    /// Routing catches up with a port going down or coming back.
    RouteUpdate { port: u32, down: bool },
    /// A port finished serializing its current packet.
    TxDone { port: u32 },
    /// The packet at the head of a link's FIFO reaches the far end.
    LinkDeliver { port: u32 },
    /// A switch policy's timer (it may release packets it holds).
    SwitchTimer { switch: u32, policy: u8 },
    /// A flow's retransmission timer (lazy: may fire early and re-arm).
    FlowTimer { flow: u32 },
    /// A flow's partial batch of coalesced ACKs has waited `transport.ack_delay` (lazy, may re-arm).
    AckFlush { flow: u32 },
    /// A receiving host's congestion-control agent (EQDS: its credit pacer) may act.
    ReceiverCc { host: u32 },
    /// A flow becomes active.
    FlowStart { flow: u32 },
    /// Time-series sampling.
    SampleTick,
}

impl Event {
    /// Class (4 bits) | entity id (32 bits) | flag (8 bits): a total order
    /// on events that does not depend on when they were scheduled, and from
    /// which the event is decoded again (`from_key`).
    #[inline]
    pub fn order_key(self) -> u64 {
        let (class, id, flag): (u64, u32, u8) = match self {
            Event::Failure { idx, begin } => (0, idx, begin as u8),
            Event::RouteUpdate { port, down } => (1, port, down as u8),
            Event::TxDone { port } => (2, port, 0),
            Event::LinkDeliver { port } => (3, port, 0),
            Event::SwitchTimer { switch, policy } => (4, switch, policy),
            Event::FlowTimer { flow } => (5, flow, 0),
            Event::AckFlush { flow } => (6, flow, 0),
            Event::ReceiverCc { host } => (7, host, 0),
            Event::FlowStart { flow } => (8, flow, 0),
            Event::SampleTick => (9, 0, 0),
        };
        class << 60 | (id as u64) << 8 | flag as u64
    }

    #[inline]
    pub fn from_key(key: u64) -> Event {
        let id = (key >> 8) as u32;
        let flag = key as u8;
        match key >> 60 {
            0 => Event::Failure {
                idx: id,
                begin: flag != 0,
            },
            1 => Event::RouteUpdate {
                port: id,
                down: flag != 0,
            },
            2 => Event::TxDone { port: id },
            3 => Event::LinkDeliver { port: id },
            4 => Event::SwitchTimer {
                switch: id,
                policy: flag,
            },
            5 => Event::FlowTimer { flow: id },
            6 => Event::AckFlush { flow: id },
            7 => Event::ReceiverCc { host: id },
            8 => Event::FlowStart { flow: id },
            _ => Event::SampleTick,
        }
    }
}

/// A monotone radix heap over 128-bit keys (time << 64 | sequence). Every
/// key pushed is at least the last key popped (events are never scheduled
/// in the past), so entries sit in buckets by the highest bit in which they
/// differ from the last popped key; a pop empties the lowest non-empty
/// bucket, redistributing it around its minimum. Each entry moves through at
/// most 128 buckets, usually a few, and scans are over small vectors: this
/// replaced a binary heap whose pops were a quarter of the run time.
pub struct EventQueue {
    buckets: Vec<Vec<(u128, Event)>>,
    last: u128,
    len: usize,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            buckets: (0..129).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            seq: 0,
        }
    }
}

#[inline]
fn bucket_of(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        self.seq += 1;
        let key = (time.0 as u128) << 64 | self.seq as u128;
        debug_assert!(key >= self.last, "event scheduled in the past");
        self.buckets[bucket_of(key, self.last)].push((key, event));
        self.len += 1;
    }

    /// Make bucket 0 hold the minimum entry.
    #[inline]
    fn settle(&mut self) -> bool {
        if !self.buckets[0].is_empty() {
            return true;
        }
        let Some(i) = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty()) else {
            return false;
        };
        let entries = std::mem::take(&mut self.buckets[i]);
        self.last = entries.iter().map(|e| e.0).min().expect("non-empty");
        for e in &entries {
            self.buckets[bucket_of(e.0, self.last)].push(*e);
        }
        // Give the (now empty) vector back so its capacity is reused.
        let mut v = entries;
        v.clear();
        if self.buckets[i].is_empty() {
            self.buckets[i] = v;
        }
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if !self.settle() {
            return None;
        }
        self.len -= 1;
        // Keys are unique, so bucket 0 holds exactly one entry.
        let (key, ev) = self.buckets[0].pop().expect("settled");
        Some((SimTime((key >> 64) as u64), ev))
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        if !self.settle() {
            return None;
        }
        Some(SimTime((self.buckets[0][0].0 >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
