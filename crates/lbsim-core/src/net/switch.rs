//! Switches forward down by destination and up through a policy over their
//! uplink group. ECMP hashes (src, dst, entropy value, per-switch salt); the
//! sender never learns which uplink an entropy value maps to (REPS §2.2).
//! Switch-side load balancers (adaptive routing, DRILL, CONGA, LetFlow,
//! ConWeave) become further `UplinkPolicy` variants.

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UplinkPolicy {
    Ecmp,
}

pub struct Switch {
    pub name: String,
    pub tier: u8,
    pub role: SwitchRole,
    /// Downlinks, indexed by the child's position (host in ToR, ToR in pod, ToR or pod).
    pub down: Vec<PortId>,
    /// All physical uplinks.
    pub up: Vec<PortId>,
    /// The ECMP group in use: the uplinks routing believes are alive.
    pub up_group: Vec<PortId>,
    pub salt: u64,
    pub policy: UplinkPolicy,
}

impl Switch {
    /// ECMP: hash of (src, dst, entropy, salt) onto the uplink group.
    #[inline]
    pub fn ecmp_pick(&self, pkt: &Packet) -> PortId {
        let key = (pkt.src as u64) << 40 ^ (pkt.dst as u64) << 16 ^ pkt.ev as u64;
        let h = mix64(key ^ self.salt);
        let n = self.up_group.len() as u64;
        self.up_group[((h as u128 * n as u128) >> 64) as usize]
    }
}
