//! EQDS, the receiver's side: one credit pacer per receiving host
//! (Olteanu et al., NSDI '22; htsim's `EqdsPullPacer`). The pacer issues one
//! credit per MTU time at the host's link rate (times `cc.eqds.pull_rate`),
//! round-robin over the flows that still want credit, so the data it pulls
//! arrives at exactly what the last hop can carry, shared evenly.
//!
//! What a flow wants: its packets beyond the unsolicited first BDP (every
//! data packet's header carries this pull target, as EQDS's do), plus one
//! per trimmed header, for its retransmission (NACK plus credit), and, when
//! an RTS says the sender needs more (retransmissions after timeouts), up to
//! that. A flow whose message is complete wants nothing more.
//!
//! Retransmissions first (`cc.eqds.retransmit_priority`): credits owed for
//! trimmed headers and RTS backlogs are served, round-robin among such
//! flows, before any credit for new data, as htsim's pacer serves its
//! `_rtx_senders` before its `_active_senders` (`EqdsPullPacer::doNextEvent`;
//! `EqdsSink::processTrimmed`: "prioritize credits to this sender!").

use super::{Grant, ReceiverCc};
use crate::net::{Port, PortId};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Default)]
struct PullState {
    /// Credits the receiver knows the flow needs; 0 until its first packet arrives.
    wanted: u32,
    granted: u32,
    heard: bool,
    queued: bool,
    /// Credits owed for retransmissions (trims, RTS): served first, and even once the message is whole.
    rtx_owed: u32,
    in_rtx_queue: bool,
    /// The EV of its latest data packet, echoed by credits as ACKs do (REPS §3.1).
    ev: u16,
}

struct HostPacer {
    /// Flows owed retransmission credit (served first).
    retransmit: VecDeque<u32>,
    waiting: VecDeque<u32>,
    /// Earliest time of the next credit.
    next_at: SimTime,
    /// A `CreditPace` event is pending.
    armed: bool,
    /// The link into the host, whose rate sets the pace.
    link: PortId,
}

impl HostPacer {
    /// The next credit owed for a retransmission (trim or RTS), round-robin
    /// among the flows owed one; flows owed nothing more leave the queue.
    fn retransmit_credit(&mut self, flows: &mut [PullState]) -> Option<Credit> {
        while let Some(flow) = self.retransmit.pop_front() {
            let f = &mut flows[flow as usize];
            if f.rtx_owed == 0 || f.granted >= f.wanted {
                f.in_rtx_queue = false;
                f.rtx_owed = 0;
                continue;
            }
            f.granted += 1;
            f.rtx_owed -= 1;
            if f.rtx_owed > 0 {
                self.retransmit.push_back(flow);
            } else {
                f.in_rtx_queue = false;
            }
            return Some(Credit {
                flow,
                count: f.granted,
                ev: f.ev,
            });
        }
        None
    }

    /// The next credit for new data, round-robin among the waiting flows;
    /// a flow whose message is whole (`complete`) takes one only for a
    /// retransmission it is still owed.
    fn data_credit(&mut self, flows: &mut [PullState], complete: &dyn Fn(u32) -> bool) -> Option<Credit> {
        while let Some(flow) = self.waiting.pop_front() {
            let f = &mut flows[flow as usize];
            let whole = complete(flow);
            if (whole && f.rtx_owed == 0) || f.granted >= f.wanted {
                f.queued = false;
                continue;
            }
            if whole {
                f.rtx_owed -= 1;
            }
            f.granted += 1;
            if f.granted < f.wanted {
                self.waiting.push_back(flow);
            } else {
                f.queued = false;
            }
            return Some(Credit {
                flow,
                count: f.granted,
                ev: f.ev,
            });
        }
        None
    }
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
    retransmit_priority: bool,
}

impl CreditPacers {
    /// `links[h]`: the link into host h.
    pub fn new(
        links: Vec<PortId>,
        flows: usize,
        unsolicited: u32,
        mtu: u64,
        pull_rate: f64,
        retransmit_priority: bool,
    ) -> Self {
        CreditPacers {
            hosts: links
                .into_iter()
                .map(|link| HostPacer {
                    retransmit: VecDeque::new(),
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
            retransmit_priority,
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
        self.hear(flow, npkts, ev);
        if trimmed {
            self.owe_retransmissions(host, flow, 1);
        }
        self.wake(host, flow, now)
    }

    /// An RTS of `flow`: it heard credits up to `heard` and needs `need`
    /// more. Credits it never heard are issued again (cumulative counts make
    /// repeats harmless); what its need adds to the flow's count is
    /// retransmissions, owed first (htsim `EqdsSink::processRts`).
    #[allow(clippy::too_many_arguments)]
    pub fn on_rts(
        &mut self,
        host: u32,
        flow: u32,
        npkts: u32,
        heard: u32,
        need: u32,
        ev: u16,
        now: SimTime,
    ) -> Option<SimTime> {
        self.hear(flow, npkts, ev);
        let f = &mut self.flows[flow as usize];
        f.granted = f.granted.min(heard);
        let extra = (heard + need).saturating_sub(f.wanted);
        self.owe_retransmissions(host, flow, extra);
        self.wake(host, flow, now)
    }

    fn hear(&mut self, flow: u32, npkts: u32, ev: u16) {
        let f = &mut self.flows[flow as usize];
        if !f.heard {
            f.heard = true;
            f.wanted = npkts.saturating_sub(self.unsolicited);
        }
        f.ev = ev;
    }

    fn owe_retransmissions(&mut self, host: u32, flow: u32, n: u32) {
        let f = &mut self.flows[flow as usize];
        f.wanted += n;
        f.rtx_owed += n;
        if !self.retransmit_priority || n == 0 {
            return;
        }
        if !f.in_rtx_queue {
            f.in_rtx_queue = true;
            self.hosts[host as usize].retransmit.push_back(flow);
        }
    }

    /// Queue `flow` for credit if it wants more; wake the pacer if idle.
    fn wake(&mut self, host: u32, flow: u32, now: SimTime) -> Option<SimTime> {
        let f = &mut self.flows[flow as usize];
        let h = &mut self.hosts[host as usize];
        if !f.queued && f.granted < f.wanted {
            f.queued = true;
            h.waiting.push_back(flow);
        }
        if h.armed || (h.waiting.is_empty() && h.retransmit.is_empty()) {
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
        complete: &dyn Fn(u32) -> bool,
    ) -> (Option<Credit>, Option<SimTime>) {
        let h = &mut self.hosts[host as usize];
        // Retransmissions first, even for a complete message: its sender
        // retransmits only what it has no ACK for.
        let mut credit = h.retransmit_credit(&mut self.flows);
        if credit.is_none() {
            credit = h.data_credit(&mut self.flows, complete);
        }
        if credit.is_some() {
            let mtu_time = ports[h.link as usize].serialization(self.mtu);
            h.next_at = now + SimTime(mtu_time.ps() * 1_000_000 / self.rate_ppm);
        }
        h.armed = credit.is_some() && !(h.waiting.is_empty() && h.retransmit.is_empty());
        (credit, h.armed.then_some(h.next_at))
    }
}

impl ReceiverCc for CreditPacers {
    #[inline]
    fn on_data(&mut self, host: u32, pkt: &Packet, npkts: u32, now: SimTime) -> Option<SimTime> {
        self.on_arrival(host, pkt.flow, npkts, pkt.trimmed, pkt.ev, now)
    }

    fn on_control(&mut self, host: u32, pkt: &Packet, npkts: u32, now: SimTime) -> Option<SimTime> {
        if pkt.kind != PacketKind::Rts {
            return None;
        }
        self.on_rts(host, pkt.flow, npkts, pkt.seq, pkt.span as u32, pkt.ev, now)
    }

    fn on_wake(
        &mut self,
        host: u32,
        now: SimTime,
        ports: &[Port],
        complete: &dyn Fn(u32) -> bool,
    ) -> (Option<Grant>, Option<SimTime>) {
        let (credit, next) = self.issue(host, now, ports, complete);
        let grant = credit.map(|c| Grant {
            flow: c.flow,
            kind: PacketKind::Credit,
            seq: c.count,
            ev: c.ev,
        });
        (grant, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::{Queue, QueueParams, TwoClassQueue};
    use crate::net::Node;
    use crate::rng::{Rng, StreamTag};
    use crate::time::Rate;

    fn link() -> Port {
        let rng = || Rng::new(1, StreamTag::Port, 0);
        let q = Queue::TwoClass(TwoClassQueue::new(QueueParams::UNLIMITED, rng()));
        Port::new(
            "t0_0->h0".into(),
            Node::Switch(0),
            Node::Host(0),
            Rate::gbps(400),
            SimTime::ZERO,
            q,
            rng(),
        )
    }

    /// Run the pacer of host 0 until it idles; the credits with their times.
    fn drain(p: &mut CreditPacers, mut at: Option<SimTime>, ports: &[Port]) -> Vec<(SimTime, Credit)> {
        let mut out = Vec::new();
        while let Some(t) = at {
            let (c, next) = p.issue(0, t, ports, &|_| false);
            out.extend(c.map(|c| (t, c)));
            at = next;
        }
        out
    }

    #[test]
    fn without_priority_credits_go_round_robin_one_mtu_time_apart() {
        let ports = vec![link()];
        // 4096 B at 400 Gb/s: 81.92 ns per credit.
        let mut p = CreditPacers::new(vec![0], 3, 2, 4096, 1.0, false);
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
        let mut p = CreditPacers::new(vec![0], 2, 0, 4096, 0.5, true);
        let wake = p.on_arrival(0, 0, 3, false, 0, SimTime::ZERO);
        p.on_arrival(0, 1, 3, false, 0, SimTime::ZERO);
        let (c, next) = p.issue(0, SimTime::ZERO, &ports, &|f| f == 1);
        assert_eq!(c.map(|c| c.flow), Some(0));
        assert_eq!(next, Some(SimTime(163_840)), "half the link rate: two MTU times");
        let (c, _) = p.issue(0, next.unwrap(), &ports, &|f| f == 1);
        assert_eq!(c.map(|c| (c.flow, c.count)), Some((0, 2)), "flow 1 is whole: skipped");
        assert!(wake.is_some());
    }

    /// htsim `EqdsPullPacer`: credits owed for trimmed headers go before any
    /// credit for new data; the flows owed them take turns among themselves.
    #[test]
    fn retransmission_credits_go_first() {
        let ports = vec![link()];
        let mut p = CreditPacers::new(vec![0], 3, 2, 4096, 1.0, true);
        let t0 = SimTime::from_us(1);
        let wake = p.on_arrival(0, 0, 5, false, 7, t0);
        p.on_arrival(0, 1, 4, true, 8, t0);
        p.on_arrival(0, 1, 4, true, 8, t0);
        p.on_arrival(0, 2, 3, true, 9, t0);
        let order: Vec<(u32, u32)> = drain(&mut p, wake, &ports)
            .iter()
            .map(|(_, c)| (c.flow, c.count))
            .collect();
        // Owed first: flow 1 two, flow 2 one, alternating; then new data
        // round-robin: flow 0 wants 3, flow 1 has 2 more, flow 2 has 1 more.
        assert_eq!(
            order,
            [(1, 1), (2, 1), (1, 2), (0, 1), (1, 3), (2, 2), (0, 2), (1, 4), (0, 3)]
        );
    }

    /// An RTS re-issues credits its sender never heard (cumulative counts,
    /// so repeats cost nothing) and owes, first, what it needs beyond them.
    #[test]
    fn an_rts_reissues_unheard_credits_and_owes_its_backlog() {
        let ports = vec![link()];
        let mut p = CreditPacers::new(vec![0], 2, 0, 4096, 1.0, true);
        let t0 = SimTime::from_us(1);
        let wake = p.on_arrival(0, 0, 3, false, 7, t0);
        let first: Vec<u32> = drain(&mut p, wake, &ports).iter().map(|(_, c)| c.count).collect();
        assert_eq!(first, [1, 2, 3], "all three pulled");
        // The sender heard only count 1, and lost two packets outright: it
        // needs 2 (unheard) + 2 (retransmissions) beyond count 1.
        let t1 = SimTime::from_us(50);
        let wake = p.on_rts(0, 0, 3, 1, 4, 5, t1);
        assert_eq!(wake, Some(t1));
        let again: Vec<(u32, u16)> = drain(&mut p, wake, &ports)
            .iter()
            .map(|(_, c)| (c.count, c.ev))
            .collect();
        assert_eq!(
            again,
            [(2, 5), (3, 5), (4, 5), (5, 5)],
            "counts 2, 3 again, then 2 for the backlog"
        );
    }
}
