//! Helpers for the policies' unit tests: a small tree and a way to ask a
//! policy, at one switch, where a packet goes, as the engine would.

use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::{Network, PortId};
use crate::packet::Packet;
use crate::time::SimTime;

/// 32 hosts, radix 8: 8 ToRs (`t0_0` has hosts 0-3) with 4 uplinks each, to spines t1_0 ... t1_3.
pub fn net() -> Network {
    let s = crate::Scenario::from_toml("[topology]\nhosts = 32\nradix = 8").unwrap();
    crate::build::build(&s, None).unwrap().net
}

/// A switch's uplinks, in order.
pub fn uplinks(n: &Network, switch: &str) -> Vec<PortId> {
    n.switches[n.switch_by_name(switch).unwrap() as usize].up.clone()
}

/// Route `pkt` at `switch` at `now`, arriving by its source's NIC or (when
/// the source is not below the switch) by the switch's first uplink's reverse.
pub fn route_at(n: &Network, p: &mut dyn SwitchPolicy, switch: &str, pkt: &Packet, now: SimTime) -> Decision {
    route_out(n, p, switch, &mut pkt.clone(), now, &mut PolicyOut::default())
}

/// `route_at` with the packet and the policy's requests kept.
pub fn route_out(
    n: &Network,
    p: &mut dyn SwitchPolicy,
    switch: &str,
    pkt: &mut Packet,
    now: SimTime,
    out: &mut PolicyOut,
) -> Decision {
    let sw = n.switch_by_name(switch).unwrap();
    let s = &n.switches[sw as usize];
    let dst_tor = n.tor_of(pkt.dst);
    let down = n.down_port(s, dst_tor, pkt.dst);
    let ingress = match s.role {
        crate::net::SwitchRole::Tor { tor } if n.tor_of(pkt.src) == tor => n.hosts[pkt.src as usize].nic,
        _ => n.ports[*s.up.first().unwrap_or(&s.down[0]) as usize].reverse,
    };
    let ctx = RouteCtx {
        now,
        switch: sw,
        sw: s,
        ports: &n.ports,
        ingress,
        down,
        group: if down.is_some() { &[] } else { s.group(dst_tor) },
    };
    p.route(&ctx, 0, pkt, out)
}
