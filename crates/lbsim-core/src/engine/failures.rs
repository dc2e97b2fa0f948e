//! Failures as they happen: a link goes down (and comes back), slows down
//! or loses packets; routing catches up with a link's state after the
//! convergence delay and recomputes every switch's ECMP groups.

use super::Simulation;
use crate::event::Event;
use crate::failure::Fault;
use crate::net::{routing, PortFault, PortId};

impl Simulation {
    pub(super) fn on_failure(&mut self, idx: u32, begin: bool) {
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
        if let Fault::SwitchBer(_) = fault {
            if let Some(b) = &mut self.switch_ber {
                b.active = begin;
            }
            return; // network-wide: no ports
        }
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
            Fault::SwitchBer(_) => unreachable!("switch_ber has no ports"),
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
    pub(super) fn on_route_update(&mut self, port: PortId, down: bool) {
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
}
