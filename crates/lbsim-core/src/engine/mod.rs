//! The engine: an event loop that moves packets between the parts.
//!
//! A packet's life: a host NIC pulls it from one of its ready flows
//! (round-robin, one packet each, control packets first; `hosts`), the port
//! serializes it and its link carries it for its latency (`links`), a
//! switch forwards it into an output queue (`net::forward`, queue
//! disciplines in `net::queue`), and so on until a host receives it: data
//! goes to the flow's receiver half (`receiving`), answers to its sender
//! half (`sending`). Failures and routing convergence are `failures`;
//! results are `report`. The parts themselves (queues, switch policies,
//! transports, congestion controls, load balancers) live in their own
//! modules; nothing here names one.

mod failures;
mod hosts;
mod invariants;
mod links;
mod pair_state;
pub mod pfc;
mod progress_guard;
mod receiving;
mod release;
pub use release::Triggers;
mod report;
mod sending;

use crate::cc::ReceiverCc;
use crate::event::{Event, EventQueue, PortEvent};
use crate::failure::bit_errors::{BitErrors, Site};
use crate::failure::FailurePlan;
use crate::lb::{AgentOut, HostAgent};
use crate::metrics::Counters;
use crate::net::queue::PfcSignal;
use crate::net::{Network, Node, PolicyOut, Port, Queue};
use crate::observe::Observer;
use crate::packet::PacketPool;
use crate::scenario::{FctEnd, Release};
use crate::time::SimTime;
use crate::transport::{Flow, TransportParams};

/// Run-wide constants resolved from the scenario.
#[derive(Clone, Debug)]
pub struct SimParams {
    pub transport: TransportParams,
    /// Size of ACKs, NACKs, credits and RTS packets.
    pub control_bytes: u32,
    pub stop_at: SimTime,
    /// For the summary.
    pub base_rtt: SimTime,
    pub bdp_bytes: u64,
    pub queue_bytes: u64,
    /// Some flow's congestion control paces by rate (DCQCN): the NICs ask it when to send.
    pub paced: bool,
    /// A pair's next flow starts with its last one's balancer and window (`engine::pair_state`).
    pub resume_pair_state: bool,
}

/// How switch ports and host NICs learn that a transmission ended
/// (`Port::lazy_line`). Results are the same bit for bit either way; only
/// speed differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineMode {
    /// Lazy lines where allowed: at switch ports on networks of at most
    /// `LAZY_LINES_UP_TO` switch ports, at NICs too up to `LAZY_NICS_UP_TO` hosts.
    #[default]
    Auto,
    /// Lazy lines wherever allowed.
    Lazy,
    /// A `TxDone` event for every transmission something waits behind.
    Eager,
}

/// `LineMode::Auto`'s limit. Lazy lines save a third of a REPS
/// permutation's events, but a line then starts its next packet inside the
/// event that looks at it (mostly an arrival), where the prefetch stages do
/// not reach the queue's head: measured on this project's machine
/// (docs/performance.md, "Lazy lines"), 12-14 % faster at 128 hosts, 5-19 %
/// at 1024 (3072 switch ports), level at 2048 (6144), 3-14 % slower at 4096
/// and 8192.
pub const LAZY_LINES_UP_TO: usize = 6144;

/// `LineMode::Auto`'s limit for lazy NIC lines (with lazy switch lines).
/// They save another fifth of a REPS permutation's events (every NIC's
/// `TxDone`), and a NIC then starts its next packet when the host or the
/// delivery of its last packet looks at it: measured (docs/performance.md,
/// "Lazy NIC lines") 10 % fewer instructions at 128 hosts, 14 % faster at
/// 512 hosts, 4 % at 1024, 3 % slower at 2048.
pub const LAZY_NICS_UP_TO: usize = 1024;

/// What the workload says beyond the flows themselves.
#[derive(Clone, Debug, Default)]
pub struct WorkloadMeta {
    /// Per flow, the flows that wait for it to be done (`release`).
    pub dependents: Vec<Vec<u32>>,
    /// The messages' multishot triggers.
    pub triggers: Triggers,
    /// When a flow counts as done for `dependents` and `triggers`.
    pub release: Release,
    /// Per message (`Flow::message`), the ideal FCT of the whole message.
    pub message_ideal: Vec<SimTime>,
    /// Statistics count flows that start at or after this…
    pub measure_from: SimTime,
    /// …and finish at or before this.
    pub measure_until: Option<SimTime>,
    /// The collective the flows form, if any.
    pub collective: Option<&'static str>,
    /// The event that ends a flow's completion time (`metrics.fct`).
    pub fct_end: FctEnd,
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
    /// Flows were stuck: no data arrived for the stall window (`progress_guard`).
    NoProgress,
    /// Nothing moved for `queue.shared.deadlock_after` while PFC pauses were
    /// in force: a PFC deadlock (the `pfc` table says which ports and classes).
    PfcDeadlock,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Drained => "drained",
            StopReason::Horizon => "horizon",
            StopReason::Cancelled => "cancelled",
            StopReason::NoProgress => "no_progress",
            StopReason::PfcDeadlock => "pfc_deadlock",
        }
    }
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
    total_bytes: u64,
    failures: Vec<FailurePlan>,
    /// A `switch_ber` or `cable_ber` failure's network-wide marks, if the run has one.
    bit_errors: Option<Box<BitErrors>>,
    meta: WorkloadMeta,
    /// Routing's lag behind a port going down or up; None: it never catches up.
    convergence: Option<SimTime>,
    observer: Option<Observer>,
    /// The receiving hosts' congestion-control agent (EQDS's credit pacers), if the run has one.
    receiver_cc: Option<Box<dyn ReceiverCc>>,
    /// A load balancer's agent in the hosts (FaCa's prober), if the run has one.
    lb_agent: Option<Box<dyn HostAgent>>,
    /// `transport.resume_pair_state`: what each pair's last finished flow left.
    pair_memory: Option<pair_state::PairMemory>,
    /// What it asked for, reused between calls.
    agent_out: AgentOut,
    lost_scratch: Vec<(u64, u16)>,
    /// What switch policies asked for, reused between calls.
    policy_out: PolicyOut,
    /// PFC frames queues asked for, reused between calls.
    pfc_signals: Vec<PfcSignal>,
    wall_seconds: f64,
    stop_reason: Option<StopReason>,
    guard: progress_guard::ProgressGuard,
    /// A handler decided the run must end now (a PFC deadlock).
    halt: Option<StopReason>,
    /// PFC deadlock watch: its period, and how many packets had moved at its last look.
    pfc_watch: Option<(SimTime, u64)>,
    /// `decide_lazy_lines` has run.
    lines_decided: bool,
    /// The NICs' lines are lazy: host events catch them up first (`catch_up_nic`).
    lazy_nics: bool,
    line_mode: LineMode,
    /// Report each port's totals at the end (`observe.port_totals`).
    port_totals: bool,
}

/// Where the next packet out of a port's queue waits (the fast-path queue only).
#[inline(always)]
fn queue_head(p: &Port) -> Option<&(crate::packet::PacketId, u32)> {
    match &p.queue {
        Queue::TwoClass(q) => q.head(),
        _ => None,
    }
}

impl Simulation {
    pub fn new(net: Network, flows: Vec<Flow>, params: SimParams) -> Self {
        let pair_memory = params.resume_pair_state.then(pair_state::PairMemory::default);
        let mut events = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            if f.waiting_on == 0 {
                events.push(f.spec.start, Event::FlowStart { flow: i as u32 });
            }
        }
        Simulation {
            total_bytes: flows.iter().map(|f| f.spec.size).sum(),
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
            bit_errors: None,
            meta: WorkloadMeta::default(),
            convergence: None,
            observer: None,
            receiver_cc: None,
            lb_agent: None,
            pair_memory,
            agent_out: AgentOut::default(),
            lost_scratch: Vec::new(),
            policy_out: PolicyOut::default(),
            pfc_signals: Vec::new(),
            wall_seconds: 0.0,
            stop_reason: None,
            guard: progress_guard::ProgressGuard::new(None),
            halt: None,
            pfc_watch: None,
            lines_decided: false,
            lazy_nics: false,
            line_mode: LineMode::Auto,
            port_totals: false,
        }
    }

    /// Choose how switch ports schedule their transmissions (before the run starts).
    pub fn set_line_mode(&mut self, mode: LineMode) {
        assert!(!self.lines_decided, "the line mode is chosen before the run starts");
        self.line_mode = mode;
    }

    /// Whether the switch ports' lines are lazy (known once the run has started).
    pub fn lazy_lines(&self) -> bool {
        self.net.ports.iter().any(|p| p.lazy_line)
    }

    /// Which ports go without `TxDone` events (`Port::lazy_line`): all
    /// switch ports, and on small networks the NICs (as `line_mode` says),
    /// when what a port sends next depends on its own queue (a NIC: its
    /// host's state) alone and nothing reads a port between its events:
    /// two-class queues everywhere (no shared buffer, no PFC), no switch
    /// policy (they read queues, and some see packets leave), no bit errors
    /// (they count packets as they enter a link), no host agent. Decided
    /// once, before the first event.
    fn decide_lazy_lines(&mut self) {
        self.lines_decided = true;
        let net = &self.net;
        let switch_ports = net.ports.iter().filter(|p| matches!(p.from, Node::Switch(_))).count();
        let (wanted, nics_wanted) = match self.line_mode {
            LineMode::Auto => (switch_ports <= LAZY_LINES_UP_TO, net.hosts.len() <= LAZY_NICS_UP_TO),
            LineMode::Lazy => (true, true),
            LineMode::Eager => (false, false),
        };
        let lazy = wanted
            && net.policies.is_empty()
            && net.buffers.is_empty()
            && self.bit_errors.is_none()
            && self.lb_agent.is_none()
            && self.pfc_watch.is_none()
            && net.ports.iter().all(|p| matches!(p.queue, Queue::TwoClass(_)));
        // A NIC's line is lazy only where what it sends next depends on
        // nothing but its host's state as of the instant the line freed: no
        // pacing (that depends on time) and no receiver agent (it reads ports).
        let lazy_nics = lazy && nics_wanted && self.receiver_cc.is_none() && !self.params.paced;
        self.lazy_nics = lazy_nics;
        for port in &mut self.net.ports {
            port.lazy_line = match port.from {
                Node::Switch(_) => lazy,
                Node::Host(_) => lazy_nics,
            };
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
        self.bit_errors = plans.iter().find_map(|p| match p.fault {
            crate::failure::Fault::SwitchBer(share) => Some(Box::new(BitErrors::new(share, Site::Switches))),
            crate::failure::Fault::CableBer(share) => Some(Box::new(BitErrors::new(share, Site::Links))),
            _ => None,
        });
        let count_entries = self.bit_errors.as_ref().is_some_and(|b| b.site == Site::Links);
        for port in &mut self.net.ports {
            port.counts_entries = count_entries;
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

    /// The receiving hosts' congestion-control agent (EQDS: receivers pull data with credits).
    pub fn set_receiver_cc(&mut self, agent: Box<dyn ReceiverCc>) {
        self.receiver_cc = Some(agent);
    }

    /// A load balancer's agent in the hosts (FaCa): it starts now.
    pub fn set_lb_agent(&mut self, mut agent: Box<dyn HostAgent>) {
        agent.start(&mut self.agent_out);
        self.lb_agent = Some(agent);
        self.apply_agent_out();
    }

    /// The load balancer's host agent, if the run has one (tests look inside).
    pub fn lb_agent(&self) -> Option<&dyn HostAgent> {
        self.lb_agent.as_deref()
    }

    /// Watch for PFC deadlocks: end the run when nothing moves for `after`
    /// while pauses are in force.
    pub fn set_pfc_watchdog(&mut self, after: SimTime) {
        self.pfc_watch = Some((after, 0));
        self.events.push(self.now + after, Event::PfcWatchdog);
    }

    /// Report each port's totals at the end (table `port_totals`).
    pub fn set_port_totals(&mut self, on: bool) {
        self.port_totals = on;
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

    /// Packets still in queues, on links or held by switches.
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
        if !self.lines_decided {
            self.decide_lazy_lines();
        }
        let mut next_report = self.counters.events.saturating_add(every);
        let reason = loop {
            let Some(t) = self.events.peek_time() else {
                break StopReason::Drained;
            };
            if t > self.params.stop_at {
                self.now = self.params.stop_at;
                break StopReason::Horizon;
            }
            if t > self.guard.next_look_at {
                if let Some(stuck) = self.look_for_progress(t) {
                    break stuck;
                }
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.counters.events += 1;
            self.prefetch();
            self.dispatch(ev);
            if self.idle() {
                break StopReason::Drained;
            }
            if let Some(r) = self.halt {
                break r;
            }
            if self.counters.events >= next_report {
                if let Some(stop) = self.report_progress(&mut next_report, every, progress) {
                    break stop;
                }
            }
        };
        self.wall_seconds += t0.elapsed().as_secs_f64();
        // Counters and queues are read from here on. (A run cut short in an instant
        // counts the lazy lines' starts of that whole instant.)
        self.catch_up_all(self.now);
        if let Some(obs) = &mut self.observer {
            obs.tick(self.now, &mut self.net, &self.counters); // the last, partial bucket
        }
        self.stop_reason = Some(reason);
        reason
    }

    /// The progress callback, out of line so the loop stays small.
    #[cold]
    #[inline(never)]
    fn report_progress(
        &mut self,
        next_report: &mut u64,
        every: u64,
        progress: &mut dyn FnMut(Progress) -> bool,
    ) -> Option<StopReason> {
        *next_report = self.counters.events.saturating_add(every);
        (!progress(self.progress())).then_some(StopReason::Cancelled)
    }

    pub fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            stop_at: self.params.stop_at,
            events: self.counters.events,
            flows_done: self.flows_done,
            flows: self.flows.len(),
            delivered_bytes: self.counters.payload_delivered,
            total_bytes: self.total_bytes,
        }
    }

    /// Ask the cache for what the next events of this instant will read, so
    /// that their misses overlap this event's work (large networks are bound
    /// by misses). Four stages, each reading only what the stage before
    /// asked for one event ago:
    /// 1. the port of the event four ahead;
    /// 2. three ahead, the head of its link FIFO or queue (and a NIC's host);
    /// 3. two ahead, what that head leads to: for a packet reaching a host,
    ///    its flow; at a switch, the egress port a hashed packet will join;
    ///    for a queue, the pooled packet it sends next (and a NIC's next
    ///    ready flow id);
    /// 4. the next event's per-packet state: of the flow a packet reaches
    ///    (the receiver's bitmap and SACK record, the sender's state), or
    ///    of the flow a NIC pulls its next packet from.
    #[inline(always)]
    fn prefetch(&self) {
        use crate::cache::prefetch;
        let [next, second, third, fourth] = self.events.peek_in_instant();
        let (ports, hosts) = (&self.net.ports, &self.net.hosts);
        let port = |e: PortEvent| match e {
            PortEvent::TxDone(port) | PortEvent::LinkDeliver(port) => ports.get(port as usize),
            PortEvent::Other => None,
        };
        let nic_host = |p: &Port| match p.from {
            Node::Host(h) => hosts.get(h as usize),
            Node::Switch(_) => None,
        };
        // 1: a delivery reads the port's first lines, a transmission all but its cold tail.
        match (fourth, port(fourth)) {
            (PortEvent::LinkDeliver(_), Some(p)) => p.prefetch_for_delivery(),
            (_, Some(p)) => p.prefetch_for_sending(),
            _ => {}
        }
        // 2
        match (third, port(third)) {
            (PortEvent::LinkDeliver(_), Some(p)) => {
                if let Some(head) = p.wire.front() {
                    prefetch(head);
                }
            }
            (PortEvent::TxDone(_), Some(p)) => {
                if let Some(head) = queue_head(p) {
                    prefetch(head);
                }
                if let Some(host) = nic_host(p) {
                    prefetch(host);
                }
            }
            _ => {}
        }
        // 3
        match (second, port(second)) {
            (PortEvent::LinkDeliver(_), Some(p)) => match (p.to, p.wire.front()) {
                (Node::Host(_), Some((_, pkt))) => {
                    if let Some(f) = self.flows.get(pkt.flow as usize) {
                        f.prefetch_for(pkt.kind);
                    }
                }
                // Hashed routes only: a switch policy's choice may have effects.
                (Node::Switch(sw), Some((_, pkt))) if pkt.routed_by_hash() => {
                    if let Some(out) = self.net.route_hashed(sw, pkt).and_then(|o| ports.get(o as usize)) {
                        out.prefetch_for_sending();
                    }
                }
                _ => {}
            },
            (PortEvent::TxDone(_), Some(p)) => {
                if let Some(&(id, _)) = queue_head(p) {
                    self.pool.prefetch(id);
                }
                if let Some(flow) = nic_host(p).and_then(|h| h.ready.front()) {
                    prefetch(flow);
                }
            }
            _ => {}
        }
        // 4
        match (next, port(next)) {
            (PortEvent::LinkDeliver(_), Some(p)) => {
                if let (Node::Host(_), Some((_, pkt))) = (p.to, p.wire.front()) {
                    if let Some(f) = self.flows.get(pkt.flow as usize) {
                        f.prefetch_packet_state(pkt);
                    }
                }
            }
            (PortEvent::TxDone(_), Some(p)) if queue_head(p).is_none() => {
                let flow = nic_host(p)
                    .and_then(|h| h.ready.front())
                    .and_then(|&f| self.flows.get(f as usize));
                if let Some(f) = flow {
                    f.prefetch_sender();
                }
            }
            _ => {}
        }
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => self.on_tx_done(port),
            Event::LinkDeliver { port } => self.on_link_deliver(port),
            Event::SwitchTimer { switch, policy } => self.on_switch_timer(switch, policy),
            Event::FlowStart { flow } => self.on_flow_start(flow),
            Event::FlowTimer { flow } => self.on_flow_timer(flow),
            Event::AckFlush { flow } => self.on_ack_flush(flow),
            Event::FlowPace { flow } => self.on_flow_pace(flow),
            Event::LbAgent { host } => self.on_lb_agent(host),
            Event::ReceiverCc { host } => self.on_receiver_cc(host),
            Event::Failure { idx, begin } => self.on_failure(idx, begin),
            Event::RouteUpdate { port, down } => self.on_route_update(port, down),
            Event::PauseEnd { port } => self.on_pause_end(port),
            Event::PfcRefresh { port } => self.on_pfc_refresh(port),
            Event::PfcWatchdog => self.on_pfc_watchdog(),
            Event::SampleTick => {
                if self.observer.is_some() {
                    self.catch_up_all(self.now);
                }
                if let Some(obs) = &mut self.observer {
                    obs.tick(self.now, &mut self.net, &self.counters);
                    self.events.push(self.now + obs.bucket, Event::SampleTick);
                }
            }
        }
    }
}
