//! Messages and the transport flows that carry them. A workload generates
//! messages; the engine runs transport flows. Most load balancers carry a
//! message on one flow; MPTCP-like subflows (REPS §4.1) carry it on several,
//! which start together and share its bytes. A message's flows get
//! consecutive ids, and dependencies between messages become dependencies
//! between all their flows.

use crate::transport::FlowSpec;
use std::ops::Range;

/// A message cut into at most `count` subflows between the same hosts,
/// starting at the same time: equal shares, the remainder one byte at a
/// time to the first ones. A message smaller than `count` bytes gets one
/// subflow per byte, never an empty one.
pub fn split(spec: FlowSpec, count: u32) -> Vec<FlowSpec> {
    let parts = (count as u64).min(spec.size).max(1);
    let (share, extra) = (spec.size / parts, spec.size % parts);
    (0..parts)
        .map(|j| FlowSpec {
            size: share + u64::from(j < extra),
            ..spec
        })
        .collect()
}

/// Which transport flows carry each message: message m owns the ids
/// `first[m]..first[m + 1]`.
#[derive(Clone, Debug, Default)]
pub struct Carriers {
    first: Vec<u32>,
}

impl Carriers {
    /// Record the next message: it owns the flows from `first_flow` up to the next one's.
    pub fn push(&mut self, first_flow: u32) {
        self.first.push(first_flow);
    }

    /// Close the last message at `flows` flows in all.
    pub fn finish(&mut self, flows: u32) {
        self.first.push(flows);
    }

    pub fn of(&self, message: u32) -> Range<u32> {
        self.first[message as usize]..self.first[message as usize + 1]
    }

    /// Dependencies between messages (`after[m]`: the messages m waits for)
    /// as dependencies between flows: every flow of m waits for every flow
    /// of each message in `after[m]`, so it starts only once all their data
    /// has arrived. Returns, per flow, how many flows it waits for and which
    /// flows wait for it. With one flow per message this is `after` itself.
    pub fn flow_dependencies(&self, after: &[Vec<u32>]) -> (Vec<u32>, Vec<Vec<u32>>) {
        let flows = *self.first.last().unwrap_or(&0) as usize;
        let mut waiting_on = vec![0u32; flows];
        let mut dependents = vec![Vec::new(); flows];
        for (m, deps) in after.iter().enumerate() {
            for &d in deps {
                for t in self.of(d) {
                    for s in self.of(m as u32) {
                        dependents[t as usize].push(s);
                        waiting_on[s as usize] += 1;
                    }
                }
            }
        }
        (waiting_on, dependents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn spec(size: u64) -> FlowSpec {
        FlowSpec {
            src: 3,
            dst: 7,
            size,
            start: SimTime::from_us(2),
        }
    }

    #[test]
    fn split_shares_bytes_remainder_first_never_empty() {
        let sizes = |size, count| split(spec(size), count).iter().map(|f| f.size).collect::<Vec<_>>();
        assert_eq!(sizes(8 << 20, 8), vec![1 << 20; 8]);
        assert_eq!(sizes(19, 8), vec![3, 3, 3, 2, 2, 2, 2, 2]);
        assert_eq!(sizes(5, 8), vec![1; 5], "fewer subflows than bytes asked");
        assert_eq!(sizes(1, 8), vec![1]);
        assert_eq!(sizes(1000, 1), vec![1000]);
        for (size, count) in [(1u64, 3u32), (17, 4), (4097, 8), (123_456_789, 7)] {
            let parts = split(spec(size), count);
            assert_eq!(parts.iter().map(|f| f.size).sum::<u64>(), size);
            assert!(parts.iter().all(|f| f.size > 0 && f.src == 3 && f.dst == 7));
            assert!(parts.iter().all(|f| f.start == SimTime::from_us(2)));
            let (max, min) = (parts[0].size, parts.last().unwrap().size);
            assert!(max - min <= 1, "{size} over {count}: {max} vs {min}");
        }
    }

    #[test]
    fn every_flow_of_a_message_waits_for_every_flow_before_it() {
        // Message 0 on flows 0..2, message 1 on flow 2, message 2 on 3..6;
        // message 2 waits for 0 and 1.
        let mut c = Carriers::default();
        for first in [0, 2, 3] {
            c.push(first);
        }
        c.finish(6);
        let (waiting, deps) = c.flow_dependencies(&[vec![], vec![], vec![0, 1]]);
        assert_eq!(waiting, vec![0, 0, 0, 3, 3, 3]);
        assert_eq!(deps[0], vec![3, 4, 5]);
        assert_eq!(deps[1], vec![3, 4, 5]);
        assert_eq!(deps[2], vec![3, 4, 5]);
        assert!(deps[3..].iter().all(Vec::is_empty));
        // One flow per message: the message dependencies themselves.
        let mut one = Carriers::default();
        (0..3).for_each(|m| one.push(m));
        one.finish(3);
        let (waiting, deps) = one.flow_dependencies(&[vec![], vec![0], vec![0, 1]]);
        assert_eq!(waiting, vec![0, 1, 2]);
        assert_eq!(deps, vec![vec![1, 2], vec![2], vec![]]);
    }
}
