//! EQDS, the sender's side (Olteanu et al., "An edge-queued datagram
//! service for all datacenter traffic", NSDI '22). A message sends its first
//! BDP unsolicited, at line rate; every further packet waits for a credit
//! from the receiver, which paces credits at its link rate over its active
//! senders (`credit_pacer`). One credit lets one packet (at most one MTU)
//! go. There is no window: the receiver's pacing is the congestion control,
//! and trimming (a NACK, then a fresh credit) handles the first-RTT incast.
//!
//! Credits arrive as cumulative counts (`PacketKind::Credit`), as EQDS's
//! pull numbers are, so a lost credit is made good by the next one.
//!
//! Data the network loses outright (no trim, so no NACK) is found by the
//! retransmission timer. With `cc.eqds.rts` (EQDS; htsim `eqds.cpp`
//! `EqdsSrc::rtxTimerExpired`), a sender that then cannot send asks for
//! credit with a request-to-send (`PacketKind::Rts`), at most one per RTT
//! (htsim `sendRTS`). It carries the highest credit count the sender heard,
//! so credits lost on the way are issued again, and the sends it still
//! needs credit for, its pull target as htsim's carries (`computePullTarget`):
//! what that adds to the receiver's count is retransmissions, credited first
//! (htsim `EqdsSink::processRts` adds the RTS's `retx_backlog`). A sender
//! with work, nothing in flight and no credit sends one again every RTO
//! until credit comes.
//!
//! Without RTS (the stand-in lbsim had before): a packet lost to a timeout
//! reuses the credit it spent, and a sender that waits one RTO with nothing
//! in flight and no credit gives itself one.

use super::credit_pacer::CreditPacers;
use super::{
    Cc, CcBuilder, CcCommon, CcEntry, CongestionControl, ControlRequest, ReceiverCc, TimerAction, TimerSignal,
};
use crate::packet::PacketKind;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{Amount, ScenarioError};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug)]
pub struct EqdsSender {
    /// Sends left that need no credit (the first BDP).
    unsolicited: u32,
    /// Highest cumulative credit count heard from the receiver.
    granted: u32,
    /// Credits the sender gave itself (timeouts, stalls).
    self_granted: u32,
    spent: u32,
    /// `granted` when a stall check was armed, to tell if credits arrived since.
    stall_mark: Option<u32>,
    /// Ask for credit with an RTS instead of granting it to itself.
    rts: bool,
    last_rts: Option<SimTime>,
}

impl EqdsSender {
    /// `unsolicited`: packets the message may send before any credit;
    /// `rts`: recover lost data and credit with requests-to-send.
    pub fn new(unsolicited: u32, rts: bool) -> Self {
        EqdsSender {
            unsolicited,
            granted: 0,
            self_granted: 0,
            spent: 0,
            stall_mark: None,
            rts,
            last_rts: None,
        }
    }

    /// An RTS's content with `pending` sends still to make: the highest
    /// cumulative credit count heard, and the credits needed beyond it.
    pub fn rts_request(&self, pending: u32) -> (u32, u32) {
        (self.granted, pending.saturating_sub(self.unsolicited + self.credits()))
    }

    /// Whether to send an RTS now: in RTS mode, at most one per `rtt`
    /// ("once per RTT is enough", htsim `EqdsSrc::sendRTS`).
    pub fn rts_due(&mut self, now: SimTime, rtt: SimTime) -> bool {
        if !self.rts || self.last_rts.is_some_and(|t| now < t + rtt) {
            return false;
        }
        self.last_rts = Some(now);
        true
    }

    #[inline]
    fn credits(&self) -> u32 {
        (self.granted + self.self_granted).saturating_sub(self.spent)
    }

    #[inline]
    pub fn has_credit(&self) -> bool {
        self.unsolicited > 0 || self.credits() > 0
    }

    /// The flow has work, no credit and nothing in flight. Returns true when
    /// it should check again one RTO later. With RTS it always does (and
    /// sends an RTS each time); without, on the second call, if no credit
    /// came meanwhile, it grants itself one.
    pub fn on_stall(&mut self) -> bool {
        if self.rts {
            return true;
        }
        match self.stall_mark {
            Some(mark) if mark == self.granted => {
                self.self_granted += 1;
                self.stall_mark = None;
                false
            }
            _ => {
                self.stall_mark = Some(self.granted);
                true
            }
        }
    }
}

impl CongestionControl for EqdsSender {
    /// Credit-limited: no window.
    #[inline]
    fn may_send(&self, _inflight: u64) -> bool {
        self.has_credit()
    }

    /// A packet left: spend the unsolicited allowance first, then a credit.
    #[inline]
    fn on_send(&mut self, _now: SimTime, _bytes: u32) {
        self.stall_mark = None;
        if self.unsolicited > 0 {
            self.unsolicited -= 1;
        } else {
            self.spent += 1;
        }
    }

    /// A credit packet carrying the receiver's cumulative count.
    #[inline]
    fn on_credit(&mut self, cumulative: u32) {
        self.granted = self.granted.max(cumulative);
    }

    /// A packet was declared lost by the retransmission timer. Without RTS
    /// its credit is reused; with RTS the receiver credits it again.
    fn on_timeout(&mut self, _bytes: u64) {
        if !self.rts {
            self.self_granted += 1;
        }
    }

    /// Lost data or credit and no credit to go on: ask for credit (htsim
    /// `rtxTimerExpired`); a stall checks again one RTO later.
    fn on_timer(&mut self, t: &TimerSignal) -> TimerAction {
        let request = (t.stuck && (t.stalled || t.lost) && self.rts_due(t.now, t.base_rtt)).then(|| {
            let (heard, need) = self.rts_request(t.pending);
            ControlRequest {
                kind: PacketKind::Rts,
                seq: heard,
                span: need.min(u16::MAX as u32) as u16,
            }
        });
        let recheck = t.stalled && self.on_stall();
        TimerAction { recheck, request }
    }
}

/// `cc.eqds`: what EQDS adds to the shared keys.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EqdsParams {
    /// What a message sends before any credit: its first BDP (EQDS §3).
    pub unsolicited: Amount,
    /// The receiver's credit rate as a fraction of its link rate.
    pub pull_rate: f64,
    /// A sender that lost data or credit and cannot send asks for credit with an RTS
    /// (EQDS; htsim `sendRTS`); false: it reuses the lost packet's credit and grants itself
    /// one after an RTO stalled.
    pub rts: bool,
    /// The receiver credits retransmissions (trims, RTS backlogs) before new data
    /// (htsim `EqdsPullPacer`); false: one round-robin for both.
    pub retransmit_priority: bool,
}

impl Params for EqdsParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        self.unsolicited.check_absolute(&format!("{key}.unsolicited"), true)?;
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err(ScenarioError::new(
                format!("{key}.pull_rate"),
                format!(
                    "must be in (0, 1] (a fraction of the link rate), got {}",
                    self.pull_rate
                ),
            ));
        }
        Ok(())
    }
}

struct Builder {
    p: EqdsParams,
    /// Whole packets a message sends before any credit (at least one, to announce it).
    unsolicited: u32,
    mtu: u64,
}

impl CcBuilder for Builder {
    fn sender(&self, _initial_window: u64) -> Cc {
        Cc::Eqds(EqdsSender::new(self.unsolicited, self.p.rts))
    }

    fn receiver(&self, links: Vec<u32>, flows: usize) -> Option<Box<dyn ReceiverCc>> {
        let p = &self.p;
        let pacers = CreditPacers::new(
            links,
            flows,
            self.unsolicited,
            self.mtu,
            p.pull_rate,
            p.retransmit_priority,
        );
        Some(Box::new(pacers))
    }
}

fn prepare(params: Option<&toml::Value>, common: &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError> {
    let p: EqdsParams = parse_params(params, "cc.eqds")?;
    let bytes = p
        .unsolicited
        .bytes(common.mtu, common.bdp, None)
        .map_err(|e| ScenarioError::new("cc.eqds.unsolicited", e))?;
    // Whole packets, at least one (to announce the message).
    let unsolicited = bytes.div_ceil(common.mtu).max(1) as u32;
    Ok(Box::new(Builder {
        p,
        unsolicited,
        mtu: common.mtu,
    }))
}

pub const ENTRY: CcEntry = CcEntry {
    name: "eqds",
    presets: &[
        (
            "reps_paper",
            r#"
unsolicited = "1bdp"         # EQDS (NSDI '22): the first BDP of a message goes without credit
pull_rate = 1.0              # credits paced at the receiver's link rate
rts = true                   # EQDS (NSDI '22): request-to-send when data or credit is lost
retransmit_priority = true   # EQDS: retransmissions pulled first
"#,
        ),
        (
            "reps_artifact",
            r#"
unsolicited = "1bdp"         # artifact eqds.cpp starts with speculative credit; lbsim: one BDP
pull_rate = 1.0              # artifact main_eqds.cpp: pacer at 0.99 x a packet time with 38 B framing, about line rate
rts = true                   # artifact eqds.cpp rtxTimerExpired -> sendRTS, at most one per RTT
retransmit_priority = true   # artifact EqdsPullPacer: _rtx_senders before _active_senders
"#,
        ),
    ],
    check: check_params::<EqdsParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsolicited_first_then_one_packet_per_credit() {
        let mut s = EqdsSender::new(2, true);
        for _ in 0..2 {
            assert!(s.has_credit());
            s.on_send(SimTime::ZERO, 0);
        }
        assert!(!s.has_credit(), "the first BDP is spent");
        s.on_credit(1);
        assert!(s.has_credit());
        s.on_send(SimTime::ZERO, 0);
        assert!(!s.has_credit());
        // Credits 2 and 3 arrive out of order, 2 after 3: count 3 holds.
        s.on_credit(3);
        s.on_credit(2);
        s.on_send(SimTime::ZERO, 0);
        s.on_send(SimTime::ZERO, 0);
        assert!(!s.has_credit(), "two more credits, two more packets");
    }

    #[test]
    fn without_rts_timeouts_reuse_credit_and_stalls_grant_one_after_an_rto() {
        let mut s = EqdsSender::new(1, false);
        s.on_send(SimTime::ZERO, 0);
        s.on_timeout(4096);
        assert!(s.has_credit(), "the lost packet's credit pays for its retransmission");
        s.on_send(SimTime::ZERO, 0);
        assert!(!s.has_credit());
        assert!(s.on_stall(), "first check only arms");
        assert!(!s.has_credit());
        assert!(!s.on_stall(), "no credit came for an RTO: grant one");
        assert!(s.has_credit());
        s.on_send(SimTime::ZERO, 0);
        assert!(s.on_stall());
        s.on_credit(1);
        assert!(s.on_stall(), "a credit arrived meanwhile: re-arm instead of granting");
    }

    /// With RTS a timeout grants nothing: the sender asks, at most once per
    /// RTT, and a stall keeps asking every RTO.
    #[test]
    fn with_rts_timeouts_ask_once_per_rtt_and_never_self_grant() {
        let rtt = SimTime::from_us(10);
        let mut s = EqdsSender::new(1, true);
        s.on_send(SimTime::ZERO, 0);
        s.on_timeout(4096);
        assert!(!s.has_credit(), "no credit of its own making");
        assert!(s.rts_due(SimTime::from_us(50), rtt));
        assert!(!s.rts_due(SimTime::from_us(59), rtt), "one RTS per RTT");
        assert!(s.rts_due(SimTime::from_us(60), rtt));
        assert!(s.on_stall() && s.on_stall(), "a stall re-checks every RTO");
        assert!(!s.has_credit());
        assert_eq!(s.rts_request(3), (0, 3), "heard nothing, needs credit for all 3");
        s.on_credit(1);
        assert_eq!(s.rts_request(3), (1, 2), "holds one credit: needs 2 more");
        assert!(s.has_credit());
        assert!(!EqdsSender::new(1, false).rts_due(SimTime::ZERO, rtt), "off: never");
    }
}
