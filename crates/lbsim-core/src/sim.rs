//! The engine: an event loop over ports, links, hosts and flows.
//!
//! A packet's life: a host NIC pulls it from one of its ready flows
//! (round-robin, one packet each, control packets first), serializes it,
//! the link carries it for its latency, a switch routes it into an output
//! queue, and so on until a host receives it. Hosts answer data with an
//! ACK (or a NACK for a trimmed header) in the priority class.

use crate::ack_coalescing::Trigger;
use crate::cc::credit_pacer::CreditPacers;
use crate::cc::CongestionControl;
use crate::event::{Event, EventQueue};
use crate::failure::{FailurePlan, Fault};
use crate::lb::{Lb, TimeoutInfo};
use crate::metrics::{
    fct_stats, message_table, slowdown_stats, step_table, Counters, Drops, FlowRecord, MessageRecord, Summary,
};
use crate::net::{routing, Network, Node, PortFault, PortId};
use crate::observe::Observer;
use crate::packet::{Packet, PacketId, PacketKind, PacketPool};
use crate::table::{Column, Table};
use crate::time::SimTime;
use crate::transport::Flow;

/// Run-wide constants resolved from the scenario.
#[derive(Clone, Debug)]
pub struct SimParams {
    pub rto: SimTime,
    pub trimming: bool,
    pub ack_bytes: u32,
    /// One ACK per this many data packets (REPS §4.5.1); 1: every packet.
    pub ack_ratio: u32,
    /// Longest a partial batch of coalesced ACKs waits; None: until it fills or the message ends.
    pub ack_delay: Option<SimTime>,
    pub freeze_rtt_factor: f64,
    pub stop_at: SimTime,
    /// For the summary.
    pub base_rtt: SimTime,
    pub bdp_bytes: u64,
    pub queue_bytes: u64,
}

/// What the workload says beyond the flows themselves.
#[derive(Clone, Debug, Default)]
pub struct WorkloadMeta {
    /// Per flow, the flows that wait for its data to arrive.
    pub dependents: Vec<Vec<u32>>,
    /// Per message (`Flow::message`), the ideal FCT of the whole message.
    pub message_ideal: Vec<SimTime>,
    /// Statistics count flows that start at or after this…
    pub measure_from: SimTime,
    /// …and finish at or before this.
    pub measure_until: Option<SimTime>,
    /// The collective the flows form, if any.
    pub collective: Option<&'static str>,
}

/// What a progress callback sees.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: SimTime,
    pub stop_at: SimTime,
    pub events: u64,
    pub flows_done: usize,
    pub flows: usize,
    /// Payload bytes that reached their receivers (each packet once), and the workload's total.
    pub delivered_bytes: u64,
    pub total_bytes: u64,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Nothing left to do.
    Drained,
    /// Reached the horizon (`stop_at`).
    Horizon,
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Cancelled,
}

pub struct Simulation {
    pub net: Network,
    pub flows: Vec<Flow>,
    pub params: SimParams,
    pool: PacketPool,
    events: EventQueue,
    now: SimTime,
    pub counters: Counters,
    flows_done: usize,
    senders_done: usize,
    failures: Vec<FailurePlan>,
    meta: WorkloadMeta,
    /// Routing's lag behind a port going down or up; None: it never catches up.
    convergence: Option<SimTime>,
    observer: Option<Observer>,
    /// EQDS: the receivers' credit pacers (None under window congestion control).
    credits: Option<CreditPacers>,
    lost_scratch: Vec<(u64, u16)>,
    wall_seconds: f64,
    stop_reason: Option<StopReason>,
}

impl Simulation {
    pub fn new(net: Network, flows: Vec<Flow>, params: SimParams) -> Self {
        let mut events = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            if f.waiting_on == 0 {
                events.push(f.spec.start, Event::FlowStart { flow: i as u32 });
            }
        }
        Simulation {
            net,
            flows,
            params,
            pool: PacketPool::default(),
            events,
            now: SimTime::ZERO,
            counters: Counters::default(),
            flows_done: 0,
            senders_done: 0,
            failures: Vec::new(),
            meta: WorkloadMeta::default(),
            convergence: None,
            observer: None,
            credits: None,
            lost_scratch: Vec::new(),
            wall_seconds: 0.0,
            stop_reason: None,
        }
    }

    /// Failures to play out, and routing's delay in following them.
    pub fn set_failures(&mut self, plans: Vec<FailurePlan>, convergence: Option<SimTime>) {
        for (i, p) in plans.iter().enumerate() {
            self.events.push(
                p.start,
                Event::Failure {
                    idx: i as u32,
                    begin: true,
                },
            );
        }
        self.failures = plans;
        self.convergence = convergence;
    }

    /// Dependencies, messages and measurement window. Each flow's
    /// `waiting_on` must already count its entries in `meta.dependents`, and
    /// the flows of a message must be consecutive.
    pub fn set_workload_meta(&mut self, meta: WorkloadMeta) {
        self.meta = meta;
    }

    /// Run EQDS: receivers pull data with credits.
    pub fn set_credit_pacers(&mut self, pacers: CreditPacers) {
        self.credits = Some(pacers);
    }

    /// Record time series while running.
    pub fn set_observer(&mut self, obs: Observer) {
        if obs.ticks() {
            self.events.push(self.now + obs.bucket, Event::SampleTick);
        }
        self.observer = Some(obs);
    }

    /// Every flow is done and nothing is in flight: what remains (failure
    /// events, sample ticks, idle timers) cannot change the results.
    #[inline]
    fn idle(&self) -> bool {
        self.senders_done == self.flows.len() && self.pool.live() == 0
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Packets still in queues or on links.
    pub fn packets_in_network(&self) -> usize {
        self.pool.live()
    }

    pub fn run(&mut self) -> StopReason {
        self.run_with_progress(u64::MAX, &mut |_| true)
    }

    /// Run to the end, calling `progress` every `every` events; it returns
    /// false to stop the run.
    pub fn run_with_progress(&mut self, every: u64, progress: &mut dyn FnMut(Progress) -> bool) -> StopReason {
        let t0 = std::time::Instant::now();
        let mut next_report = self.counters.events.saturating_add(every);
        let reason = loop {
            let Some(t) = self.events.peek_time() else {
                break StopReason::Drained;
            };
            if t > self.params.stop_at {
                self.now = self.params.stop_at;
                break StopReason::Horizon;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.counters.events += 1;
            self.dispatch(ev);
            if self.idle() {
                break StopReason::Drained;
            }
            if self.counters.events >= next_report {
                next_report = self.counters.events.saturating_add(every);
                if !progress(self.progress()) {
                    break StopReason::Cancelled;
                }
            }
        };
        self.wall_seconds += t0.elapsed().as_secs_f64();
        if let Some(obs) = &mut self.observer {
            obs.tick(self.now, &mut self.net, &self.counters); // the last, partial bucket
        }
        self.stop_reason = Some(reason);
        reason
    }

    pub fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            stop_at: self.params.stop_at,
            events: self.counters.events,
            flows_done: self.flows_done,
            flows: self.flows.len(),
            delivered_bytes: self.counters.payload_delivered,
            total_bytes: self.flows.iter().map(|f| f.spec.size).sum(),
        }
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => self.on_tx_done(port),
            Event::LinkDeliver { port } => self.on_link_deliver(port),
            Event::FlowStart { flow } => {
                let f = &mut self.flows[flow as usize];
                f.started = true;
                f.started_at = self.now;
                self.make_ready(flow);
            }
            Event::FlowTimer { flow } => self.on_flow_timer(flow),
            Event::Failure { idx, begin } => self.on_failure(idx, begin),
            Event::RouteUpdate { port, down } => self.on_route_update(port, down),
            Event::CreditPace { host } => self.on_credit_pace(host),
            Event::AckFlush { flow } => self.on_ack_flush(flow),
            Event::SampleTick => {
                if let Some(obs) = &mut self.observer {
                    obs.tick(self.now, &mut self.net, &self.counters);
                    self.events.push(self.now + obs.bucket, Event::SampleTick);
                }
            }
        }
    }

    // ---- failures and routing --------------------------------------------

    fn on_failure(&mut self, idx: u32, begin: bool) {
        let now = self.now;
        let plan = &mut self.failures[idx as usize];
        if begin {
            if let Some(d) = plan.duration {
                self.events.push(now + d, Event::Failure { idx, begin: false });
            }
            if let Some(every) = plan.every {
                let again = match &mut plan.remaining {
                    Some(r) => {
                        *r -= 1;
                        *r > 0
                    }
                    None => true,
                };
                if again {
                    self.events.push(now + every, Event::Failure { idx, begin: true });
                }
            }
        }
        let fault = plan.fault;
        for i in 0..self.failures[idx as usize].ports.len() {
            let p = self.failures[idx as usize].ports[i];
            self.apply_fault(p, fault, begin);
        }
    }

    fn apply_fault(&mut self, p: PortId, fault: Fault, begin: bool) {
        let port = &mut self.net.ports[p as usize];
        match fault {
            Fault::Down => {
                if begin {
                    port.down_count += 1;
                } else {
                    port.down_count -= 1;
                }
                let up = port.down_count == 0;
                let back = up && !port.up;
                port.up = up;
                if back {
                    self.kick(p);
                }
                if let Some(lag) = self.convergence {
                    self.events
                        .push(self.now + lag, Event::RouteUpdate { port: p, down: begin });
                }
            }
            Fault::Degrade(rate) => {
                let r = if begin { rate } else { port.base_rate };
                port.set_rate(r);
            }
            Fault::Loss(x) => port.fault = if begin { PortFault::Loss(x) } else { PortFault::None },
            Fault::DropNth(n) => {
                port.fault = if begin {
                    PortFault::DropNth { n, seen: 0 }
                } else {
                    PortFault::None
                }
            }
        }
    }

    /// Routing catches up with one port: once its believed state flips,
    /// every switch's ECMP groups are recomputed.
    fn on_route_update(&mut self, port: PortId, down: bool) {
        let p = &mut self.net.ports[port as usize];
        let was_alive = p.routed_down == 0;
        if down {
            p.routed_down += 1;
        } else {
            p.routed_down -= 1;
        }
        if (p.routed_down == 0) != was_alive {
            let alive: Vec<bool> = self.net.ports.iter().map(|p| p.routed_down == 0).collect();
            routing::converge(&mut self.net, &alive);
            self.counters.route_updates += 1;
        }
    }

    // ---- ports and links -------------------------------------------------

    /// Put a packet into a switch port's queue (or a host's control queue).
    fn enqueue(&mut self, port_id: PortId, id: PacketId) {
        let port = &mut self.net.ports[port_id as usize];
        if !port.up {
            self.drop_packet(id, true);
            return;
        }
        let pkt = self.pool.get_mut(id);
        if pkt.is_priority() {
            port.prio.push_back((id, pkt.size));
        } else if port.data_bytes + pkt.size as u64 > port.params.capacity {
            if port.params.trimming {
                pkt.trimmed = true;
                pkt.size = port.params.header_bytes;
                port.prio.push_back((id, pkt.size));
                self.counters.trims += 1;
            } else {
                port.drops += 1;
                self.drop_packet(id, false);
                return;
            }
        } else {
            if !port.params.ecn_at_dequeue && port.ecn_mark(port.data_bytes) {
                pkt.ecn = true;
                self.counters.ecn_marks += 1;
            }
            port.data_bytes += pkt.size as u64;
            port.max_queue_bytes = port.max_queue_bytes.max(port.data_bytes);
            port.window_max_queue = port.window_max_queue.max(port.data_bytes);
            port.data.push_back((id, pkt.size));
        }
        self.kick(port_id);
    }

    /// Something may be waiting at a port: transmit now if the line is
    /// free, otherwise make sure a TxDone event will come when it frees.
    #[inline]
    fn kick(&mut self, port_id: PortId) {
        let port = &self.net.ports[port_id as usize];
        if port.busy_until > self.now {
            if port.tx_event_at != Some(port.busy_until) && self.has_waiting(port_id) {
                self.schedule_tx_done(port_id);
            }
            return;
        }
        self.start_tx(port_id);
    }

    #[inline]
    fn has_waiting(&self, port_id: PortId) -> bool {
        let port = &self.net.ports[port_id as usize];
        !port.prio.is_empty()
            || match port.from {
                Node::Host(h) => !self.net.hosts[h as usize].ready.is_empty(),
                Node::Switch(_) => !port.data.is_empty(),
            }
    }

    /// The line is free: start serializing the next packet, if any. The
    /// packet joins the link's FIFO at once with its arrival time (end of
    /// serialization plus latency).
    fn start_tx(&mut self, port_id: PortId) {
        loop {
            let port = &mut self.net.ports[port_id as usize];
            // Queues hold (packet, wire size) so dequeuing need not touch the packet pool.
            let next = match port.prio.pop_front() {
                Some(entry) => Some(entry),
                None => match port.from {
                    Node::Host(h) => self.host_pull(h),
                    Node::Switch(_) => {
                        let entry = port.data.pop_front();
                        if let Some((id, size)) = entry {
                            port.data_bytes -= size as u64;
                            // Dequeue marking on the occupancy the packet leaves behind (REPS artifact CompositeQueue).
                            if port.params.ecn_at_dequeue && port.ecn_mark(port.data_bytes) {
                                self.pool.get_mut(id).ecn = true;
                                self.counters.ecn_marks += 1;
                            }
                        }
                        entry
                    }
                },
            };
            let Some((id, size)) = next else { return };
            let size = size as u64;
            let port = &mut self.net.ports[port_id as usize];
            if !port.up {
                self.drop_packet(id, true);
                continue;
            }
            port.tx_bytes += size;
            port.tx_packets += 1;
            let done = self.now + port.serialization(size);
            port.busy_until = done;
            let arrival = done + port.latency;
            port.wire.push_back((arrival, id));
            if port.wire.len() == 1 {
                self.events.push(arrival, Event::LinkDeliver { port: port_id });
            }
            if self.has_waiting(port_id) {
                self.schedule_tx_done(port_id);
            }
            return;
        }
    }

    #[inline]
    fn schedule_tx_done(&mut self, port_id: PortId) {
        let port = &mut self.net.ports[port_id as usize];
        port.tx_event_at = Some(port.busy_until);
        self.events.push(port.busy_until, Event::TxDone { port: port_id });
    }

    fn on_tx_done(&mut self, port_id: PortId) {
        let port = &mut self.net.ports[port_id as usize];
        if port.tx_event_at != Some(self.now) {
            return; // stale: the line was restarted by a same-instant arrival
        }
        port.tx_event_at = None;
        self.kick(port_id);
    }

    fn on_link_deliver(&mut self, port_id: PortId) {
        let port = &mut self.net.ports[port_id as usize];
        let (_, id) = port.wire.pop_front().expect("a delivering link carries a packet");
        if let Some(&(next, _)) = port.wire.front() {
            self.events.push(next, Event::LinkDeliver { port: port_id });
        }
        // A dead link loses what is on it; a lossy one some of it. Silently: no trim, no NACK.
        if !port.up || (port.fault != PortFault::None && port.fault_drops()) {
            self.drop_packet(id, true);
            return;
        }
        match port.to {
            Node::Switch(sw) => match self.net.route(sw, self.pool.get(id), self.now) {
                Some(out) => self.enqueue(out, id),
                None => self.drop_packet(id, true), // routing knows no way there
            },
            Node::Host(h) => self.host_receive(h, id),
        }
    }

    fn drop_packet(&mut self, id: PacketId, failure: bool) {
        let flow = self.pool.get(id).flow;
        self.flows[flow as usize].drops += 1;
        if failure {
            self.counters.drops_failure += 1;
        } else {
            self.counters.drops_congestion += 1;
        }
        self.pool.free(id);
    }

    // ---- hosts -----------------------------------------------------------

    /// Queue a flow for its host's NIC if it can send, and wake the NIC.
    fn make_ready(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        if f.in_ready || !f.can_send() {
            return;
        }
        f.in_ready = true;
        let host = f.spec.src;
        self.net.hosts[host as usize].ready.push_back(flow);
        let nic = self.net.hosts[host as usize].nic;
        self.kick(nic);
    }

    /// The NIC is free: take one data packet from the next ready flow.
    fn host_pull(&mut self, host: u32) -> Option<(PacketId, u32)> {
        while let Some(fid) = self.net.hosts[host as usize].ready.pop_front() {
            let f = &mut self.flows[fid as usize];
            if !f.can_send() {
                f.in_ready = false;
                continue;
            }
            let now = self.now;
            let (seq, size, rtx) = f.take_next(now);
            let ev = f.lb.next_ev(now, &mut f.rng, &mut f.lb_stats);
            f.record_ev(seq, ev);
            let adaptive = matches!(f.lb, Lb::Adaptive(_));
            let arm_timer = !f.timer_pending;
            f.timer_pending = true;
            if f.can_send() {
                self.net.hosts[host as usize].ready.push_back(fid);
            } else {
                f.in_ready = false;
            }
            let (src, dst) = (f.spec.src, f.spec.dst);
            if arm_timer {
                self.events.push(now + self.params.rto, Event::FlowTimer { flow: fid });
            }
            self.counters.packets_sent += 1;
            self.counters.data_sent += 1;
            if rtx {
                self.counters.retransmissions += 1;
            }
            let pkt = Packet {
                kind: PacketKind::Data,
                flow: fid,
                seq,
                src,
                dst,
                size,
                ev,
                ecn: false,
                trimmed: false,
                adaptive,
                span: 0,
                sent_at: now,
            };
            return Some((self.pool.alloc(pkt), size));
        }
        None
    }

    fn host_receive(&mut self, host: u32, id: PacketId) {
        self.counters.delivered += 1;
        let pkt = *self.pool.get(id);
        self.pool.free(id);
        debug_assert_eq!(pkt.dst, host);
        match pkt.kind {
            PacketKind::Data => self.receiver_data(host, pkt),
            PacketKind::Ack | PacketKind::AckBatch => self.sender_ack(pkt),
            PacketKind::Nack => self.sender_nack(pkt),
            PacketKind::Credit => self.sender_credit(pkt),
            PacketKind::Rts => self.receiver_rts(host, pkt),
        }
    }

    /// Receiver: accept in any order and acknowledge (REPS §3.1: the ACK
    /// echoes the EV and the ECN mark); a trimmed header gets a NACK at once.
    /// With `ack_ratio` n > 1, one ACK per n packets (REPS §4.5.1), and at
    /// once for the packet that ends the message and for any after it is
    /// whole; `ack_delay` bounds how long a partial batch waits.
    fn receiver_data(&mut self, host: u32, pkt: Packet) {
        if let Some(c) = &mut self.credits {
            let npkts = self.flows[pkt.flow as usize].npkts;
            if let Some(at) = c.on_arrival(host, pkt.flow, npkts, pkt.trimmed, pkt.ev, self.now) {
                self.events.push(at, Event::CreditPace { host });
            }
        }
        let f = &mut self.flows[pkt.flow as usize];
        let kind = if pkt.trimmed {
            self.counters.nacks_sent += 1;
            PacketKind::Nack
        } else {
            let (new, complete) = f.receive(pkt.seq, self.now);
            if new {
                self.counters.payload_delivered += f.payload_of(pkt.seq);
            }
            if complete {
                self.flows_done += 1;
                self.release_dependents(pkt.flow);
            }
            if self.params.ack_ratio > 1 {
                let f = &mut self.flows[pkt.flow as usize];
                let trigger = Trigger {
                    ev: pkt.ev,
                    ecn: pkt.ecn,
                    adaptive: pkt.adaptive,
                    sent_at: pkt.sent_at,
                };
                let pending = f.ack_log.push(pkt.seq, trigger, self.now);
                let ends = pkt.seq + 1 == f.npkts || f.rx_finish.is_some();
                if pending >= self.params.ack_ratio as usize || ends {
                    self.send_ack_batch(pkt.flow);
                } else if let Some(delay) = self.params.ack_delay.filter(|_| !f.ack_log.flush_armed) {
                    f.ack_log.flush_armed = true;
                    self.events.push(self.now + delay, Event::AckFlush { flow: pkt.flow });
                }
                return;
            }
            self.counters.acks_sent += 1;
            PacketKind::Ack
        };
        self.send_control(Packet {
            kind,
            size: self.params.ack_bytes,
            src: host,
            dst: pkt.src,
            trimmed: false,
            ..pkt
        });
    }

    /// Put a control packet (ACK, credit, RTS) on its source host's NIC.
    fn send_control(&mut self, pkt: Packet) {
        self.counters.packets_sent += 1;
        let nic = self.net.hosts[pkt.src as usize].nic;
        let id = self.pool.alloc(pkt);
        self.enqueue(nic, id);
    }

    /// A flow's data has all arrived: flows waiting only for it may start.
    fn release_dependents(&mut self, flow: u32) {
        let Some(deps) = self.meta.dependents.get(flow as usize) else {
            return;
        };
        for &d in deps {
            let f = &mut self.flows[d as usize];
            f.waiting_on -= 1;
            if f.waiting_on == 0 {
                self.events
                    .push(f.spec.start.max(self.now), Event::FlowStart { flow: d });
            }
        }
    }

    /// Acknowledge a flow's pending batch, echoing its latest packet.
    fn send_ack_batch(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        let (start, span) = f.ack_log.take();
        let t = f.ack_log.last;
        let (host, dst) = (f.spec.dst, f.spec.src);
        let ack = Packet {
            kind: PacketKind::AckBatch,
            flow,
            seq: start,
            src: host,
            dst,
            size: self.params.ack_bytes,
            ev: t.ev,
            ecn: t.ecn,
            trimmed: false,
            adaptive: t.adaptive,
            span,
            sent_at: t.sent_at,
        };
        self.counters.acks_sent += 1;
        self.send_control(ack);
    }

    /// A partial batch may have waited `ack_delay`: acknowledge it, or wait for its due time.
    fn on_ack_flush(&mut self, flow: u32) {
        let delay = self.params.ack_delay.expect("armed only with a delay");
        let log = &mut self.flows[flow as usize].ack_log;
        log.flush_armed = false;
        if log.pending() == 0 {
            return;
        }
        let due = log.batch_since + delay;
        if due <= self.now {
            self.send_ack_batch(flow);
        } else {
            log.flush_armed = true;
            self.events.push(due, Event::AckFlush { flow });
        }
    }

    /// EQDS: a receiving host's pacer sends its next credit, if any flow wants one.
    fn on_credit_pace(&mut self, host: u32) {
        let Some(pacers) = &mut self.credits else { return };
        let flows = &self.flows;
        let (credit, next) = pacers.issue(host, self.now, &self.net.ports, |f| {
            flows[f as usize].rx_finish.is_some()
        });
        if let Some(at) = next {
            self.events.push(at, Event::CreditPace { host });
        }
        let Some(c) = credit else { return };
        let f = &self.flows[c.flow as usize];
        let pkt = Packet {
            kind: PacketKind::Credit,
            flow: c.flow,
            seq: c.count,
            src: host,
            dst: f.spec.src,
            size: self.params.ack_bytes,
            ev: c.ev,
            ecn: false,
            trimmed: false,
            adaptive: matches!(f.lb, Lb::Adaptive(_)),
            span: 0,
            sent_at: self.now,
        };
        self.counters.credits_sent += 1;
        self.send_control(pkt);
    }

    /// EQDS: a sender asks for credit (htsim `EqdsSink::processRts`).
    fn receiver_rts(&mut self, host: u32, rts: Packet) {
        let Some(c) = &mut self.credits else { return };
        let npkts = self.flows[rts.flow as usize].npkts;
        let need = rts.span as u32;
        if let Some(at) = c.on_rts(host, rts.flow, npkts, rts.seq, need, rts.ev, self.now) {
            self.events.push(at, Event::CreditPace { host });
        }
    }

    /// EQDS: send flow `flow`'s request-to-send, on an EV of its balancer
    /// (htsim `sendRTS` calls `nextEntropy`).
    fn send_rts(&mut self, flow: u32, heard: u32, need: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        let ev = f.lb.next_ev(now, &mut f.rng, &mut f.lb_stats);
        let pkt = Packet {
            kind: PacketKind::Rts,
            flow,
            seq: heard,
            src: f.spec.src,
            dst: f.spec.dst,
            size: self.params.ack_bytes,
            ev,
            ecn: false,
            trimmed: false,
            adaptive: matches!(f.lb, Lb::Adaptive(_)),
            span: need.min(u16::MAX as u32) as u16,
            sent_at: now,
        };
        self.counters.rts_sent += 1;
        self.send_control(pkt);
    }

    fn sender_ack(&mut self, ack: Packet) {
        let now = self.now;
        let rto = self.params.rto;
        let f = &mut self.flows[ack.flow as usize];
        if f.is_done() {
            return;
        }
        f.record_rtt(now, now - ack.sent_at, rto);
        if let Some(obs) = self.observer.as_mut().filter(|o| o.rtt) {
            obs.rtt_sample(ack.flow, now, now - ack.sent_at);
        }
        f.lb.on_ack(now, ack.ev, ack.ecn, &mut f.lb_stats);
        let out = match ack.kind {
            PacketKind::AckBatch => f.on_ack_batch(ack.seq, ack.span),
            _ => f.on_ack(ack.seq),
        };
        if out.newly_acked > 0 {
            f.cc.on_ack(out.newly_acked, ack.ecn);
        }
        // MP-RDMA's slow-path rule needs the packet's own seq: per-packet ACKs only.
        if let (Lb::Mprdma(m), PacketKind::Ack) = (&mut f.lb, ack.kind) {
            if m.ack_is_late(ack.seq) {
                f.cc.on_late_ack(f.wire_size(ack.seq) as u64);
            }
        }
        if out.all_acked {
            f.finish_sender(now);
            self.senders_done += 1;
            return;
        }
        self.make_ready(ack.flow);
    }

    fn sender_nack(&mut self, nack: Packet) {
        let now = self.now;
        let f = &mut self.flows[nack.flow as usize];
        if f.is_done() {
            return;
        }
        f.lb.on_nack(now, nack.ev, &mut f.lb_stats);
        if let Some(size) = f.on_nack(nack.seq) {
            f.cc.on_nack(size);
        }
        self.make_ready(nack.flow);
    }

    fn sender_credit(&mut self, credit: Packet) {
        let f = &mut self.flows[credit.flow as usize];
        if f.is_done() {
            return;
        }
        f.cc.on_credit(credit.seq);
        self.make_ready(credit.flow);
    }

    fn on_flow_timer(&mut self, flow: u32) {
        let now = self.now;
        let p = &self.params;
        let f = &mut self.flows[flow as usize];
        f.timer_pending = false;
        if f.is_done() {
            return;
        }
        self.lost_scratch.clear();
        let next = f.on_timer(now, p.rto, &mut self.lost_scratch);
        if !self.lost_scratch.is_empty() {
            self.counters.timeouts += self.lost_scratch.len() as u64;
            for &(size, ev) in &self.lost_scratch {
                f.cc.on_timeout(size);
                f.lb.on_lost(now, ev, &mut f.lb_stats);
            }
            let info = TimeoutInfo {
                looks_like_failure: f.timeout_looks_like_failure(p.trimming, p.freeze_rtt_factor),
            };
            f.lb.on_timeout(now, info, &mut f.lb_stats);
        }
        // Nothing in flight and yet unable to send (EQDS waiting for a credit
        // that may be lost): look again one RTO later.
        let stuck = f.has_work() && !f.can_send();
        let stalled = next.is_none() && f.inflight == 0 && stuck;
        // EQDS: lost data or credit and no credit to go on: ask (htsim `rtxTimerExpired`).
        let pending = f.pending_sends();
        let rts = match &mut f.cc {
            CongestionControl::Eqds(e) if stuck && (stalled || !self.lost_scratch.is_empty()) => {
                e.rts_due(now, f.base_rtt).then(|| e.rts_request(pending))
            }
            _ => None,
        };
        let again = next.or((stalled && f.cc.on_stall()).then_some(now + p.rto));
        if let Some(at) = again {
            f.timer_pending = true;
            self.events.push(at, Event::FlowTimer { flow });
        }
        if let Some((heard, need)) = rts {
            self.send_rts(flow, heard, need);
        }
        self.make_ready(flow);
    }

    // ---- results ---------------------------------------------------------

    pub fn flow_records(&self) -> Vec<FlowRecord> {
        let us = |t: Option<SimTime>| t.map(|t| t.as_us_f64()).unwrap_or(f64::NAN);
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let frozen = match &f.lb {
                    crate::lb::Lb::Reps(r) => r.frozen_time(self.now, &f.lb_stats),
                    _ => 0,
                };
                let fct = f.rx_finish.map(|t| t - f.started_at);
                let measured = f.started
                    && f.started_at >= self.meta.measure_from
                    && f.rx_finish
                        .is_some_and(|t| self.meta.measure_until.is_none_or(|u| t <= u));
                FlowRecord {
                    id: i as u32,
                    message: f.message,
                    src: f.spec.src,
                    dst: f.spec.dst,
                    size_bytes: f.spec.size,
                    lb: f.lb.name(),
                    step: f.step,
                    start_us: if f.started { f.started_at.as_us_f64() } else { f64::NAN },
                    receiver_finish_us: us(f.rx_finish),
                    sender_finish_us: us(f.tx_finish),
                    fct_us: fct.map_or(f64::NAN, |t| t.as_us_f64()),
                    ideal_fct_us: f.ideal.as_us_f64(),
                    // ConWeave fctAnalysis.py: slowdown = max(1, FCT / standalone FCT).
                    slowdown: fct.map_or(f64::NAN, |t| (t.ps() as f64 / f.ideal.ps() as f64).max(1.0)),
                    measured,
                    finished: f.rx_finish.is_some(),
                    retransmissions: f.retransmissions,
                    timeouts: f.timeouts,
                    nacks: f.nacks,
                    drops: f.drops,
                    explored_evs: f.lb_stats.explored,
                    recycled_evs: f.lb_stats.recycled,
                    freeze_entries: f.lb_stats.freeze_entries,
                    frozen_us: frozen as f64 / 1e6,
                }
            })
            .collect()
    }

    /// One record per message: a message finishes when the last of its
    /// flows' data arrives, and its slowdown is against the whole message's
    /// ideal (REPS Fig. 2 normalises the message's completion).
    pub fn message_records(&self) -> Vec<MessageRecord> {
        self.flows
            .chunk_by(|a, b| a.message == b.message)
            .map(|carriers| {
                let first = &carriers[0];
                let ideal = self.meta.message_ideal[first.message as usize];
                let started = carriers.iter().all(|f| f.started);
                let start = carriers.iter().map(|f| f.started_at).min().unwrap_or(first.started_at);
                let finish = carriers
                    .iter()
                    .try_fold(SimTime::ZERO, |last, f| f.rx_finish.map(|t| last.max(t)));
                let fct = finish.map(|t| t - start);
                MessageRecord {
                    message: first.message,
                    src: first.spec.src,
                    dst: first.spec.dst,
                    size_bytes: carriers.iter().map(|f| f.spec.size).sum(),
                    lb: first.lb.name(),
                    step: first.step,
                    subflows: carriers.len() as u32,
                    start_us: if started { start.as_us_f64() } else { f64::NAN },
                    receiver_finish_us: finish.map_or(f64::NAN, |t| t.as_us_f64()),
                    fct_us: fct.map_or(f64::NAN, |t| t.as_us_f64()),
                    ideal_fct_us: ideal.as_us_f64(),
                    // ConWeave fctAnalysis.py: slowdown = max(1, FCT / standalone FCT).
                    slowdown: fct.map_or(f64::NAN, |t| (t.ps() as f64 / ideal.ps() as f64).max(1.0)),
                    measured: started
                        && start >= self.meta.measure_from
                        && finish.is_some_and(|t| self.meta.measure_until.is_none_or(|u| t <= u)),
                    finished: finish.is_some(),
                }
            })
            .collect()
    }

    /// The tables beyond the flow table: the messages when some were split
    /// into subflows, a collective's steps, recorded time series, and the
    /// failures as they were resolved (one row per target).
    pub fn extra_tables(&self, messages: &[MessageRecord]) -> Vec<Table> {
        let mut out = Vec::new();
        if messages.len() < self.flows.len() {
            out.push(message_table(messages));
        }
        out.extend(self.observer.as_ref().map(|o| o.tables()).unwrap_or_default());
        if self.meta.collective.is_some() {
            out.push(step_table(messages));
        }
        if !self.failures.is_empty() {
            let mut entry = Vec::new();
            let mut link = Vec::new();
            let mut kind = Vec::new();
            let (mut start, mut dur, mut every) = (Vec::new(), Vec::new(), Vec::new());
            for f in &self.failures {
                for &p in &f.ports {
                    entry.push(f.entry as u32);
                    link.push(self.net.ports[p as usize].name.clone());
                    kind.push(
                        match f.fault {
                            Fault::Down => "down",
                            Fault::Degrade(_) => "degrade",
                            Fault::Loss(_) => "loss",
                            Fault::DropNth(_) => "drop_nth",
                        }
                        .to_string(),
                    );
                    start.push(f.start.as_us_f64());
                    dur.push(f.duration.map_or(f64::NAN, |d| d.as_us_f64()));
                    every.push(f.every.map_or(f64::NAN, |d| d.as_us_f64()));
                }
            }
            out.push(
                Table::new("failures")
                    .with("entry", Column::U32(entry))
                    .with("link", Column::Str(link))
                    .with("kind", Column::Str(kind))
                    .with("start_us", Column::F64(start))
                    .with("duration_us", Column::F64(dur))
                    .with("every_us", Column::F64(every)),
            );
        }
        out
    }

    pub fn summary(&self, records: &[MessageRecord]) -> Summary {
        let s = fct_stats(records);
        let c = &self.counters;
        let finished = records.iter().filter(|r| r.finished).count();
        let (measured_flows, mean_slowdown, p99_slowdown) = slowdown_stats(records);
        let collective_us = match self.meta.collective {
            Some(_) if finished == records.len() => {
                let first = records.iter().map(|r| r.start_us).fold(f64::INFINITY, f64::min);
                let last = records.iter().map(|r| r.receiver_finish_us).fold(0.0, f64::max);
                last - first
            }
            _ => f64::NAN,
        };
        Summary {
            lbsim_version: env!("CARGO_PKG_VERSION"),
            flows: records.len(),
            finished_flows: finished,
            unfinished_flows: records.len() - finished,
            max_fct_us: s.max,
            mean_fct_us: s.mean,
            p50_fct_us: s.p50,
            p99_fct_us: s.p99,
            measured_flows,
            mean_slowdown,
            p99_slowdown,
            collective_us,
            drops: Drops {
                congestion: c.drops_congestion,
                failure: c.drops_failure,
                trimmed: c.trims,
            },
            retransmissions: c.retransmissions,
            timeouts: c.timeouts,
            packets_sent: c.packets_sent,
            packets_delivered: c.delivered,
            ecn_marks: c.ecn_marks,
            events: c.events,
            sim_end_us: self.now.as_us_f64(),
            wall_seconds: self.wall_seconds,
            events_per_second: if self.wall_seconds > 0.0 {
                c.events as f64 / self.wall_seconds
            } else {
                0.0
            },
            base_rtt_us: self.params.base_rtt.as_us_f64(),
            bdp_bytes: self.params.bdp_bytes,
            rto_us: self.params.rto.as_us_f64(),
            queue_bytes: self.params.queue_bytes,
            stopped_early: self.stop_reason != Some(StopReason::Drained),
        }
    }
}
