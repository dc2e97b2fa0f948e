//! Switches forward down by destination (the way down a fat tree is unique)
//! and up through ECMP over their uplink group: a hash of (src, dst,
//! entropy value, per-switch salt), so the sender never learns which uplink
//! an entropy value maps to (REPS §2.2). Packets of a switch-side load
//! balancer (route class > 0) go to its policy instead (`net::policy`).

use super::port::PortId;
use crate::packet::Packet;
use crate::rng::mix64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchRole {
    /// Tier 0: hosts below, uplinks above.
    Tor { tor: u32 },
    /// Tier 1 of a 2-tier tree: one downlink per ToR, nothing above.
    Spine,
    /// Tier 1 of a 3-tier tree: the ToRs of its pod below, core switches above.
    Agg { pod: u32 },
    /// Tier 2: one downlink per pod.
    Core,
}

pub struct Switch {
    pub name: String,
    pub tier: u8,
    pub role: SwitchRole,
    /// Downlinks, indexed by the child's position (host in ToR, ToR in pod, ToR or pod).
    pub down: Vec<PortId>,
    /// All physical uplinks.
    pub up: Vec<PortId>,
    /// Per destination ToR, the uplinks routing believes lead there. None
    /// while routing believes every uplink works (then the group is `up`);
    /// set by routing convergence after a failure (see `crate::failure`).
    pub groups_by_dst: Option<Vec<Vec<PortId>>>,
    pub salt: u64,
}

/// The ECMP hash of a packet's (src, dst, entropy value) at a switch with this salt.
#[inline]
pub fn ecmp_hash(src: u32, dst: u32, ev: u16, salt: u64) -> u64 {
    let key = (src as u64) << 40 ^ (dst as u64) << 16 ^ ev as u64;
    mix64(key ^ salt)
}

/// Map a hash onto one of `n` choices (multiply-high: no modulo bias).
#[inline]
pub fn hash_to_index(h: u64, n: usize) -> usize {
    ((h as u128 * n as u128) >> 64) as usize
}

impl Switch {
    /// The uplinks routing believes reach destination ToR `dst_tor` (empty: no route).
    #[inline]
    pub fn group(&self, dst_tor: u32) -> &[PortId] {
        match &self.groups_by_dst {
            None => &self.up,
            Some(g) => &g[dst_tor as usize],
        }
    }

    /// ECMP: hash of (src, dst, entropy, salt) onto the group; None when the group is empty.
    #[inline]
    pub fn ecmp_pick(&self, group: &[PortId], pkt: &Packet) -> Option<PortId> {
        if group.is_empty() {
            return None;
        }
        let h = ecmp_hash(pkt.src, pkt.dst, pkt.ev, self.salt);
        Some(group[hash_to_index(h, group.len())])
    }
}
