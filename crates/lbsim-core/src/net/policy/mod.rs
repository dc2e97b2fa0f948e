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
pub mod conga;
pub mod conweave;
pub mod drill;
pub mod faca;
pub mod flowlets;
pub mod letflow;
#[cfg(test)]
pub(crate) mod testing;
pub mod wcmp;

use super::{Network, Port, PortId, Switch};
use crate::packet::{Packet, PacketId};
use crate::time::SimTime;

/// Where a policy is installed, for its builder (`lb::LbBuilder::switch_policy`):
/// the network as built (its shape, switches and ports; rate overrides and
/// failures come later, so a policy that needs a port's rate reads it when it
/// routes), the switch, and the route class its packets carry (the class whose
/// `Packet::tag` it owns, e.g. when its egress hook sees packets of every class).
pub struct PolicySite<'a> {
    pub net: &'a Network,
    pub switch: u32,
    pub class: u8,
}

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

impl RouteCtx<'_> {
    /// What route class 0 does with the packet: down when the destination
    /// is below, else the switch's ECMP hash over the group (for the packets
    /// a policy leaves to the hash, e.g. ACKs).
    #[inline]
    pub fn hashed(&self, pkt: &Packet) -> Decision {
        match self.down.or_else(|| self.sw.ecmp_pick(self.group, pkt)) {
            Some(p) => Decision::Forward(p),
            None => Decision::Drop,
        }
    }
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
    /// The packet was for this switch (a `PacketKind::SwitchControl` the
    /// policy has read): the engine frees it and counts it delivered.
    Consume,
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

    /// What it counted, for the run's summary (`switch_lb`).
    fn counters(&self, _out: &mut Vec<Counter>) {}

    /// Values it recorded one by one (ConWeave: each T_resume estimate's error), for the
    /// `switch_lb_records` table.
    fn records(&self, _out: &mut Vec<(&'static str, f64)>) {}

    /// Its state now, for the `switch_lb_series` table (`observe.switch_lb`).
    fn gauges(&self, _sw: &Switch, _out: &mut Vec<Gauge>) {}
}

/// One sampled value of a policy's state, of one of its switch's ports or of the switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gauge {
    pub name: &'static str,
    pub port: Option<PortId>,
    pub value: u64,
}

/// A policy's count at one switch, and how the summary combines the switches'.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Sum(&'static str, u64),
    Max(&'static str, u64),
}

/// Every switch's policies, per route class: `classes[k − 1][switch]`.
#[derive(Default)]
pub struct Policies {
    classes: Vec<Vec<Box<dyn SwitchPolicy>>>,
    /// Each class's load balancer (`lb.kind`).
    names: Vec<&'static str>,
    /// Some policy wants to see packets leave (checked per transmission only when true).
    egress: bool,
}

impl Policies {
    /// Add a route class: one policy per switch, in switch order. Returns its class.
    pub fn add_class(&mut self, name: &'static str, per_switch: Vec<Box<dyn SwitchPolicy>>) -> u8 {
        self.egress |= per_switch.iter().any(|p| p.wants_egress());
        self.classes.push(per_switch);
        self.names.push(name);
        assert!(self.classes.len() < u8::MAX as usize, "at most 254 switch policies");
        self.classes.len() as u8
    }

    #[inline]
    pub fn get(&mut self, class: u8, switch: u32) -> &mut dyn SwitchPolicy {
        self.classes[class as usize - 1][switch as usize].as_mut()
    }

    /// Every class's counters combined over its switches, named `<lb>.<counter>`.
    pub fn counters(&self) -> std::collections::BTreeMap<String, u64> {
        let mut all = std::collections::BTreeMap::new();
        let mut out = Vec::new();
        for (name, class) in self.names.iter().zip(&self.classes) {
            for policy in class {
                out.clear();
                policy.counters(&mut out);
                for c in &out {
                    let (key, v, max) = match *c {
                        Counter::Sum(k, v) => (k, v, false),
                        Counter::Max(k, v) => (k, v, true),
                    };
                    let slot = all.entry(format!("{name}.{key}")).or_insert(0);
                    *slot = if max { (*slot).max(v) } else { *slot + v };
                }
            }
        }
        all
    }

    /// Every policy's records as a table (switch, record, value); None when there are none.
    pub fn records_table(&self, switches: &[Switch]) -> Option<crate::table::Table> {
        use crate::table::{Column, Table};
        let (mut sw_col, mut rec_col, mut val_col) = (Vec::new(), Vec::new(), Vec::new());
        let mut out = Vec::new();
        for (name, class) in self.names.iter().zip(&self.classes) {
            for (sw, policy) in class.iter().enumerate() {
                out.clear();
                policy.records(&mut out);
                for (rec, v) in &out {
                    sw_col.push(switches[sw].name.clone());
                    rec_col.push(format!("{name}.{rec}"));
                    val_col.push(*v);
                }
            }
        }
        (!sw_col.is_empty()).then(|| {
            Table::new("switch_lb_records")
                .with("switch", Column::Str(sw_col))
                .with("record", Column::Str(rec_col))
                .with("value", Column::F64(val_col))
        })
    }

    /// Every class's gauges at `switch`, each name prefixed with its balancer's.
    pub fn gauges(&self, switch: u32, sw: &Switch, out: &mut Vec<(&'static str, Gauge)>) {
        let mut g = Vec::new();
        for (name, class) in self.names.iter().zip(&self.classes) {
            g.clear();
            class[switch as usize].gauges(sw, &mut g);
            out.extend(g.iter().map(|&x| (*name, x)));
        }
    }

    /// No switch runs a policy: every switch forwards by its routes alone.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
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

#[cfg(test)]
mod tests {
    //! The seam's whole interface through the engine: a "delay line" holds
    //! every packet of its class for a fixed time before releasing it to
    //! its way on (as ConWeave's reorder queues hold packets), emits one
    //! harmless control packet per packet it holds, and counts packets
    //! leaving its switch through the egress hook.

    use super::*;
    use crate::packet::PacketKind;
    use std::cell::Cell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    struct DelayLine {
        delay: SimTime,
        held: VecDeque<(SimTime, PacketId, PortId)>,
        egress: Rc<Cell<u64>>,
    }

    impl SwitchPolicy for DelayLine {
        fn route(&mut self, ctx: &RouteCtx, id: PacketId, pkt: &mut Packet, out: &mut PolicyOut) -> Decision {
            let Some(&way) = ctx.down.as_ref().or(ctx.group.first()) else {
                return Decision::Drop;
            };
            let due = ctx.now + self.delay;
            self.held.push_back((due, id, way));
            out.timers.push(due);
            // A credit of count 0 for the flow's sender changes nothing, but it is a packet to carry.
            if pkt.kind == PacketKind::Data {
                let credit = Packet::new(PacketKind::Credit, pkt.flow, pkt.dst, pkt.src, 64, ctx.now);
                out.emit
                    .push((credit, ctx.sw.up.first().copied().unwrap_or(ctx.ingress)));
            }
            Decision::Hold
        }
        fn on_timer(&mut self, now: SimTime, _sw: &Switch, _ports: &[Port], out: &mut PolicyOut) {
            while self.held.front().is_some_and(|h| h.0 <= now) {
                let (_, id, way) = self.held.pop_front().unwrap();
                out.release.push((id, way));
            }
        }
        fn wants_egress(&self) -> bool {
            true
        }
        fn on_egress(&mut self, _now: SimTime, _port: PortId, _pkt: &mut Packet) {
            self.egress.set(self.egress.get() + 1);
        }
    }

    /// One single-packet message across the tree (ToR, spine, ToR): with a
    /// 1 us delay line at every switch its FCT is its ideal plus exactly
    /// 3 us; every packet the policies emitted was delivered or is counted.
    #[test]
    fn held_packets_are_released_by_timer_and_emitted_packets_are_carried() {
        let dir = std::env::temp_dir().join(format!("lbsim-delay-line-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "src,dst,size_bytes,start_us\n0,31,1000,0\n").unwrap();
        let toml = "[topology]\nhosts = 32\nradix = 8\n[workload]\nkind = \"flows\"\nfile = \"f.csv\"\n";
        let s = crate::Scenario::from_toml(toml).unwrap();
        let mut sim = crate::build::build(&s, Some(&dir)).unwrap();
        let egress = Rc::new(Cell::new(0));
        let per_switch = (0..sim.net.switches.len())
            .map(|_| {
                let p = DelayLine {
                    delay: SimTime::from_us(1),
                    held: VecDeque::new(),
                    egress: egress.clone(),
                };
                Box::new(p) as Box<dyn SwitchPolicy>
            })
            .collect();
        let class = sim.net.policies.add_class("delay_line", per_switch);
        sim.flows[0].route = class;
        sim.run();
        let f = &sim.flow_records()[0];
        assert!(
            (f.fct_us - f.ideal_fct_us - 3.0).abs() < 1e-9,
            "{} vs ideal {}",
            f.fct_us,
            f.ideal_fct_us
        );
        let c = &sim.counters;
        assert_eq!(sim.packets_in_network(), 0);
        assert_eq!(c.packets_sent, c.delivered + c.drops_congestion + c.drops_failure);
        // Data (3 switches) and its ACK (3 switches) were held; each data hold emitted a credit.
        assert_eq!(c.packets_sent, 2 + 3);
        assert!(
            egress.get() >= 6,
            "every switch saw its packets leave: {}",
            egress.get()
        );
    }
}
