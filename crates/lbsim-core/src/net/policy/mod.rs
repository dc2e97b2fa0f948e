//! Switch policies: switch-side load balancing. A packet whose route class
//! is k > 0 (`Packet::route`, set by its flow's load balancer) is handed at
//! every switch to that switch's k-th policy, which decides with the
//! ingress port, the packet and the time, and keeps per-switch state. A
//! policy may forward the packet, drop it, or hold it (a reorder queue) and
//! release it later from a timer it asks for; it may also emit packets of
//! its own (control packets), and see every packet leave the switch (an
//! egress hook, for INT records or rate estimators). Route class 0 is the
//! switch's own ECMP hashing (`net::switch`), which costs no call here.
//!
//! A switch-side load balancer registers its policy with its entry in
//! `lb::REGISTRY` (see `lb::adaptive`); the engine never names one.

pub mod adaptive;

use super::{Port, PortId, Switch};
use crate::packet::{Packet, PacketId};
use crate::time::SimTime;

/// What a policy sees when it routes a packet.
pub struct RouteCtx<'a> {
    pub now: SimTime,
    /// The switch's id and its state (roles, uplinks, routing groups).
    pub switch: u32,
    pub sw: &'a Switch,
    /// Every port, for their queues and states.
    pub ports: &'a [Port],
    /// The port the packet arrived by.
    pub ingress: PortId,
    /// The one way down when the destination is below this switch.
    pub down: Option<PortId>,
    /// Otherwise the uplinks routing believes reach the destination (empty: no route).
    pub group: &'a [PortId],
}

/// A policy's verdict on one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Queue it at this output port.
    Forward(PortId),
    /// No way on: the engine drops it (counted as a failure drop).
    Drop,
    /// The policy keeps the packet id and releases it later (`PolicyOut::release`).
    Hold,
}

/// What a policy asks the engine to do besides its verdict.
#[derive(Default)]
pub struct PolicyOut {
    /// Held packets to queue now at the given output port.
    pub release: Vec<(PacketId, PortId)>,
    /// New packets (control) to queue at the given output port.
    pub emit: Vec<(Packet, PortId)>,
    /// Times at which to call the policy's `on_timer`.
    pub timers: Vec<SimTime>,
}

impl PolicyOut {
    pub fn is_empty(&self) -> bool {
        self.release.is_empty() && self.emit.is_empty() && self.timers.is_empty()
    }
}

pub trait SwitchPolicy {
    /// Route one packet of this policy's class at this switch.
    fn route(&mut self, ctx: &RouteCtx, id: PacketId, pkt: &mut Packet, out: &mut PolicyOut) -> Decision;

    /// A timer it asked for fired.
    fn on_timer(&mut self, _now: SimTime, _sw: &Switch, _ports: &[Port], _out: &mut PolicyOut) {}

    /// Whether it wants `on_egress` (checked once, when the run is built).
    fn wants_egress(&self) -> bool {
        false
    }

    /// Any packet (of any class) leaves this switch by `port`.
    fn on_egress(&mut self, _now: SimTime, _port: PortId, _pkt: &mut Packet) {}
}

/// Every switch's policies, per route class: `classes[k − 1][switch]`.
#[derive(Default)]
pub struct Policies {
    classes: Vec<Vec<Box<dyn SwitchPolicy>>>,
    /// Some policy wants to see packets leave (checked per transmission only when true).
    egress: bool,
}

impl Policies {
    /// Add a route class: one policy per switch, in switch order. Returns its class.
    pub fn add_class(&mut self, per_switch: Vec<Box<dyn SwitchPolicy>>) -> u8 {
        self.egress |= per_switch.iter().any(|p| p.wants_egress());
        self.classes.push(per_switch);
        assert!(self.classes.len() < u8::MAX as usize, "at most 254 switch policies");
        self.classes.len() as u8
    }

    #[inline]
    pub fn get(&mut self, class: u8, switch: u32) -> &mut dyn SwitchPolicy {
        self.classes[class as usize - 1][switch as usize].as_mut()
    }

    pub fn has_egress_hooks(&self) -> bool {
        self.egress
    }

    /// Call every class's egress hook at `switch`.
    pub fn egress(&mut self, switch: u32, now: SimTime, port: PortId, pkt: &mut Packet) {
        for class in &mut self.classes {
            class[switch as usize].on_egress(now, port, pkt);
        }
    }
}
