//! A port is an output queue plus the link behind it: packets wait in the
//! queue, are serialized at the link rate, then travel for the link's fixed
//! latency in a FIFO (one pending event per link, as htsim's pipe does).
//!
//! Two classes share the port with strict priority: control (ACK, NACK,
//! trimmed headers) ahead of data. Only the data class has a byte capacity;
//! control packets are a few tens of bytes and are never dropped here.

use crate::packet::PacketId;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};
use std::collections::VecDeque;

pub type PortId = u32;

/// Which node a port belongs to or leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Host(u32),
    Switch(u32),
}

/// Queue behaviour shared by all switch ports of a scenario.
#[derive(Clone, Copy, Debug)]
pub struct QueueParams {
    /// Data-class capacity in bytes (drop-tail or trim beyond it).
    pub capacity: u64,
    /// RED-style ECN: probability rises linearly from 0 at `kmin` to 1 at `kmax` (bytes).
    pub kmin: u64,
    pub kmax: u64,
    /// Mark when a packet leaves the queue (REPS and ARCANE papers' choice) or when it joins.
    pub ecn_at_dequeue: bool,
    /// Cut a packet that does not fit to its header and forward it with priority.
    pub trimming: bool,
    /// Bytes a trimmed packet keeps.
    pub header_bytes: u32,
}

/// Packet loss on a working link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PortFault {
    None,
    /// Each packet is lost with this probability.
    Loss(f64),
    /// Every nth packet is lost; `seen` counts packets since the fault began.
    DropNth {
        n: u32,
        seen: u32,
    },
}

pub struct Port {
    pub name: String,
    pub from: Node,
    pub to: Node,
    pub rate: Rate,
    /// Propagation latency, plus the traversal latency of the switch it leads into.
    pub latency: SimTime,
    /// False while a failure holds the link down: what is sent onto it vanishes.
    pub up: bool,
    /// Failures holding the link down now, and as routing believes (it lags by the convergence delay).
    pub(crate) down_count: u32,
    pub(crate) routed_down: u32,
    /// The rate without any `degrade` failure (after static overrides).
    pub base_rate: Rate,
    /// Loss on a link that is up (random or every nth packet).
    pub(crate) fault: PortFault,
    pub params: QueueParams,
    /// Waiting packets with their wire size.
    pub(crate) prio: VecDeque<(PacketId, u32)>,
    pub(crate) data: VecDeque<(PacketId, u32)>,
    pub(crate) data_bytes: u64,
    /// The link is serializing until this time.
    pub(crate) busy_until: SimTime,
    /// Time of the one valid TxDone event, if scheduled (only when something
    /// waits behind the packet on the line, so idle ports cost no event per
    /// packet). A TxDone event at any other time is stale and ignored.
    pub(crate) tx_event_at: Option<SimTime>,
    /// Serialization time per byte when the rate divides 8e12 exactly (fast path).
    ps_per_byte: Option<u64>,
    /// Packets on the wire with their arrival time at the far end.
    pub(crate) wire: VecDeque<(SimTime, PacketId)>,
    pub(crate) rng: Rng,
    /// Draws for random loss, apart from the ECN draws so turning loss on does not reshuffle marking.
    pub(crate) fault_rng: Rng,
    /// Bytes and packets this port has put on the wire.
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Data packets its full queue dropped (congestion).
    pub drops: u64,
    /// Largest data-class occupancy seen, in bytes: over the run, and since the last sample.
    pub max_queue_bytes: u64,
    pub(crate) window_max_queue: u64,
}

impl Port {
    pub fn new(
        name: String,
        from: Node,
        to: Node,
        rate: Rate,
        latency: SimTime,
        params: QueueParams,
        rng: Rng,
        fault_rng: Rng,
    ) -> Self {
        Port {
            name,
            from,
            to,
            rate,
            latency,
            up: true,
            down_count: 0,
            routed_down: 0,
            base_rate: rate,
            fault: PortFault::None,
            params,
            prio: VecDeque::new(),
            data: VecDeque::new(),
            data_bytes: 0,
            busy_until: SimTime::ZERO,
            tx_event_at: None,
            ps_per_byte: Self::ps_per_byte(rate),
            wire: VecDeque::new(),
            rng,
            fault_rng,
            tx_bytes: 0,
            tx_packets: 0,
            drops: 0,
            max_queue_bytes: 0,
            window_max_queue: 0,
        }
    }

    /// Change the line rate (for packets serialized from now on).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.ps_per_byte = Self::ps_per_byte(rate);
    }

    fn ps_per_byte(rate: Rate) -> Option<u64> {
        8_000_000_000_000u64
            .is_multiple_of(rate.bps())
            .then(|| 8_000_000_000_000u64 / rate.bps())
    }

    /// Whether a packet arriving over this working link is lost to its fault.
    #[inline]
    pub(crate) fn fault_drops(&mut self) -> bool {
        match &mut self.fault {
            PortFault::None => false,
            PortFault::Loss(p) => {
                let p = *p;
                self.fault_rng.unit() < p
            }
            PortFault::DropNth { n, seen } => {
                *seen += 1;
                *seen % *n == 0
            }
        }
    }

    #[inline]
    pub fn serialization(&self, bytes: u64) -> SimTime {
        match self.ps_per_byte {
            Some(k) => SimTime(bytes * k),
            None => self.rate.serialization(bytes),
        }
    }

    /// Data bytes waiting plus what is left of the packet on the line: what
    /// a data packet joining now waits behind (adaptive routing's measure).
    #[inline]
    pub fn backlog_bytes(&self, now: SimTime) -> u64 {
        let on_line = if self.busy_until > now {
            self.rate.bytes_in(self.busy_until - now)
        } else {
            0
        };
        self.data_bytes + on_line
    }

    /// RED marking decision for a data packet at the given occupancy.
    #[inline]
    pub fn ecn_mark(&mut self, occupancy: u64) -> bool {
        let QueueParams { kmin, kmax, .. } = self.params;
        if occupancy <= kmin {
            false
        } else if occupancy >= kmax {
            true
        } else {
            let p = (occupancy - kmin) as f64 / (kmax - kmin) as f64;
            self.rng.unit() < p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    fn port(kmin: u64, kmax: u64) -> Port {
        let params = QueueParams {
            capacity: 1000,
            kmin,
            kmax,
            ecn_at_dequeue: true,
            trimming: false,
            header_bytes: 64,
        };
        Port::new(
            "p".into(),
            Node::Host(0),
            Node::Switch(0),
            Rate::gbps(400),
            SimTime(0),
            params,
            Rng::new(1, StreamTag::Port, 0),
            Rng::new(1, StreamTag::PortFault, 0),
        )
    }

    #[test]
    fn red_marking_is_linear_between_thresholds() {
        let mut p = port(200, 800);
        assert!(!p.ecn_mark(200));
        assert!(p.ecn_mark(800));
        let n = 20_000;
        let marked = (0..n).filter(|_| p.ecn_mark(350)).count() as f64 / n as f64;
        assert!((marked - 0.25).abs() < 0.02, "{marked}");
    }
}
