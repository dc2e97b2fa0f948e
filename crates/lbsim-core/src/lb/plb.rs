//! PLB: protective load balancing (Qureshi et al., "PLB: congestion signals
//! are simple and effective for network load balancing", SIGCOMM '22). A
//! flow keeps one entropy value and draws a new random one after
//! `congested_rounds` consecutive congested rounds; a round is one RTT, and
//! it is congested when the fraction of its feedback that signals
//! congestion exceeds `congestion_threshold` (K). A retransmission timeout
//! also re-paths (Linux `tcp_plb.c`: PLB repaths on RTO).
//!
//! Choices (docs/model-choices.md), after the REPS authors' htsim (artifact
//! `uec.cpp`, `processEv_plb` / `nextEntropy_plb` / `rtxTimerExpired`):
//! - a round lasts the flow's base RTT from its first ACK; the first
//!   feedback after the round's end still counts in it and closes it;
//! - NACKs (trimmed packets) count as congested feedback, like marked ACKs;
//! - REPS §4.1 tunes PLB "more aggressive ... similarly to FlowBender": the
//!   artifact uses K = 0.25 and re-paths after 2 congested rounds, against
//!   PLB's production defaults of K = 0.5 and 3 (idle) or 12 rounds;
//! - a timeout re-paths at most once per RTO and restarts the round count;
//! - after a timeout, congestion re-paths pause for a random time in
//!   [P, 2P), P = `pause_after_timeout` (Linux `tcp_plb.c`,
//!   `tcp_plb_update_state_upon_rto`: `tcp_plb_suspend_rto_sec`, 60 s by
//!   default), so PLB does not steer a flow back onto a black hole; rounds
//!   keep counting meanwhile and the first congested round after the pause
//!   re-paths (`tcp_plb_check_rehash` returns early while paused). The
//!   artifact has no pause (`plb_timeout` is never set): P = 0.

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer, TimeoutInfo};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.plb`: PLB (Qureshi et al., SIGCOMM '22), tuned as in REPS §4.1.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlbParams {
    /// K: a round (one base RTT) is congested when more than this fraction of its ACKs is marked.
    pub congestion_threshold: f64,
    /// Consecutive congested rounds before the flow moves to a new random EV.
    pub congested_rounds: u32,
    /// After a timeout, congestion re-paths pause for a random time in [this, twice this);
    /// "0us": no pause (Linux `tcp_plb_suspend_rto_sec`).
    pub pause_after_timeout: Time,
}

impl Params for PlbParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if !(0.0..1.0).contains(&self.congestion_threshold) {
            return Err(ScenarioError::new(
                format!("{key}.congestion_threshold"),
                "must be in [0, 1)",
            ));
        }
        if self.congested_rounds == 0 {
            return Err(ScenarioError::new(
                format!("{key}.congested_rounds"),
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct PlbConfig {
    pub entropy_space: u32,
    /// K: a round is congested when more than this fraction of its feedback is.
    pub congestion_threshold: f64,
    /// Consecutive congested rounds that trigger a re-path.
    pub congested_rounds: u32,
    /// P: congestion re-paths pause for [P, 2P) after a timeout; zero: no pause.
    pub pause_after_timeout: SimTime,
}

#[derive(Clone, Debug)]
pub struct Plb {
    cfg: PlbConfig,
    ev: u16,
    /// Length of a round: the flow's base RTT.
    round: SimTime,
    rto: SimTime,
    /// End of the current round; None until the first feedback.
    round_end: Option<SimTime>,
    feedback: u32,
    congested: u32,
    consecutive: u32,
    /// Feedback asked for a new path; drawn at the next send (which owns the RNG).
    repath: bool,
    /// A timeout may re-path again from this time on.
    timeout_repath_from: SimTime,
    /// Congestion may re-path again from this time on.
    pause_until: SimTime,
    /// A timeout at this time began a pause whose length is drawn at the next send (which owns the RNG).
    pause_began: Option<SimTime>,
}

impl Plb {
    pub fn new(cfg: PlbConfig, base_rtt: SimTime, rto: SimTime, rng: &mut Rng) -> Self {
        Plb {
            ev: rng.below(cfg.entropy_space as u64) as u16,
            cfg,
            round: base_rtt,
            rto,
            round_end: None,
            feedback: 0,
            congested: 0,
            consecutive: 0,
            repath: false,
            timeout_repath_from: SimTime::ZERO,
            pause_until: SimTime::ZERO,
            pause_began: None,
        }
    }

    /// Within the pause after a timeout; before its length is drawn, its shortest.
    fn paused(&self, now: SimTime) -> bool {
        match self.pause_began {
            Some(t) => now < t + self.cfg.pause_after_timeout,
            None => now < self.pause_until,
        }
    }

    /// Count one ACK or NACK; at the end of a round judge it.
    fn count(&mut self, now: SimTime, congested: bool) {
        let end = *self.round_end.get_or_insert(now + self.round);
        self.feedback += 1;
        self.congested += congested as u32;
        if now <= end {
            return;
        }
        if self.congested as f64 > self.cfg.congestion_threshold * self.feedback as f64 {
            self.consecutive += 1;
            if self.consecutive >= self.cfg.congested_rounds && !self.paused(now) {
                self.repath = true;
                self.consecutive = 0;
            }
        } else {
            self.consecutive = 0;
        }
        self.feedback = 0;
        self.congested = 0;
        self.round_end = Some(now + self.round);
    }
}

impl LoadBalancer for Plb {
    fn next_ev(&mut self, _now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        if let Some(t) = self.pause_began.take() {
            // Linux: pause = P + a uniform draw below P.
            let p = self.cfg.pause_after_timeout;
            self.pause_until = t + p + SimTime(rng.below(p.ps()));
        }
        if self.repath {
            self.repath = false;
            self.ev = rng.below(self.cfg.entropy_space as u64) as u16;
            stats.explored += 1;
        }
        self.ev
    }

    fn on_ack(&mut self, now: SimTime, ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        self.count(now, ack.ecn);
        AckPath::Normal
    }

    fn on_nack(&mut self, now: SimTime, _ev: u16, _stats: &mut LbStats) {
        self.count(now, true);
    }

    fn on_timeout(&mut self, now: SimTime, _info: TimeoutInfo, _stats: &mut LbStats) {
        if now >= self.timeout_repath_from {
            self.repath = true;
            self.consecutive = 0;
            self.timeout_repath_from = now + self.rto;
        }
        if self.cfg.pause_after_timeout > SimTime::ZERO {
            self.pause_began = Some(now);
        }
    }
}

struct Builder {
    cfg: PlbConfig,
    rto: SimTime,
}

impl LbBuilder for Builder {
    fn balancer(&self, base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Plb(Plb::new(self.cfg.clone(), base_rtt, self.rto, rng))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: PlbParams = parse_params(params, "lb.plb")?;
    let cfg = PlbConfig {
        entropy_space: c.entropy_space,
        congestion_threshold: p.congestion_threshold,
        congested_rounds: p.congested_rounds,
        pause_after_timeout: p.pause_after_timeout.value,
    };
    Ok(Box::new(Builder { cfg, rto: c.rto }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "plb",
    label: "PLB",
    color: "#8c564b", // brown
    switch_side: false,
    int_probes: false,
    reorders: false,
    presets: &[
        (
            "reps_paper",
            r#"
congestion_threshold = 0.25  # REPS §4.1 "aggressive like FlowBender": the artifact's intended plb_k (PLB's own: 0.5)
congested_rounds = 2         # artifact: re-path when congested rounds > plb_n = 1 (PLB's own: 3 idle, 12)
pause_after_timeout = "0us"  # REPS §4.1 tunes PLB aggressively; its runs have no pause (artifact). PLB/Linux: "60s"
"#,
        ),
        (
            "reps_artifact",
            r#"
congestion_threshold = 0.0   # artifact processEv_plb: `plb_k = 0.25` into an int plb_k (uec.h) stores 0: any congested feedback marks the round
congested_rounds = 2         # artifact nextEntropy_plb: re-path when congested rounds > plb_n = 1
pause_after_timeout = "0us"  # artifact: no pause (plb_timeout declared, never set; plb_timeout_wait only spaces RTO re-paths)
"#,
        ),
    ],
    check: check_params::<PlbParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    const RTT_US: u64 = 10;

    fn ack(ecn: bool) -> AckEcho {
        AckEcho { ev: 0, ecn, seq: None }
    }

    struct Harness {
        plb: Plb,
        rng: Rng,
        stats: LbStats,
        now: SimTime,
    }

    impl Harness {
        fn new(threshold: f64, rounds: u32) -> Self {
            Self::with_pause(threshold, rounds, SimTime::ZERO)
        }

        fn with_pause(threshold: f64, rounds: u32, pause: SimTime) -> Self {
            let mut rng = Rng::new(3, StreamTag::Flow, 0);
            let cfg = PlbConfig {
                entropy_space: 65536,
                congestion_threshold: threshold,
                congested_rounds: rounds,
                pause_after_timeout: pause,
            };
            let plb = Plb::new(cfg, SimTime::from_us(RTT_US), SimTime::from_us(70), &mut rng);
            Harness {
                plb,
                rng,
                stats: LbStats::default(),
                now: SimTime::ZERO,
            }
        }

        /// One round of `acks` ACKs of which the first `marks` are marked;
        /// the last lands just after the round's end and closes it.
        fn round(&mut self, acks: u32, marks: u32) {
            for i in 0..acks {
                if i + 1 == acks {
                    self.now = self.plb.round_end.expect("round started") + SimTime(1);
                }
                self.plb.on_ack(self.now, &ack(i < marks), &mut self.stats);
                self.now += SimTime(1);
            }
        }

        fn send(&mut self) -> u16 {
            self.plb.next_ev(self.now, &mut self.rng, &mut self.stats)
        }
    }

    #[test]
    fn repaths_after_the_configured_congested_rounds_and_not_before() {
        let mut h = Harness::new(0.5, 2);
        let first = h.send();
        h.round(4, 3); // 3/4 > K: congested round 1
        assert_eq!(h.send(), first, "one congested round is not enough");
        h.round(4, 3); // congested round 2: re-path
        let second = h.send();
        assert_ne!(second, first);
        assert_eq!(h.stats.explored, 1);
        assert_eq!(h.send(), second, "the new path is kept");
    }

    #[test]
    fn a_clean_round_or_one_at_exactly_k_restarts_the_count() {
        let mut h = Harness::new(0.5, 2);
        let ev = h.send();
        h.round(4, 3); // congested
        h.round(4, 2); // 2/4 is not above K = 0.5
        h.round(4, 4); // congested, but only the first in a row
        assert_eq!(h.send(), ev);
        assert_eq!(h.stats.explored, 0);
        h.round(4, 4); // second in a row
        assert_ne!(h.send(), ev);
    }

    #[test]
    fn nacks_count_as_congested_feedback() {
        let mut h = Harness::new(0.5, 1);
        let ev = h.send();
        h.plb.on_ack(SimTime::ZERO, &ack(false), &mut h.stats);
        h.plb.on_nack(SimTime(1), 0, &mut h.stats);
        assert_eq!(h.send(), ev, "the round is still open");
        h.plb.on_nack(SimTime::from_us(RTT_US) + SimTime(1), 0, &mut h.stats);
        assert_ne!(h.send(), ev, "2 NACKs of 3 feedbacks: a congested round");
    }

    #[test]
    fn a_timeout_repaths_at_most_once_per_rto() {
        let mut h = Harness::new(0.5, 2);
        let ev = h.send();
        let info = TimeoutInfo::assumed(false);
        h.plb.on_timeout(SimTime::from_us(100), info, &mut h.stats);
        let moved = h.send();
        assert_ne!(moved, ev);
        h.plb.on_timeout(SimTime::from_us(150), info, &mut h.stats);
        assert_eq!(h.send(), moved, "within one RTO (70 us) of the last timeout re-path");
        h.plb.on_timeout(SimTime::from_us(170), info, &mut h.stats);
        assert_ne!(h.send(), moved);
        assert_eq!(h.stats.explored, 2);
    }

    /// Linux `tcp_plb`: after a timeout, congested rounds do not re-path for
    /// [P, 2P); they keep counting, and the first congested round after the
    /// pause re-paths. Without a pause (the artifact) they re-path at once.
    #[test]
    fn congestion_repaths_pause_after_a_timeout() {
        let pause = SimTime::from_us(100);
        let info = TimeoutInfo::assumed(false);
        let mut h = Harness::with_pause(0.5, 2, pause);
        h.plb.on_timeout(SimTime::ZERO, info, &mut h.stats);
        let after_timeout = h.send();
        assert_eq!(h.stats.explored, 1, "the timeout itself re-paths");
        let until = h.plb.pause_until;
        assert!(until >= pause && until < pause * 2, "drawn in [P, 2P): {until:?}");
        h.now = SimTime(1);
        while h.now + SimTime::from_us(RTT_US) + SimTime(1) < until {
            h.round(4, 4);
            assert_eq!(h.send(), after_timeout, "paused at {:?}", h.now);
        }
        assert!(h.plb.consecutive >= 2, "rounds keep counting while paused");
        // The first congested round that ends after the pause re-paths.
        while h.now <= until {
            h.round(4, 4);
        }
        assert_ne!(h.send(), after_timeout);
        assert_eq!(h.stats.explored, 2);

        let mut free = Harness::new(0.5, 2);
        free.plb.on_timeout(SimTime::ZERO, info, &mut free.stats);
        let ev = free.send();
        free.now = SimTime(1);
        free.round(4, 4);
        free.round(4, 4);
        assert_ne!(free.send(), ev, "no pause: two congested rounds re-path");
    }
}
