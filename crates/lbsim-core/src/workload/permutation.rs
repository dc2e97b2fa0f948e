//! One-to-one traffic (REPS §4.2): every host sends one message and receives
//! one, to a seeded random derangement (`permutation`) or to the host in the
//! same position in the other half of the tree (`tornado`).

use super::Traffic;
use crate::rng::Rng;
use crate::scenario::{ScenarioError, WorkloadKind};
use crate::time::SimTime;
use crate::transport::FlowSpec;

/// A seeded random derangement: every host sends one message and receives
/// one, never to itself (shuffle, rejecting fixed points).
pub fn permutation(hosts: u32, rng: &mut Rng) -> Vec<u32> {
    let mut dst: Vec<u32> = (0..hosts).collect();
    loop {
        rng.shuffle(&mut dst);
        if dst.iter().enumerate().all(|(i, &d)| i as u32 != d) {
            return dst;
        }
    }
}

/// Host i sends to the host in the same position in the other half of the
/// tree (REPS §4.2: with 128 nodes, 0 sends to 64 and 64 to 0).
pub fn tornado(hosts: u32) -> Vec<u32> {
    (0..hosts).map(|i| (i + hosts / 2) % hosts).collect()
}

/// `workload.kind = "permutation"` or `"tornado"`: `parallel` messages of
/// `size` from every host to its partner (each its own flow, with its own
/// entropy: FaCa §7.3's concurrent streams), all starting at `start`.
pub(super) fn traffic(
    kind: WorkloadKind,
    hosts: u32,
    size: Option<u64>,
    parallel: u32,
    start: SimTime,
    rng: &mut Rng,
) -> Result<Traffic, ScenarioError> {
    if parallel == 0 {
        return Err(ScenarioError::new("workload.parallel", "must be at least 1"));
    }
    if hosts < 2 {
        return Err(ScenarioError::new(
            "topology.hosts",
            "a permutation needs at least 2 hosts",
        ));
    }
    let dst = if kind == WorkloadKind::Permutation {
        permutation(hosts, rng)
    } else {
        tornado(hosts)
    };
    let size = size.expect("required by workload::message_size");
    Ok(Traffic::plain(
        dst.iter()
            .enumerate()
            .flat_map(|(s, &d)| {
                (0..parallel).map(move |_| FlowSpec {
                    src: s as u32,
                    dst: d,
                    size,
                    start,
                })
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    #[test]
    fn permutation_is_a_derangement() {
        let mut rng = Rng::new(3, StreamTag::Workload, 0);
        let p = permutation(128, &mut rng);
        let mut seen = [false; 128];
        for (i, &d) in p.iter().enumerate() {
            assert_ne!(i as u32, d);
            assert!(!seen[d as usize]);
            seen[d as usize] = true;
        }
    }

    #[test]
    fn tornado_pairs_halves() {
        let t = tornado(128);
        assert_eq!(t[0], 64);
        assert_eq!(t[64], 0);
        assert_eq!(t[127], 63);
    }

    #[test]
    fn parallel_flows_share_their_pair() {
        let mut rng = Rng::new(3, StreamTag::Workload, 0);
        let t = traffic(WorkloadKind::Tornado, 8, Some(1000), 3, SimTime::ZERO, &mut rng).unwrap();
        let pairs: Vec<(u32, u32)> = t.flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(pairs.len(), 24);
        assert_eq!(&pairs[..4], &[(0, 4), (0, 4), (0, 4), (1, 5)]);
        let err = traffic(WorkloadKind::Permutation, 8, Some(1000), 0, SimTime::ZERO, &mut rng).unwrap_err();
        assert_eq!(err.key, "workload.parallel");
    }
}
