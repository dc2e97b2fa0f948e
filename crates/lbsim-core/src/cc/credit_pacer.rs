//! EQDS, the receiver's side: one credit pacer per receiving host
//! (Olteanu et al., NSDI '22; htsim's `EqdsPullPacer`). The pacer issues one
//! credit per MTU time at the host's link rate (times `cc.eqds.pull_rate`),
//! round-robin over the flows that still want credit, so the data it pulls
//! arrives at exactly what the last hop can carry, shared evenly.
//!
//! What a flow wants: its packets beyond the unsolicited first BDP (every
//! data packet's header carries this pull target, as EQDS's do), plus one
//! per trimmed header, for its retransmission (NACK plus credit). A flow
//! whose message is complete wants nothing more.

use crate::net::{Port, PortId};
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default)]
struct PullState {
    /// Credits the receiver knows the flow needs; 0 until its first packet arrives.
    wanted: u32,
    granted: u32,
    heard: bool,
    queued: bool,
    /// The EV of its latest data packet, echoed by credits as ACKs do (REPS §3.1).
    ev: u16,
}

struct HostPacer {
    waiting: VecDeque<u32>,
    /// Earliest time of the next credit.
    next_at: SimTime,
    /// A `CreditPace` event is pending.
    armed: bool,
    /// The link into the host, whose rate sets the pace.
    link: PortId,
}

/// A credit to send: which flow, and its cumulative count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credit {
    pub flow: u32,
    pub count: u32,
    pub ev: u16,
}

pub struct CreditPacers {
    hosts: Vec<HostPacer>,
    flows: Vec<PullState>,
    /// Packets a message sends before any credit.
    unsolicited: u32,
    mtu: u64,
    /// `cc.eqds.pull_rate` in millionths (integer time arithmetic).
    rate_ppm: u64,
}

impl CreditPacers {
    /// `links[h]`: the link into host h.
    pub fn new(links: Vec<PortId>, flows: usize, unsolicited: u32, mtu: u64, pull_rate: f64) -> Self {
        CreditPacers {
            hosts: links
                .into_iter()
                .map(|link| HostPacer {
                    waiting: VecDeque::new(),
                    next_at: SimTime::ZERO,
                    armed: false,
                    link,
                })
                .collect(),
            flows: vec![PullState::default(); flows],
            unsolicited,
            mtu,
            rate_ppm: (pull_rate * 1e6).round() as u64,
        }
    }

    /// A data packet (or a trimmed header) of `flow`, a message of `npkts`
    /// packets, reached receiver `host`. Returns when the host's pacer must
    /// run, if it was idle.
    pub fn on_arrival(
        &mut self,
        host: u32,
        flow: u32,
        npkts: u32,
        trimmed: bool,
        ev: u16,
        now: SimTime,
    ) -> Option<SimTime> {
        let f = &mut self.flows[flow as usize];
        if !f.heard {
            f.heard = true;
            f.wanted = npkts.saturating_sub(self.unsolicited);
        }
        if trimmed {
            f.wanted += 1;
        }
        f.ev = ev;
        if f.queued || f.granted >= f.wanted {
            return None;
        }
        f.queued = true;
        let h = &mut self.hosts[host as usize];
        h.waiting.push_back(flow);
        if h.armed {
            return None;
        }
        h.armed = true;
        Some(h.next_at.max(now))
    }

    /// The pacer's turn at `host`: the credit to send, if any flow still
    /// wants one, and when to run next (None: idle until an arrival).
    /// `complete(flow)` says whether a flow's message is whole.
    pub fn issue(
        &mut self,
        host: u32,
        now: SimTime,
        ports: &[Port],
        complete: impl Fn(u32) -> bool,
    ) -> (Option<Credit>, Option<SimTime>) {
        let h = &mut self.hosts[host as usize];
        let mut credit = None;
        while let Some(flow) = h.waiting.pop_front() {
            let f = &mut self.flows[flow as usize];
            if complete(flow) || f.granted >= f.wanted {
                f.queued = false;
                continue;
            }
            f.granted += 1;
            credit = Some(Credit {
                flow,
                count: f.granted,
                ev: f.ev,
            });
            if f.granted < f.wanted {
                h.waiting.push_back(flow);
            } else {
                f.queued = false;
            }
            break;
        }
        if credit.is_some() {
            let mtu_time = ports[h.link as usize].serialization(self.mtu);
            h.next_at = now + SimTime(mtu_time.ps() * 1_000_000 / self.rate_ppm);
        }
        h.armed = credit.is_some() && !h.waiting.is_empty();
        (credit, h.armed.then_some(h.next_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Node, QueueParams};
    use crate::rng::{Rng, StreamTag};
    use crate::time::Rate;

    fn link() -> Port {
        let q = QueueParams {
            capacity: u64::MAX,
            kmin: u64::MAX,
            kmax: u64::MAX,
            ecn_at_dequeue: true,
            trimming: false,
            header_bytes: 64,
        };
        let rng = || Rng::new(1, StreamTag::Port, 0);
        Port::new(
            "t0_0->h0".into(),
            Node::Switch(0),
            Node::Host(0),
            Rate::gbps(400),
            SimTime::ZERO,
            q,
            rng(),
            rng(),
        )
    }

    /// Run the pacer of host 0 until it idles; the credits with their times.
    fn drain(p: &mut CreditPacers, mut at: Option<SimTime>, ports: &[Port]) -> Vec<(SimTime, Credit)> {
        let mut out = Vec::new();
        while let Some(t) = at {
            let (c, next) = p.issue(0, t, ports, |_| false);
            out.extend(c.map(|c| (t, c)));
            at = next;
        }
        out
    }

    #[test]
    fn credits_go_round_robin_one_mtu_time_apart() {
        let ports = vec![link()];
        // 4096 B at 400 Gb/s: 81.92 ns per credit.
        let mut p = CreditPacers::new(vec![0], 3, 2, 4096, 1.0);
        let t0 = SimTime::from_us(1);
        let wake = p.on_arrival(0, 0, 4, false, 7, t0);
        assert_eq!(wake, Some(t0));
        assert_eq!(p.on_arrival(0, 1, 4, false, 8, t0), None, "already awake");
        assert_eq!(p.on_arrival(0, 2, 3, true, 9, t0), None);
        let got = drain(&mut p, wake, &ports);
        // Flows 0 and 1 want 4 − 2 = 2 credits; flow 2 wants 3 − 2 + 1 (its trimmed header) = 2.
        let order: Vec<(u32, u32)> = got.iter().map(|(_, c)| (c.flow, c.count)).collect();
        assert_eq!(order, [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)]);
        for (i, (t, _)) in got.iter().enumerate() {
            assert_eq!(*t, t0 + SimTime(81_920 * i as u64), "credit {i}");
        }
        assert_eq!(got[2].1.ev, 9, "credits echo the flow's latest EV");
        // Idle now; a later trim wakes the pacer no earlier than one MTU time after the last credit.
        let wake = p.on_arrival(0, 1, 4, true, 8, got[5].0);
        assert_eq!(wake, Some(got[5].0 + SimTime(81_920)));
        assert_eq!(drain(&mut p, wake, &ports).len(), 1);
    }

    #[test]
    fn pull_rate_stretches_the_gap_and_complete_flows_are_skipped() {
        let ports = vec![link()];
        let mut p = CreditPacers::new(vec![0], 2, 0, 4096, 0.5);
        let wake = p.on_arrival(0, 0, 3, false, 0, SimTime::ZERO);
        p.on_arrival(0, 1, 3, false, 0, SimTime::ZERO);
        let (c, next) = p.issue(0, SimTime::ZERO, &ports, |f| f == 1);
        assert_eq!(c.map(|c| c.flow), Some(0));
        assert_eq!(next, Some(SimTime(163_840)), "half the link rate: two MTU times");
        let (c, _) = p.issue(0, next.unwrap(), &ports, |f| f == 1);
        assert_eq!(c.map(|c| (c.flow, c.count)), Some((0, 2)), "flow 1 is whole: skipped");
        assert!(wake.is_some());
    }
}
