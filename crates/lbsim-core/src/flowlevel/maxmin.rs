//! Max-min fair rates by progressive filling (water-filling; Bertsekas and
//! Gallager, "Data Networks", §6.5.2): every flow's rate rises at the same
//! pace until some link is full; the flows crossing it are frozen at that
//! rate, and the rest keep rising.
//!
//! Done link by link rather than step by step: each link's fair share is
//! its remaining capacity over its unfrozen flows; the link with the
//! smallest share is the next to fill, and its unfrozen flows all get that
//! share. Freezing a flow at the smallest share never lowers another link's
//! share ((R − x)/(n − 1) ≥ R/n when x ≤ R/n), so a min-heap with lazily
//! refreshed entries finds the next link: O((P + L) log L) for P flow-hops
//! on L links. Ties go to the lower link id, so the result is a function of
//! the input alone.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The max-min fair allocation of flows over links.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Each flow's rate, in the capacities' unit.
    pub rates: Vec<f64>,
    /// The link that froze each flow (its bottleneck: a full link on which no
    /// flow gets more than it); None for a flow crossing no link.
    pub bottleneck: Vec<Option<u32>>,
}

/// A heap entry: a link's fair share when it was pushed.
#[derive(PartialEq)]
struct Entry {
    share: f64,
    link: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the smallest share, then the lowest link.
    fn cmp(&self, other: &Self) -> Ordering {
        other.share.total_cmp(&self.share).then(other.link.cmp(&self.link))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Max-min fair rates of flows whose paths (`paths[f]`, link ids below
/// `capacity.len()`, each at most once per path) cross links of the given
/// capacities (≥ 0, finite).
pub fn max_min(capacity: &[f64], paths: &[Vec<u32>]) -> Allocation {
    let links = capacity.len();
    // Flows per link, as one flat array (CSR).
    let mut start = vec![0usize; links + 1];
    for p in paths {
        for &l in p {
            start[l as usize + 1] += 1;
        }
    }
    for l in 0..links {
        start[l + 1] += start[l];
    }
    let mut fill = start.clone();
    let mut on_link = vec![0u32; start[links]];
    for (f, p) in paths.iter().enumerate() {
        for &l in p {
            on_link[fill[l as usize]] = f as u32;
            fill[l as usize] += 1;
        }
    }
    let mut remaining: Vec<f64> = capacity.to_vec();
    let mut active: Vec<u32> = (0..links).map(|l| (start[l + 1] - start[l]) as u32).collect();
    let share = |remaining: f64, n: u32| remaining.max(0.0) / n as f64;
    let mut heap: BinaryHeap<Entry> = (0..links)
        .filter(|&l| active[l] > 0)
        .map(|l| Entry {
            share: share(remaining[l], active[l]),
            link: l as u32,
        })
        .collect();
    let mut rates = vec![0.0; paths.len()];
    let mut bottleneck = vec![None; paths.len()];
    let mut frozen = vec![false; paths.len()];
    while let Some(Entry { share: s, link }) = heap.pop() {
        let l = link as usize;
        if active[l] == 0 {
            continue;
        }
        let now = share(remaining[l], active[l]);
        if now != s {
            // Stale: the link's share rose since this entry was pushed.
            heap.push(Entry { share: now, link });
            continue;
        }
        for &f in &on_link[start[l]..start[l + 1]] {
            let f = f as usize;
            if frozen[f] {
                continue;
            }
            frozen[f] = true;
            rates[f] = s;
            bottleneck[f] = Some(link);
            for &other in &paths[f] {
                let o = other as usize;
                remaining[o] -= s;
                active[o] -= 1;
                if o != l && active[o] > 0 {
                    heap.push(Entry {
                        share: share(remaining[o], active[o]),
                        link: other,
                    });
                }
            }
        }
        debug_assert_eq!(active[l], 0);
    }
    Allocation { rates, bottleneck }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Links A = 10, B = 10, C = 4 (ids 0, 1, 2); flows f1: A, f2: A+B,
    /// f3: B+C, f4: C. By hand:
    /// - fair shares at the start: A 10/2 = 5, B 10/2 = 5, C 4/2 = 2. C fills
    ///   first: f3 = f4 = 2.
    /// - then A: 10 left over f1, f2 → 5; B: 10 − 2 = 8 left over f2 → 8. A
    ///   fills next: f1 = f2 = 5.
    /// - B then carries f2 + f3 = 7 < 10: not full, no flow left on it.
    ///
    /// So (5, 5, 2, 2), f1 and f2 bottlenecked at A, f3 and f4 at C; and
    /// max-min: raising any flow needs lowering one no faster than it.
    #[test]
    fn three_link_example_by_hand() {
        let a = max_min(&[10.0, 10.0, 4.0], &[vec![0], vec![0, 1], vec![1, 2], vec![2]]);
        assert_eq!(a.rates, vec![5.0, 5.0, 2.0, 2.0]);
        assert_eq!(a.bottleneck, vec![Some(0), Some(0), Some(2), Some(2)]);
    }

    /// The classic parking lot: one long flow across n links of capacity 1,
    /// one short flow per link: every flow gets 1/2.
    #[test]
    fn parking_lot() {
        let n = 5;
        let mut paths = vec![(0..n).collect::<Vec<u32>>()];
        paths.extend((0..n).map(|l| vec![l]));
        let a = max_min(&vec![1.0; n as usize], &paths);
        assert!(a.rates.iter().all(|&r| r == 0.5), "{:?}", a.rates);
    }

    /// A flow on no link keeps rate 0 and no bottleneck; a link of capacity 0 gives its flows 0.
    #[test]
    fn empty_paths_and_dead_links() {
        let a = max_min(&[0.0, 3.0], &[vec![], vec![0, 1], vec![1]]);
        assert_eq!(a.rates, vec![0.0, 0.0, 3.0]);
        assert_eq!(a.bottleneck, vec![None, Some(0), Some(1)]);
    }

    /// Feasible (no link over capacity) and every flow has a full link on
    /// which it gets the most: the two conditions that make an allocation
    /// max-min fair, on a pseudo-random instance.
    #[test]
    fn random_instance_is_max_min_fair() {
        let mut rng = crate::rng::Rng::new(7, crate::rng::StreamTag::Flow, 0);
        let links = 40;
        let capacity: Vec<f64> = (0..links).map(|_| 1.0 + rng.below(100) as f64).collect();
        let paths: Vec<Vec<u32>> = (0..300)
            .map(|_| {
                let mut p: Vec<u32> = (0..1 + rng.below(5)).map(|_| rng.below(links) as u32).collect();
                p.sort_unstable();
                p.dedup();
                p
            })
            .collect();
        let a = max_min(&capacity, &paths);
        let mut load = vec![0.0; links as usize];
        for (p, r) in paths.iter().zip(&a.rates) {
            for &l in p {
                load[l as usize] += r;
            }
        }
        for l in 0..links as usize {
            assert!(load[l] <= capacity[l] * (1.0 + 1e-12), "link {l} over capacity");
        }
        for (f, p) in paths.iter().enumerate() {
            let b = a.bottleneck[f].unwrap() as usize;
            assert!(p.contains(&(b as u32)));
            assert!(
                (load[b] - capacity[b]).abs() <= 1e-9 * capacity[b],
                "bottleneck {b} not full"
            );
            let most = paths
                .iter()
                .zip(&a.rates)
                .filter(|(q, _)| q.contains(&(b as u32)))
                .map(|(_, &r)| r)
                .fold(0.0, f64::max);
            assert_eq!(a.rates[f], most, "flow {f} is not the largest on its bottleneck");
        }
    }
}
