//! Queue disciplines: what an output port does with a packet that arrives
//! to wait for its line (admit, mark, trim or drop) and which packet it
//! serializes next. A port holds one `Queue`; the engine calls only the
//! `QueueDiscipline` interface, so a new discipline (a shared buffer with
//! PFC, say) is a new file and one variant here, not a patch to the engine.
//!
//! A discipline sees the packet (its priority class is `Packet::class`),
//! the port it came in by, the time, which classes the downstream has
//! paused, and its switch's shared buffer if it has one; it may ask for PFC
//! frames to be sent upstream (`QueueCtx::signals`).

pub mod shared;
mod two_class;

pub use shared::{SharedBuffer, SharedQueue};
pub use two_class::{QueueParams, TwoClassQueue};

use super::PortId;
use crate::packet::{Packet, PacketId, PacketPool};
use crate::time::SimTime;

/// Where an arriving packet came in, seen from the switch it arrived at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ingress {
    /// This switch's port back to the upstream node (where a pause goes).
    pub back: PortId,
    /// That port's index among the switch's ports (its ingress accounting).
    pub local: u16,
}

/// A PFC frame a queue asks for: tell the node at the far end of `port`
/// to pause `class` for `duration` (zero: resume).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcSignal {
    pub port: PortId,
    pub class: u8,
    pub duration: SimTime,
}

/// What a queue sees of the rest of the switch on each call.
pub struct QueueCtx<'a> {
    pub now: SimTime,
    /// Classes the downstream has paused on this port (bit c: class c); never dequeue them.
    pub paused: u8,
    /// The switch's shared buffer, for disciplines that share one.
    pub buffer: Option<&'a mut SharedBuffer>,
    /// PFC frames to send; the engine sends them after the call.
    pub signals: &'a mut Vec<PfcSignal>,
}

/// What a queue did with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Waiting for the line.
    Queued,
    /// Waiting, and marked congestion-experienced on the way in.
    Marked,
    /// Cut to its header and queued in the control class (packet trimming).
    Trimmed,
    /// Not admitted: the caller frees it and counts a congestion drop.
    Dropped,
    /// Queued (and marked on the way in if `marked`), and to make room
    /// packets already waiting were pushed out: the caller takes them with
    /// `take_victim` and drops them (each counts against its own flow).
    QueuedEvicting { marked: bool },
    /// Queued (marked if `marked`), and to make room the newest waiting data
    /// packet was cut to its header and moved to the control class (the REPS
    /// artifact's full queue with trimming): the caller cuts it in the pool
    /// (`TwoClassQueue::trim_victim`) and counts a trim.
    QueuedTrimming { marked: bool },
}

/// The packet a free line takes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub id: PacketId,
    /// Its size on the wire (queues keep it so dequeuing needs no pool access).
    pub size: u32,
    /// Marked congestion-experienced on the way out.
    pub marked: bool,
}

/// Counters every discipline keeps about itself. `repr(C)`: the two
/// high-water marks, which every admission writes, first
/// (`TwoClassQueue::HOT_BYTES`).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct QueueStats {
    /// Largest data backlog over the run, in bytes.
    pub max_bytes: u64,
    /// Largest data backlog since the sampler last looked (`take_window_max`).
    pub window_max: u64,
    /// Data packets dropped for want of room.
    pub drops: u64,
    /// Waiting data packets a full queue pushed out for an arrival (dropped,
    /// and counted in `drops`, or trimmed): `queue.full_drop = "coin_newest"`.
    pub pushed_out: u64,
}

pub trait QueueDiscipline {
    /// A packet arrives by `ingress` (None: made by this node). The queue
    /// may rewrite it (trim, mark).
    fn enqueue(&mut self, id: PacketId, pkt: &mut Packet, ingress: Option<Ingress>, ctx: &mut QueueCtx) -> Admission;
    /// The line is free: the next packet to serialize, if any waits (none of a paused class).
    fn dequeue(&mut self, pool: &mut PacketPool, ctx: &mut QueueCtx) -> Option<Dequeued>;
    fn is_empty(&self) -> bool;
    /// Data bytes waiting (what adaptive routing compares, what sampling records).
    fn backlog_bytes(&self) -> u64;
    /// Bytes waiting of every class, control included (adaptive routing's
    /// `whole_packets` measure). Read only when a switch compares queues.
    fn all_bytes_waiting(&self) -> u64 {
        self.backlog_bytes()
    }
    fn stats(&self) -> &QueueStats;
    /// The largest backlog since the last call, then start a new window.
    fn take_window_max(&mut self) -> u64;
    /// After `Admission::QueuedEvicting` (or `QueuedTrimming`): the packets pushed out, one per call.
    fn take_victim(&mut self) -> Option<PacketId> {
        None
    }
}

/// The disciplines lbsim has; a port holds one.
pub enum Queue {
    /// Strict-priority control class ahead of a drop-tail or trimming data
    /// class with RED-style ECN marking (the REPS/htsim switch).
    TwoClass(TwoClassQueue),
    /// Eight classes in a shared buffer with dynamic thresholds and PFC (the RDMA switch).
    Shared(Box<SharedQueue>),
    #[cfg(test)]
    HeadDrop(tests::HeadDrop),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Queue::TwoClass($q) => $e,
            Queue::Shared($q) => $e,
            #[cfg(test)]
            Queue::HeadDrop($q) => $e,
        }
    };
}

impl QueueDiscipline for Queue {
    #[inline]
    fn enqueue(&mut self, id: PacketId, pkt: &mut Packet, ingress: Option<Ingress>, ctx: &mut QueueCtx) -> Admission {
        dispatch!(self, q => q.enqueue(id, pkt, ingress, ctx))
    }
    #[inline]
    fn dequeue(&mut self, pool: &mut PacketPool, ctx: &mut QueueCtx) -> Option<Dequeued> {
        dispatch!(self, q => q.dequeue(pool, ctx))
    }
    #[inline]
    fn is_empty(&self) -> bool {
        dispatch!(self, q => q.is_empty())
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        dispatch!(self, q => q.backlog_bytes())
    }
    fn all_bytes_waiting(&self) -> u64 {
        dispatch!(self, q => q.all_bytes_waiting())
    }
    fn stats(&self) -> &QueueStats {
        dispatch!(self, q => q.stats())
    }
    fn take_window_max(&mut self) -> u64 {
        dispatch!(self, q => q.take_window_max())
    }
    fn take_victim(&mut self) -> Option<PacketId> {
        dispatch!(self, q => q.take_victim())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! How to add a queue discipline, proved: a head-drop queue (a full
    //! queue drops its oldest data packet, not the arriving one) in one
    //! small type, one `Queue` variant and one dispatch arm.

    use super::*;
    use crate::packet::CLASS_CONTROL;
    use crate::time::SimTime;
    use std::collections::VecDeque;

    pub struct HeadDrop {
        pub capacity: u64,
        queue: VecDeque<(PacketId, u32)>,
        bytes: u64,
        stats: QueueStats,
        /// The oldest packets pushed out, until the engine takes them.
        evicted: Vec<PacketId>,
    }

    impl HeadDrop {
        pub fn new(capacity: u64) -> Self {
            let stats = QueueStats::default();
            HeadDrop {
                capacity,
                queue: VecDeque::new(),
                bytes: 0,
                stats,
                evicted: Vec::new(),
            }
        }
    }

    impl QueueDiscipline for HeadDrop {
        fn enqueue(
            &mut self,
            id: PacketId,
            pkt: &mut Packet,
            _ingress: Option<Ingress>,
            _ctx: &mut QueueCtx,
        ) -> Admission {
            if pkt.class() != CLASS_CONTROL {
                while self.bytes + pkt.size as u64 > self.capacity {
                    let Some((old, size)) = self.queue.pop_front() else {
                        return Admission::Dropped;
                    };
                    self.bytes -= size as u64;
                    self.stats.drops += 1;
                    self.evicted.push(old);
                }
            }
            self.bytes += pkt.size as u64;
            self.queue.push_back((id, pkt.size));
            if self.evicted.is_empty() {
                Admission::Queued
            } else {
                Admission::QueuedEvicting { marked: false }
            }
        }
        fn take_victim(&mut self) -> Option<PacketId> {
            self.evicted.pop()
        }
        fn dequeue(&mut self, _pool: &mut PacketPool, _ctx: &mut QueueCtx) -> Option<Dequeued> {
            let (id, size) = self.queue.pop_front()?;
            self.bytes -= size as u64;
            Some(Dequeued {
                id,
                size,
                marked: false,
            })
        }
        fn is_empty(&self) -> bool {
            self.queue.is_empty()
        }
        fn backlog_bytes(&self) -> u64 {
            self.bytes
        }
        fn stats(&self) -> &QueueStats {
            &self.stats
        }
        fn take_window_max(&mut self) -> u64 {
            self.bytes
        }
    }

    #[test]
    fn a_new_discipline_plugs_in_behind_the_interface() {
        let mut q = Queue::HeadDrop(HeadDrop::new(10_000));
        let mut pool = PacketPool::default();
        let mut ids = Vec::new();
        let mut verdicts = Vec::new();
        let mut signals = Vec::new();
        let mut ctx = QueueCtx {
            now: SimTime::ZERO,
            paused: 0,
            buffer: None,
            signals: &mut signals,
        };
        for seq in 0..3 {
            let mut p = Packet::data(0, seq, 0, 1, 4096, 0, 0, SimTime::ZERO);
            let id = pool.alloc(p);
            ids.push(id);
            verdicts.push(q.enqueue(id, &mut p, None, &mut ctx));
        }
        assert_eq!(verdicts[..2], [Admission::Queued; 2]);
        assert_eq!(
            verdicts[2],
            Admission::QueuedEvicting { marked: false },
            "the third packet does not fit"
        );
        assert_eq!(q.take_victim(), Some(ids[0]), "it pushed out the oldest");
        assert_eq!(q.take_victim(), None);
        assert_eq!(q.backlog_bytes(), 8192);
        assert_eq!(q.stats().drops, 1);
        assert_eq!(q.dequeue(&mut pool, &mut ctx).map(|d| d.id), Some(ids[1]));
    }

    /// Through the engine: an 8-to-1 incast whose last hop drops from the
    /// head. Every congestion drop is a victim of that queue, every packet is
    /// accounted for, and every flow still completes.
    #[test]
    fn the_engine_drops_the_victims_a_discipline_pushes_out() {
        let toml = "[topology]\nhosts = 32\nradix = 8\n[workload]\nkind = \"incast\"\nsenders = 8\nsize = \"256KiB\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, None).unwrap();
        let last_hop = sim.net.port_by_name("t0_0->h0").unwrap() as usize;
        sim.net.ports[last_hop].queue = Queue::HeadDrop(HeadDrop::new(40_000));
        sim.run();
        let c = sim.counters;
        assert!(c.drops_congestion > 0);
        assert_eq!(sim.net.ports[last_hop].queue.stats().drops, c.drops_congestion);
        assert_eq!(sim.packets_in_network(), 0);
        assert_eq!(c.packets_sent, c.delivered + c.drops_congestion + c.drops_failure);
        assert!(sim.flow_records().iter().all(|f| f.finished));
    }

    /// Through the engine, the REPS artifact's full queue (`full_drop =
    /// "coin_newest"`, `count_in_service`): an 8-to-1 incast fills the last
    /// hop, whose coin pushes out waiting packets of other flows. Each
    /// pushed-out packet is dropped against its own flow (a flow retransmits
    /// at least every packet of its own that was dropped), its slot is freed,
    /// and every flow completes.
    #[test]
    fn the_engine_drops_coin_victims_against_their_own_flows() {
        let toml = "preset = \"reps_artifact\"\n[queue]\nfull_drop = \"coin_newest\"\ncount_in_service = true\n[topology]\nhosts = 32\nradix = 8\n\
                    [workload]\nkind = \"incast\"\nsenders = 8\nsize = \"512KiB\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, None).unwrap();
        let last_hop = sim.net.port_by_name("t0_0->h0").unwrap() as usize;
        sim.run();
        let c = sim.counters;
        let stats = *sim.net.ports[last_hop].queue.stats();
        assert!(stats.pushed_out > 0 && stats.drops > stats.pushed_out, "{stats:?}");
        let queue_drops: u64 = sim.net.ports.iter().map(|p| p.queue.stats().drops).sum();
        assert_eq!(queue_drops, c.drops_congestion);
        assert_eq!(sim.packets_in_network(), 0);
        assert_eq!(c.packets_sent, c.delivered + c.drops_congestion + c.drops_failure);
        let flows = sim.flow_records();
        assert!(flows.iter().all(|f| f.finished));
        assert_eq!(flows.iter().map(|f| f.drops).sum::<u64>(), c.drops_congestion);
        for f in &flows {
            assert!(
                f.retransmissions >= f.drops,
                "flow {}: {} drops, {} retransmissions",
                f.id,
                f.drops,
                f.retransmissions
            );
        }
    }
}
