//! Routing's view of a damaged fat tree: which uplinks still lead to each
//! destination ToR, given the ports routing believes alive. Used for routing
//! convergence (switches drop dead uplinks from their ECMP groups once routing
//! has caught up, REPS §3.2) and to keep random failure picks from cutting a
//! host off.
//!
//! Routing is up-down: a packet climbs until its destination is below, then
//! descends on the one downlink towards it. So a switch reaches ToR d when it
//! is d, or d is below and its downlink towards d works and leads to a switch
//! that reaches d, or d is not below and one of its working uplinks leads to a
//! switch that reaches d.

use super::{Network, Node, PortId};

/// Whether each switch reaches destination ToR `dst_tor`, given `alive`.
fn reach_table(net: &Network, alive: &[bool], dst_tor: u32) -> Vec<bool> {
    let mut memo: Vec<Option<bool>> = vec![None; net.switches.len()];
    fn reach(net: &Network, alive: &[bool], d: u32, sw: u32, memo: &mut [Option<bool>]) -> bool {
        if let Some(r) = memo[sw as usize] {
            return r;
        }
        let s = &net.switches[sw as usize];
        let via = |p: PortId, memo: &mut [Option<bool>]| {
            alive[p as usize]
                && match net.ports[p as usize].to {
                    Node::Switch(next) => reach(net, alive, d, next, memo),
                    Node::Host(_) => true, // a ToR's own host: the ToR is d
                }
        };
        let r = if matches!(s.role, super::SwitchRole::Tor { tor } if tor == d) {
            true
        } else {
            // Any host under ToR d picks the same downlink above the ToR.
            let host = d * net.shape.hosts_per_tor;
            match net.down_port(s, d, host) {
                Some(p) => via(p, memo),
                None => s.up.iter().any(|&p| via(p, memo)),
            }
        };
        memo[sw as usize] = Some(r);
        r
    }
    (0..net.switches.len() as u32)
        .map(|sw| reach(net, alive, dst_tor, sw, &mut memo))
        .collect()
}

/// Every switch's per-destination ECMP groups for the ports routing believes
/// alive; none at all (`groups_by_dst = None`) when every uplink still works.
pub fn converge(net: &mut Network, alive: &[bool]) {
    let tors = net.shape.tors;
    let mut groups: Vec<Vec<Vec<PortId>>> = net.switches.iter().map(|_| Vec::with_capacity(tors as usize)).collect();
    let mut intact = true;
    for d in 0..tors {
        let reach = reach_table(net, alive, d);
        for (sw, s) in net.switches.iter().enumerate() {
            let g: Vec<PortId> =
                s.up.iter()
                    .copied()
                    .filter(|&p| {
                        alive[p as usize]
                            && match net.ports[p as usize].to {
                                Node::Switch(next) => reach[next as usize],
                                Node::Host(_) => true,
                            }
                    })
                    .collect();
            intact &= g.len() == s.up.len();
            groups[sw].push(g);
        }
    }
    for (s, g) in net.switches.iter_mut().zip(groups) {
        s.groups_by_dst = (!intact).then_some(g);
    }
    net.index_forwarding();
}

/// Whether every host can still reach every other one with these ports alive.
pub fn connected(net: &Network, alive: &[bool]) -> bool {
    let hosts_ok = net.hosts.iter().enumerate().all(|(h, host)| {
        let tor = &net.switches[host.tor as usize];
        alive[host.nic as usize] && alive[tor.down[h % net.shape.hosts_per_tor as usize] as usize]
    });
    hosts_ok
        && (0..net.shape.tors).all(|d| {
            let reach = reach_table(net, alive, d);
            net.hosts.iter().all(|h| reach[h.tor as usize])
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;
    use crate::Scenario;

    fn net(tiers: u8) -> Network {
        let s = Scenario::from_toml(&format!("[topology]\ntiers = {tiers}\nhosts = 32\nradix = 8")).unwrap();
        build::build(&s, None).unwrap().net
    }

    #[test]
    fn a_dead_spine_downlink_leaves_only_that_destination_group() {
        let mut n = net(2);
        let mut alive = vec![true; n.ports.len()];
        converge(&mut n, &alive);
        assert!(n.switches.iter().all(|s| s.groups_by_dst.is_none()));
        // t1_0 can no longer reach ToR 3: every other ToR stops using t1_0 for ToR 3 only.
        let dead = n.port_by_name("t1_0->t0_3").unwrap();
        alive[dead as usize] = false;
        converge(&mut n, &alive);
        let t0 = n.switch_by_name("t0_0").unwrap() as usize;
        let up0 = n.port_by_name("t0_0->t1_0").unwrap();
        assert!(!n.switches[t0].group(3).contains(&up0));
        assert!(n.switches[t0].group(2).contains(&up0));
        assert_eq!(n.switches[t0].group(3).len(), n.switches[t0].up.len() - 1);
        assert!(connected(&n, &alive));
    }

    #[test]
    fn connectivity_needs_one_uplink_per_tor() {
        let n = net(3);
        let mut alive = vec![true; n.ports.len()];
        let t0 = n.switches.iter().find(|s| s.name == "t0_0").unwrap();
        for &p in &t0.up[1..] {
            alive[p as usize] = false;
        }
        assert!(connected(&n, &alive));
        alive[t0.up[0] as usize] = false;
        assert!(!connected(&n, &alive));
    }
}
