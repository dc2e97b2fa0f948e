//! Flowlet switching at the sender, LetFlow-style (Vanini et al., "Let It
//! Flow", NSDI '17): a flowlet is a burst of a flow's packets separated
//! from the next by an idle gap longer than the flowlet timeout; each new
//! flowlet takes a new random entropy value. REPS §4.1 sets an aggressive
//! timeout of half the RTT (`lb.flowlet.timeout = "auto"`: half the flow's
//! base RTT).
//!
//! By default the gap is measured between the flow's own sends, as LetFlow
//! measures it between packets (`gap_from = "send"`). The REPS artifact
//! (`uec.cpp` `nextEntropy_flowlet`, `processEv_flowlet`) measures it from
//! the flow's last ACK or NACK (`gap_from = "ack"`; before the first, from
//! time zero) and keeps a new path for at least one RTO (`hold = "rto"`);
//! `reps_artifact` does both (docs/model-choices.md).

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{AutoTime, ScenarioError};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.flowlet`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowletParams {
    /// Idle gap that starts a new flowlet; "auto" = half the flow's base RTT (REPS §4.1).
    pub timeout: AutoTime,
    /// What the gap is measured from: the flow's previous send or its latest ACK.
    pub gap_from: GapFrom,
    /// How long a new EV is kept at least: not at all, or one RTO (`transport.rto`).
    pub hold: Hold,
}

/// `lb.flowlet.gap_from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapFrom {
    /// LetFlow: the idle time since the flow's previous send.
    Send,
    /// The REPS artifact: the time since the flow's latest ACK or NACK.
    Ack,
}

/// `lb.flowlet.hold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// LetFlow: a new EV may go at the next idle gap.
    None,
    /// The REPS artifact: `flowlet_timeout_wait = now + _rto`.
    Rto,
}

impl Params for FlowletParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.timeout.value == Some(SimTime::ZERO) {
            return Err(ScenarioError::new(
                format!("{key}.timeout"),
                "must be positive (or \"auto\")",
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Flowlet {
    entropy_space: u32,
    timeout: SimTime,
    gap_from: GapFrom,
    /// How long a new EV is kept at least (zero: no hold).
    hold: SimTime,
    ev: u16,
    /// `gap_from = "send"`: the flow's previous send.
    last_send: Option<SimTime>,
    /// `gap_from = "ack"`: the flow's latest ACK or NACK (zero before any, as the artifact's).
    last_ack: SimTime,
    /// The current EV is kept until after this time.
    held_until: SimTime,
}

impl Flowlet {
    pub fn new(timeout: SimTime, entropy_space: u32, rng: &mut Rng) -> Self {
        Flowlet::with_rules(timeout, GapFrom::Send, SimTime::ZERO, entropy_space, rng)
    }

    pub fn with_rules(timeout: SimTime, gap_from: GapFrom, hold: SimTime, entropy_space: u32, rng: &mut Rng) -> Self {
        Flowlet {
            entropy_space,
            timeout,
            gap_from,
            hold,
            ev: rng.below(entropy_space as u64) as u16,
            last_send: None,
            last_ack: SimTime::ZERO,
            held_until: SimTime::ZERO,
        }
    }
}

impl LoadBalancer for Flowlet {
    fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        let idle = match self.gap_from {
            GapFrom::Send => self.last_send.is_some_and(|last| now - last > self.timeout),
            // The artifact: `now > last_pkt_flowlet + flowlet_timeout && now > flowlet_timeout_wait`.
            GapFrom::Ack => now > self.last_ack + self.timeout,
        };
        if idle && (self.hold == SimTime::ZERO || now > self.held_until) {
            self.ev = rng.below(self.entropy_space as u64) as u16;
            self.held_until = now + self.hold;
            stats.explored += 1;
        }
        self.last_send = Some(now);
        self.ev
    }

    fn on_ack(&mut self, now: SimTime, _ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        self.last_ack = now;
        AckPath::Normal
    }

    fn on_nack(&mut self, now: SimTime, _ev: u16, _stats: &mut LbStats) {
        self.last_ack = now;
    }

    /// Keeps the EV and starts the clocks afresh, as the artifact's new
    /// connection does (it saves and restores `flowlet_entropy` only;
    /// `last_pkt_flowlet` and `flowlet_timeout_wait` start at zero).
    fn resumed(&mut self) {
        self.last_send = None;
        self.last_ack = SimTime::ZERO;
        self.held_until = SimTime::ZERO;
    }
}

struct Builder {
    timeout: Option<SimTime>,
    gap_from: GapFrom,
    hold: SimTime,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    fn balancer(&self, base_rtt: SimTime, rng: &mut Rng) -> Lb {
        // REPS §4.1: a flowlet timeout of half the RTT.
        let timeout = self.timeout.unwrap_or(SimTime(base_rtt.ps() / 2));
        Lb::Flowlet(Flowlet::with_rules(
            timeout,
            self.gap_from,
            self.hold,
            self.entropy_space,
            rng,
        ))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: FlowletParams = parse_params(params, "lb.flowlet")?;
    Ok(Box::new(Builder {
        timeout: p.timeout.value,
        gap_from: p.gap_from,
        hold: match p.hold {
            Hold::None => SimTime::ZERO,
            Hold::Rto => c.rto,
        },
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "flowlet",
    label: "Flowlet",
    color: "#bcbd22", // olive
    switch_side: false,
    int_probes: false,
    reorders: false,
    presets: &[
        (
            "reps_paper",
            "timeout = \"auto\"             # REPS §4.1: half the RTT (\"auto\": half the flow's base RTT)\n\
             gap_from = \"send\"            # LetFlow (NSDI '17): the idle gap between a flow's packets\n\
             hold = \"none\"\n",
        ),
        (
            "reps_artifact",
            "timeout = \"auto\"             # artifact: flowlet_timeout = 0.5 * _base_rtt\n\
             gap_from = \"ack\"             # artifact processEv_flowlet: last_pkt_flowlet = now, on every ACK and NACK\n\
             hold = \"rto\"                 # artifact nextEntropy_flowlet: flowlet_timeout_wait = now + _rto\n",
        ),
    ],
    check: check_params::<FlowletParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::tests::echo;
    use crate::rng::StreamTag;

    #[test]
    fn a_new_entropy_only_after_a_gap_longer_than_the_timeout() {
        let mut rng = Rng::new(5, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let timeout = SimTime::from_us(3);
        let mut f = Flowlet::new(timeout, 65536, &mut rng);
        let mut send = |us_ps: u64| f.next_ev(SimTime(us_ps), &mut rng, &mut st);
        let us = 1_000_000;
        let first = send(0);
        // A burst, then a gap of exactly the timeout: one flowlet.
        for t in [us / 10, 2 * us / 10, 2 * us / 10 + 3 * us] {
            assert_eq!(send(t), first);
        }
        // A gap one picosecond longer than the timeout starts a new flowlet.
        let second = send(2 * us / 10 + 6 * us + 1);
        assert_ne!(second, first);
        assert_eq!(send(2 * us / 10 + 7 * us), second, "kept within the new burst");
        assert_eq!(st.explored, 1);
    }

    /// A flowlet with `reps_artifact`'s rules: a 3 us timeout from the latest ACK, a 40 us hold.
    fn artifact_flowlet() -> (Flowlet, Rng, LbStats) {
        let mut rng = Rng::new(5, StreamTag::Flow, 0);
        let us = SimTime::from_us;
        let f = Flowlet::with_rules(us(3), GapFrom::Ack, us(40), 65536, &mut rng);
        (f, rng, LbStats::default())
    }

    /// `reps_artifact`'s rules: the gap runs from the latest ACK (from time
    /// zero before any), and a new EV is kept for at least the hold.
    #[test]
    fn artifact_rules_gap_from_the_latest_ack_and_a_new_ev_held() {
        let us = SimTime::from_us;
        let (mut f, mut rng, mut st) = artifact_flowlet();
        let first = f.next_ev(us(0), &mut rng, &mut st);
        assert_eq!(
            f.next_ev(us(3), &mut rng, &mut st),
            first,
            "3 us after time zero: not yet"
        );
        // Sent back to back, but no ACK for more than 3 us: a new EV, kept to 44 us.
        let second = f.next_ev(us(3) + SimTime(1), &mut rng, &mut st);
        assert_ne!(second, first);
        assert_eq!(f.next_ev(us(20), &mut rng, &mut st), second, "held");
        assert_eq!(
            f.next_ev(us(43) + SimTime(1), &mut rng, &mut st),
            second,
            "held to 3 us + 1 ps + 40 us"
        );
        // An ACK (or a NACK) restarts the gap, however long the sender was idle.
        f.on_ack(us(100), &echo(second, false), &mut st);
        assert_eq!(f.next_ev(us(103), &mut rng, &mut st), second);
        f.on_nack(us(103), second, &mut st);
        assert_eq!(f.next_ev(us(106), &mut rng, &mut st), second);
        let third = f.next_ev(us(106) + SimTime(1), &mut rng, &mut st);
        assert_ne!(third, second);
        assert_eq!(st.explored, 2);
    }

    /// A flow resuming its pair's state (`transport.resume_pair_state`) keeps
    /// the EV but not the clocks, as the artifact's new connection does.
    #[test]
    fn a_resumed_flowlet_keeps_its_ev_and_forgets_its_clocks() {
        let us = SimTime::from_us;
        let (mut f, mut rng, mut st) = artifact_flowlet();
        let first = f.next_ev(us(0), &mut rng, &mut st);
        f.on_ack(us(100), &echo(first, false), &mut st);
        let mut resumed = f.clone();
        resumed.resumed();
        assert_eq!(resumed.ev, first);
        assert_eq!(f.next_ev(us(101), &mut rng, &mut st), first, "1 us after an ACK");
        assert_ne!(
            resumed.next_ev(us(101), &mut rng, &mut st),
            first,
            "no ACK since time zero"
        );
    }
}
