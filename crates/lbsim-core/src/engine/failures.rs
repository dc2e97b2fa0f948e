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
        if let Fault::SwitchBer(_) | Fault::CableBer(_) = fault {
            if let Some(b) = &mut self.bit_errors {
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
        // A failure runs before this instant's TxDones: a lazy line starts what it had started before it.
        self.catch_up_before_now(p);
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
            Fault::SwitchBer(_) | Fault::CableBer(_) => unreachable!("bit errors have no ports"),
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

#[cfg(test)]
mod tests {
    /// One flow from ToR 0 to ToR 7: every packet it and its receiver send
    /// crosses 4 links and 3 switches. `switch_ber` counts it 3 times,
    /// `cable_ber` 7 (the links and each switch's own pipe, as the REPS
    /// artifact's `Pipe::receivePacket` does); every loss is a mark taken at
    /// the receiver, and marks are about 1 % of what was counted.
    #[test]
    fn bit_errors_count_each_packet_where_the_artifact_does() {
        let dir = std::env::temp_dir().join(format!("lbsim-ber-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.csv"), "src,dst,size_bytes,start_us\n0,31,4194304,0\n").unwrap();
        for (kind, per_packet) in [("switch_ber", 3), ("cable_ber", 7)] {
            let toml = format!(
                "preset = \"reps_artifact\"\n[topology]\nhosts = 32\nradix = 8\n[lb]\nkind = \"ops\"\n\
                 [workload]\nkind = \"flows\"\nfile = \"f.csv\"\n[[failures]]\nkind = \"{kind}\"\nloss = 0.01\n"
            );
            let s = crate::Scenario::from_toml(&toml).unwrap();
            let mut sim = crate::build::build(&s, Some(&dir)).unwrap();
            sim.run();
            assert!(sim.flow_records()[0].finished, "{kind}");
            let ber = sim.bit_errors.as_ref().unwrap();
            let (counted, marked) = ber.counted();
            assert_eq!(counted, per_packet * sim.counters.packets_sent, "{kind}");
            assert!(
                ber.losses > 0 && ber.losses <= marked,
                "{kind}: {} losses, {marked} marks",
                ber.losses
            );
            assert_eq!(ber.losses, sim.counters.drops_failure, "{kind}");
            let share = marked as f64 / counted as f64;
            assert!((0.009..=0.0101).contains(&share), "{kind}: {marked} marks of {counted}");
        }
    }
}
