//! A host's network load table for one destination (FaCa §5.3): the
//! distinct paths its probes found (a path is the sequence of switches and
//! egress ports the probe crossed), for each the entropy values that map to
//! it, and its load estimate. The paths are kept sorted by their hops, so
//! the ring Flowing & Jumping walks has a fixed order however the paths
//! were discovered.

use super::estimate::Estimate;
use super::flowing::FlowingJumping;
use crate::time::SimTime;

/// One hop of a path: a switch and the port it sent the probe out of.
pub type Hop = (u32, u32);

#[derive(Clone, Debug)]
pub struct PathEntry {
    pub hops: Vec<Hop>,
    /// The entropy values seen to take this path (in the order found).
    pub evs: Vec<u16>,
    pub estimate: Estimate,
}

/// Everything one source knows about the paths to one destination.
#[derive(Clone, Debug, Default)]
pub struct PathTable {
    pub paths: Vec<PathEntry>,
    pub placer: FlowingJumping,
}

impl PathTable {
    /// A probe on `ev` crossed `hops` and measured `beta` at `now`: learn the
    /// path (and that `ev` maps to it) and fold β into its estimate (`k` per
    /// microsecond). Returns the path's index.
    pub fn observe(&mut self, hops: &[Hop], ev: u16, beta: f64, now: SimTime, k: f64) -> usize {
        let i = match self.paths.binary_search_by(|p| p.hops.as_slice().cmp(hops)) {
            Ok(i) => i,
            Err(i) => {
                self.paths.insert(
                    i,
                    PathEntry {
                        hops: hops.to_vec(),
                        evs: Vec::new(),
                        estimate: Estimate::default(),
                    },
                );
                // The ring changed under the anchor.
                self.placer.reset();
                i
            }
        };
        let p = &mut self.paths[i];
        if !p.evs.contains(&ev) {
            // An EV maps to one path while routing stands; after a change it may move.
            for other in self.paths.iter_mut() {
                other.evs.retain(|&e| e != ev);
            }
            self.paths[i].evs.push(ev);
        }
        self.paths[i].estimate.update(now, beta, k);
        i
    }

    /// The paths' current estimates, in ring order.
    pub fn loads(&self) -> Vec<f64> {
        self.paths.iter().map(|p| p.estimate.value()).collect()
    }

    /// Paths that have an EV (an EV that moved to another path leaves its old one without).
    pub fn usable(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.paths.len()).filter(|&i| !self.paths[i].evs.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_kept_in_hop_order_with_their_evs() {
        let mut t = PathTable::default();
        let a = [(0, 5), (9, 2)];
        let b = [(0, 4), (8, 2)];
        assert_eq!(t.observe(&a, 11, 100.0, SimTime::ZERO, 0.1), 0);
        assert_eq!(t.observe(&b, 12, 0.0, SimTime::ZERO, 0.1), 0, "b sorts first");
        assert_eq!(t.observe(&a, 13, 100.0, SimTime::from_us(1), 0.1), 1);
        assert_eq!(t.paths.len(), 2);
        assert_eq!(t.paths[1].evs, vec![11, 13]);
        assert_eq!(t.paths[0].evs, vec![12]);
        assert_eq!(t.loads(), vec![0.0, 100.0]);
        // EV 12 now maps to path a (routing changed): it leaves b.
        t.observe(&a, 12, 100.0, SimTime::from_us(2), 0.1);
        assert_eq!(t.paths[1].evs, vec![11, 13, 12]);
        assert!(t.paths[0].evs.is_empty());
        assert_eq!(t.usable().collect::<Vec<_>>(), vec![1]);
    }
}
