//! AI training collectives as flows with dependencies (REPS §4.2 "AI
//! collectives"): ring and butterfly AllReduce, and AllToAll with at most
//! `parallel` messages per node under way. A flow waits for the flows listed
//! in its `after`, which is how one step of a collective follows the
//! previous one at each node; AllToAll refills its window through a trigger
//! (`Traffic::triggers`). When a message counts as done for this is
//! `workload.release` (its last byte delivered, or its last ACK home).
//!
//! Sizes: `size` is each node's buffer. Ring AllReduce moves size/N per step
//! over 2(N−1) steps (reduce-scatter, then all-gather); butterfly moves
//! size/2, size/4, …, size/N while halving, then the same back while
//! doubling (Rabenseifner's recursive halving/doubling), or with
//! `schedule = "doubling"` the whole buffer to partners at distance 1, 2, 4,
//! …, N/2 (recursive doubling: the REPS artifact's butterfly,
//! `gen_allreduce_butterfly.py`); AllToAll sends size/N to each of the N−1
//! others (the NCCL convention: the send buffer holds one block per peer).

use super::{Fires, NetInfo, Traffic, Trigger};
use crate::rng::Rng;
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
    /// The hosts in a random order drawn from the workload's stream (the
    /// REPS artifact's ring and AllToAll shuffle the hosts: `gen_allreduce.py`,
    /// `gen_serialn_alltoall.py`).
    Random,
}

/// How butterfly AllReduce pairs the ranks (`workload.schedule`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ButterflySchedule {
    /// Recursive halving (partners N/2, N/4, …, 1; size/2, size/4, …) then doubling back.
    #[default]
    HalvingDoubling,
    /// Recursive doubling: partners 1, 2, 4, …, N/2, the whole buffer each time.
    Doubling,
}

/// When an AllToAll node starts its next message (`workload.refill`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refill {
    /// When any of its messages under way is done: the node's messages go
    /// in rounds of `parallel`, and each message done of one round starts
    /// the next of the following round (the REPS artifact's multishot
    /// triggers, `gen_serialn_alltoall.py`).
    #[default]
    Any,
    /// Message k when message k − parallel is done: `parallel` fixed lanes.
    Lane,
}

/// The host of each rank: all hosts in the layout's order.
pub fn ranks(hosts: u32, hosts_per_tor: u32, layout: Layout, rng: &mut Rng) -> Vec<u32> {
    match layout {
        Layout::HostOrder => (0..hosts).collect(),
        Layout::CrossSpine => {
            let tors = hosts / hosts_per_tor;
            (0..hosts).map(|j| (j % tors) * hosts_per_tor + j / tors).collect()
        }
        Layout::Random => {
            let mut r: Vec<u32> = (0..hosts).collect();
            rng.shuffle(&mut r);
            r
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

/// Butterfly AllReduce over a power-of-two number of ranks, `schedule`'s
/// steps (partner distance and bytes) in turn. A rank's next step waits for
/// what its partner sent it.
pub fn butterfly_allreduce(
    ranks: &[u32],
    size: u64,
    schedule: ButterflySchedule,
    iterations: u32,
    start: SimTime,
) -> Result<Traffic, String> {
    let n = ranks.len();
    if !n.is_power_of_two() || n < 2 {
        return Err(format!("needs a power-of-two number of ranks, got {n}"));
    }
    let rounds = n.trailing_zeros();
    let steps: Vec<(usize, u64)> = match schedule {
        ButterflySchedule::HalvingDoubling => {
            let halving: Vec<(usize, u64)> = (0..rounds).map(|k| (n >> (k + 1), size.div_ceil(2u64 << k))).collect();
            halving.iter().chain(halving.iter().rev()).copied().collect()
        }
        ButterflySchedule::Doubling => (0..rounds).map(|k| (1 << k, size)).collect(),
    };
    let mut p = Plan::new(start);
    let mut incoming: Vec<Option<u32>> = vec![None; n];
    let mut step = 0;
    for _ in 0..iterations {
        for &(dist, bytes) in &steps {
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
/// at most `parallel` of its messages under way, refilled as `refill` says.
/// `step` is the offset k − 1 (plus N − 1 per earlier iteration).
pub fn alltoall(ranks: &[u32], size: u64, parallel: u32, refill: Refill, iterations: u32, start: SimTime) -> Traffic {
    let n = ranks.len();
    let block = size.div_ceil(n as u64);
    let parallel = parallel as usize;
    let mut p = Plan::new(start);
    let mut mine: Vec<Vec<u32>> = vec![Vec::new(); n];
    for it in 0..iterations {
        for k in 1..n {
            for r in 0..n {
                let m = &mine[r];
                let after = match refill {
                    Refill::Lane => m.len().checked_sub(parallel).map(|i| m[i]).into_iter().collect(),
                    Refill::Any => Vec::new(),
                };
                let step = it * (n as u32 - 1) + k as u32 - 1;
                let id = p.add(ranks[r], ranks[(r + k) % n], block, step, after);
                mine[r].push(id);
            }
        }
    }
    if refill == Refill::Any {
        // Round j + 1 of a node's messages starts one message per message of round j done.
        for m in &mine {
            for (done, next) in m.chunks(parallel).zip(m.chunks(parallel).skip(1)) {
                p.t.triggers.push(Trigger {
                    activators: done.to_vec(),
                    targets: next.to_vec(),
                    fires: Fires::Each,
                    on: None,
                });
            }
        }
    }
    p.t
}

/// `workload.kind` a collective (`ring_allreduce`, `butterfly_allreduce`,
/// `alltoall`): its `ranks` (default all hosts) the first hosts of `layout`,
/// run `iterations` times from `start`.
pub(super) fn traffic(
    w: &Workload,
    net: NetInfo,
    size: Option<u64>,
    start: SimTime,
    rng: &mut Rng,
) -> Result<Traffic, ScenarioError> {
    let hosts = net.hosts;
    let size = size.expect("required by workload::message_size");
    let layout = w.layout.unwrap_or(Layout::HostOrder);
    let count = w.ranks.unwrap_or(hosts);
    let count_key = if w.ranks.is_some() {
        "workload.ranks"
    } else {
        "topology.hosts"
    };
    if count < 2 {
        return Err(ScenarioError::new(count_key, "a collective needs at least 2 hosts"));
    }
    if count > hosts {
        return Err(ScenarioError::new(
            "workload.ranks",
            format!("{count} ranks, but the topology has {hosts} hosts"),
        ));
    }
    let mut ranks = ranks(hosts, net.hosts_per_tor, layout, rng);
    ranks.truncate(count as usize);
    let iterations = w.iterations.unwrap_or(1);
    if iterations == 0 {
        return Err(ScenarioError::new("workload.iterations", "must be at least 1"));
    }
    let mut t = match w.kind {
        WorkloadKind::RingAllreduce => ring_allreduce(&ranks, size, iterations, start),
        WorkloadKind::ButterflyAllreduce => {
            let schedule = w.schedule.unwrap_or_default();
            butterfly_allreduce(&ranks, size, schedule, iterations, start)
                .map_err(|m| ScenarioError::new(count_key, format!("butterfly AllReduce {m}")))?
        }
        _ => {
            let parallel = w.parallel.expect("checked by the scenario");
            if parallel == 0 {
                return Err(ScenarioError::new("workload.parallel", "must be at least 1"));
            }
            alltoall(&ranks, size, parallel, w.refill.unwrap_or_default(), iterations, start)
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

    fn rng() -> Rng {
        Rng::new(7, crate::rng::StreamTag::Workload, 0)
    }

    fn assert_permutation_of_hosts(r: &[u32], hosts: u32) {
        let mut sorted = r.to_vec();
        sorted.sort();
        assert_eq!(sorted, (0..hosts).collect::<Vec<_>>(), "a permutation of the hosts");
    }

    #[test]
    fn random_layout_is_a_seeded_shuffle() {
        let r = ranks(64, 8, Layout::Random, &mut rng());
        assert_permutation_of_hosts(&r, 64);
        assert_ne!(r, (0..64).collect::<Vec<_>>(), "not the host order");
        assert_eq!(
            r,
            ranks(64, 8, Layout::Random, &mut rng()),
            "the same seed, the same order"
        );
        let other = ranks(
            64,
            8,
            Layout::Random,
            &mut Rng::new(8, crate::rng::StreamTag::Workload, 0),
        );
        assert_ne!(r, other, "another seed, another order");
    }

    #[test]
    fn cross_spine_layout_puts_neighbours_on_other_tors() {
        let r = ranks(32, 8, Layout::CrossSpine, &mut rng());
        assert_permutation_of_hosts(&r, 32);
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
        let halving = ButterflySchedule::HalvingDoubling;
        let t = butterfly_allreduce(&[0, 1, 2, 3, 4, 5, 6, 7], 8000, halving, 1, SimTime::ZERO).unwrap();
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
        assert!(butterfly_allreduce(&[0, 1, 2], 10, halving, 1, SimTime::ZERO).is_err());
    }

    #[test]
    fn doubling_butterfly_sends_the_whole_buffer_ever_farther() {
        let ranks = [3, 1, 4, 0, 5, 2, 7, 6];
        let t = butterfly_allreduce(&ranks, 8000, ButterflySchedule::Doubling, 1, SimTime::ZERO).unwrap();
        assert_eq!(t.flows.len(), 3 * 8);
        for (s, dist) in [1usize, 2, 4].into_iter().enumerate() {
            for r in 0..8 {
                let (i, f) = (s * 8 + r, t.flows[s * 8 + r]);
                assert_eq!((f.src, f.dst, f.size), (ranks[r], ranks[r ^ dist], 8000));
                let waits: Vec<u32> = if s == 0 {
                    vec![]
                } else {
                    vec![((s - 1) * 8 + (r ^ (dist / 2))) as u32]
                };
                assert_eq!(
                    t.after[i], waits,
                    "step {s} rank {r} waits for what its last partner sent"
                );
            }
        }
    }

    #[test]
    fn alltoall_lanes_and_rounds() {
        for refill in [Refill::Lane, Refill::Any] {
            let t = alltoall(&[0, 1, 2, 3, 4], 5000, 2, refill, 1, SimTime::ZERO);
            assert_eq!(t.flows.len(), 20);
            for src in 0..5u32 {
                let mine: Vec<u32> = (0..20).filter(|&i| t.flows[i as usize].src == src).collect();
                let dsts: Vec<u32> = mine.iter().map(|&i| t.flows[i as usize].dst).collect();
                assert_eq!(dsts, (1..5).map(|k| (src + k) % 5).collect::<Vec<_>>());
                let after: Vec<&[u32]> = mine.iter().map(|&i| t.after[i as usize].as_slice()).collect();
                match refill {
                    Refill::Lane => assert_eq!(after, [&[][..], &[], &[mine[0]], &[mine[1]]]),
                    Refill::Any => {
                        assert!(after.iter().all(|a| a.is_empty()));
                        let round = Trigger {
                            activators: mine[..2].to_vec(),
                            targets: mine[2..].to_vec(),
                            fires: Fires::Each,
                            on: None,
                        };
                        assert!(t.triggers.contains(&round), "host {src}: {:?}", t.triggers);
                    }
                }
            }
            assert_eq!(t.triggers.len(), if refill == Refill::Any { 5 } else { 0 });
        }
    }
}
