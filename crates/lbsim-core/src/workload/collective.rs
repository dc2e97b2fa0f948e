//! AI training collectives as flows with dependencies (REPS §4.2 "AI
//! collectives"): ring and butterfly AllReduce, and AllToAll with at most
//! `parallel` connections per node. A flow waits for the flows listed in its
//! `after` (their data must have arrived at the receiver), which is how one
//! step of a collective follows the previous one at each node.
//!
//! Sizes: `size` is each node's buffer. Ring AllReduce moves size/N per step
//! over 2(N−1) steps (reduce-scatter, then all-gather); butterfly moves
//! size/2, size/4, …, size/N while halving, then the same back while
//! doubling (Rabenseifner's recursive halving/doubling); AllToAll sends
//! size/N to each of the N−1 others (the NCCL convention: the send buffer
//! holds one block per peer).

use super::{NetInfo, Traffic};
use crate::scenario::{ScenarioError, Workload, WorkloadKind};
use crate::time::SimTime;
use crate::transport::FlowSpec;

/// Who sits where in the logical ring (or butterfly order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Rank i is host i: most ring hops stay under one ToR.
    HostOrder,
    /// Rank j is on ToR j mod T: every ring hop crosses to another ToR, so
    /// every byte climbs to the spine (the REPS FPGA setup, §4.2).
    CrossSpine,
}

/// The host of each rank.
pub fn ranks(hosts: u32, hosts_per_tor: u32, layout: Layout) -> Vec<u32> {
    match layout {
        Layout::HostOrder => (0..hosts).collect(),
        Layout::CrossSpine => {
            let tors = hosts / hosts_per_tor;
            (0..hosts).map(|j| (j % tors) * hosts_per_tor + j / tors).collect()
        }
    }
}

/// Builds the flow list: each `add` returns the new flow's id.
struct Plan {
    t: Traffic,
    start: SimTime,
}

impl Plan {
    fn new(start: SimTime) -> Self {
        Plan {
            t: Traffic::default(),
            start,
        }
    }

    fn add(&mut self, src: u32, dst: u32, size: u64, step: u32, after: Vec<u32>) -> u32 {
        let id = self.t.flows.len() as u32;
        self.t.flows.push(FlowSpec {
            src,
            dst,
            size: size.max(1),
            start: self.start,
        });
        self.t.after.push(after);
        self.t.step.push(step);
        id
    }
}

/// Ring AllReduce, `iterations` times back to back: at step s rank r sends
/// a chunk to rank r+1, once the chunk rank r−1 sent it at step s−1 has arrived.
pub fn ring_allreduce(ranks: &[u32], size: u64, iterations: u32, start: SimTime) -> Traffic {
    let n = ranks.len();
    let chunk = size.div_ceil(n as u64);
    let steps = 2 * (n as u32 - 1) * iterations;
    let mut p = Plan::new(start);
    // incoming[r]: the flow that delivered rank r's previous chunk.
    let mut incoming: Vec<Option<u32>> = vec![None; n];
    for step in 0..steps {
        let sent: Vec<u32> = (0..n)
            .map(|r| {
                let after = incoming[r].into_iter().collect();
                p.add(ranks[r], ranks[(r + 1) % n], chunk, step, after)
            })
            .collect();
        for r in 0..n {
            incoming[(r + 1) % n] = Some(sent[r]);
        }
    }
    p.t
}

/// Butterfly AllReduce over a power-of-two number of ranks: log2 N halving
/// steps with partners at distance N/2, N/4, …, 1, then log2 N doubling
/// steps back out. A rank's next step waits for what its partner sent it.
pub fn butterfly_allreduce(ranks: &[u32], size: u64, iterations: u32, start: SimTime) -> Result<Traffic, String> {
    let n = ranks.len();
    if !n.is_power_of_two() || n < 2 {
        return Err(format!("needs a power-of-two number of hosts, got {n}"));
    }
    let rounds = n.trailing_zeros();
    let mut schedule: Vec<(usize, u64)> = Vec::new(); // (partner distance, bytes)
    for k in 0..rounds {
        schedule.push((n >> (k + 1), size.div_ceil(2u64 << k)));
    }
    let halving = schedule.clone();
    schedule.extend(halving.into_iter().rev());
    let mut p = Plan::new(start);
    let mut incoming: Vec<Option<u32>> = vec![None; n];
    let mut step = 0;
    for _ in 0..iterations {
        for &(dist, bytes) in &schedule {
            let sent: Vec<u32> = (0..n)
                .map(|r| {
                    let after = incoming[r].into_iter().collect();
                    p.add(ranks[r], ranks[r ^ dist], bytes, step, after)
                })
                .collect();
            for r in 0..n {
                incoming[r ^ dist] = Some(sent[r]);
            }
            step += 1;
        }
    }
    Ok(p.t)
}

/// AllToAll: rank r sends size/N to r+1, r+2, …, r+N−1 in that order, with
/// at most `parallel` of its messages under way: message k waits for the
/// arrival of message k − parallel. `step` is the offset k.
pub fn alltoall(ranks: &[u32], size: u64, parallel: u32, iterations: u32, start: SimTime) -> Traffic {
    let n = ranks.len();
    let block = size.div_ceil(n as u64);
    let mut p = Plan::new(start);
    let mut mine: Vec<Vec<u32>> = vec![Vec::new(); n];
    for it in 0..iterations {
        for k in 1..n {
            for r in 0..n {
                let m = &mine[r];
                let after = m
                    .len()
                    .checked_sub(parallel as usize)
                    .map(|i| m[i])
                    .into_iter()
                    .collect();
                let id = p.add(
                    ranks[r],
                    ranks[(r + k) % n],
                    block,
                    it * (n as u32 - 1) + k as u32 - 1,
                    after,
                );
                mine[r].push(id);
            }
        }
    }
    p.t
}

/// `workload.kind` a collective (`ring_allreduce`, `butterfly_allreduce`,
/// `alltoall`): its ranks laid out on the hosts by `layout`, run
/// `iterations` times from `start`.
pub(super) fn traffic(w: &Workload, net: NetInfo, size: Option<u64>, start: SimTime) -> Result<Traffic, ScenarioError> {
    let hosts = net.hosts;
    let size = size.expect("checked by the scenario");
    let layout = w.layout.unwrap_or(Layout::HostOrder);
    let ranks = ranks(hosts, net.hosts_per_tor, layout);
    if hosts < 2 {
        return Err(ScenarioError::new(
            "topology.hosts",
            "a collective needs at least 2 hosts",
        ));
    }
    let iterations = w.iterations.unwrap_or(1);
    if iterations == 0 {
        return Err(ScenarioError::new("workload.iterations", "must be at least 1"));
    }
    let mut t = match w.kind {
        WorkloadKind::RingAllreduce => ring_allreduce(&ranks, size, iterations, start),
        WorkloadKind::ButterflyAllreduce => butterfly_allreduce(&ranks, size, iterations, start)
            .map_err(|m| ScenarioError::new("topology.hosts", format!("butterfly AllReduce {m}")))?,
        _ => {
            let parallel = w.parallel.expect("checked by the scenario");
            if parallel == 0 {
                return Err(ScenarioError::new("workload.parallel", "must be at least 1"));
            }
            alltoall(&ranks, size, parallel, iterations, start)
        }
    };
    t.collective = Some(match w.kind {
        WorkloadKind::RingAllreduce => "ring_allreduce",
        WorkloadKind::ButterflyAllreduce => "butterfly_allreduce",
        _ => "alltoall",
    });
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_spine_layout_puts_neighbours_on_other_tors() {
        let r = ranks(32, 8, Layout::CrossSpine);
        let mut sorted = r.clone();
        sorted.sort();
        assert_eq!(sorted, (0..32).collect::<Vec<_>>(), "a permutation of the hosts");
        for j in 0..32 {
            assert_ne!(r[j] / 8, r[(j + 1) % 32] / 8, "rank {j} and its successor share a ToR");
        }
    }

    #[test]
    fn ring_has_2n_minus_2_steps_of_size_over_n() {
        let t = ring_allreduce(&[0, 1, 2, 3], 4000, 1, SimTime::ZERO);
        assert_eq!(t.flows.len(), 4 * 6);
        assert!(t.flows.iter().all(|f| f.size == 1000 && f.dst == (f.src + 1) % 4));
        // Step s of rank r waits for step s−1 of rank r−1.
        for (i, f) in t.flows.iter().enumerate() {
            match t.step[i] {
                0 => assert!(t.after[i].is_empty()),
                s => {
                    let dep = &t.flows[t.after[i][0] as usize];
                    assert_eq!((dep.dst, t.step[t.after[i][0] as usize]), (f.src, s - 1));
                }
            }
        }
    }

    #[test]
    fn butterfly_halves_then_doubles() {
        let t = butterfly_allreduce(&[0, 1, 2, 3, 4, 5, 6, 7], 8000, 1, SimTime::ZERO).unwrap();
        let per_step: Vec<(u64, u32)> = (0..6)
            .map(|s| {
                let f = t.flows[s * 8];
                (f.size, f.src ^ f.dst)
            })
            .collect();
        assert_eq!(
            per_step,
            [(4000, 4), (2000, 2), (1000, 1), (1000, 1), (2000, 2), (4000, 4)]
        );
        assert!(butterfly_allreduce(&[0, 1, 2], 10, 1, SimTime::ZERO).is_err());
    }

    #[test]
    fn alltoall_keeps_at_most_parallel_messages_open() {
        let t = alltoall(&[0, 1, 2, 3, 4], 5000, 2, 1, SimTime::ZERO);
        assert_eq!(t.flows.len(), 20);
        for src in 0..5u32 {
            let mine: Vec<usize> = (0..20).filter(|&i| t.flows[i].src == src).collect();
            let dsts: Vec<u32> = mine.iter().map(|&i| t.flows[i].dst).collect();
            assert_eq!(dsts, (1..5).map(|k| (src + k) % 5).collect::<Vec<_>>());
            assert!(t.after[mine[0]].is_empty() && t.after[mine[1]].is_empty());
            assert_eq!(t.after[mine[2]], vec![mine[0] as u32]);
            assert_eq!(t.after[mine[3]], vec![mine[1] as u32]);
        }
    }
}
