//! A port is an output queue plus the link behind it: packets wait in the
//! queue (`net::queue`), are serialized at the link rate, then travel for
//! the link's fixed latency in a FIFO (one pending event per link, as
//! htsim's pipe does). Every port knows the port of the same cable in the
//! other direction (`reverse`).

use super::queue::{Ingress, Queue, TwoClassQueue};
use crate::packet::Packet;
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

/// A port's PFC state: when each class's pause ends, and what it did.
#[derive(Clone, Debug, Default)]
pub struct PfcPort {
    pub pause_until: [SimTime; 8],
    /// A `PauseEnd` event is pending for this time.
    pub end_event_at: Option<SimTime>,
    /// A `PfcRefresh` event is pending (this port sends pauses upstream).
    pub refresh_pending: bool,
    /// Since when some class has been paused.
    pub paused_since: Option<SimTime>,
    pub paused_total: SimTime,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub pauses_received: u64,
}

/// Fields are laid out by hand (`repr(C)`): what every packet touches
/// first, its queue's state right after, what failures, PFC and reports
/// read last, so a packet's visit costs as few cache lines as we can. A
/// port starts a cache line (six lines in all), so which fields share a
/// line does not vary from port to port.
#[repr(C, align(64))]
pub struct Port {
    /// The link is serializing until this time.
    pub(crate) busy_until: SimTime,
    /// Time of the one valid TxDone event, `SimTime::MAX` if none is
    /// scheduled (only when something waits behind the packet on the line,
    /// so idle ports cost no event per packet). A TxDone event at any other
    /// time is stale and ignored. (Not an `Option`: 8 bytes instead of 16
    /// keep the queue's hot fields off the port's fifth line.)
    pub(crate) tx_event_at: SimTime,
    /// Serialization time per byte when the rate divides 8e12 exactly (fast
    /// path), else 0 (a rate that divides it gives at least 1).
    ps_per_byte: u64,
    /// Propagation latency, plus the traversal latency of the switch it leads into.
    pub latency: SimTime,
    pub from: Node,
    pub to: Node,
    /// False while a failure holds the link down: what is sent onto it vanishes.
    pub up: bool,
    /// Priority classes the node at the far end has paused (PFC; bit c: class c).
    pub paused: u8,
    /// A `cable_ber` failure counts every packet this port puts on its line.
    pub(crate) counts_entries: bool,
    /// The line starts its next packet when the port is next looked at
    /// (`Simulation::catch_up`), not at a `TxDone` event: a switch port whose
    /// sending depends only on its own queue, or a NIC whose sending depends
    /// only on its host (see `Simulation::decide_lazy_lines`).
    pub(crate) lazy_line: bool,
    /// Loss on a link that is up (random or every nth packet).
    pub(crate) fault: PortFault,
    /// Packets on the wire with their arrival time at the far end, by value
    /// (`PacketPool::take`): the far end reads them from here, one cache
    /// miss instead of two.
    pub(crate) wire: VecDeque<(SimTime, Packet)>,
    /// Bytes and packets this port has put on the wire.
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub queue: Queue,
    pub rate: Rate,
    pub name: String,
    /// The same cable's other direction.
    pub reverse: PortId,
    /// This port's index among its node's ports (a shared buffer's accounting index).
    pub local: u16,
    /// How a packet arriving over this link looks to the node it reaches.
    pub arrival: Ingress,
    /// PFC state and counters; None until the port sends or receives a frame.
    pub pfc: Option<Box<PfcPort>>,
    /// Failures holding the link down now, and as routing believes (it lags by the convergence delay).
    pub(crate) down_count: u32,
    pub(crate) routed_down: u32,
    /// The rate without any `degrade` failure (after static overrides).
    pub base_rate: Rate,
    /// Draws for random loss, apart from the queue's ECN draws so turning loss on does not reshuffle marking.
    pub(crate) fault_rng: Rng,
}

impl Port {
    /// Ask the cache for what a delivery at the far end reads: where the
    /// link leads, whether it is up or lossy, and its FIFO (the first two lines).
    #[inline(always)]
    pub(crate) fn prefetch_for_delivery(&self) {
        const END: usize = std::mem::offset_of!(Port, wire) + std::mem::size_of::<VecDeque<(SimTime, Packet)>>();
        crate::cache::prefetch_head(self, END);
    }

    /// Ask the cache for what queueing and sending read: everything up to
    /// the queue's hot part's end (four lines); the queue's cold part and
    /// the port's tail (`rate` on: names, PFC state, failure counts) not.
    #[inline(always)]
    pub(crate) fn prefetch_for_sending(&self) {
        const END: usize = std::mem::offset_of!(Port, queue) + TwoClassQueue::HOT_BYTES;
        const _: () = assert!(END <= 4 * 64, "the port's hot part grew past four lines");
        crate::cache::prefetch_head(self, END);
    }

    /// A port with its queue; `reverse` is set when the cable's other direction exists.
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: String, from: Node, to: Node, rate: Rate, latency: SimTime, queue: Queue, fault_rng: Rng) -> Self {
        Port {
            name,
            from,
            to,
            reverse: PortId::MAX,
            local: 0,
            arrival: Ingress {
                back: PortId::MAX,
                local: 0,
            },
            paused: 0,
            counts_entries: false,
            lazy_line: false,
            pfc: None,
            rate,
            latency,
            up: true,
            down_count: 0,
            routed_down: 0,
            base_rate: rate,
            fault: PortFault::None,
            fault_rng,
            queue,
            busy_until: SimTime::ZERO,
            tx_event_at: SimTime::MAX,
            ps_per_byte: Self::ps_per_byte(rate),
            wire: VecDeque::new(),
            tx_bytes: 0,
            tx_packets: 0,
        }
    }

    /// Change the line rate (for packets serialized from now on).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.ps_per_byte = Self::ps_per_byte(rate);
    }

    fn ps_per_byte(rate: Rate) -> u64 {
        match 8_000_000_000_000u64.is_multiple_of(rate.bps()) {
            true => 8_000_000_000_000u64 / rate.bps(),
            false => 0,
        }
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
            0 => self.rate.serialization(bytes),
            k => SimTime(bytes * k),
        }
    }

    /// Time some class of this port has been paused by PFC, up to `now`.
    pub fn paused_time(&self, now: SimTime) -> SimTime {
        self.pfc.as_ref().map_or(SimTime::ZERO, |p| {
            p.paused_total + p.paused_since.map_or(SimTime::ZERO, |since| now - since)
        })
    }

    /// Data bytes waiting plus what is left of the packet on the line: what
    /// a data packet joining now waits behind (adaptive routing's measure).
    #[inline]
    pub fn backlog_bytes(&self, now: SimTime) -> u64 {
        use super::queue::QueueDiscipline;
        let on_line = if self.busy_until > now {
            self.rate.bytes_in(self.busy_until - now)
        } else {
            0
        };
        self.queue.backlog_bytes() + on_line
    }

    /// Bytes of every packet the port holds, control included, counting a
    /// packet on the line whole up to and including the picosecond its last
    /// bit leaves: the REPS artifact's `queuesize()` as its switch reads it
    /// (`fat_tree_switch.cpp` `adaptive_nvidia`; `CompositeQueue` counts a
    /// packet until `completeService`, and its runs handle an arrival before
    /// a completion at the same time). Read at decision time only: nothing
    /// on the packet path keeps it.
    pub fn backlog_whole_packets(&self, now: SimTime) -> u64 {
        use super::queue::QueueDiscipline;
        // Packets stay on the wire until they reach the far end, a link
        // latency after their last bit left; the newest are at the back.
        let on_line: u64 = (self.wire.iter().rev())
            .take_while(|(arrival, _)| *arrival >= now + self.latency)
            .map(|(_, pkt)| pkt.size as u64)
            .sum();
        self.queue.all_bytes_waiting() + on_line
    }
}
