//! In-band network telemetry for FaCa's probes (FaCa §5.3): what a switch
//! appends to a probe, and the store the records live in while the probe
//! and its echo travel (a `Packet` is 40 bytes and carries only the probe's
//! serial, in `tag`). The switches' INT policy writes, the hosts' agent
//! reads; both hold the same store.

use crate::time::{Rate, SimTime};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// One switch's record on a probe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntRecord {
    pub switch: u32,
    /// The port the switch sent the probe out of.
    pub port: u32,
    /// What the port had queued ahead of the probe, as time: backlog / rate.
    pub queue_delay: SimTime,
    /// The port's rate (its link's capacity) now.
    pub rate: Rate,
    /// The link's propagation latency (plus the next switch's).
    pub latency: SimTime,
    /// Bits per second the port sent over the window before the probe.
    pub used_bps: f64,
}

/// A probe on its way, and on its echo's way back.
#[derive(Clone, Debug, Default)]
pub struct ProbeTrace {
    pub src: u32,
    pub dst: u32,
    pub ev: u16,
    pub sent_at: SimTime,
    /// The probe's one-way delay, once it reached its destination.
    pub one_way: Option<SimTime>,
    pub hops: Vec<IntRecord>,
}

/// The records of the probes in flight, by serial (`Packet::tag`).
#[derive(Default, Debug)]
pub struct IntStore {
    next: u32,
    pub traces: BTreeMap<u32, ProbeTrace>,
    /// Records the switches appended, in all.
    pub records: u64,
}

pub type SharedStore = Rc<RefCell<IntStore>>;

impl IntStore {
    /// A new probe's serial.
    pub fn open(&mut self, src: u32, dst: u32, ev: u16, now: SimTime) -> u32 {
        let serial = self.next;
        self.next = self.next.wrapping_add(1);
        self.traces.insert(
            serial,
            ProbeTrace {
                src,
                dst,
                ev,
                sent_at: now,
                one_way: None,
                hops: Vec::new(),
            },
        );
        serial
    }

    /// A switch appends its record to probe `serial` (ignored if the trace was dropped).
    pub fn append(&mut self, serial: u32, rec: IntRecord) {
        if let Some(t) = self.traces.get_mut(&serial) {
            t.hops.push(rec);
            self.records += 1;
        }
    }

    /// Forget probes sent before `before` (lost on the way: their echo never came).
    pub fn expire(&mut self, before: SimTime) {
        self.traces.retain(|_, t| t.sent_at >= before);
    }
}
