//! The packet's walk through ports and links: a queue admits it, the line
//! serializes it, the link's FIFO carries it, and the node at the far end
//! takes it (a switch forwards it, a host receives it).
//!
//! - Links are FIFOs: a packet joins its link's FIFO when its
//!   serialization starts, with its arrival time; only the FIFO's head has
//!   a pending `LinkDeliver`, so pending events scale with ports, not packets.
//! - `TxDone` is lazy: a port records `busy_until`, and a `TxDone` is
//!   scheduled only when something waits behind the packet on the line.
//!   Each port remembers the time of its one valid `TxDone`; any other is
//!   stale (a same-instant arrival can restart the line first).
//! - A switch port whose sending depends on nothing but its own queue has no
//!   `TxDone` at all (`Port::lazy_line`): whatever looks at it first brings
//!   its line up to date (`catch_up`), starting each waiting packet at the
//!   time the one before it left. Its line is looked at no later than the
//!   delivery of the packet on it, which comes after the next start, so
//!   every start is made before anything could have seen it. Busy switch
//!   ports then cost one event per packet instead of two.
//! - A NIC's line can be lazy the same way: what it sends next depends on
//!   its host's state, which only that host's events change, and each of
//!   them (a packet reaching the host, a flow's start or timer) first
//!   brings the NIC up to date (`catch_up_nic`), as a `TxDone` of the same
//!   instant would have run before them. A lazy NIC pulls its next data
//!   packet as of the time its line freed (`host_pull`'s `at`).

use super::Simulation;
use crate::event::Event;
use crate::net::queue::{Admission, QueueCtx, QueueDiscipline};
use crate::net::{Decision, Network, Node, PortFault, PortId, Queue};
use crate::packet::{Packet, PacketId, PacketKind};
use crate::time::SimTime;

/// What `cut_through` did with a hashed packet reaching a switch.
enum Through {
    /// It went straight onto its egress port's line.
    Passed,
    /// Nothing yet: it joins this egress port's queue (routing chose it).
    Queue(PortId),
    /// Nothing: the switch's general forwarding takes it (a switch policy's
    /// route class, egress hooks, no route).
    General,
}

impl Simulation {
    /// Put a packet into a port's queue. `ingress` is the link it arrived
    /// over (its `reverse` leads back upstream); None for a packet the node made.
    #[inline(always)]
    pub(super) fn enqueue(&mut self, port_id: PortId, id: PacketId, ingress: Option<PortId>) {
        self.catch_up(port_id, self.now);
        let port = &mut self.net.ports[port_id as usize];
        if !port.up {
            self.drop_packet(id, true);
            return;
        }
        // The two-class queue needs no context: building one costs 7 % of a REPS run's instructions.
        let admission = match &mut port.queue {
            Queue::TwoClass(q) => q.admit(id, self.pool.get_mut(id), port.busy_until > self.now),
            _ => self.enqueue_in_context(port_id, id, ingress),
        };
        match admission {
            Admission::Queued => {}
            Admission::Marked => self.counters.ecn_marks += 1,
            Admission::Trimmed => self.counters.trims += 1,
            Admission::Dropped => {
                self.drop_packet(id, false);
                return;
            }
            Admission::QueuedEvicting { marked } => {
                self.counters.ecn_marks += marked as u64;
                // Each victim is dropped against its own flow, which need not be the arrival's.
                while let Some(victim) = self.net.ports[port_id as usize].queue.take_victim() {
                    self.drop_packet(victim, false);
                }
            }
            Admission::QueuedTrimming { marked } => {
                self.counters.ecn_marks += marked as u64;
                self.counters.trims += 1;
                if let Queue::TwoClass(q) = &mut self.net.ports[port_id as usize].queue {
                    q.trim_victim(&mut self.pool);
                }
            }
        }
        self.kick(port_id);
    }

    /// Enqueue through the full interface: the arrival's ingress, the
    /// switch's shared buffer, the paused classes, and PFC frames after.
    fn enqueue_in_context(&mut self, port_id: PortId, id: PacketId, ingress: Option<PortId>) -> Admission {
        let arrival = ingress.map(|link| self.net.ports[link as usize].arrival);
        let Network { ports, buffers, .. } = &mut self.net;
        let port = &mut ports[port_id as usize];
        let buffer = match port.from {
            Node::Switch(sw) => buffers.get_mut(sw as usize),
            Node::Host(_) => None,
        };
        let mut ctx = QueueCtx {
            now: self.now,
            paused: port.paused,
            buffer,
            signals: &mut self.pfc_signals,
        };
        let admission = port.queue.enqueue(id, self.pool.get_mut(id), arrival, &mut ctx);
        if !self.pfc_signals.is_empty() {
            self.send_pfc_frames();
        }
        admission
    }

    /// Something may be waiting at a port: transmit now if the line is
    /// free, otherwise make sure a TxDone event will come when it frees
    /// (a lazy line needs none: it is caught up when next looked at).
    #[inline(always)]
    pub(super) fn kick(&mut self, port_id: PortId) {
        let port = &self.net.ports[port_id as usize];
        if port.busy_until > self.now {
            if !port.lazy_line && port.tx_event_at != port.busy_until && self.has_waiting(port_id) {
                self.schedule_tx_done(port_id);
            }
            return;
        }
        self.start_tx(port_id, self.now);
    }

    /// Bring a lazy line up to `until`: each packet waiting when the line
    /// freed starts then, as a `TxDone` at that time would have started it.
    /// `until` is the present, or just before it for what runs before a
    /// `TxDone` of the same instant would (failures: `catch_up_before_now`).
    #[inline(always)] // three times per switch hop; a call costs more than the loop
    pub(super) fn catch_up(&mut self, port_id: PortId, until: SimTime) {
        loop {
            let port = &self.net.ports[port_id as usize];
            if !port.lazy_line || port.busy_until > until {
                return;
            }
            if let Node::Host(_) = port.from {
                return self.catch_up_nic_line(port_id, until);
            }
            if port.queue.is_empty() {
                return;
            }
            let free_at = port.busy_until;
            self.start_tx(port_id, free_at);
        }
    }

    /// `catch_up` at a NIC, where the next packet may also come from a ready flow.
    #[inline(never)]
    fn catch_up_nic_line(&mut self, port_id: PortId, until: SimTime) {
        loop {
            let port = &self.net.ports[port_id as usize];
            if port.busy_until > until || !self.has_waiting(port_id) {
                return;
            }
            let free_at = port.busy_until;
            self.start_tx(port_id, free_at);
            if self.net.ports[port_id as usize].busy_until == free_at {
                return; // its ready flows had nothing to send after all
            }
        }
    }

    /// Catch a lazy line up with everything before this instant (for
    /// handlers that run before the instant's `TxDone`s would: failures).
    pub(super) fn catch_up_before_now(&mut self, port_id: PortId) {
        if self.now > SimTime::ZERO {
            self.catch_up(port_id, SimTime(self.now.ps() - 1));
        }
    }

    /// Every lazy line up to the present (before reading the ports' counters or queues).
    pub(super) fn catch_up_all(&mut self, until: SimTime) {
        for p in 0..self.net.ports.len() {
            self.catch_up(p as PortId, until);
        }
    }

    /// A packet waits in the queue, or (at a host NIC) a flow is ready to send.
    #[inline]
    fn has_waiting(&self, port_id: PortId) -> bool {
        let port = &self.net.ports[port_id as usize];
        !port.queue.is_empty()
            || match port.from {
                Node::Host(h) => !self.net.hosts[h as usize].ready.is_empty(),
                Node::Switch(_) => false,
            }
    }

    /// The next packet for a free line: the queue's choice, else (at a host
    /// NIC) a data packet pulled from the next ready flow.
    #[inline]
    fn next_to_send(&mut self, port_id: PortId, at: SimTime) -> Option<(PacketId, u32)> {
        let Network { ports, buffers, .. } = &mut self.net;
        let port = &mut ports[port_id as usize];
        let (from, paused) = (port.from, port.paused);
        if let (Queue::TwoClass(q), 0) = (&mut port.queue, paused) {
            // The fast path again (see `enqueue`).
            if let Some(d) = q.next(&mut self.pool) {
                self.counters.ecn_marks += d.marked as u64;
                return Some((d.id, d.size));
            }
            return match from {
                Node::Host(h) => self.host_pull(h, at),
                Node::Switch(_) => None,
            };
        }
        let buffer = match from {
            Node::Switch(sw) => buffers.get_mut(sw as usize),
            Node::Host(_) => None,
        };
        let mut ctx = QueueCtx {
            now: self.now,
            paused,
            buffer,
            signals: &mut self.pfc_signals,
        };
        let dequeued = port.queue.dequeue(&mut self.pool, &mut ctx);
        if !self.pfc_signals.is_empty() {
            self.send_pfc_frames();
        }
        if let Some(d) = dequeued {
            self.counters.ecn_marks += d.marked as u64;
            return Some((d.id, d.size));
        }
        match from {
            // A NIC whose data classes are paused sends only its control packets.
            Node::Host(h) if paused & !1 == 0 => self.host_pull(h, at),
            Node::Host(_) | Node::Switch(_) => None,
        }
    }

    /// The line is free at `at` (now, or for a lazy line the time it freed):
    /// start serializing the next packet, if any. The packet joins the
    /// link's FIFO at once with its arrival time (end of serialization plus latency).
    fn start_tx(&mut self, port_id: PortId, at: SimTime) {
        loop {
            let Some((id, mut size)) = self.next_to_send(port_id, at) else {
                return;
            };
            let port = &mut self.net.ports[port_id as usize];
            if !port.up {
                self.drop_packet(id, true);
                continue;
            }
            if let Node::Switch(sw) = port.from {
                if self.net.policies.has_egress_hooks() {
                    let pkt = self.pool.get_mut(id);
                    self.net.policies.egress(sw, self.now, port_id, pkt);
                    size = pkt.size; // a hook may add bytes (an INT record)
                }
            }
            let pkt = self.pool.take(id);
            self.put_on_wire(port_id, pkt, size, at);
            if !self.net.ports[port_id as usize].lazy_line && self.has_waiting(port_id) {
                self.schedule_tx_done(port_id);
            }
            return;
        }
    }

    /// The line of a free port takes a packet of `size` bytes at `at`: it is
    /// busy for its serialization, and the packet joins the link's FIFO with
    /// its arrival time at the far end.
    #[inline(always)]
    fn put_on_wire(&mut self, port_id: PortId, pkt: Packet, size: u32, at: SimTime) {
        let port = &mut self.net.ports[port_id as usize];
        port.tx_bytes += size as u64;
        port.tx_packets += 1;
        let done = at + port.serialization(size as u64);
        port.busy_until = done;
        let arrival = done + port.latency;
        if port.counts_entries {
            // cable_ber: the artifact counts a packet entering a link (`Pipe::receivePacket`).
            // A flag in padding beside `up` and `paused`, on the cache line of the wire FIFO
            // written just below, so a run without cable_ber pays one predictable branch.
            if let Some(ber) = &mut self.bit_errors {
                ber.count(&pkt, at);
            }
        }
        port.wire.push_back((arrival, pkt));
        if port.wire.len() == 1 {
            self.events.push(arrival, Event::LinkDeliver { port: port_id });
        }
    }

    #[inline]
    fn schedule_tx_done(&mut self, port_id: PortId) {
        let port = &mut self.net.ports[port_id as usize];
        port.tx_event_at = port.busy_until;
        self.events.push(port.busy_until, Event::TxDone { port: port_id });
    }

    pub(super) fn on_tx_done(&mut self, port_id: PortId) {
        let port = &mut self.net.ports[port_id as usize];
        if port.tx_event_at != self.now {
            return; // stale: the line was restarted by a same-instant arrival
        }
        port.tx_event_at = SimTime::MAX;
        self.kick(port_id);
    }

    pub(super) fn on_link_deliver(&mut self, port_id: PortId) {
        // A lazy line starts what waits behind this packet before its FIFO's next head is read.
        self.catch_up(port_id, self.now);
        let port = &mut self.net.ports[port_id as usize];
        let (_, pkt) = port.wire.pop_front().expect("a delivering link carries a packet");
        if let Some(&(next, _)) = port.wire.front() {
            self.events.push(next, Event::LinkDeliver { port: port_id });
        }
        // A dead link loses what is on it; a lossy one some of it. Silently: no trim, no NACK.
        if !port.up || (port.fault != PortFault::None && port.fault_drops()) {
            let id = self.pool.put(pkt);
            self.drop_packet(id, true);
            return;
        }
        // PFC frames are taken where the packet is read anyway (`switch_receive`, `host_receive`).
        match port.to {
            Node::Switch(sw) => {
                if let Some(ber) = &mut self.bit_errors {
                    // switch_ber: where the artifact's switch queue counts it. cable_ber:
                    // the artifact's switch passes every packet through a pipe of its own
                    // (FatTreeSwitch::_pipe, 0 delay), which counts as a cable entry.
                    ber.count(&pkt, self.now);
                }
                let through = if pkt.routed_by_hash() {
                    self.cut_through(sw, &pkt)
                } else {
                    Through::General
                };
                match through {
                    Through::Passed => {}
                    // `switch_receive` would route it again to the same port.
                    Through::Queue(out) => {
                        let id = self.pool.put(pkt);
                        self.enqueue(out, id, Some(port_id));
                    }
                    Through::General => {
                        let id = self.pool.put(pkt);
                        self.switch_receive(sw, port_id, id)
                    }
                }
            }
            Node::Host(h) => {
                let id = self.pool.put(pkt);
                self.host_receive(h, port_id, id)
            }
        }
    }

    /// The common case at a switch: a hashed packet whose egress port is
    /// idle with an empty queue goes straight from one link to the next,
    /// with exactly the effects of `switch_receive` (which would route it,
    /// pool it, queue it and take it out again at once), but none of their
    /// memory traffic. Otherwise nothing is done: the packet joins the queue
    /// of the egress port it was routed to, or takes the general way.
    #[inline(always)]
    fn cut_through(&mut self, sw: u32, pkt: &Packet) -> Through {
        if self.net.policies.has_egress_hooks() {
            return Through::General;
        }
        let Some(out) = self.net.route_hashed(sw, pkt) else {
            return Through::General; // `switch_receive` drops it
        };
        self.catch_up(out, self.now);
        let port = &mut self.net.ports[out as usize];
        if !port.up || port.paused != 0 || port.busy_until > self.now {
            return Through::Queue(out);
        }
        let Queue::TwoClass(q) = &mut port.queue else {
            return Through::Queue(out);
        };
        if !q.pass_through(pkt) {
            return Through::Queue(out);
        }
        self.put_on_wire(out, *pkt, pkt.size, self.now);
        Through::Passed
    }

    /// A switch forwards a packet that arrived over link `ingress`.
    #[inline]
    fn switch_receive(&mut self, sw: u32, ingress: PortId, id: PacketId) {
        let pkt = self.pool.get_mut(id);
        if pkt.kind == PacketKind::Pause {
            self.on_pause_frame(ingress, id);
            return;
        }
        let class = pkt.route;
        match self.net.forward(sw, ingress, id, pkt, self.now, &mut self.policy_out) {
            Decision::Forward(out) => self.enqueue(out, id, Some(ingress)),
            Decision::Drop => self.drop_packet(id, true), // routing knows no way there
            Decision::Hold => {}
            Decision::Consume => {
                self.counters.delivered += 1; // a control packet reached the switch it was for
                self.pool.free(id);
            }
        }
        if !self.policy_out.is_empty() {
            self.apply_policy_out(sw, class);
        }
    }

    /// A switch policy's timer fired.
    pub(super) fn on_switch_timer(&mut self, sw: u32, class: u8) {
        let net = &mut self.net;
        let policy = net.policies.get(class, sw);
        policy.on_timer(self.now, &net.switches[sw as usize], &net.ports, &mut self.policy_out);
        self.apply_policy_out(sw, class);
    }

    /// Carry out what a switch policy asked for: release held packets, send
    /// its own packets, arm its timers.
    fn apply_policy_out(&mut self, sw: u32, class: u8) {
        let mut out = std::mem::take(&mut self.policy_out);
        for (id, port) in out.release.drain(..) {
            self.enqueue(port, id, None);
        }
        for (pkt, port) in out.emit.drain(..) {
            self.counters.packets_sent += 1;
            self.counters.count_sent(pkt.kind);
            let id = self.pool.alloc(pkt);
            self.enqueue(port, id, None);
        }
        for at in out.timers.drain(..) {
            self.events.push(
                at,
                Event::SwitchTimer {
                    switch: sw,
                    policy: class,
                },
            );
        }
        self.policy_out = out;
    }

    pub(super) fn drop_packet(&mut self, id: PacketId, failure: bool) {
        let flow = self.pool.get(id).flow;
        if let Some(f) = self.flows.get_mut(flow as usize) {
            f.drops += 1; // PFC frames belong to no flow
        }
        if failure {
            self.counters.drops_failure += 1;
        } else {
            self.counters.drops_congestion += 1;
        }
        self.pool.free(id);
    }
}
