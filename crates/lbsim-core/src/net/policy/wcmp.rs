//! WCMP (weighted-cost multipathing; Zhou et al., "WCMP: Weighted Cost
//! Multipathing for Improved Fairness in Data Centers", EuroSys '14) in the
//! switch: ECMP's per-flow hash, but each uplink of the group takes a share
//! of the hash space proportional to its weight, so a flow lands on an uplink
//! with probability weight / total. FaCa compares against it (FaCa §7.3).
//!
//! Weights are the uplinks' configured capacities (their rates after static
//! `rate_overrides`, not after `degrade` failures: WCMP weights are set by
//! the operator, not measured), or given per uplink position (`lb.wcmp.weights`).
//! Every packet is hashed this way, ACKs included, as ECMP hashes them; the
//! way down is unique. Like ECMP it needs no state and draws nothing random.

use super::{Decision, PolicyOut, RouteCtx, SwitchPolicy};
use crate::net::switch::{ecmp_hash, hash_to_index};
use crate::net::PortId;
use crate::packet::{Packet, PacketId};

pub struct Wcmp {
    /// The switch's uplinks, and their weights in the same order.
    up: Vec<PortId>,
    weights: Vec<u64>,
    /// The weights' sum: the total of every packet's group while no uplink is down.
    total: u64,
}

impl Wcmp {
    /// `weights` per uplink position of this switch's `up` list.
    pub fn new(up: &[PortId], weights: Vec<u64>) -> Self {
        debug_assert_eq!(up.len(), weights.len());
        Wcmp {
            up: up.to_vec(),
            total: weights.iter().sum(),
            weights,
        }
    }

    /// The group's members with their weights. A routing group lists some of
    /// the switch's uplinks in their order (`routing::converge` filters `up`),
    /// so one walk along `up` finds them all.
    fn members<'a>(&'a self, group: &'a [PortId]) -> impl Iterator<Item = (PortId, u64)> + 'a {
        let mut i = 0;
        group.iter().map(move |&p| {
            while self.up[i] != p {
                i += 1;
            }
            (p, self.weights[i])
        })
    }

    /// The group's member whose share of [0, total) holds the flow's hash point.
    fn pick(&self, group: &[PortId], h: u64) -> Option<PortId> {
        let total = match group.len() == self.up.len() {
            true => self.total,
            false => self.members(group).map(|(_, w)| w).sum(),
        };
        if total == 0 {
            return None;
        }
        let mut point = hash_to_index(h, total as usize) as u64;
        for (p, w) in self.members(group) {
            if point < w {
                return Some(p);
            }
            point -= w;
        }
        None
    }
}

impl SwitchPolicy for Wcmp {
    #[inline]
    fn route(&mut self, ctx: &RouteCtx, _id: PacketId, pkt: &mut Packet, _out: &mut PolicyOut) -> Decision {
        if let Some(p) = ctx.down {
            return Decision::Forward(p);
        }
        match self.pick(ctx.group, ecmp_hash(pkt.src, pkt.dst, pkt.ev, ctx.sw.salt)) {
            Some(p) => Decision::Forward(p),
            None => Decision::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::mix64;

    /// Over a million hash points each uplink's share is its weight's share
    /// of the total within 0.3 % (the binomial spread is 0.05 %); weight 0
    /// never wins, and an empty or all-zero group has no way on.
    #[test]
    fn shares_follow_the_weights() {
        let w = Wcmp::new(&[10, 11, 12, 13], vec![380, 400, 0, 220]);
        let group = [10, 11, 12, 13];
        let mut count = [0u32; 4];
        for i in 0..1_000_000u64 {
            let p = w.pick(&group, mix64(i)).unwrap();
            count[(p - 10) as usize] += 1;
        }
        assert_eq!(count[2], 0);
        for (k, expect) in [(0, 0.38), (1, 0.40), (3, 0.22)] {
            let share = count[k] as f64 / 1e6;
            assert!((share - expect).abs() < 0.003, "uplink {k}: {share} vs {expect}");
        }
        assert_eq!(w.pick(&[], 5), None);
        assert_eq!(Wcmp::new(&[1], vec![0]).pick(&[1], 5), None);
        // A group that lost an uplink (routing converged around a failure) splits over the rest.
        let p = w.pick(&[10, 11], mix64(3)).unwrap();
        assert!(p == 10 || p == 11);
    }
}
