//! Events and the event queue.
//!
//! Events at the same instant run in an order fixed by the events
//! themselves, never by when they were scheduled: each event encodes to a
//! 64-bit order key (its class, a tie-break, the id of the entity that owns
//! it, a flag), and the queue orders by (time, key). Two pending events with
//! the same key are the same event, so their order cannot matter. A later
//! parallel engine that partitions the entities therefore reproduces the
//! sequential order bit for bit.
//!
//! The tie-break is a hash of the time and the entity: within a class, the
//! entities of one instant run in an order that changes from instant to
//! instant, so none is always first. (Ordering by entity id alone made the
//! same ports win every tie of a synchronised run, which biased adaptive
//! routing's queue choices by several per cent.)
//!
//! The pending set stays small by construction: a port has at most one
//! "transmission done" and one "link delivers" event pending (packets on a
//! link wait in that link's FIFO), and each flow has at most one lazy
//! retransmission timer.

use crate::rng::mix64;
use crate::time::SimTime;

/// What can happen. Indices are arena ids (see `net`, `transport`). The
/// declaration order is the order of classes at one instant: failures and
/// routing first, then the packets' walk, then the hosts' timers, new flows,
/// sampling, and last the ends of PFC pauses. (Classes added later go after
/// the existing ones: renumbering a class would reshuffle its tie-breaks.)
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
    /// A port's PFC pause of some class may have run out (lazy: checks its state).
    PauseEnd { port: u32 },
    /// A switch re-sends the pauses still in force on one of its ports (PFC refresh).
    PfcRefresh { port: u32 },
    /// Look for a PFC deadlock: nothing moved since the last look while pauses are in force.
    PfcWatchdog,
    /// A rate-paced flow (DCQCN) may send again, or its rate may change.
    FlowPace { flow: u32 },
    /// A load balancer's host agent (FaCa's prober) acts at a host.
    LbAgent { host: u32 },
}

/// The classes (order keys' top 4 bits) of the events the prefetch looks at.
const TX_DONE: u64 = 2;
const LINK_DELIVER: u64 = 3;

impl Event {
    /// Class (4 bits) | tie-break (20 bits) | entity id (32 bits) | flag (8
    /// bits): a total order on the events of one instant that does not
    /// depend on when they were scheduled, and from which the event is
    /// decoded again (`from_key`).
    #[inline(always)]
    pub fn order_key(self, time: SimTime) -> u64 {
        let key = self.identity();
        key | (mix64(time.0 ^ key) >> 44) << 40
    }

    /// The key without its tie-break: class | id | flag.
    #[inline(always)]
    fn identity(self) -> u64 {
        let (class, id, flag): (u64, u32, u8) = match self {
            Event::Failure { idx, begin } => (0, idx, begin as u8),
            Event::RouteUpdate { port, down } => (1, port, down as u8),
            Event::TxDone { port } => (TX_DONE, port, 0),
            Event::LinkDeliver { port } => (LINK_DELIVER, port, 0),
            Event::SwitchTimer { switch, policy } => (4, switch, policy),
            Event::FlowTimer { flow } => (5, flow, 0),
            Event::AckFlush { flow } => (6, flow, 0),
            Event::ReceiverCc { host } => (7, host, 0),
            Event::FlowStart { flow } => (8, flow, 0),
            Event::SampleTick => (9, 0, 0),
            Event::PauseEnd { port } => (10, port, 0),
            Event::PfcRefresh { port } => (11, port, 0),
            Event::PfcWatchdog => (12, 0, 0),
            Event::FlowPace { flow } => (13, flow, 0),
            Event::LbAgent { host } => (14, host, 0),
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
            TX_DONE => Event::TxDone { port: id },
            LINK_DELIVER => Event::LinkDeliver { port: id },
            4 => Event::SwitchTimer {
                switch: id,
                policy: flag,
            },
            5 => Event::FlowTimer { flow: id },
            6 => Event::AckFlush { flow: id },
            7 => Event::ReceiverCc { host: id },
            8 => Event::FlowStart { flow: id },
            9 => Event::SampleTick,
            10 => Event::PauseEnd { port: id },
            11 => Event::PfcRefresh { port: id },
            12 => Event::PfcWatchdog,
            13 => Event::FlowPace { flow: id },
            _ => Event::LbAgent { host: id },
        }
    }
}

/// An event as the engine's prefetch sees it: the port a transmission's
/// end or a link's delivery happens at, or something else. Decoded from
/// the order key without building the whole `Event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortEvent {
    TxDone(u32),
    LinkDeliver(u32),
    Other,
}

impl PortEvent {
    #[inline(always)]
    fn of_key(key: u64) -> PortEvent {
        match key >> 60 {
            TX_DONE => PortEvent::TxDone((key >> 8) as u32),
            LINK_DELIVER => PortEvent::LinkDeliver((key >> 8) as u32),
            _ => PortEvent::Other,
        }
    }
}

/// Pending events: a monotone radix heap over times, plus the events of
/// the current instant sorted by their order keys.
///
/// The radix heap holds (time, key) pairs bucketed by the highest bit in
/// which their time differs from the last instant taken out; taking the
/// next instant empties the lowest non-empty bucket, redistributing it
/// around its minimum, and moves every event of that instant, once, into
/// `instant`. Events scheduled for the current instant (zero-delay
/// consequences) join `instant` directly, so the order within an instant
/// is always (key), whatever the order of scheduling: a zero-delay event
/// for an entity that sorts before the one being processed runs next.
/// Every time pushed is at least the current instant's: events are never
/// scheduled in the past.
///
/// The instant is a sorted vector, not a heap: it is sorted once when it
/// is taken out (a few to a few hundred events; a zero-delay event is
/// inserted in place), each pop is a step forward, and the engine can see
/// several events ahead for free. A binary heap cost 9 % more instructions
/// per run. (A timing wheel of 512 ps slots instead of the radix heap cut
/// a tenth more but was slower: its slots' buffers grew to 16 MB.)
pub struct EventQueue {
    /// An array, not a vector: `bucket_of` is at most 64, so indexing needs no bounds check.
    buckets: Box<[Vec<(u64, u64)>; 65]>,
    /// The last instant taken out of the radix heap.
    last: u64,
    /// The current instant's order keys, ascending; those before `head` have run.
    instant: Vec<u64>,
    head: usize,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            last: 0,
            instant: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

#[inline]
fn bucket_of(time: u64, last: u64) -> usize {
    (64 - (time ^ last).leading_zeros()) as usize
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    pub fn push(&mut self, time: SimTime, event: Event) {
        debug_assert!(time.0 >= self.last, "event scheduled in the past");
        let key = event.order_key(time);
        self.len += 1;
        if time.0 == self.last && self.head < self.instant.len() {
            let at = self.head + self.instant[self.head..].partition_point(|&k| k < key);
            self.instant.insert(at, key);
            return;
        }
        self.buckets[bucket_of(time.0, self.last)].push((time.0, key));
    }

    /// Make `instant` hold the events of the next instant, if any.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        if self.head < self.instant.len() {
            return true;
        }
        self.settle_next()
    }

    /// The current instant is done: take the next one out of the buckets.
    #[inline(never)]
    fn settle_next(&mut self) -> bool {
        if self.buckets[0].is_empty() {
            let Some(i) = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty()) else {
                return false;
            };
            let entries = std::mem::take(&mut self.buckets[i]);
            self.last = entries.iter().map(|e| e.0).min().expect("non-empty");
            for &e in &entries {
                self.buckets[bucket_of(e.0, self.last)].push(e);
            }
            // Give the (now empty) vector back so its capacity is reused.
            let mut v = entries;
            v.clear();
            if self.buckets[i].is_empty() {
                self.buckets[i] = v;
            }
        }
        // Bucket 0 holds exactly the entries at `last`.
        self.instant.clear();
        self.head = 0;
        self.instant.extend(self.buckets[0].drain(..).map(|(_, key)| key));
        self.instant.sort_unstable();
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        if !self.settle() {
            return None;
        }
        let key = self.instant[self.head];
        self.head += 1;
        self.len -= 1;
        Some((SimTime(self.last), Event::from_key(key)))
    }

    /// The next `N` events of the current instant, as far as it has them,
    /// seen as far as the engine's prefetch needs (`PortEvent`): it asks
    /// the cache for their state while the current one runs.
    #[inline(always)]
    pub fn peek_in_instant<const N: usize>(&self) -> [PortEvent; N] {
        let ahead = &self.instant[self.head..];
        std::array::from_fn(|i| ahead.get(i).map_or(PortEvent::Other, |&key| PortEvent::of_key(key)))
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle().then_some(SimTime(self.last))
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
    use crate::rng::{Rng, StreamTag};

    const ALL: [Event; 15] = [
        Event::Failure { idx: 3, begin: true },
        Event::RouteUpdate { port: 9, down: false },
        Event::TxDone { port: 1 },
        Event::LinkDeliver { port: u32::MAX },
        Event::SwitchTimer { switch: 4, policy: 2 },
        Event::FlowTimer { flow: 5 },
        Event::AckFlush { flow: 6 },
        Event::ReceiverCc { host: 7 },
        Event::FlowStart { flow: 8 },
        Event::SampleTick,
        Event::PauseEnd { port: 3 },
        Event::PfcRefresh { port: 4 },
        Event::PfcWatchdog,
        Event::FlowPace { flow: 9 },
        Event::LbAgent { host: 10 },
    ];

    #[test]
    fn keys_decode_to_their_event_and_follow_the_class_order() {
        for t in [0, 1, 83_000, u64::MAX / 3] {
            let t = SimTime(t);
            for e in ALL {
                assert_eq!(Event::from_key(e.order_key(t)), e);
            }
            assert!(ALL.windows(2).all(|w| w[0].order_key(t) < w[1].order_key(t)));
        }
    }

    /// Within a class, which entity goes first changes from instant to
    /// instant, and over many instants each goes first about as often.
    #[test]
    fn ties_within_a_class_rotate_between_instants() {
        let (a, b) = (Event::LinkDeliver { port: 1 }, Event::LinkDeliver { port: 2 });
        let first = (0..10_000u64)
            .filter(|&t| a.order_key(SimTime(t)) < b.order_key(SimTime(t)))
            .count();
        assert!(
            (4_700..5_300).contains(&first),
            "port 1 first at {first} of 10 000 instants"
        );
    }

    /// The look-ahead the engine prefetches by names the events that `pop`
    /// then returns, in order.
    #[test]
    fn peeking_in_the_instant_names_the_next_events() {
        let mut rng = Rng::new(7, StreamTag::Port, 0);
        for n in 0..40u32 {
            let mut q = EventQueue::new();
            for _ in 0..n {
                q.push(
                    SimTime(9),
                    Event::TxDone {
                        port: rng.below(1000) as u32,
                    },
                );
            }
            q.push(SimTime(20), Event::SampleTick);
            q.push(SimTime(9), Event::LinkDeliver { port: 5 });
            q.push(SimTime(9), Event::FlowStart { flow: 5 });
            let mut popped = Vec::new();
            let mut peeked = Vec::new();
            while q.peek_time() == Some(SimTime(9)) {
                peeked.push(q.peek_in_instant::<3>());
                popped.push(q.pop().expect("pending").1);
            }
            let seen = |e: Option<Event>| match e {
                Some(Event::TxDone { port }) => PortEvent::TxDone(port),
                Some(Event::LinkDeliver { port }) => PortEvent::LinkDeliver(port),
                _ => PortEvent::Other,
            };
            for (i, ahead) in peeked.iter().enumerate() {
                for (k, &e) in ahead.iter().enumerate() {
                    assert_eq!(e, seen(popped.get(i + k).copied()), "with {n} events, {k} ahead");
                }
            }
            assert_eq!(peeked[n as usize][0], PortEvent::LinkDeliver(5));
            assert_eq!(peeked[n as usize][1], PortEvent::Other, "a new flow");
        }
    }

    #[test]
    fn same_instant_order_is_by_key_not_by_insertion() {
        let evs = [
            Event::FlowStart { flow: 1 },
            Event::LinkDeliver { port: 7 },
            Event::LinkDeliver { port: 2 },
            Event::Failure { idx: 0, begin: true },
            Event::TxDone { port: 4 },
        ];
        let drain = |order: &mut dyn Iterator<Item = Event>| {
            let mut q = EventQueue::new();
            order.for_each(|e| q.push(SimTime(5), e));
            std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect::<Vec<_>>()
        };
        let forward = drain(&mut evs.iter().copied());
        assert_eq!(forward, drain(&mut evs.iter().rev().copied()));
        assert_eq!(forward[0], evs[3], "failures first");
        assert_eq!(forward[1], evs[4], "then transmissions");
        assert_eq!(forward[4], evs[0], "new flows last");
    }

    /// A zero-delay event for an entity that sorts before the one being
    /// processed runs next, before the rest of the instant.
    #[test]
    fn a_zero_delay_event_below_the_last_key_runs_next() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::LinkDeliver { port: 9 });
        q.push(SimTime(5), Event::FlowStart { flow: 0 });
        q.push(SimTime(6), Event::TxDone { port: 0 });
        assert_eq!(q.pop(), Some((SimTime(5), Event::LinkDeliver { port: 9 })));
        q.push(SimTime(5), Event::TxDone { port: 1 });
        q.push(SimTime(5), Event::LinkDeliver { port: 3 });
        assert_eq!(q.peek_time(), Some(SimTime(5)));
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            vec![
                (SimTime(5), Event::TxDone { port: 1 }),
                (SimTime(5), Event::LinkDeliver { port: 3 }),
                (SimTime(5), Event::FlowStart { flow: 0 }),
                (SimTime(6), Event::TxDone { port: 0 }),
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_sorted_reference_under_interleaving() {
        let mut rng = Rng::new(5, StreamTag::Workload, 9);
        let mut q = EventQueue::new();
        let mut pending: Vec<(u64, u64)> = Vec::new(); // (time, key), what the queue holds
        let mut now = 0u64;
        let mut popped = 0;
        for id in 0..20_000u32 {
            // Schedule at or after now, sometimes far ahead, sometimes at now.
            let span = 1u64 << rng.below(40);
            let t = now + if rng.below(4) == 0 { 0 } else { rng.below(span) };
            let e = Event::FlowTimer { flow: id };
            q.push(SimTime(t), e);
            pending.push((t, e.order_key(SimTime(t))));
            if rng.below(3) == 0 {
                let (t, e) = q.pop().unwrap();
                // What pops is the least pending entry, unless a zero-delay
                // push sorted below the instant's last key (then it is that one).
                let key = (t.0, e.order_key(t));
                let i = pending.iter().position(|&p| p == key).expect("pushed");
                assert!(t.0 >= now);
                let least = *pending.iter().min().unwrap();
                assert!(least == key || least.0 == t.0, "out of order");
                pending.swap_remove(i);
                now = t.0;
                popped += 1;
            }
        }
        let mut rest: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.0, e.order_key(t)))
            .collect();
        assert!(rest.windows(2).all(|w| w[0] <= w[1]), "the tail drains in order");
        rest.sort();
        pending.sort();
        assert_eq!(rest, pending);
        assert!(popped > 1000 && q.is_empty());
    }
}
