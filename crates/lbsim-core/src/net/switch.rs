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

/// What hashed forwarding reads of a switch, 40 bytes, all switches in one
/// array (`Network::forwarding`): a packet's hop reads this instead of the
/// `Switch` and its port vectors, three misses on a large network (a
/// 32 768-host fat tree's 3072 switches fit in 120 KB). The topology builder
/// numbers a switch's down- and uplinks at a fixed stride, so each set is
/// (first, step); a switch whose links are not, or whose ECMP groups routing has
/// trimmed after a failure, is routed through its `Switch` instead.
#[derive(Clone, Copy, Debug)]
pub struct Forwarding {
    pub salt: u64,
    pub role: SwitchRole,
    down_first: PortId,
    down_step: u32,
    up_first: PortId,
    up_step: u32,
    up_len: u32,
    /// (first, step) describe the ports and every uplink is in the group.
    pub(crate) fast: bool,
}

// The size the comment above gives.
const _: () = assert!(std::mem::size_of::<Forwarding>() == 40);

/// `ports` as (first, step) when they are an arithmetic progression.
fn progression(ports: &[PortId]) -> Option<(PortId, u32)> {
    let (first, step) = match ports {
        [] => (0, 0),
        [a] => (*a, 0),
        [a, b, ..] => (*a, b.checked_sub(*a)?),
    };
    let fits = ports
        .iter()
        .enumerate()
        .all(|(i, &p)| (i as u64 * step as u64 + first as u64) == p as u64);
    fits.then_some((first, step))
}

impl Forwarding {
    pub fn of(s: &Switch) -> Self {
        let down = progression(&s.down);
        let up = progression(&s.up);
        let ((down_first, down_step), (up_first, up_step)) = (down.unwrap_or_default(), up.unwrap_or_default());
        Forwarding {
            salt: s.salt,
            role: s.role,
            down_first,
            down_step,
            up_first,
            up_step,
            up_len: s.up.len() as u32,
            fast: down.is_some() && up.is_some() && s.groups_by_dst.is_none(),
        }
    }

    /// Downlink `i` (an index `Network::down_index` gave).
    #[inline(always)]
    pub fn down(&self, i: u32) -> PortId {
        self.down_first + i * self.down_step
    }

    /// ECMP over every uplink, as `Switch::ecmp_pick` over `Switch::up`.
    #[inline(always)]
    pub fn ecmp_up(&self, pkt: &Packet) -> Option<PortId> {
        if self.up_len == 0 {
            return None;
        }
        let h = ecmp_hash(pkt.src, pkt.dst, pkt.ev, self.salt);
        Some(self.up_first + hash_to_index(h, self.up_len as usize) as u32 * self.up_step)
    }
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
