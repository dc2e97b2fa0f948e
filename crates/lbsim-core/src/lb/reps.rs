//! REPS: recycled entropy packet spraying (REPS paper, §3, Alg. 1 and 2).
//!
//! A circular buffer caches the EVs of unmarked ACKs (paths that delivered
//! without congestion) with a validity bit each; a send reuses the oldest
//! valid EV, or explores a random one when none is valid. Freezing mode
//! (§3.2, App. A) stops exploring after a timeout that looks like a failure
//! and keeps sending on the cached EVs, valid or not.
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
//! - which cached EV a frozen send takes is `lb.reps.frozen_pick`:
//!   - `"alg2"` (preset `reps_paper`), Alg. 2 `GETNEXTEV` as printed: the
//!     oldest valid entry first (lines 3-6, as outside freezing); with none
//!     valid, the entry at the write head `head`, which then advances
//!     (lines 8-9), so the next unmarked ACKs are written further on.
//!     Unwritten slots after a clear are skipped;
//!   - `"cursor"` (preset `reps_artifact`), what the artifact runs
//!     (uec.cpp `nextEntropy_freezing`, buffer_reps.cpp `remove_frozen`): a
//!     read cursor of its own walks slots 0, 1, ..., count - 1, 0, ...
//!     (count = slots written since the last clear) and takes the slot it
//!     stands on whether valid or not, invalidating it. The write head is
//!     never moved by a send, so ACKs land where they would unfrozen. The
//!     cursor is 0 after a clear and is not moved when freezing starts;
//!     as leaving freezing clears the buffer, every freeze starts at slot 0.

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer, TimeoutInfo};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{Amount, NeverTime, ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.reps.frozen_pick`: which cached EV a send takes in freezing mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrozenPick {
    /// REPS Alg. 2 `GETNEXTEV`: the oldest valid entry (lines 3-6); with
    /// none valid, the write head's entry, advancing the head (lines 8-9).
    Alg2,
    /// The REPS artifact (buffer_reps.cpp `remove_frozen`): a separate read
    /// cursor cycles over the written slots whatever their validity; the
    /// write head is left alone.
    Cursor,
}

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
    /// Which cached EV a frozen send takes: "alg2" or "cursor".
    pub frozen_pick: FrozenPick,
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
    /// Which cached EV a frozen send takes.
    pub frozen_pick: FrozenPick,
}

#[derive(Clone, Debug)]
pub struct Reps {
    cfg: RepsConfig,
    cached: Vec<u16>,
    valid: Vec<bool>,
    /// Write head (Alg. 1 `head`; with "alg2" frozen sends move it too).
    head: usize,
    /// Slots written since the last clear (htsim `count`): slots 0..count.
    count: usize,
    /// "cursor": the frozen read position, below `count` (htsim `head_forzen_mode`).
    cursor: usize,
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
            head: 0,
            count: 0,
            cursor: 0,
            num_valid: 0,
            explore_counter: 0,
            frozen: false,
            exit_at: SimTime::ZERO,
            frozen_since: SimTime::ZERO,
            forced: false,
        }
    }

    fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Freezing exit (§3.2): first feedback after the timeout.
    fn maybe_exit_freezing(&mut self, now: SimTime, stats: &mut LbStats) {
        if self.frozen && now > self.exit_at {
            self.frozen = false;
            stats.frozen_ps += (now - self.frozen_since).ps();
            self.valid.iter_mut().for_each(|v| *v = false);
            self.head = 0;
            self.count = 0;
            self.cursor = 0;
            self.num_valid = 0;
            self.explore_counter = self.cfg.explore_after_freeze; // Alg. 1 line 17
        }
    }

    /// Alg. 2 GETNEXTEV; called with at least one slot written.
    fn get_next_ev(&mut self) -> u16 {
        if self.frozen && self.cfg.frozen_pick == FrozenPick::Cursor {
            return self.take_at_cursor();
        }
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
                if off < self.count {
                    break off;
                }
            }
        };
        self.cached[offset]
    }

    /// "cursor": the slot under the frozen cursor, valid or not, is taken
    /// and invalidated; the cursor steps on modulo the slots written since
    /// the last clear (REPS artifact buffer_reps.cpp `remove_frozen`). Slots
    /// are written in order from 0 after a clear and a send never moves the
    /// write head, so slots 0..count are exactly the written ones.
    fn take_at_cursor(&mut self) -> u16 {
        let off = self.cursor;
        if self.valid[off] {
            self.valid[off] = false;
            self.num_valid -= 1;
        }
        self.cursor = (off + 1) % self.count.max(1);
        self.cached[off]
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
        // Slots are written in order from 0 after a clear, and the write head
        // only ever stands on a written slot or the first unwritten one, so
        // slots 0..count are exactly the written ones.
        debug_assert!(self.head <= self.count);
        if self.head == self.count {
            self.count += 1;
        }
        self.cached[self.head] = ack.ev; // lines 12-14
        self.valid[self.head] = true;
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
        frozen_pick: p.frozen_pick,
    })))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "reps",
    label: "REPS",
    color: "#d62728", // red
    switch_side: false,
    int_probes: false,
    reorders: true,
    presets: &[
        (
            "reps_paper",
            r#"
buffer_size = 8              # REPS §3.1: 8-entry circular buffer
freezing = true              # REPS §3.2
freezing_timeout = "10ms"    # REPS artifact buffer_reps.cpp default (exit_freeze_after)
freeze_rtt_factor = 1.65     # REPS App. A / artifact: max RTT < 1.65 x base RTT means failure
explore_after_freeze = "1bdp" # REPS Alg. 1 line 17: NUM_PKTS_BDP
force_freeze_at = "never"    # REPS App. A, Fig. 15 forces freezing at 150 us
frozen_pick = "alg2"         # REPS Alg. 2 lines 3-10: oldest valid first, else the write head advances
"#,
        ),
        (
            "reps_artifact",
            r#"
frozen_pick = "cursor"       # artifact buffer_reps.cpp remove_frozen: own read cursor over written slots, valid or not
"#,
        ),
    ],
    check: check_params::<RepsParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    fn reps(n: usize) -> Reps {
        reps_with(n, FrozenPick::Alg2)
    }

    fn reps_with(n: usize, frozen_pick: FrozenPick) -> Reps {
        Reps::new(RepsConfig {
            buffer_size: n,
            entropy_space: 65536,
            freezing: true,
            freezing_timeout: SimTime::from_us(100),
            freeze_rtt_factor: 1.65,
            explore_after_freeze: 3,
            force_freeze_at: None,
            frozen_pick,
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
            header_only: false,
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

    /// The trace both frozen rules are tested on: unmarked ACKs with EVs 10,
    /// 11 and 12 cached in slots 0-2 of an 8-slot buffer, then a timeout that freezes.
    fn frozen_with_10_11_12(pick: FrozenPick) -> Reps {
        use Step::*;
        let mut r = reps_with(8, pick);
        run(
            &mut r,
            &[
                (Ack(10, false), 1, false),
                (Ack(11, false), 2, false),
                (Ack(12, false), 3, false),
                (Timeout(true), 3, true),
            ],
        );
        r
    }

    /// "cursor" (REPS artifact buffer_reps.cpp `remove_frozen`): frozen sends
    /// read slots 0, 1, 2, ... with a cursor of their own, valid or not, and
    /// an ACK that comes meanwhile is written at the write head, which sends
    /// never move.
    #[test]
    fn frozen_sends_cycle_a_separate_cursor() {
        use Step::*;
        let mut r = frozen_with_10_11_12(FrozenPick::Cursor);
        run(
            &mut r,
            &[
                (Send(Some(10)), 2, true), // the cursor starts at slot 0
                (Send(Some(11)), 1, true),
                (Send(Some(12)), 0, true),
                (Send(Some(10)), 0, true), // cursor wraps at count = 3, slot 0 no longer valid
            ],
        );
        assert_eq!(
            (r.head, r.count, r.cursor),
            (3, 3, 1),
            "sends leave the write head alone"
        );
        run(
            &mut r,
            &[
                (Ack(20, false), 1, true), // written at the write head, slot 3; count 4
                (Send(Some(11)), 1, true), // the cursor goes on from slot 1, skipping nothing
                (Send(Some(12)), 1, true),
                (Send(Some(20)), 0, true), // the fresh entry, invalidated
                (Send(Some(10)), 0, true), // wraps at count = 4
                (Send(Some(11)), 0, true),
            ],
        );
        assert_eq!(r.cached[..4], [10, 11, 12, 20]);
        assert_eq!((r.head, r.count, r.cursor), (4, 4, 2));
        // Leaving freezing clears the buffer and puts the cursor back at 0:
        // the next freeze starts at slot 0 again.
        run(
            &mut r,
            &[
                (At(101), 0, true),
                (Ack(30, false), 1, false), // exit and clear first, then cached at slot 0
                (Ack(31, false), 2, false),
                (Send(None), 2, false), // one BDP of exploration (3 packets here)
                (Send(None), 2, false),
                (Send(None), 2, false),
                (Send(Some(30)), 1, false), // unfrozen: oldest valid, as with "alg2"
                (Timeout(true), 1, true),
                (Send(Some(30)), 1, true), // slot 0 again, though only slot 1 is valid
                (Send(Some(31)), 0, true),
            ],
        );
        assert_eq!((r.head, r.count, r.cursor), (2, 2, 0));
    }

    /// The same trace with "alg2" (REPS Alg. 2 as printed): valid entries
    /// oldest first; then the write head itself walks over the written
    /// slots, so the next ACK lands in slot 1 (overwriting 11), not slot 3.
    #[test]
    fn alg2_frozen_sends_take_the_oldest_valid_then_advance_the_write_head() {
        use Step::*;
        let mut r = frozen_with_10_11_12(FrozenPick::Alg2);
        run(
            &mut r,
            &[
                (Send(Some(10)), 2, true), // line 4: oldest valid
                (Send(Some(11)), 1, true),
                (Send(Some(12)), 0, true),
                (Send(Some(10)), 0, true), // lines 8-9: head 3, slots 3-7 unwritten, slot 0; head = 1
            ],
        );
        assert_eq!((r.head, r.count), (1, 3));
        run(
            &mut r,
            &[
                (Ack(20, false), 1, true), // written at slot 1, over 11
                (Send(Some(20)), 0, true), // the one valid entry
                (Send(Some(12)), 0, true), // head 2
                (Send(Some(10)), 0, true), // head 3, skips 3-7, slot 0
                (Send(Some(20)), 0, true),
                (Send(Some(12)), 0, true),
            ],
        );
        assert_eq!(r.cached[..3], [10, 20, 12]);
        assert_eq!(r.count, 3, "nothing was ever written at slot 3");
    }

    /// A frozen flow with nothing written explores, with either pick
    /// (artifact `nextEntropy_freezing`: count == 0 gives a random EV).
    #[test]
    fn frozen_with_an_empty_buffer_explores() {
        use Step::*;
        for pick in [FrozenPick::Alg2, FrozenPick::Cursor] {
            let mut r = reps_with(8, pick);
            run(
                &mut r,
                &[(Timeout(true), 0, true), (Send(None), 0, true), (Send(None), 0, true)],
            );
        }
    }

    #[test]
    fn frozen_pick_is_read_from_the_scenario_and_a_bad_value_is_named() {
        let table = |pick: &str| -> toml::Value {
            let text = format!(
                "buffer_size = 8\nfreezing = true\nfreezing_timeout = \"10ms\"\nfreeze_rtt_factor = 1.65\n\
                 explore_after_freeze = \"1bdp\"\nforce_freeze_at = \"never\"\nfrozen_pick = {pick}\n"
            );
            toml::Value::Table(text.parse().unwrap())
        };
        let p: RepsParams = parse_params(Some(&table("\"cursor\"")), "lb.reps").unwrap();
        assert_eq!(p.frozen_pick, FrozenPick::Cursor);
        let p: RepsParams = parse_params(Some(&table("\"alg2\"")), "lb.reps").unwrap();
        assert_eq!(p.frozen_pick, FrozenPick::Alg2);
        for bad in ["\"newest\"", "\"Cursor\"", "2"] {
            let e = parse_params::<RepsParams>(Some(&table(bad)), "lb.reps").unwrap_err();
            assert_eq!(e.key, "lb.reps.frozen_pick", "{bad}: {e}");
        }
        let e = parse_params::<RepsParams>(Some(&table("\"newest\"")), "lb.reps").unwrap_err();
        assert!(e.message.contains("alg2") && e.message.contains("cursor"), "{e}");
    }

    /// `reps_paper` keeps Alg. 2 as printed; `reps_artifact` runs the artifact's cursor.
    #[test]
    fn each_preset_picks_its_frozen_rule() {
        let pick = |preset: &str| {
            let s = crate::scenario::Scenario::from_toml(&format!("preset = \"{preset}\"")).unwrap();
            parse_params::<RepsParams>(s.lb.tables.get("reps"), "lb.reps")
                .unwrap()
                .frozen_pick
        };
        assert_eq!(pick("reps_paper"), FrozenPick::Alg2);
        assert_eq!(pick("reps_artifact"), FrozenPick::Cursor);
    }
}
