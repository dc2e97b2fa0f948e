//! Congestion control: when a flow may put another packet on the wire, and
//! how it reacts to ACKs (with their ECN marks), NACKs, credits, losses and
//! its retransmission timer. Window algorithms move a window; receiver-driven
//! ones (EQDS) wait for credits that an agent at the receiving host paces
//! (`ReceiverCc`). Rate-based ones (DCQCN) fit the same interface. The
//! engine calls only these interfaces and never names an algorithm.
//!
//! Adding one: a file with the algorithm, its `ENTRY` (name, parameter
//! table and presets, builder), and one line in `congestion_controls!`.

pub mod credit_pacer;
pub mod dcqcn;
pub mod dctcp;
pub mod eqds;
pub mod mprdma;
pub mod wait_to_decrease;

pub use dctcp::DctcpVariant;
pub use eqds::EqdsSender;

use crate::net::Port;
use crate::packet::{Packet, PacketKind};
use crate::scenario::{CcKind, ScenarioError};
use crate::time::SimTime;

/// What an ACK tells congestion control.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSignal {
    /// Bytes (on the wire) it newly acknowledged; 0 for a duplicate.
    pub acked: u64,
    /// The echoed ECN mark.
    pub ecn: bool,
    /// Bytes to take back because the load balancer judged the ACK to have
    /// come over a slow path (MP-RDMA: it frees no window); 0 normally.
    pub slow_path: u64,
    pub now: SimTime,
}

/// The flow's retransmission timer fired; what the sender saw.
#[derive(Clone, Copy, Debug)]
pub struct TimerSignal {
    pub now: SimTime,
    /// It has packets to send but may not send them.
    pub stuck: bool,
    /// Stuck with nothing in flight and no send outstanding: nothing will wake it.
    pub stalled: bool,
    /// This firing declared packets lost.
    pub lost: bool,
    /// Sends still to make (retransmissions plus new packets).
    pub pending: u32,
    pub base_rtt: SimTime,
}

/// A control packet the sender's algorithm wants sent (EQDS: a request-to-send).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlRequest {
    pub kind: PacketKind,
    pub seq: u32,
    pub span: u16,
}

/// What the sender's algorithm wants after its timer fired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerAction {
    /// Look again one RTO later (a stalled flow waiting for credit that may be lost).
    pub recheck: bool,
    pub request: Option<ControlRequest>,
}

/// The sender's side of a congestion control, one per flow.
pub trait CongestionControl {
    /// Whether a packet may leave with `inflight` bytes unacknowledged.
    fn may_send(&self, inflight: u64) -> bool;
    /// A packet of `bytes` left at `now`.
    fn on_send(&mut self, _now: SimTime, _bytes: u32) {}
    /// Rate-based algorithms: when the next packet may leave, if not now
    /// (the engine wakes the flow then; it may also be when the rate changes).
    fn paced_until(&mut self, _now: SimTime) -> Option<SimTime> {
        None
    }
    fn on_ack(&mut self, _ack: &AckSignal) {}
    /// A packet of `bytes` was reported trimmed.
    fn on_nack(&mut self, _bytes: u64) {}
    /// The retransmission timer declared a packet of `bytes` lost.
    fn on_timeout(&mut self, _bytes: u64) {}
    /// A credit with the receiver's cumulative count.
    fn on_credit(&mut self, _cumulative: u32) {}
    /// The retransmission timer fired (after any losses were reported).
    fn on_timer(&mut self, _t: &TimerSignal) -> TimerAction {
        TimerAction::default()
    }
    /// The congestion window in bytes, for window-based algorithms.
    fn window(&self) -> Option<u64> {
        None
    }
    /// Start from this window (bytes): a pair's next flow resuming its last
    /// one's (`transport.resume_pair_state`). Window-based algorithms only.
    fn set_window(&mut self, _bytes: u64) {}
    /// This flow's own window cap (bytes), in place of `cc.max_cwnd`'s
    /// network-wide one (`cc.max_cwnd_basis = "pair"`). Window-based algorithms only.
    fn set_max_window(&mut self, _bytes: u64) {}
}

/// A grant a receiver-side agent sends to a flow's sender (EQDS: a credit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub flow: u32,
    pub kind: PacketKind,
    pub seq: u32,
    pub ev: u16,
}

/// The receiving hosts' side of a congestion control (one object for all
/// hosts, indexed by host), for algorithms that pace from the receiver.
pub trait ReceiverCc {
    /// A data packet or trimmed header of a message of `npkts` packets
    /// reached `host`. Returns when the agent must run, if it was idle.
    fn on_data(&mut self, host: u32, pkt: &Packet, npkts: u32, now: SimTime) -> Option<SimTime>;
    /// A control packet addressed to the receiver (an RTS).
    fn on_control(&mut self, host: u32, pkt: &Packet, npkts: u32, now: SimTime) -> Option<SimTime>;
    /// Its turn at `host`: what to send, if anything, and when to run next.
    /// `complete(flow)` says whether a flow's message is whole.
    fn on_wake(
        &mut self,
        host: u32,
        now: SimTime,
        ports: &[Port],
        complete: &dyn Fn(u32) -> bool,
    ) -> (Option<Grant>, Option<SimTime>);
}

/// What every algorithm's builder may use, resolved from the scenario.
#[derive(Clone, Copy, Debug)]
pub struct CcCommon {
    pub mtu: u64,
    pub bdp: u64,
    /// `cc.max_cwnd` in bytes (window algorithms; each flow's start is `CcBuilder::sender`'s).
    pub max_cwnd: u64,
    /// `cc.wait_to_decrease`'s weight, when it is on.
    pub wtd_alpha: Option<f64>,
    /// The hosts' link rate (rate-based algorithms start at it).
    pub line_rate: crate::time::Rate,
}

/// Makes each flow's congestion control, and the receivers' agent if any.
pub trait CcBuilder {
    /// A flow's algorithm, starting from `initial_window` bytes.
    fn sender(&self, initial_window: u64) -> Cc;
    /// The receiving hosts' agent; `links[h]` is the link into host h.
    fn receiver(&self, _links: Vec<u32>, _flows: usize) -> Option<Box<dyn ReceiverCc>> {
        None
    }
}

/// Reads an algorithm's table (None: absent) into its builder.
pub type PrepareCc = fn(Option<&toml::Value>, &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError>;

/// A registered congestion control.
pub struct CcEntry {
    /// `cc.kind`, and the name of its own table `cc.<name>` when it has one.
    pub name: &'static str,
    /// Its table's values in each preset that sets them (TOML, applied in preset order).
    pub presets: &'static [(&'static str, &'static str)],
    /// Check its table (`key` is `cc.<name>`).
    pub check: fn(&toml::Value, &str) -> Result<(), ScenarioError>,
    pub prepare: PrepareCc,
}

macro_rules! congestion_controls {
    ($($(#[$attr:meta])* $variant:ident($ty:ty): $module:ident),* $(,)?) => {
        /// A flow's congestion control: one variant per registered algorithm.
        #[derive(Clone, Debug)]
        pub enum Cc { $($(#[$attr])* $variant($ty),)* }

        /// Every congestion control lbsim has, in `CcKind` order.
        pub const REGISTRY: &[CcEntry] = &[$($(#[$attr])* $module::ENTRY,)*];

        impl CongestionControl for Cc {
            #[inline]
            fn may_send(&self, inflight: u64) -> bool {
                match self { $($(#[$attr])* Cc::$variant(c) => c.may_send(inflight),)* }
            }
            #[inline]
            fn on_send(&mut self, now: SimTime, bytes: u32) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_send(now, bytes),)* }
            }
            #[inline]
            fn paced_until(&mut self, now: SimTime) -> Option<SimTime> {
                match self { $($(#[$attr])* Cc::$variant(c) => c.paced_until(now),)* }
            }
            #[inline]
            fn on_ack(&mut self, ack: &AckSignal) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_ack(ack),)* }
            }
            #[inline]
            fn on_nack(&mut self, bytes: u64) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_nack(bytes),)* }
            }
            #[inline]
            fn on_timeout(&mut self, bytes: u64) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_timeout(bytes),)* }
            }
            #[inline]
            fn on_credit(&mut self, cumulative: u32) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_credit(cumulative),)* }
            }
            fn on_timer(&mut self, t: &TimerSignal) -> TimerAction {
                match self { $($(#[$attr])* Cc::$variant(c) => c.on_timer(t),)* }
            }
            #[inline]
            fn window(&self) -> Option<u64> {
                match self { $($(#[$attr])* Cc::$variant(c) => c.window(),)* }
            }
            fn set_window(&mut self, bytes: u64) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.set_window(bytes),)* }
            }
            fn set_max_window(&mut self, bytes: u64) {
                match self { $($(#[$attr])* Cc::$variant(c) => c.set_max_window(bytes),)* }
            }
        }
    };
}

congestion_controls! {
    Dctcp(DctcpVariant): dctcp,
    Mprdma(DctcpVariant): mprdma,
    Eqds(EqdsSender): eqds,
    Dcqcn(dcqcn::Dcqcn): dcqcn,
    #[cfg(test)]
    Fixed(tests::FixedWindow): tests,
}

/// The registered algorithm of a kind.
pub fn entry(kind: CcKind) -> &'static CcEntry {
    &REGISTRY[kind.0 as usize]
}

#[cfg(test)]
pub(crate) mod tests {
    //! How to add a congestion control, proved: a fixed window (never
    //! grows, never shrinks) in one small type, its `ENTRY`, and one line
    //! in `congestion_controls!`. `cc.kind = "fixed"` then runs it.

    use super::*;
    use crate::scenario::registry::{check_params, parse_params, Params};
    use serde::Deserialize;

    #[derive(Clone, Debug)]
    pub struct FixedWindow {
        pub window: u64,
    }

    impl CongestionControl for FixedWindow {
        fn may_send(&self, inflight: u64) -> bool {
            inflight < self.window
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct FixedParams {
        packets: u64,
    }

    impl Params for FixedParams {}

    struct Builder(u64);

    impl CcBuilder for Builder {
        fn sender(&self, _initial_window: u64) -> Cc {
            Cc::Fixed(FixedWindow { window: self.0 })
        }
    }

    fn prepare(params: Option<&toml::Value>, common: &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError> {
        let p: FixedParams = parse_params(params, "cc.fixed")?;
        Ok(Box::new(Builder(p.packets * common.mtu)))
    }

    pub const ENTRY: CcEntry = CcEntry {
        name: "fixed",
        presets: &[("reps_paper", "packets = 4\n")],
        check: check_params::<FixedParams>,
        prepare,
    };

    /// A lone flow under a 4-packet window on an idle path sends 4 packets
    /// per round trip: its FCT is about npkts / 4 base RTTs.
    #[test]
    fn a_new_congestion_control_plugs_in_by_its_registry_line() {
        let toml = "[topology]\nhosts = 16\n[cc]\nkind = \"fixed\"\n[workload]\nkind = \"flows\"\nfile = \"f.csv\"\n";
        let dir = std::env::temp_dir().join(format!("lbsim-cc-fixed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "src,dst,size_bytes,start_us\n0,15,161280,0\n").unwrap();
        let s = crate::Scenario::from_toml(toml).unwrap();
        let out = crate::run(&s, Some(&dir)).unwrap();
        let rtts = out.flows[0].fct_us / out.summary.base_rtt_us;
        assert!((9.5..=11.0).contains(&rtts), "40 packets at 4 per RTT: {rtts} RTTs");
        let e = crate::Scenario::from_toml("[cc.fixed]\npackets = \"x\"\n").unwrap_err();
        assert_eq!(e.key, "cc.fixed.packets");
    }
}
