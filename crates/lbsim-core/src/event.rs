//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! events at the same instant run in the order they were scheduled.
//!
//! The pending set stays small by construction: a port has at most one
//! "transmission done" and one "link delivers" event pending (packets on a
//! link wait in that link's FIFO), and each flow has at most one lazy
//! retransmission timer.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What can happen. Indices are arena ids (see `net`, `transport`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serializing its current packet.
    TxDone { port: u32 },
    /// The packet at the head of a link's FIFO reaches the far end.
    LinkDeliver { port: u32 },
    /// A flow becomes active.
    FlowStart { flow: u32 },
    /// A flow's retransmission timer (lazy: may fire early and re-arm).
    FlowTimer { flow: u32 },
    /// A scheduled failure changes a port's state.
    PortState { port: u32, up: bool },
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::FlowStart { flow: 1 });
        q.push(SimTime(3), Event::FlowStart { flow: 2 });
        q.push(SimTime(5), Event::FlowStart { flow: 3 });
        q.push(SimTime(3), Event::FlowStart { flow: 4 });
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::FlowStart { flow } => flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }
}
