//! Fat-tree builders. Host h hangs off ToR h / hosts_per_tor.
//!
//! 2-tier: every ToR has one link to each of `uplinks_per_tor` spines.
//! 3-tier: pods of `tors_per_pod` ToRs and `uplinks_per_tor` aggregation
//! switches (full bipartite inside the pod); aggregation switch a of every
//! pod links to the `agg_uplinks` core switches a·agg_uplinks .. (a+1)·agg_uplinks−1.
//!
//! Names: hosts `h{i}`, ToRs `t0_{i}`, tier-1 `t1_{j}`, tier-2 `t2_{k}`; a
//! directed link is named `{from}->{to}` (for example `t0_3->t1_5`).

use crate::net::queue::{Queue, QueueParams, TwoClassQueue};
use crate::net::{Host, Network, Node, Policies, Port, PortId, Shape, Switch, SwitchRole};
use crate::rng::{Rng, StreamTag};
use crate::time::{Rate, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct TopoParams {
    pub tiers: u8,
    pub hosts: u32,
    pub hosts_per_tor: u32,
    pub uplinks_per_tor: u32,
    /// 3-tier: ToRs per pod and core-facing uplinks per aggregation switch.
    pub tors_per_pod: u32,
    pub agg_uplinks: u32,
    pub host_rate: Rate,
    pub fabric_rate: Rate,
    pub link_latency: SimTime,
    pub switch_latency: SimTime,
    pub seed: u64,
}

struct Builder {
    p: TopoParams,
    ports: Vec<Port>,
    switches: Vec<Switch>,
}

impl Builder {
    fn switch(&mut self, name: String, tier: u8, role: SwitchRole) -> u32 {
        let id = self.switches.len() as u32;
        let salt = Rng::new(self.p.seed, StreamTag::SwitchSalt, id as u64).next_u64();
        self.switches.push(Switch {
            name,
            tier,
            role,
            down: Vec::new(),
            up: Vec::new(),
            groups_by_dst: None,
            salt,
        });
        id
    }

    fn name(&self, n: Node) -> String {
        match n {
            Node::Host(h) => format!("h{h}"),
            Node::Switch(s) => self.switches[s as usize].name.clone(),
        }
    }

    /// One directed link; its latency includes the traversal of the switch
    /// it enters. Its queue is unlimited until `build` sizes it.
    fn port(&mut self, from: Node, to: Node, rate: Rate) -> u32 {
        let id = self.ports.len() as u32;
        let latency = self.p.link_latency
            + if matches!(to, Node::Switch(_)) {
                self.p.switch_latency
            } else {
                SimTime::ZERO
            };
        let name = format!("{}->{}", self.name(from), self.name(to));
        let queue = Queue::TwoClass(TwoClassQueue::new(
            QueueParams::UNLIMITED,
            port_queue_rng(self.p.seed, id),
        ));
        let fault_rng = Rng::new(self.p.seed, StreamTag::PortFault, id as u64);
        self.ports
            .push(Port::new(name, from, to, rate, latency, queue, fault_rng));
        id
    }

    /// A cable: both directions, each knowing the other. Returns (a->b, b->a).
    fn cable(&mut self, a: Node, b: Node, rate: Rate) -> (PortId, PortId) {
        let ab = self.port(a, b, rate);
        let ba = self.port(b, a, rate);
        self.ports[ab as usize].reverse = ba;
        self.ports[ba as usize].reverse = ab;
        (ab, ba)
    }

    /// A cable between a lower switch and an upper one.
    fn fabric_cable(&mut self, lower: u32, upper: u32) {
        let (up, down) = self.cable(Node::Switch(lower), Node::Switch(upper), self.p.fabric_rate);
        self.switches[lower as usize].up.push(up);
        self.switches[upper as usize].down.push(down);
    }

    /// Hosts and their access links: host h hangs off ToR h / hosts_per_tor.
    fn hosts(&mut self, tor_ids: &[u32]) -> Vec<Host> {
        let TopoParams {
            hosts: n,
            hosts_per_tor,
            host_rate,
            ..
        } = self.p;
        let mut hosts = Vec::with_capacity(n as usize);
        for h in 0..n {
            let tor = tor_ids[(h / hosts_per_tor) as usize];
            let (nic, down) = self.cable(Node::Host(h), Node::Switch(tor), host_rate);
            self.switches[tor as usize].down.push(down);
            hosts.push(Host {
                nic,
                tor: h / hosts_per_tor,
                ready: VecDeque::new(),
            });
        }
        hosts
    }

    /// 2-tier: `uplinks_per_tor` spines, each ToR cabled to every spine.
    fn two_tier(&mut self, tor_ids: &[u32]) {
        let spines: Vec<u32> = (0..self.p.uplinks_per_tor)
            .map(|s| self.switch(format!("t1_{s}"), 1, SwitchRole::Spine))
            .collect();
        for &t in tor_ids {
            for &s in &spines {
                self.fabric_cable(t, s);
            }
        }
    }

    /// 3-tier: the core switches, then pod by pod its aggregation switches,
    /// their ToR cables and their core cables. Returns the number of pods.
    fn three_tier(&mut self, tor_ids: &[u32]) -> u32 {
        let TopoParams {
            tors_per_pod,
            uplinks_per_tor: aggs_per_pod,
            agg_uplinks,
            ..
        } = self.p;
        let tors = tor_ids.len() as u32;
        let pods = tors.div_ceil(tors_per_pod);
        let cores: Vec<u32> = (0..aggs_per_pod * agg_uplinks)
            .map(|c| self.switch(format!("t2_{c}"), 2, SwitchRole::Core))
            .collect();
        for pod in 0..pods {
            let aggs: Vec<u32> = (0..aggs_per_pod)
                .map(|a| self.switch(format!("t1_{}", pod * aggs_per_pod + a), 1, SwitchRole::Agg { pod }))
                .collect();
            let first_tor = pod * tors_per_pod;
            for t in first_tor..(first_tor + tors_per_pod).min(tors) {
                for &a in &aggs {
                    self.fabric_cable(tor_ids[t as usize], a);
                }
            }
            for (ai, &a) in aggs.iter().enumerate() {
                for c in 0..agg_uplinks {
                    self.fabric_cable(a, cores[ai * agg_uplinks as usize + c as usize]);
                }
            }
        }
        pods
    }
}

/// The fat tree `p` describes. Switch and port ids follow the order of
/// creation: the ToRs, the hosts' links, then the upper tiers.
pub fn build(p: TopoParams) -> Network {
    let tors = p.hosts / p.hosts_per_tor;
    let mut b = Builder {
        p: p.clone(),
        ports: Vec::new(),
        switches: Vec::new(),
    };
    let tor_ids: Vec<u32> = (0..tors)
        .map(|t| b.switch(format!("t0_{t}"), 0, SwitchRole::Tor { tor: t }))
        .collect();
    let mut shape = Shape {
        tiers: p.tiers,
        hosts: p.hosts,
        hosts_per_tor: p.hosts_per_tor,
        uplinks_per_tor: p.uplinks_per_tor,
        tors,
        tors_per_pod: tors,
        agg_uplinks: 0,
        pods: 1,
    };
    let hosts = b.hosts(&tor_ids);
    if p.tiers == 2 {
        b.two_tier(&tor_ids);
    } else {
        shape.tors_per_pod = p.tors_per_pod;
        shape.agg_uplinks = p.agg_uplinks;
        shape.pods = b.three_tier(&tor_ids);
    }

    let mut net = Network {
        shape,
        ports: b.ports,
        switches: b.switches,
        forwarding: Vec::new(),
        hosts,
        policies: Policies::default(),
        buffers: Vec::new(),
    };
    number_ports(&mut net);
    net.index_forwarding();
    net
}

/// Each port's index among its switch's ports (down, then up), and how an
/// arrival over each link looks at its far end.
fn number_ports(net: &mut Network) {
    for s in &net.switches {
        for (i, &p) in s.down.iter().chain(&s.up).enumerate() {
            net.ports[p as usize].local = i as u16;
        }
    }
    for p in 0..net.ports.len() {
        let back = net.ports[p].reverse;
        let local = net.ports[back as usize].local;
        net.ports[p].arrival = crate::net::queue::Ingress { back, local };
    }
}

/// The stream a port's queue draws its ECN marks from.
pub fn port_queue_rng(seed: u64, port: PortId) -> Rng {
    Rng::new(seed, StreamTag::Port, port as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn params(tiers: u8, hosts: u32, hpt: u32, up: u32) -> TopoParams {
        TopoParams {
            tiers,
            hosts,
            hosts_per_tor: hpt,
            uplinks_per_tor: up,
            tors_per_pod: 4,
            agg_uplinks: 4,
            host_rate: Rate::gbps(400),
            fabric_rate: Rate::gbps(400),
            link_latency: SimTime::from_ns(500),
            switch_latency: SimTime::from_ns(500),
            seed: 1,
        }
    }

    #[test]
    fn two_tier_shape_and_paths() {
        let net = build(params(2, 128, 8, 8));
        assert_eq!(net.switches.len(), 16 + 8);
        // 128 NICs + 128 ToR downlinks + 16 ToRs x 8 cables x 2 directions.
        assert_eq!(net.ports.len(), 128 * 2 + 16 * 8 * 2);
        assert_eq!(net.path(0, 1, 7).len(), 2, "same ToR: up to the ToR and down");
        let p = net.path(0, 127, 7);
        assert_eq!(p.len(), 4);
        assert_eq!(net.ports[p[3] as usize].to, Node::Host(127));
        // Different entropies reach different spines.
        let spines: std::collections::BTreeSet<_> = (0..64u16).map(|ev| net.path(0, 127, ev)[1]).collect();
        assert_eq!(spines.len(), 8);
        let up = net.port_by_name("t0_0->t1_3").unwrap();
        let down = net.port_by_name("t1_3->t0_0").unwrap();
        assert_eq!(
            (net.ports[up as usize].reverse, net.ports[down as usize].reverse),
            (down, up)
        );
        assert!(net
            .ports
            .iter()
            .enumerate()
            .all(|(i, p)| net.ports[p.reverse as usize].reverse == i as u32));
    }

    #[test]
    fn three_tier_paths_reach_every_destination() {
        // 4 hosts/ToR, 4 ToRs/pod, 4 aggs/pod, 4 core uplinks per agg: 4 pods.
        let net = build(params(3, 64, 4, 4));
        assert_eq!(net.shape.pods, 4);
        for dst in [1u32, 5, 20, 63] {
            for ev in 0..16u16 {
                let p = net.path(0, dst, ev);
                assert_eq!(net.ports[*p.last().unwrap() as usize].to, Node::Host(dst));
                let expect = if dst < 4 {
                    2
                } else if dst < 16 {
                    4
                } else {
                    6
                };
                assert_eq!(p.len(), expect, "dst {dst}");
            }
        }
    }

    /// The builder numbers every switch's links at a fixed stride, so each
    /// forwards from its compact record (`Forwarding`), to the same ports as
    /// through its `Switch`; routing that trims a group falls back to the latter.
    #[test]
    fn switches_forward_by_stride_as_through_their_ports() {
        let mut pkt = crate::packet::Packet::data(0, 0, 0, 0, 4096, 0, 0, SimTime::ZERO);
        // 2 tiers; 3 tiers of 5 pods and of 4.
        for net in [
            build(params(2, 128, 8, 8)),
            build(params(3, 80, 4, 4)),
            build(params(3, 64, 4, 4)),
        ] {
            assert!(net.forwarding.iter().all(|f| f.fast));
            for sw in 0..net.switches.len() as u32 {
                for dst in 0..net.shape.hosts {
                    for ev in 0..8u16 {
                        (pkt.src, pkt.dst, pkt.ev) = ((dst * 7 + 3) % net.shape.hosts, dst, ev);
                        assert_eq!(net.route_hashed(sw, &pkt), net.route_hashed_by_switch(sw, &pkt));
                    }
                }
            }
        }
        let mut net = build(params(2, 128, 8, 8));
        let dead = net.port_by_name("t0_0->t1_3").unwrap();
        let mut alive = vec![true; net.ports.len()];
        alive[dead as usize] = false;
        crate::net::routing::converge(&mut net, &alive);
        assert!(!net.forwarding[0].fast, "ToR 0's groups are trimmed");
        (pkt.src, pkt.dst) = (0, 127);
        assert!((0..64u16).all(|ev| {
            pkt.ev = ev;
            net.route_hashed(0, &pkt) != Some(dead)
        }));
    }
}
