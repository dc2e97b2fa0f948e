//! Flowing & Jumping (FaCa §5.5, Alg. 1): where the next flow to one
//! destination goes, given the loads of the paths there. The paths form a
//! ring in a fixed order (FaCa §5.5: "treat it like a ring", path n−1's
//! neighbours are n−2 and 0). From an anchor path k drawn at random:
//!
//! - while a neighbour of k is lighter than k, the flow goes to the lighter
//!   neighbour ("flowing": water runs into the hollow next to k until it
//!   reaches k's level);
//! - while k is lighter than both neighbours, the flow goes to k;
//! - when k and its lighter neighbour are level, the anchor is spent: a new
//!   random anchor is drawn ("jumping") and the rule starts over from it.
//!   A fresh anchor that is level with its lighter neighbour takes the flow
//!   itself (else equal loads everywhere would jump for ever).
//!
//! The §5.5 text and the Fig. 4 example are what this follows. Alg. 1's
//! listing disagrees with them in its third loop (`while E^{k+1} > E^k`
//! schedules to k+1 while k+1 is *heavier* than k, the opposite of the
//! second loop and of "flows would be scheduled to the adjacent paths with
//! lighter load"); we read it as a typo for `<`. Alg. 1 schedules a batch of
//! demands at once; lbsim's flows arrive one at a time, so the state between
//! two flows is the anchor (None: the next flow jumps).
//!
//! Whatever the loads, a flow never lands on a path strictly heavier than
//! both its ring neighbours ("the load of paths is not allowed to exceed the
//! adjacent ones", §5.5): it lands on k only when k is no heavier than either
//! neighbour, and on a neighbour only when that neighbour is lighter than k.

/// The per-destination state of Flowing & Jumping between flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowingJumping {
    anchor: Option<usize>,
}

impl FlowingJumping {
    /// Forget the anchor (the ring changed: a path appeared).
    pub fn reset(&mut self) {
        self.anchor = None;
    }

    pub fn anchor(&self) -> Option<usize> {
        self.anchor
    }

    /// The path (index into `loads`, in ring order) for the next flow.
    /// `random(n)` draws uniformly from 0..n. `loads` must not be empty.
    pub fn place(&mut self, loads: &[f64], random: &mut dyn FnMut(usize) -> usize) -> usize {
        let n = loads.len();
        assert!(n > 0, "Flowing & Jumping needs a path");
        if n == 1 {
            return 0;
        }
        if let Some(k) = self.anchor.filter(|&k| k < n) {
            let m = lighter_neighbour(loads, k);
            if loads[m] < loads[k] {
                return m; // flowing into the hollow beside k
            }
            if loads[k] < loads[m] {
                return k; // k is still the lowest around
            }
            // Level: the water has spread as far as k; jump.
        }
        let k = random(n) % n;
        self.anchor = Some(k);
        let m = lighter_neighbour(loads, k);
        if loads[m] < loads[k] {
            m
        } else {
            k
        }
    }
}

/// The lighter of k's two ring neighbours; on a tie, the one after k.
fn lighter_neighbour(loads: &[f64], k: usize) -> usize {
    let n = loads.len();
    let (left, right) = ((k + n - 1) % n, (k + 1) % n);
    if loads[left] < loads[right] {
        left
    } else {
        right
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, StreamTag};

    fn strict_local_max(loads: &[f64], p: usize) -> bool {
        let n = loads.len();
        let (l, r) = ((p + n - 1) % n, (p + 1) % n);
        n > 1 && loads[p] > loads[l] && loads[p] > loads[r]
    }

    /// FaCa §5.5: the loads of paths never exceed the adjacent ones through
    /// a placement. Random loads (with ties), random flow sizes, 1-17
    /// paths, many seeds: no flow lands on a path strictly heavier than
    /// both its neighbours.
    #[test]
    fn never_places_on_a_path_heavier_than_both_neighbours() {
        for seed in 0..400u64 {
            let mut rng = Rng::new(seed, StreamTag::Flow, 0);
            let n = 1 + rng.below(17) as usize;
            let mut loads: Vec<f64> = (0..n).map(|_| rng.below(8) as f64).collect();
            let mut fj = FlowingJumping::default();
            for _ in 0..60 {
                let mut draw = Rng::new(seed, StreamTag::Flow, 1 + rng.below(1000));
                let p = fj.place(&loads, &mut |n| draw.below(n as u64) as usize);
                assert!(!strict_local_max(&loads, p), "seed {seed}: path {p} of {loads:?}");
                loads[p] += 1.0 + rng.below(3) as f64;
                // Probes move the loads between flows, too.
                if rng.below(4) == 0 {
                    let q = rng.below(n as u64) as usize;
                    loads[q] = rng.below(10) as f64;
                }
            }
        }
    }

    /// Fig. 4 of FaCa §5.5, made concrete: eight paths, six unit demands,
    /// the random draws 1 then 61 ((61 + 1) mod 8 = 6 in the text; here the
    /// draw is the path itself). Path 1 is lighter than path 0 but heavier
    /// than path 2: flows go to path 2 until it reaches path 1's level; then
    /// the jump to path 6, heavier than both 5 and 7: the rest go to 5 and 7
    /// until they reach path 6's level. Path 1 and path 6 get nothing.
    #[test]
    fn figure_4() {
        let mut loads = vec![7.0, 5.0, 2.0, 4.0, 6.0, 3.0, 5.0, 4.0];
        let draws = [1usize, 6];
        let mut next = 0;
        let mut random = |n: usize| {
            let d = draws[next] % n;
            next += 1;
            d
        };
        let mut fj = FlowingJumping::default();
        let mut placed = Vec::new();
        for _ in 0..6 {
            let p = fj.place(&loads, &mut random);
            loads[p] += 1.0;
            placed.push(p);
        }
        assert_eq!(placed, vec![2, 2, 2, 5, 7, 5]);
        assert_eq!(loads, vec![7.0, 5.0, 5.0, 4.0, 6.0, 5.0, 5.0, 5.0]);
        assert_eq!(next, 2, "exactly one jump after the first draw");
    }

    #[test]
    fn a_fresh_anchor_lighter_than_both_neighbours_takes_the_flows() {
        let loads = [3.0, 1.0, 3.0, 3.0];
        let mut fj = FlowingJumping::default();
        assert_eq!(fj.place(&loads, &mut |_| 1), 1);
        assert_eq!(fj.place(&loads, &mut |_| panic!("no jump while path 1 is lowest")), 1);
        // Equal loads everywhere: the fresh anchor keeps the flow.
        let flat = [2.0; 5];
        let mut fj = FlowingJumping::default();
        assert_eq!(fj.place(&flat, &mut |_| 3), 3);
        // One path: always it; two paths are each other's neighbours.
        assert_eq!(FlowingJumping::default().place(&[9.0], &mut |_| 0), 0);
        assert_eq!(FlowingJumping::default().place(&[9.0, 1.0], &mut |_| 0), 1);
    }
}
