//! MPRDMA: the multi-path ACK clocking of MP-RDMA (Lu et al., "Multi-Path
//! Transport for RDMA in Datacenters", NSDI '18). With per-packet ACKs, each
//! ACK clocks out the next packet: an unmarked ACK lets that packet go on
//! the ACK's own path (its EV); a marked ACK (or a NACK) sends it on a new
//! random path; a send with no ACK-granted EV pending (the first window,
//! extra packets the window's growth allows) probes a new random path.
//!
//! Only the latest ACK's verdict is pending: MP-RDMA keeps no per-path
//! state and, unlike REPS, caches no entropies (REPS §6). The REPS artifact
//! does the same (`uec.cpp` `processEv_mprdma`: the last ACK's EV). MP-RDMA
//! flows run MP-RDMA's own window rule by default (`cc/mprdma.rs`,
//! `lb.mprdma.cc`).
//!
//! Out-of-order aware path selection (MP-RDMA's second technique, with Δ =
//! `lb.mprdma.ooo_limit` packets): the sender remembers the highest
//! sequence number acknowledged, snd_ooh; an ACK for a packet more than Δ
//! below it came back over a slow path, so it clocks out nothing on that
//! path (`ack_is_late`; the caller also takes one packet off the window, as
//! MP-RDMA does so the ACK frees no send), and the transport sends no new
//! packet at or beyond snd_una + Δ (`Flow::ooo_limit`). The REPS artifact
//! has neither (`processEv_mprdma` has no snd_ooh): Δ = 0 turns both off.
//!
//! Which EV a send takes is `lb.mprdma.ev_rule`. `"mp_rdma"` (preset
//! `reps_paper`) is the clocking above. `"artifact"` (preset
//! `reps_artifact`) is what the REPS artifact's MPRDMA does (uec.cpp
//! `processAck`, `processEv_mprdma`, `nextEntropy_mprdma`): after each ACK
//! (or NACK) has updated the window, the flow "can send" if the window grew
//! by more than a packet less 66 bytes or exceeds what is in flight by that
//! much; if it can, the ACK's EV, marked or not, becomes the flow's EV. Every
//! send then takes that EV while the flow can send, and a random one when it
//! cannot or before any ACK; timeouts change nothing.

use super::{AckEcho, AckPath, FlowPlan, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer, TimeoutInfo};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{CcKind, ScenarioError};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.mprdma`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MprdmaParams {
    /// The window rule MPRDMA flows run (other flows run `cc.kind`).
    pub cc: CcKind,
    /// Δ: the out-of-order degree MP-RDMA allows, in packets (slow-path ACKs
    /// and the send bound snd_una + Δ); 0 = no limit, as in the REPS artifact.
    pub ooo_limit: u32,
    /// Which EV a send takes: "mp_rdma" (ACK clocking) or "artifact" (module docs).
    pub ev_rule: EvRule,
}

/// `lb.mprdma.ev_rule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvRule {
    /// MP-RDMA's ACK clocking: an unmarked ACK's EV for one packet, else random.
    MpRdma,
    /// The REPS artifact's: the latest ACK's EV while the window has room (module docs).
    Artifact,
}

impl Params for MprdmaParams {}

#[derive(Clone, Debug)]
pub struct Mprdma {
    entropy_space: u32,
    /// The EV the latest feedback granted to the next packet.
    granted: Option<u16>,
    /// Δ in packets; 0: no out-of-order limit.
    ooo_limit: u32,
    /// snd_ooh: the highest sequence number acknowledged so far.
    highest_acked: u32,
    rule: EvRule,
    /// "artifact": the EV of the latest feedback, until the window says whether to keep it.
    heard: u16,
    /// "artifact": the flow's EV (htsim `mprdma_entropy`; None before any is kept).
    kept: Option<u16>,
    /// "artifact": the window had room after the latest ACK (htsim `mprdma_can_send`).
    can_send: bool,
}

impl Mprdma {
    pub fn new(entropy_space: u32, ooo_limit: u32) -> Self {
        Mprdma::with_rule(entropy_space, ooo_limit, EvRule::MpRdma)
    }

    pub fn with_rule(entropy_space: u32, ooo_limit: u32, rule: EvRule) -> Self {
        Mprdma {
            entropy_space,
            granted: None,
            ooo_limit,
            highest_acked: 0,
            rule,
            heard: 0,
            kept: None,
            can_send: false,
        }
    }

    /// "artifact": the window after an ACK updated it (`grew`: by how much;
    /// `room`: cwnd minus in flight; `mtu`: a full packet's wire size), as
    /// htsim's `processAck` tests it before `processEv_mprdma`.
    #[inline]
    pub fn after_window(&mut self, grew: i64, room: i64, mtu: i64) {
        if self.rule != EvRule::Artifact {
            return;
        }
        // uec.cpp processAck: `_cwnd - previous > _mtu - 66 || _cwnd > _in_flight + (_mtu - 66)`.
        self.can_send = grew > mtu - 66 || room > mtu - 66;
        if self.can_send {
            self.kept = Some(self.heard);
        }
    }

    /// An ACK for packet `seq` arrived (after `on_ack`). True when it lags
    /// snd_ooh by more than Δ: its path is slow, and the ACK grants nothing.
    #[inline]
    pub fn ack_is_late(&mut self, seq: u32) -> bool {
        if self.ooo_limit == 0 {
            return false;
        }
        self.highest_acked = self.highest_acked.max(seq);
        let late = seq + self.ooo_limit < self.highest_acked;
        if late {
            self.granted = None;
        }
        late
    }
}

impl LoadBalancer for Mprdma {
    fn next_ev(&mut self, _now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        if self.rule == EvRule::Artifact {
            return match self.kept.filter(|_| self.can_send) {
                Some(ev) => {
                    stats.recycled += 1;
                    ev
                }
                None => {
                    stats.explored += 1;
                    rng.below(self.entropy_space as u64) as u16
                }
            };
        }
        match self.granted.take() {
            Some(ev) => {
                stats.recycled += 1;
                ev
            }
            None => {
                stats.explored += 1;
                rng.below(self.entropy_space as u64) as u16
            }
        }
    }

    /// MP-RDMA's rule: a header-only packet (the artifact's timeout RTS,
    /// which MP-RDMA does not have) goes on the pending grant's path without
    /// spending it, or on a random one when nothing is granted. Spent on a
    /// header, the grant would be lost: that header's ACK frees no packet's
    /// worth of window, so it clocks nothing out, and a flow with few live
    /// paths loses its ACK clock one RTS at a time. The artifact's rule
    /// sends an RTS like data (uec.cpp `sendRTS` calls `nextEntropy`, which
    /// reads the kept EV without using it up).
    fn header_only_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        match (self.rule, self.granted) {
            (EvRule::Artifact, _) | (EvRule::MpRdma, None) => self.next_ev(now, rng, stats),
            (EvRule::MpRdma, Some(ev)) => {
                stats.recycled += 1;
                ev
            }
        }
    }

    /// An unmarked ACK grants its path to the next packet; a per-packet ACK
    /// more than Δ behind snd_ooh came over a slow path and grants nothing.
    fn on_ack(&mut self, _now: SimTime, ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        self.heard = ack.ev;
        self.granted = (!ack.ecn).then_some(ack.ev);
        match ack.seq {
            Some(seq) if self.ack_is_late(seq) => AckPath::Slow,
            _ => AckPath::Normal,
        }
    }

    fn on_nack(&mut self, _now: SimTime, ev: u16, _stats: &mut LbStats) {
        self.heard = ev;
        self.granted = None;
    }

    /// A lost data packet withdraws the pending grant. A lost timeout RTS
    /// does not: the grant belongs to the data packet its ACK freed room
    /// for, whose own fate decides (else a run of lost RTSs keeps taking
    /// grants from a flow with few live paths).
    fn on_timeout(&mut self, _now: SimTime, info: TimeoutInfo, _stats: &mut LbStats) {
        if !info.header_only {
            self.granted = None;
        }
    }
}

struct Builder {
    p: MprdmaParams,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    /// MP-RDMA flows run MP-RDMA's own window rule (`lb.mprdma.cc`) and, with Δ > 0, its send bound.
    fn plan(&self) -> FlowPlan {
        FlowPlan {
            cc: Some(self.p.cc),
            ooo_limit: (self.p.ooo_limit > 0).then_some(self.p.ooo_limit),
            ..FlowPlan::default()
        }
    }
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Mprdma(Mprdma::with_rule(self.entropy_space, self.p.ooo_limit, self.p.ev_rule))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: MprdmaParams = parse_params(params, "lb.mprdma")?;
    Ok(Box::new(Builder {
        p,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "mprdma",
    label: "MPRDMA",
    color: "#9467bd", // purple
    switch_side: false,
    int_probes: false,
    reorders: true,
    presets: &[
        (
            "reps_paper",
            r#"
cc = "mprdma"                # MP-RDMA (NSDI '18): -1/2 packet per marked ACK
ooo_limit = 0                # REPS §4.1's MPRDMA (the artifact's) has no OOO limit; MP-RDMA's Δ: 32 (docs/model-choices.md)
ev_rule = "mp_rdma"          # MP-RDMA (NSDI '18) §3.2: each unmarked ACK clocks one packet onto its path
"#,
        ),
        (
            "reps_artifact",
            r#"
cc = "dctcp"                 # artifact: every flow runs the run's sender CC, MPRDMA_CC (lbsim's dctcp)
ooo_limit = 0                # artifact processEv_mprdma: no snd_ooh, no out-of-order limit
ev_rule = "artifact"         # artifact uec.cpp processAck / processEv_mprdma / nextEntropy_mprdma
"#,
        ),
    ],
    check: check_params::<MprdmaParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::tests::echo;
    use crate::rng::StreamTag;

    /// The REPS artifact's rule: random until an ACK finds room in the
    /// window; then that ACK's EV, marked or not, for every send while the
    /// window has room; random while it has none; a timeout changes nothing.
    #[test]
    fn artifact_rule_keeps_the_latest_ev_while_the_window_has_room() {
        let mut rng = Rng::new(2, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let mut m = Mprdma::with_rule(65536, 0, EvRule::Artifact);
        let t = SimTime::ZERO;
        let mtu = 4150;
        m.next_ev(t, &mut rng, &mut st);
        assert_eq!((st.explored, st.recycled), (1, 0), "before any ACK: random");
        m.on_ack(t, &echo(77, true), &mut st);
        m.after_window(0, mtu, mtu); // a packet's room
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 77, "a marked ACK's EV is kept too");
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 77, "and reused");
        m.on_ack(t, &echo(5, false), &mut st);
        m.after_window(10, mtu - 66, mtu); // no room: 66 bytes short of a packet
        let away = m.next_ev(t, &mut rng, &mut st);
        assert!(away != 77 && away != 5, "no room: random, and 5 was not kept");
        m.on_timeout(t, TimeoutInfo::assumed(false), &mut st);
        m.on_ack(t, &echo(6, false), &mut st);
        m.after_window(mtu - 65, 0, mtu); // grew by more than a packet less 66 B
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 6);
        assert_eq!((st.explored, st.recycled), (2, 3));
    }

    #[test]
    fn unmarked_ack_path_is_reused_marked_ack_path_is_left() {
        let mut rng = Rng::new(2, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let mut m = Mprdma::new(65536, 0);
        let t = SimTime::ZERO;
        m.next_ev(t, &mut rng, &mut st); // first window: probe
        assert_eq!((st.explored, st.recycled), (1, 0));

        m.on_ack(t, &echo(77, false), &mut st);
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 77, "unmarked: the ACK's own path");
        let probe = m.next_ev(t, &mut rng, &mut st);
        assert_ne!(probe, 77, "the grant is used once; the next send probes");
        assert_eq!((st.explored, st.recycled), (2, 1));

        m.on_ack(t, &echo(77, true), &mut st);
        let away = m.next_ev(t, &mut rng, &mut st);
        assert_ne!(away, 77, "marked: a new random path");
        assert_eq!((st.explored, st.recycled), (3, 1));

        // Only the latest feedback counts: a mark cancels an earlier grant.
        m.on_ack(t, &echo(5, false), &mut st);
        m.on_ack(t, &echo(6, true), &mut st);
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 5);
        m.on_ack(t, &echo(5, false), &mut st);
        m.on_nack(t, 5, &mut st);
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 5, "a NACK also moves off");
        assert_eq!((st.explored, st.recycled), (5, 1));
    }

    /// MP-RDMA's rule with the artifact's timeout RTS: a header-only packet
    /// rides the pending grant without spending it (the data packet the
    /// ACK freed room for still gets it), or probes when nothing is
    /// granted; a timeout that lost only headers keeps the grant, one that
    /// lost data withdraws it.
    #[test]
    fn headers_ride_the_grant_without_spending_it() {
        let mut rng = Rng::new(2, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let mut m = Mprdma::new(65536, 0);
        m.on_ack(t, &echo(77, false), &mut st);
        assert_eq!(m.header_only_ev(t, &mut rng, &mut st), 77);
        assert_eq!(m.header_only_ev(t, &mut rng, &mut st), 77, "not spent");
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 77, "the data packet still has it");
        assert_ne!(m.header_only_ev(t, &mut rng, &mut st), 77, "spent by data: a probe");
        assert_eq!((st.explored, st.recycled), (1, 3));

        let lost_headers = TimeoutInfo {
            header_only: true,
            ..TimeoutInfo::assumed(false)
        };
        m.on_ack(t, &echo(9, false), &mut st);
        m.on_timeout(t, lost_headers, &mut st);
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 9, "a lost RTS keeps the grant");
        m.on_ack(t, &echo(9, false), &mut st);
        m.on_timeout(t, TimeoutInfo::assumed(false), &mut st);
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 9, "lost data withdraws it");

        // The artifact's rule sends headers like data.
        let mut a = Mprdma::with_rule(65536, 0, EvRule::Artifact);
        a.on_ack(t, &echo(5, false), &mut st);
        a.after_window(0, 4150, 4150);
        assert_eq!(a.header_only_ev(t, &mut rng, &mut st), 5);
    }

    /// MP-RDMA's OOO-aware path selection: with Δ = 4, an ACK of a packet
    /// more than 4 below the highest acknowledged one grants nothing; one
    /// exactly 4 below still grants its path. Δ = 0 never judges.
    #[test]
    fn acks_more_than_delta_behind_grant_nothing() {
        let mut rng = Rng::new(2, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let mut m = Mprdma::new(65536, 4);
        m.on_ack(t, &echo(9, false), &mut st);
        assert!(!m.ack_is_late(10), "the first ACK sets snd_ooh = 10");
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 9);
        m.on_ack(t, &echo(6, false), &mut st);
        assert!(!m.ack_is_late(6), "10 − 6 = Δ: in bounds");
        assert_eq!(m.next_ev(t, &mut rng, &mut st), 6);
        m.on_ack(t, &echo(5, false), &mut st);
        assert!(m.ack_is_late(5), "10 − 5 > Δ: a slow path");
        assert_ne!(m.next_ev(t, &mut rng, &mut st), 5, "the slow path is not reused");
        m.on_ack(t, &echo(3, false), &mut st);
        assert!(!m.ack_is_late(30), "a new highest is never late");
        assert!(m.ack_is_late(25));

        let mut off = Mprdma::new(65536, 0);
        off.ack_is_late(1000);
        off.on_ack(t, &echo(7, false), &mut st);
        assert!(!off.ack_is_late(0), "Δ = 0: no limit");
        assert_eq!(off.next_ev(t, &mut rng, &mut st), 7);
    }
}
