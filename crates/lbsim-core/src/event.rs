//! The event queue, ordered by (time, insertion sequence), so events at the
//! same instant run in the order they were scheduled.
//!
//! The pending set stays small by construction: a port has at most one
//! "transmission done" and one "link delivers" event pending (packets on a
//! link wait in that link's FIFO), and each flow has at most one lazy
//! retransmission timer.

use crate::time::SimTime;

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
    /// A failure (index into the simulation's plans) begins or ends.
    Failure { idx: u32, begin: bool },
    /// Routing catches up with a port going down or coming back.
    RouteUpdate { port: u32, down: bool },
    /// Time-series sampling.
    SampleTick,
    /// A receiving host's EQDS credit pacer may issue its next credit.
    CreditPace { host: u32 },
    /// A flow's partial batch of coalesced ACKs has waited `transport.ack_delay` (lazy, may re-arm).
    AckFlush { flow: u32 },
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

    #[test]
    fn matches_a_sorted_reference_under_interleaving() {
        use crate::rng::{Rng, StreamTag};
        let mut rng = Rng::new(5, StreamTag::Workload, 9);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64, u32)> = Vec::new(); // (time, seq, id)
        let (mut now, mut seq, mut popped) = (0u64, 0u64, Vec::new());
        for id in 0..20_000u32 {
            // Schedule at or after now, sometimes far ahead, sometimes at now.
            let span = 1u64 << rng.below(40);
            let t = now + if rng.below(4) == 0 { 0 } else { rng.below(span) };
            seq += 1;
            q.push(SimTime(t), Event::FlowStart { flow: id });
            reference.push((t, seq, id));
            if rng.below(3) == 0 {
                let (t, e) = q.pop().unwrap();
                now = t.0;
                popped.push((t.0, e));
            }
        }
        while let Some((t, e)) = q.pop() {
            popped.push((t.0, e));
        }
        reference.sort();
        let want: Vec<(u64, Event)> = reference
            .iter()
            .map(|&(t, _, id)| (t, Event::FlowStart { flow: id }))
            .collect();
        // Interleaved pops see only what was pushed so far, so compare as multisets in time order.
        let mut got = popped.clone();
        got.sort_by_key(|&(t, e)| {
            (
                t,
                match e {
                    Event::FlowStart { flow } => flow,
                    _ => 0,
                },
            )
        });
        let mut w = want.clone();
        w.sort_by_key(|&(t, e)| {
            (
                t,
                match e {
                    Event::FlowStart { flow } => flow,
                    _ => 0,
                },
            )
        });
        assert_eq!(got, w);
        assert!(popped.windows(2).all(|p| p[0].0 <= p[1].0), "pops are in time order");
        assert!(q.is_empty());
    }
}
