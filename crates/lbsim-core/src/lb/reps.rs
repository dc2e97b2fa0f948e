//! REPS: recycled entropy packet spraying (REPS paper, §3, Alg. 1 and 2).
//!
//! A circular buffer caches the EVs of unmarked ACKs (paths that delivered
//! without congestion) with a validity bit each; a send reuses the oldest
//! valid EV, or explores a random one when none is valid. Freezing mode
//! (§3.2, App. A) stops exploring after a timeout that looks like a failure
//! and cycles over the cached EVs, valid or not.
//!
//! Choices where Alg. 1 and the authors' htsim (buffer_reps.cpp, uec.cpp)
//! differ or are silent, all written down in docs/model-choices.md:
//! - the freezing exit is checked on every feedback (ACK, marked or not, and
//!   NACK), before the ACK is cached, as htsim's `processEv_freezing` does;
//!   Alg. 1 checks it after the ECN filter;
//! - on exit the buffer is cleared (htsim `resetBuffer`), then
//!   `exploreCounter` = one BDP of packets (Alg. 1 line 17);
//! - `exploreCounter` starts at 0 (Alg. 1 line 3): a new flow explores
//!   because its buffer is empty;
//! - frozen sends cycle over the written entries only (Alg. 2 lines 8-9
//!   advance `head`; unwritten slots after a reset are skipped).

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer, TimeoutInfo};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{Amount, NeverTime, ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.reps`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepsParams {
    pub buffer_size: u32,
    pub freezing: bool,
    pub freezing_timeout: Time,
    pub freeze_rtt_factor: f64,
    pub explore_after_freeze: Amount,
    /// Force every REPS flow into freezing mode at this time, failure or not
    /// (REPS App. A, Fig. 15: 150 us); "never" = only on failures.
    pub force_freeze_at: NeverTime,
}

impl Params for RepsParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.buffer_size == 0 || self.buffer_size > 255 {
            return Err(ScenarioError::new(
                format!("{key}.buffer_size"),
                "must be between 1 and 255",
            ));
        }
        if self.freeze_rtt_factor.is_nan() || self.freeze_rtt_factor <= 0.0 {
            return Err(ScenarioError::new(
                format!("{key}.freeze_rtt_factor"),
                "must be positive",
            ));
        }
        self.explore_after_freeze
            .check_absolute(&format!("{key}.explore_after_freeze"), false)
    }
}

#[derive(Clone, Debug)]
pub struct RepsConfig {
    pub buffer_size: usize,
    pub entropy_space: u32,
    pub freezing: bool,
    pub freezing_timeout: SimTime,
    /// App. A: a timeout after RTTs all below this × base RTT looks like a failure.
    pub freeze_rtt_factor: f64,
    /// Packets explored after leaving freezing mode (NUM_PKTS_BDP).
    pub explore_after_freeze: u32,
    /// Enter freezing mode at this time whatever happens (App. A, Fig. 15).
    pub force_freeze_at: Option<SimTime>,
}

#[derive(Clone, Debug)]
pub struct Reps {
    cfg: RepsConfig,
    cached: Vec<u16>,
    valid: Vec<bool>,
    written: Vec<bool>,
    head: usize,
    num_valid: usize,
    explore_counter: u32,
    frozen: bool,
    exit_at: SimTime,
    frozen_since: SimTime,
    /// The forced entry (if configured) has happened.
    forced: bool,
}

impl Reps {
    pub fn new(cfg: RepsConfig) -> Self {
        let n = cfg.buffer_size;
        Reps {
            cfg,
            cached: vec![0; n],
            valid: vec![false; n],
            written: vec![false; n],
            head: 0,
            num_valid: 0,
            explore_counter: 0,
            frozen: false,
            exit_at: SimTime::ZERO,
            frozen_since: SimTime::ZERO,
            forced: false,
        }
    }

    fn is_empty(&self) -> bool {
        !self.written.iter().any(|&w| w)
    }

    /// Freezing exit (§3.2): first feedback after the timeout.
    fn maybe_exit_freezing(&mut self, now: SimTime, stats: &mut LbStats) {
        if self.frozen && now > self.exit_at {
            self.frozen = false;
            stats.frozen_ps += (now - self.frozen_since).ps();
            self.valid.iter_mut().for_each(|v| *v = false);
            self.written.iter_mut().for_each(|w| *w = false);
            self.head = 0;
            self.num_valid = 0;
            self.explore_counter = self.cfg.explore_after_freeze; // Alg. 1 line 17
        }
    }

    /// Alg. 2 GETNEXTEV.
    fn get_next_ev(&mut self) -> u16 {
        let n = self.cfg.buffer_size;
        let offset = if self.num_valid > 0 {
            let off = (self.head + n - self.num_valid) % n; // line 4: oldest valid
            self.valid[off] = false;
            self.num_valid -= 1;
            off
        } else {
            // Lines 8-9: frozen, cycle round-robin over the cached entries.
            loop {
                let off = self.head;
                self.head = (self.head + 1) % n;
                if self.written[off] {
                    break off;
                }
            }
        };
        self.cached[offset]
    }

    /// Alg. 1 lines 22-24: start cycling over the cached EVs until the freezing timeout.
    fn enter_freezing(&mut self, now: SimTime, stats: &mut LbStats) {
        self.frozen = true;
        self.exit_at = now + self.cfg.freezing_timeout;
        self.frozen_since = now;
        stats.freeze_entries += 1;
    }

    /// REPS App. A: without trimming, a timeout after low RTTs (max of the
    /// last window below factor × base RTT) looks like a failure; with
    /// trimming congestion shows as NACKs, so any timeout does.
    fn looks_like_failure(&self, info: &TimeoutInfo) -> bool {
        info.trimming || (info.recent_max_rtt.ps() as f64) < self.cfg.freeze_rtt_factor * info.base_rtt.ps() as f64
    }
}

impl LoadBalancer for Reps {
    /// Alg. 2 ONSEND.
    fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        // Forced freezing (App. A): at the first send from the set time on
        // with something cached, as if a failure had been detected then.
        if !self.forced && self.cfg.force_freeze_at.is_some_and(|t| now >= t) && !self.is_empty() {
            self.forced = true;
            if !self.frozen {
                self.explore_counter = 0;
                self.enter_freezing(now, stats);
            }
        }
        if self.is_empty() || (self.num_valid == 0 && !self.frozen) || self.explore_counter > 0 {
            self.explore_counter = self.explore_counter.saturating_sub(1);
            stats.explored += 1;
            rng.below(self.cfg.entropy_space as u64) as u16
        } else {
            stats.recycled += 1;
            self.get_next_ev()
        }
    }

    /// Alg. 1 ONACK.
    fn on_ack(&mut self, now: SimTime, ack: &AckEcho, stats: &mut LbStats) -> AckPath {
        self.maybe_exit_freezing(now, stats);
        if ack.ecn {
            return AckPath::Normal; // lines 6-8: a marked ACK's path is not cached
        }
        if !self.valid[self.head] {
            self.num_valid += 1; // lines 9-11
        }
        self.cached[self.head] = ack.ev; // lines 12-14
        self.valid[self.head] = true;
        self.written[self.head] = true;
        self.head = (self.head + 1) % self.cfg.buffer_size;
        AckPath::Normal
    }

    fn on_nack(&mut self, now: SimTime, _ev: u16, stats: &mut LbStats) {
        self.maybe_exit_freezing(now, stats);
    }

    /// Alg. 1 ONFAILUREDETECTION, called on a retransmission timeout that
    /// the sender judged to look like a failure (App. A).
    fn on_timeout(&mut self, now: SimTime, info: TimeoutInfo, stats: &mut LbStats) {
        if self.cfg.freezing && !self.frozen && self.explore_counter == 0 && self.looks_like_failure(&info) {
            self.enter_freezing(now, stats);
        }
    }

    fn frozen_ps(&self, now: SimTime, stats: &LbStats) -> u64 {
        stats.frozen_ps + if self.frozen { (now - self.frozen_since).ps() } else { 0 }
    }
}

struct Builder(RepsConfig);

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Reps(Reps::new(self.0.clone()))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: RepsParams = parse_params(params, "lb.reps")?;
    let explore = c.packets(&p.explore_after_freeze, "lb.reps.explore_after_freeze")?;
    Ok(Box::new(Builder(RepsConfig {
        buffer_size: p.buffer_size as usize,
        entropy_space: c.entropy_space,
        freezing: p.freezing,
        freezing_timeout: p.freezing_timeout.value,
        freeze_rtt_factor: p.freeze_rtt_factor,
        explore_after_freeze: explore,
        force_freeze_at: p.force_freeze_at.value,
    })))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "reps",
    label: "REPS",
    color: "#d62728", // red
    switch_side: false,
    int_probes: false,
    reorders: true,
    presets: &[(
        "reps_paper",
        r#"
buffer_size = 8              # REPS §3.1: 8-entry circular buffer
freezing = true              # REPS §3.2
freezing_timeout = "10ms"    # REPS artifact buffer_reps.cpp default (exit_freeze_after)
freeze_rtt_factor = 1.65     # REPS App. A / artifact: max RTT < 1.65 x base RTT means failure
explore_after_freeze = "1bdp" # REPS Alg. 1 line 17: NUM_PKTS_BDP
force_freeze_at = "never"    # REPS App. A, Fig. 15 forces freezing at 150 us
"#,
    )],
    check: check_params::<RepsParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    fn reps(n: usize) -> Reps {
        Reps::new(RepsConfig {
            buffer_size: n,
            entropy_space: 65536,
            freezing: true,
            freezing_timeout: SimTime::from_us(100),
            freeze_rtt_factor: 1.65,
            explore_after_freeze: 3,
            force_freeze_at: None,
        })
    }

    /// One step of a table-driven trace and what must hold after it.
    enum Step {
        Ack(u16, bool),
        Nack,
        Timeout(bool),
        /// Send; Some(ev) = must reuse exactly this EV, None = must explore.
        Send(Option<u16>),
        At(u64),
    }

    fn run(r: &mut Reps, steps: &[(Step, usize, bool)]) {
        let mut rng = Rng::new(1, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let mut now = SimTime::ZERO;
        for (i, (step, valid_after, frozen_after)) in steps.iter().enumerate() {
            match step {
                Step::Ack(ev, ecn) => {
                    let ack = AckEcho {
                        ev: *ev,
                        ecn: *ecn,
                        seq: None,
                    };
                    r.on_ack(now, &ack, &mut st);
                }
                Step::Nack => r.on_nack(now, 0, &mut st),
                Step::Timeout(f) => r.on_timeout(now, TimeoutInfo::assumed(*f), &mut st),
                Step::Send(expect) => {
                    let before = st.explored;
                    let ev = r.next_ev(now, &mut rng, &mut st);
                    match expect {
                        Some(e) => assert_eq!(ev, *e, "step {i}: reuse"),
                        None => assert_eq!(st.explored, before + 1, "step {i}: must explore"),
                    }
                }
                Step::At(us) => now = SimTime::from_us(*us),
            }
            assert_eq!(r.num_valid, *valid_after, "step {i}: numberOfValidEVs");
            assert_eq!(r.frozen, *frozen_after, "step {i}: isFreezingMode");
        }
    }

    #[test]
    fn alg1_alg2_core_logic() {
        use Step::*;
        let mut r = reps(4);
        run(
            &mut r,
            &[
                (Send(None), 0, false),     // empty buffer: explore (Alg. 2 line 15)
                (Ack(10, false), 1, false), // cache (Alg. 1 lines 9-14)
                (Ack(11, true), 1, false),  // marked: discarded (lines 6-8)
                (Ack(12, false), 2, false),
                (Send(Some(10)), 1, false), // oldest valid first (Alg. 2 line 4)
                (Send(Some(12)), 0, false),
                (Send(None), 0, false), // no valid and not frozen: explore
                (Ack(13, false), 1, false),
                (Ack(14, false), 2, false),
                (Ack(15, false), 3, false),
                (Ack(16, false), 4, false), // wraps onto consumed (invalid) slots 0 and 1
                (Send(Some(13)), 3, false), // oldest valid is slot 2
            ],
        );
    }

    #[test]
    fn overwrite_of_a_valid_entry_keeps_count() {
        use Step::*;
        let mut r = reps(2);
        run(
            &mut r,
            &[
                (Ack(1, false), 1, false),
                (Ack(2, false), 2, false),
                (Ack(3, false), 2, false),
                (Send(Some(2)), 1, false),
                (Send(Some(3)), 0, false),
            ],
        );
    }

    #[test]
    fn freezing_entry_cycle_and_exit() {
        use Step::*;
        let mut r = reps(4);
        run(
            &mut r,
            &[
                (Ack(20, false), 1, false),
                (Ack(21, false), 2, false),
                (Timeout(false), 2, false), // looks like congestion: no freezing
                (Timeout(true), 2, true),   // Alg. 1 lines 22-24
                (Send(Some(20)), 1, true),  // valid entries still used first
                (Send(Some(21)), 0, true),
                // No valid EVs: cycle over written entries without exploring (§3.2).
                (Send(Some(20)), 0, true),
                (Send(Some(21)), 0, true),
                (Send(Some(20)), 0, true),
                (Ack(22, false), 1, true), // unmarked ACKs still refresh the buffer
                (At(50), 1, true),
                (Nack, 1, true), // before the timeout: stay frozen
                (At(101), 1, true),
                (Ack(23, true), 0, false), // first feedback after timeout: exit, clear
                (Send(None), 0, false),    // explore one BDP (3 packets here)
                (Ack(24, false), 1, false),
                (Send(None), 1, false),
                (Send(None), 1, false),
                (Send(Some(24)), 0, false), // exploration over: recycle again
            ],
        );
        assert_eq!(r.explore_counter, 0);
    }

    /// App. A: without trimming, a timeout freezes only after RTTs below
    /// 1.65 × base RTT; with trimming, any timeout freezes.
    #[test]
    fn the_failure_heuristic_compares_recent_rtts_with_the_base_rtt() {
        let r = reps(4);
        let info = |rtt_us: u64, trimming: bool| TimeoutInfo {
            trimming,
            recent_max_rtt: SimTime::from_us(rtt_us),
            base_rtt: SimTime::from_us(10),
        };
        assert!(r.looks_like_failure(&info(16, false)));
        assert!(!r.looks_like_failure(&info(17, false)), "17 us > 16.5 us: congestion");
        assert!(r.looks_like_failure(&info(17, true)));
    }

    #[test]
    fn no_freezing_while_exploring_or_already_frozen() {
        use Step::*;
        let mut r = reps(4);
        run(
            &mut r,
            &[
                (Ack(1, false), 1, false),
                (Timeout(true), 1, true),
                (At(200), 1, true),
                (Ack(2, false), 1, false),
            ],
        );
        // explore_counter is 3 now: a failure-like timeout must not freeze (Alg. 1 line 22).
        run(&mut r, &[(Timeout(true), 1, false)]);
        let mut frozen = reps(4);
        run(&mut frozen, &[(Timeout(true), 0, true)]);
        let exit = frozen.exit_at;
        run(&mut frozen, &[(At(10), 0, true), (Timeout(true), 0, true)]);
        assert_eq!(
            frozen.exit_at, exit,
            "re-detection while frozen does not extend the timeout"
        );
    }
}
