//! Invariants every finished run must satisfy, checked once at its end from
//! counters the engine keeps anyway (nothing on the hot path):
//!
//! - packet conservation: every packet a host or switch made (PFC frames
//!   included) was delivered, dropped (congestion or failure) or is still in
//!   the network, and the packets counted by kind add up to those sent;
//! - payload: each finished flow got exactly its bytes, an unfinished one
//!   at most its bytes, one that never started none; the flows' bytes add up
//!   to the counter; when every flow finished exactly the workload's bytes
//!   arrived, each data packet once;
//! - each flow: it finished at its receiver only after it started, at its
//!   sender only after its receiver, and never faster than physics allows
//!   (`Fastest`); the finished counts agree with the flows;
//! - queues: no switch queue ever held more data than its capacity; a
//!   shared buffer never more than its size, nor an ingress group more
//!   headroom than its PFC reserve.
//!
//! A violation is an engine bug, never a scenario's fault: `lbsim_core::run`
//! panics with the violations and every counter, so it cannot go unnoticed.

use super::Simulation;
use crate::net::queue::QueueDiscipline;
use crate::net::{Node, Queue};
use crate::time::{Rate, SimTime};
use crate::transport::{Flow, Receive};

/// The fastest any flow can complete. Not the ideal (`Network::ideal_fct`,
/// one path, store and forward): a sprayed flow's short last packet may
/// overtake the full one before it on another path and land up to one
/// serialization per hop earlier (tests/collectives.rs). What no path choice
/// beats: the sender's NIC serializes every packet, then the last packet
/// (or the one before it) still crosses every further hop at the fastest rate
/// of the tree, with the smallest latencies.
struct Fastest {
    rate: Rate,
    to_host: SimTime,
    to_switch: SimTime,
}

impl Fastest {
    fn of_network(sim: &Simulation) -> Fastest {
        let mut f = Fastest {
            rate: Rate(1),
            to_host: SimTime::MAX,
            to_switch: SimTime::MAX,
        };
        for p in &sim.net.ports {
            f.rate = f.rate.max(p.rate).max(p.base_rate);
            match p.to {
                Node::Host(_) => f.to_host = f.to_host.min(p.latency),
                Node::Switch(_) => f.to_switch = f.to_switch.min(p.latency),
            }
        }
        f
    }

    fn of(&self, sim: &Simulation, flow: &Flow) -> SimTime {
        let sh = &sim.net.shape;
        let (a, b) = (flow.spec.src / sh.hosts_per_tor, flow.spec.dst / sh.hosts_per_tor);
        let per_pod = sh.tors_per_pod.max(1);
        let links: u64 = match () {
            _ if a == b => 2,
            _ if sh.tiers == 2 || a / per_pod == b / per_pod => 4,
            _ => 6,
        };
        let n = flow.tx.npkts as u64;
        let ser = |bytes: u32| self.rate.serialization(bytes as u64).ps();
        let (full, last) = (ser(flow.tx.wire_size(0)), ser(flow.tx.wire_size(flow.tx.npkts - 1)));
        let latency = self.to_host.ps() + (links - 1) * self.to_switch.ps();
        let nic_all = (n - 1) * full + last;
        let last_through = nic_all + (links - 1) * last;
        let before_last = if n >= 2 { (n - 1) * full + (links - 1) * full } else { 0 };
        SimTime(last_through.max(before_last) + latency)
    }
}

impl Simulation {
    /// Every invariant that does not hold, in words (empty: all hold).
    pub fn invariant_violations(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let c = &self.counters;
        let live = self.pool.live() as u64;
        let accounted = c.delivered + c.drops_congestion + c.drops_failure + live;
        if c.packets_sent != accounted {
            bad.push(format!(
                "packets: {} sent but {} delivered + {} congestion drops + {} failure drops + {live} in the network = {accounted}",
                c.packets_sent, c.delivered, c.drops_congestion, c.drops_failure
            ));
        }
        let by_kind = c.sent_by_kind();
        if by_kind != c.packets_sent {
            bad.push(format!(
                "packets: {} sent but {by_kind} counted by kind ({} data + {} ACKs + {} NACKs + {} credits + {} RTS + {} PFC pauses + {} PFC resumes + {} switch control)",
                c.packets_sent, c.data_sent, c.acks_sent, c.nacks_sent, c.credits_sent, c.rts_sent, c.pfc_pauses, c.pfc_resumes,
                c.switch_control_sent
            ));
        }
        if c.retransmissions > c.data_sent {
            bad.push(format!(
                "packets: {} retransmissions among {} data packets",
                c.retransmissions, c.data_sent
            ));
        }

        let fastest = Fastest::of_network(self);
        let (mut rx_done, mut tx_done, mut finished_bytes, mut flows_bytes) = (0usize, 0usize, 0u64, 0u64);
        for (i, f) in self.flows.iter().enumerate() {
            let rx = f.rx.finish();
            flows_bytes += f.delivered;
            let whole = rx.is_some();
            if f.delivered > f.spec.size || whole && f.delivered != f.spec.size || !f.tx.active && f.delivered > 0 {
                bad.push(format!(
                    "flow {i}: {} B of {} B delivered, {}",
                    f.delivered,
                    f.spec.size,
                    match (whole, f.tx.active) {
                        (true, _) => "finished",
                        (false, true) => "unfinished",
                        (false, false) => "never started",
                    }
                ));
            }
            if let Some(t) = rx {
                rx_done += 1;
                finished_bytes += f.spec.size;
                if !f.tx.active {
                    bad.push(format!("flow {i}: finished at its receiver but never started"));
                } else if t < f.started_at {
                    bad.push(format!(
                        "flow {i}: finished at {t} before it started at {}",
                        f.started_at
                    ));
                } else if t - f.started_at < fastest.of(self, f) {
                    bad.push(format!(
                        "flow {i}: completion time {} below the fastest possible {} (ideal {}; {} B from h{} to h{})",
                        t - f.started_at,
                        fastest.of(self, f),
                        f.ideal,
                        f.spec.size,
                        f.spec.src,
                        f.spec.dst
                    ));
                }
            }
            if let Some(t) = f.tx.finish_time() {
                tx_done += 1;
                match rx {
                    None => bad.push(format!("flow {i}: its sender finished but its receiver lacks data")),
                    Some(r) if t < r => bad.push(format!(
                        "flow {i}: its sender finished at {t}, before its receiver at {r}"
                    )),
                    Some(_) => {}
                }
            }
        }
        if rx_done != self.flows_done || tx_done != self.senders_done {
            bad.push(format!(
                "flows: {rx_done} finished at their receivers and {tx_done} at their senders, but the engine counted {} and {}",
                self.flows_done, self.senders_done
            ));
        }
        let delivered = c.payload_delivered;
        if flows_bytes != delivered {
            bad.push(format!(
                "payload: the flows got {flows_bytes} B, the counters say {delivered} B"
            ));
        }
        if delivered > self.total_bytes || delivered < finished_bytes {
            bad.push(format!(
                "payload: {delivered} B delivered, but the finished flows hold {finished_bytes} B of a workload of {} B",
                self.total_bytes
            ));
        }
        if rx_done == self.flows.len() && delivered != self.total_bytes {
            bad.push(format!(
                "payload: every flow finished, yet {delivered} B arrived of the workload's {} B",
                self.total_bytes
            ));
        }

        bad.extend(self.queue_violations());
        bad
    }

    /// Queues within their capacity: a two-class port's data class within
    /// `queue.capacity`; a shared-buffer switch within `queue.shared.size`
    /// (its PFC headroom is reserved inside it), each port's queue within the
    /// buffer, and each ingress group's headroom within its reserve.
    fn queue_violations(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for p in &self.net.ports {
            let Node::Switch(sw) = p.from else { continue };
            let max = p.queue.stats().max_bytes;
            let (capacity, what) = match &p.queue {
                Queue::Shared(_) => (self.net.buffers[sw as usize].params.size, "its switch's buffer"),
                _ => (self.params.queue_bytes, "its capacity"),
            };
            if max > capacity {
                bad.push(format!(
                    "queue {}: held {max} B of data, above {what} of {capacity} B",
                    p.name
                ));
            }
        }
        for (sw, b) in self.net.buffers.iter().enumerate() {
            let name = &self.net.switches[sw].name;
            if b.max_used > b.params.size {
                bad.push(format!(
                    "buffer of {name}: held {} B, above its size of {} B",
                    b.max_used, b.params.size
                ));
            }
            let reserve = b.params.pfc.map_or(0, |p| p.headroom);
            if b.max_headroom > reserve {
                bad.push(format!(
                    "buffer of {name}: an ingress group held {} B of headroom, above its reserve of {reserve} B",
                    b.max_headroom
                ));
            }
        }
        bad
    }

    /// Panic with the violations and the counters if any invariant fails.
    pub fn assert_invariants(&self) {
        let bad = self.invariant_violations();
        if !bad.is_empty() {
            panic!(
                "lbsim engine bug: {} invariant(s) violated at the end of the run (please report it with the scenario):\n  {}\ncounters: {:?}\npackets in the network: {}",
                bad.len(),
                bad.join("\n  "),
                self.counters,
                self.pool.live()
            );
        }
    }
}
