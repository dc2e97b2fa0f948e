//! Load balancers. The sender side picks the entropy value (EV) of every
//! packet and may learn from the EVs echoed by ACKs and NACKs; the sender
//! never knows which path an EV maps to (REPS §2.2). A switch-side load
//! balancer (adaptive routing, ConWeave, later DRILL, CONGA, LetFlow) also
//! installs a policy in every switch (`net::policy`) that routes its flows'
//! packets.
//!
//! Adding one: a file with the balancer, its `ENTRY` (name, plot label and
//! colour, parameter table `lb.<name>` with its preset values, builder), and
//! one line in `load_balancers!` below. The scenario keys, presets, the
//! Python plot style and `lb.kind`'s error messages all come from here.

pub mod adaptive;
pub mod arcane;
pub mod bitmap;
pub mod conga;
pub mod conweave;
pub mod drill;
pub mod ecmp;
pub mod faca;
pub mod flowlet;
pub mod letflow;
pub mod mprdma;
pub mod ops;
pub mod plb;
pub mod reps;
pub mod subflows;
pub mod wcmp;

use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::{CcKind, LbKind, ScenarioError};
use crate::time::SimTime;

/// What the sender knew when its timer declared packets lost, for
/// balancers that tell failures from congestion (REPS App. A).
#[derive(Clone, Copy, Debug)]
pub struct TimeoutInfo {
    /// Queues trim (congestion then shows as NACKs, so a timeout means loss).
    pub trimming: bool,
    /// The largest RTT the sender sampled in its current window of 2·RTO.
    pub recent_max_rtt: SimTime,
    /// The flow's idle round-trip time.
    pub base_rtt: SimTime,
    /// Every packet declared lost was header-only (timeout RTSs): no data was lost.
    pub header_only: bool,
}

impl TimeoutInfo {
    /// A timeout that is a failure whatever the RTTs were (trimming on), or not.
    pub fn assumed(failure: bool) -> Self {
        TimeoutInfo {
            trimming: failure,
            recent_max_rtt: SimTime::ZERO,
            base_rtt: SimTime::ZERO,
            header_only: false,
        }
    }
}

/// What an ACK echoes to the balancer.
#[derive(Clone, Copy, Debug)]
pub struct AckEcho {
    pub ev: u16,
    pub ecn: bool,
    /// The data packet it answers (a cumulative SACK: the one that triggered
    /// it); None for a coalesced batch of per-packet ACKs.
    pub seq: Option<u32>,
}

/// A balancer's judgement of the path an ACK came back over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPath {
    Normal,
    /// A slow path (MP-RDMA): the ACK frees no window.
    Slow,
}

/// Counters a balancer keeps about itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct LbStats {
    /// EVs drawn at random.
    pub explored: u64,
    /// EVs reused from feedback.
    pub recycled: u64,
    pub freeze_entries: u64,
    /// Total time spent frozen (closed intervals only; see `LoadBalancer::frozen_ps`).
    pub frozen_ps: u64,
}

pub trait LoadBalancer {
    fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16;
    /// The EV of a header-only packet the sender sends besides its data (a
    /// timeout RTS, or such an RTS resent): by default chosen like data's.
    fn header_only_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        self.next_ev(now, rng, stats)
    }
    fn on_ack(&mut self, _now: SimTime, _ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        AckPath::Normal
    }
    fn on_nack(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {}
    fn on_timeout(&mut self, _now: SimTime, _info: TimeoutInfo, _stats: &mut LbStats) {}
    /// The retransmission timer declared lost a packet that was sent on `ev`.
    fn on_lost(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {}
    /// Time spent frozen up to `now`, counting an interval still open.
    fn frozen_ps(&self, _now: SimTime, stats: &LbStats) -> u64 {
        stats.frozen_ps
    }
    /// The flow starts now on `ev`, chosen by its host's agent (`HostAgent::flow_ev`).
    fn pin(&mut self, _ev: u16) {}
    /// A new flow takes up this state, left by its host pair's last flow
    /// (`transport.resume_pair_state`): drop what a new connection would not keep.
    fn resumed(&mut self) {}
}

/// What a balancer's host agent asks the engine to do.
#[derive(Default)]
pub struct AgentOut {
    /// Packets to put on their source host's NIC (they travel as control packets).
    pub send: Vec<crate::packet::Packet>,
    /// When to call `HostAgent::on_timer` for a host: (time, host).
    pub timers: Vec<(SimTime, u32)>,
}

/// A balancer's agent in the hosts (FaCa's prober): its own timers and
/// packets (`PacketKind::Probe`, `ProbeEcho`), and a say in each of its
/// flows' EV when the flow starts. The engine has at most one and asks it
/// only at flow starts, its timers and its packets: nothing per data packet.
pub trait HostAgent {
    /// The run begins: first timers.
    fn start(&mut self, out: &mut AgentOut);
    /// A timer it asked for fired at `host`.
    fn on_timer(&mut self, now: SimTime, host: u32, out: &mut AgentOut);
    /// One of its packets reached `host`.
    fn on_packet(&mut self, now: SimTime, host: u32, pkt: &crate::packet::Packet, out: &mut AgentOut);
    /// Flow `flow` (from `src` to `dst`, `size` bytes) starts now: the EV
    /// its balancer pins, None to leave it alone (not its flow, or nothing
    /// known yet).
    fn flow_ev(&mut self, now: SimTime, flow: u32, src: u32, dst: u32, size: u64) -> Option<u16>;
    /// What it counted, for the summary (`host_lb`, named `<lb>.<key>`), at the end of a run lasting `end`.
    fn summary(&self, _end: SimTime, _out: &mut std::collections::BTreeMap<String, f64>) {}
    /// Whether to record its state over time for `table` (`observe.host_lb`).
    fn record(&mut self, _on: bool) {}
    /// What it recorded over the run as a table (FaCa: every path estimate's changes), if anything.
    fn table(&self, _net: &crate::net::Network) -> Option<crate::table::Table> {
        None
    }
    /// For tests that look inside (`Simulation::lb_agent`).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Run-wide values every balancer's builder may use.
#[derive(Clone, Copy, Debug)]
pub struct LbCommon {
    /// `lb.entropy_space`: EVs the header carries.
    pub entropy_space: u32,
    pub mtu: u64,
    pub bdp: u64,
    pub rto: SimTime,
    pub seed: u64,
    /// The tree, for balancers that route in the switches by path.
    pub shape: crate::net::Shape,
    /// One hop's propagation delay: link plus switch latency.
    pub hop_latency: SimTime,
    /// Size of a control packet (`packet.ack`).
    pub control_bytes: u64,
    pub transport: crate::scenario::TransportKind,
    /// Shared-buffer switches with PFC.
    pub lossless: bool,
    /// The shortest period a balancer's self-re-arming timer may have (`units::check_timer`).
    pub shortest_timer: SimTime,
}

impl LbCommon {
    /// An amount (`"1bdp"`, `"64pkt"`, `"4096B"`) in whole packets, rounded up.
    pub fn packets(&self, a: &crate::scenario::Amount, key: &str) -> Result<u32, ScenarioError> {
        let bytes = a
            .bytes(self.mtu, self.bdp, None)
            .map_err(|e| ScenarioError::new(key, e))?;
        Ok(bytes.div_ceil(self.mtu) as u32)
    }
}

/// How a balancer's messages become transport flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowPlan {
    /// Split each message into this many flows (MPTCP-like subflows); None: one flow.
    pub subflows: Option<u32>,
    /// The split flows share the message's initial window instead of each having it.
    pub share_window: bool,
    /// Run this congestion control instead of `cc.kind` (MP-RDMA's own window rule).
    pub cc: Option<CcKind>,
    /// MP-RDMA's Δ: no new packet at or beyond snd_una + Δ.
    pub ooo_limit: Option<u32>,
}

/// The flows of one balancer kind, for its host agent: (flow id, spec).
pub type AgentFlows<'a> = &'a [(u32, crate::transport::FlowSpec)];

/// Makes the balancers of one kind's flows (and its switch policies).
pub trait LbBuilder {
    fn plan(&self) -> FlowPlan {
        FlowPlan::default()
    }
    /// A flow's balancer; `base_rtt` is the flow's own idle round trip.
    fn balancer(&self, base_rtt: SimTime, rng: &mut Rng) -> Lb;
    /// A switch-side balancer's policy at one switch (asked only when the entry says `switch_side`).
    fn switch_policy(&self, _site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        None
    }
    /// Its agent in the hosts, given its flows and the route class of its probes (FaCa).
    fn host_agent(
        &self,
        _net: &crate::net::Network,
        _flows: AgentFlows,
        _class: Option<u8>,
    ) -> Option<Box<dyn HostAgent>> {
        None
    }
}

/// Reads a balancer's table (None: absent) into its builder.
pub type PrepareLb = fn(Option<&toml::Value>, &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError>;

/// A registered load balancer.
pub struct LbEntry {
    /// `lb.kind`, and its table `lb.<name>` when it has parameters.
    pub name: &'static str,
    /// How plots name it, and its colour there.
    pub label: &'static str,
    pub color: &'static str,
    /// It routes in the switches: its builder gives every switch a policy, and its packets a route class.
    pub switch_side: bool,
    /// A host-side balancer whose hosts probe the paths (FaCa): every switch
    /// gets its policy, which serves only the balancer's probe packets (INT);
    /// its flows' data stays in route class 0, plain ECMP on their EV.
    pub int_probes: bool,
    /// It spreads one flow's packets over several paths at once, so they
    /// arrive out of order (an in-order transport then retransmits).
    pub reorders: bool,
    /// Its table's values in each preset that sets them (TOML, applied in preset order).
    pub presets: &'static [(&'static str, &'static str)],
    /// Check its table (`key` is `lb.<name>`).
    pub check: fn(&toml::Value, &str) -> Result<(), ScenarioError>,
    pub prepare: PrepareLb,
}

/// A REPS state behind a shared pointer: cloning the `Lb` shares it, as the
/// artifact's connection mapping shares one REPS buffer object.
pub type SharedReps = std::rc::Rc<std::cell::RefCell<reps::Reps>>;

macro_rules! load_balancers {
    ($($(#[$attr:meta])* $variant:ident($ty:ty): $module:ident),* $(,)?) => {
        /// A flow's load balancer: one variant per registered balancer, and
        /// `SharedReps`: one REPS state used by several live flows of a host
        /// pair (`transport.resume_pair_state`; engine/pair_state.rs).
        #[derive(Clone)]
        pub enum Lb {
            $($(#[$attr])* $variant($ty),)*
            SharedReps(SharedReps),
        }

        /// Every load balancer lbsim has, in the order plots list them.
        pub const REGISTRY: &[LbEntry] = &[$($(#[$attr])* $module::ENTRY,)*];

        impl Lb {
            /// Its registry name (`lb.kind`).
            pub fn name(&self) -> &'static str {
                match self { $($(#[$attr])* Lb::$variant(_) => $module::ENTRY.name,)* Lb::SharedReps(_) => "reps" }
            }
        }

        impl LoadBalancer for Lb {
            #[inline]
            fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
                match self { $($(#[$attr])* Lb::$variant(b) => b.next_ev(now, rng, stats),)* Lb::SharedReps(b) => b.borrow_mut().next_ev(now, rng, stats) }
            }
            fn header_only_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
                match self { $($(#[$attr])* Lb::$variant(b) => b.header_only_ev(now, rng, stats),)* Lb::SharedReps(b) => b.borrow_mut().header_only_ev(now, rng, stats) }
            }
            #[inline]
            fn on_ack(&mut self, now: SimTime, ack: &AckEcho, stats: &mut LbStats) -> AckPath {
                match self { $($(#[$attr])* Lb::$variant(b) => b.on_ack(now, ack, stats),)* Lb::SharedReps(b) => b.borrow_mut().on_ack(now, ack, stats) }
            }
            #[inline]
            fn on_nack(&mut self, now: SimTime, ev: u16, stats: &mut LbStats) {
                match self { $($(#[$attr])* Lb::$variant(b) => b.on_nack(now, ev, stats),)* Lb::SharedReps(b) => b.borrow_mut().on_nack(now, ev, stats) }
            }
            fn on_timeout(&mut self, now: SimTime, info: TimeoutInfo, stats: &mut LbStats) {
                match self { $($(#[$attr])* Lb::$variant(b) => b.on_timeout(now, info, stats),)* Lb::SharedReps(b) => b.borrow_mut().on_timeout(now, info, stats) }
            }
            fn on_lost(&mut self, now: SimTime, ev: u16, stats: &mut LbStats) {
                match self { $($(#[$attr])* Lb::$variant(b) => b.on_lost(now, ev, stats),)* Lb::SharedReps(b) => b.borrow_mut().on_lost(now, ev, stats) }
            }
            fn frozen_ps(&self, now: SimTime, stats: &LbStats) -> u64 {
                match self { $($(#[$attr])* Lb::$variant(b) => b.frozen_ps(now, stats),)* Lb::SharedReps(b) => b.borrow().frozen_ps(now, stats) }
            }
            fn pin(&mut self, ev: u16) {
                match self { $($(#[$attr])* Lb::$variant(b) => b.pin(ev),)* Lb::SharedReps(b) => b.borrow_mut().pin(ev) }
            }
            fn resumed(&mut self) {
                match self { $($(#[$attr])* Lb::$variant(b) => b.resumed(),)* Lb::SharedReps(b) => b.borrow_mut().resumed() }
            }
        }
    };
}

load_balancers! {
    Ecmp(ecmp::Ecmp): ecmp,
    Plb(plb::Plb): plb,
    Flowlet(flowlet::Flowlet): flowlet,
    Subflows(subflows::Subflows): subflows,
    Ops(ops::Ops): ops,
    Bitmap(bitmap::Bitmap): bitmap,
    Mprdma(mprdma::Mprdma): mprdma,
    Adaptive(adaptive::Adaptive): adaptive,
    Arcane(arcane::Arcane): arcane,
    Reps(reps::Reps): reps,
    Conga(ecmp::Ecmp): conga,
    Letflow(ecmp::Ecmp): letflow,
    Drill(ecmp::Ecmp): drill,
    ConWeave(ecmp::Ecmp): conweave,
    Wcmp(ecmp::Ecmp): wcmp,
    Faca(faca::Faca): faca,
    #[cfg(test)]
    RoundRobin(tests::RoundRobinHost): tests,
}

/// The registered balancer of a kind.
pub fn entry(kind: LbKind) -> &'static LbEntry {
    &REGISTRY[kind.0 as usize]
}

#[cfg(test)]
pub(crate) mod tests {
    //! How to add a switch-side load balancer, proved: round-robin over a
    //! switch's uplinks, per switch, in one small file's worth of code, its
    //! `ENTRY`, and one line in `load_balancers!`.

    use super::*;
    use crate::net::{Decision, PolicyOut, RouteCtx};
    use crate::packet::{Packet, PacketId};
    use crate::scenario::registry::{check_params, parse_params, NoParams};

    /// An ACK echo for balancer unit tests.
    pub fn echo(ev: u16, ecn: bool) -> AckEcho {
        AckEcho { ev, ecn, seq: None }
    }

    /// The host side: any constant EV (the switches ignore it).
    #[derive(Clone)]
    pub struct RoundRobinHost;

    impl LoadBalancer for RoundRobinHost {
        fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
            0
        }
    }

    /// The switch side: the next live uplink of the group, in turn.
    struct RoundRobin {
        next: usize,
    }

    impl SwitchPolicy for RoundRobin {
        fn route(&mut self, ctx: &RouteCtx, _id: PacketId, _pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
            if let Some(down) = ctx.down {
                return Decision::Forward(down);
            }
            if ctx.group.is_empty() {
                return Decision::Drop;
            }
            self.next = (self.next + 1) % ctx.group.len();
            Decision::Forward(ctx.group[self.next])
        }
    }

    struct Builder;

    impl LbBuilder for Builder {
        fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
            Lb::RoundRobin(RoundRobinHost)
        }
        fn switch_policy(&self, _site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
            Some(Box::new(RoundRobin { next: 0 }))
        }
    }

    fn prepare(params: Option<&toml::Value>, _c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
        parse_params::<NoParams>(params, "lb.round_robin")?;
        Ok(Box::new(Builder))
    }

    pub const ENTRY: LbEntry = LbEntry {
        name: "round_robin",
        label: "Round-robin",
        color: "#000000",
        switch_side: true,
        int_probes: false,
        reorders: true,
        presets: &[],
        check: check_params::<NoParams>,
        prepare,
    };

    /// On a permutation every ToR's uplinks carry the same number of
    /// packets, give or take one: what round robin does and no hash can.
    #[test]
    fn a_switch_side_balancer_plugs_in_by_its_registry_line() {
        let toml = "[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"round_robin\"\n[workload]\nkind = \"permutation\"\nsize = \"256KiB\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, None).unwrap();
        sim.run();
        assert!(sim.flow_records().iter().all(|f| f.finished));
        for sw in sim.net.switches.iter().filter(|s| s.tier == 0) {
            let sent: Vec<u64> = sw.up.iter().map(|&p| sim.net.ports[p as usize].tx_packets).collect();
            let (min, max) = (sent.iter().min().unwrap(), sent.iter().max().unwrap());
            assert!(max - min <= 1, "{}: {sent:?}", sw.name);
            assert!(*min > 0);
        }
    }
}
