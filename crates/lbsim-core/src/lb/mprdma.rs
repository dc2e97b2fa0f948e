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
}

impl Mprdma {
    pub fn new(entropy_space: u32, ooo_limit: u32) -> Self {
        Mprdma {
            entropy_space,
            granted: None,
            ooo_limit,
            highest_acked: 0,
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

    /// An unmarked ACK grants its path to the next packet; a per-packet ACK
    /// more than Δ behind snd_ooh came over a slow path and grants nothing.
    fn on_ack(&mut self, _now: SimTime, ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        self.granted = (!ack.ecn).then_some(ack.ev);
        match ack.seq {
            Some(seq) if self.ack_is_late(seq) => AckPath::Slow,
            _ => AckPath::Normal,
        }
    }

    fn on_nack(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {
        self.granted = None;
    }

    fn on_timeout(&mut self, _now: SimTime, _info: TimeoutInfo, _stats: &mut LbStats) {
        self.granted = None;
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
        Lb::Mprdma(Mprdma::new(self.entropy_space, self.p.ooo_limit))
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
"#,
        ),
        (
            "reps_artifact",
            r#"
cc = "dctcp"                 # artifact: every flow runs the run's sender CC, MPRDMA_CC (lbsim's dctcp)
ooo_limit = 0                # artifact processEv_mprdma: no snd_ooh, no out-of-order limit
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
