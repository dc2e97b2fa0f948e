//! A switch's flowlet table (LetFlow, CONGA): per flow, the port its
//! current flowlet leaves by and when its last packet passed. A packet that
//! follows the flow's previous one by at most the flowlet timeout belongs
//! to the same flowlet (LetFlow §3; the ConWeave artifact's
//! `letflow-routing.cc` and `conga-routing.cc` test `now − active ≤ timeout`);
//! a longer gap starts a new one, whose port the policy chooses.
//!
//! Keyed by the flow (the artifact keys its tables by queue pair, lbsim's
//! flow), exactly, with no hash collisions between flows. Entries idle for
//! longer than `keep` are forgotten: a lookup treats them as absent, and
//! they are swept out whenever the table has doubled since the last sweep,
//! so the table holds the recently active flows only and sweeping never
//! changes a decision.

use crate::net::PortId;
use crate::rng::mix64;
use crate::time::SimTime;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// What the table knows about a flow's next packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flowlet {
    /// It continues the current flowlet, which leaves by this port.
    Continues(PortId),
    /// It starts a new flowlet; the previous one (if remembered) left by this port.
    Starts(Option<PortId>),
}

#[derive(Clone, Copy)]
struct Entry {
    last: SimTime,
    port: PortId,
}

/// Hashes a flow id (a `u32`) with the engine's mixer: cheap and deterministic.
#[derive(Default)]
pub struct FlowHasher(u64);

impl Hasher for FlowHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = n as u64;
    }
    fn finish(&self) -> u64 {
        mix64(self.0)
    }
}

pub struct Flowlets {
    map: HashMap<u32, Entry, BuildHasherDefault<FlowHasher>>,
    timeout: SimTime,
    /// Entries idle longer than this are forgotten (at least `timeout`).
    keep: SimTime,
    /// Sweep when the table reaches this size.
    sweep_at: usize,
}

impl Flowlets {
    /// A table with flowlet gap `timeout` that remembers a flow's last port for `keep` (≥ timeout).
    pub fn new(timeout: SimTime, keep: SimTime) -> Self {
        Flowlets {
            map: HashMap::default(),
            timeout,
            keep: keep.max(timeout),
            sweep_at: 64,
        }
    }

    /// Look a flow's packet up at `now`; a continuing flowlet is refreshed.
    #[inline]
    pub fn lookup(&mut self, flow: u32, now: SimTime) -> Flowlet {
        match self.map.get_mut(&flow) {
            Some(e) if now - e.last <= self.timeout => {
                e.last = now;
                Flowlet::Continues(e.port)
            }
            Some(e) if now - e.last <= self.keep => Flowlet::Starts(Some(e.port)),
            _ => Flowlet::Starts(None),
        }
    }

    /// The flow's packet at `now` leaves by `port`: a new flowlet, or a continuing one moved.
    #[inline]
    pub fn set(&mut self, flow: u32, now: SimTime, port: PortId) {
        self.map.insert(flow, Entry { last: now, port });
        if self.map.len() >= self.sweep_at {
            let keep = self.keep;
            self.map.retain(|_, e| now - e.last <= keep);
            self.sweep_at = (2 * self.map.len()).max(64);
        }
    }

    /// Flows remembered (swept lazily: may include forgotten ones).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_of_exactly_the_timeout_continues_one_picosecond_more_starts_anew() {
        let us = SimTime::from_us;
        let mut t = Flowlets::new(us(100), us(500));
        assert_eq!(t.lookup(7, us(0)), Flowlet::Starts(None));
        t.set(7, us(0), 3);
        assert_eq!(t.lookup(7, us(100)), Flowlet::Continues(3));
        assert_eq!(t.lookup(7, us(200)), Flowlet::Continues(3), "refreshed at 100 us");
        assert_eq!(t.lookup(7, us(300) + SimTime(1)), Flowlet::Starts(Some(3)));
        // Forgotten after `keep` of silence.
        assert_eq!(t.lookup(7, us(700) + SimTime(1)), Flowlet::Starts(None));
        assert_eq!(t.lookup(8, us(0)), Flowlet::Starts(None), "other flows are apart");
    }

    #[test]
    fn sweeping_keeps_the_table_to_the_active_flows_without_changing_answers() {
        let us = SimTime::from_us;
        let mut t = Flowlets::new(us(1), us(1));
        for f in 0..10_000u32 {
            // One new flow every 10 ns: about 100 are within 1 us of the newest.
            let now = SimTime(f as u64 * 10_000);
            assert_eq!(t.lookup(f, now), Flowlet::Starts(None));
            t.set(f, now, f % 4);
            if f >= 50 {
                assert_eq!(t.lookup(f - 50, now), Flowlet::Continues((f - 50) % 4));
            }
        }
        assert!(t.len() < 400, "{}", t.len());
    }
}
