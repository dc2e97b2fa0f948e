//! BitMap: per-entropy penalties, the STrack-like baseline of REPS §4.1
//! ("a bitmap approach where we keep per EV statistics similarly to
//! STrack"). A flow sprays round-robin over its entropy space and keeps
//! a penalty counter per EV: congestion feedback on an EV raises its
//! penalty, and every time the round-robin pointer passes over a penalised
//! EV it skips it and lowers its penalty by one. A send therefore always
//! takes an EV of the least penalty, an unpenalised one whenever one exists.
//!
//! Penalties after the REPS artifact (`uec.cpp` `processEv_bitmap`): +1 per
//! ECN-marked ACK, +4 per NACK, the maximum (15) for a packet the
//! retransmission timer declared lost, each capped at the maximum; the
//! artifact penalises the EV of the timed-out packet, as `on_lost` does.
//! Choices (docs/model-choices.md): every skip decays (the artifact decays
//! only the first EV a send skips); the pointer starts at a random EV and
//! walks in order (the artifact re-permutes each lap by a random XOR mask).
//! The artifact's synthetic and failure runs (REPS Figs. 1-8, 18) spray
//! BitMap over 256 EVs, one send each (`PRESET`); its trace and collective
//! runs over 32 768 EVs, two sends each (`sends_per_ev`), where a flow of a
//! few thousand packets meets each EV once and its penalties cannot steer it.

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::ScenarioError;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.bitmap`: per-EV penalties (REPS §4.1, STrack-like). Penalties are at most 255.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitmapParams {
    /// EVs sprayed over round-robin, capped by `lb.entropy_space`.
    pub entropy_space: u32,
    /// Consecutive sends on each EV of the walk (1 in `PRESET`; 2 in the artifact's trace and collective runs).
    pub sends_per_ev: u8,
    pub max_penalty: u8,
    pub ecn_penalty: u8,
    pub nack_penalty: u8,
    pub timeout_penalty: u8,
}

impl Params for BitmapParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.entropy_space == 0 || self.entropy_space > 65536 {
            return Err(ScenarioError::new(
                format!("{key}.entropy_space"),
                "must be between 1 and 65536",
            ));
        }
        if self.max_penalty == 0 {
            return Err(ScenarioError::new(format!("{key}.max_penalty"), "must be at least 1"));
        }
        if self.sends_per_ev == 0 {
            return Err(ScenarioError::new(format!("{key}.sends_per_ev"), "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct BitmapConfig {
    /// EVs sprayed over: `lb.bitmap.entropy_space` capped by `lb.entropy_space`.
    pub entropy_space: u32,
    pub sends_per_ev: u8,
    pub max_penalty: u8,
    pub ecn_penalty: u8,
    pub nack_penalty: u8,
    pub timeout_penalty: u8,
}

#[derive(Clone, Debug)]
pub struct Bitmap {
    cfg: BitmapConfig,
    penalty: Vec<u8>,
    /// The walk's next slot; each EV has `sends_per_ev` slots in a row.
    next: u32,
}

impl Bitmap {
    pub fn new(cfg: BitmapConfig, rng: &mut Rng) -> Self {
        Bitmap {
            penalty: vec![0; cfg.entropy_space as usize],
            next: rng.below(cfg.entropy_space as u64) as u32 * cfg.sends_per_ev as u32,
            cfg,
        }
    }

    fn penalise(&mut self, ev: u16, by: u8) {
        if let Some(p) = self.penalty.get_mut(ev as usize) {
            *p = p.saturating_add(by).min(self.cfg.max_penalty);
        }
    }
}

impl LoadBalancer for Bitmap {
    /// Ends: every skip lowers a penalty, so within `max_penalty` + 1 laps
    /// some EV reaches zero.
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, stats: &mut LbStats) -> u16 {
        let slots = self.cfg.entropy_space * self.cfg.sends_per_ev as u32;
        loop {
            let ev = self.next / self.cfg.sends_per_ev as u32;
            self.next = (self.next + 1) % slots;
            let p = &mut self.penalty[ev as usize];
            if *p == 0 {
                stats.explored += 1;
                return ev as u16;
            }
            *p -= 1;
        }
    }

    fn on_ack(&mut self, _now: SimTime, ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        if ack.ecn {
            self.penalise(ack.ev, self.cfg.ecn_penalty);
        }
        AckPath::Normal
    }

    fn on_nack(&mut self, _now: SimTime, ev: u16, _stats: &mut LbStats) {
        self.penalise(ev, self.cfg.nack_penalty);
    }

    fn on_lost(&mut self, _now: SimTime, ev: u16, _stats: &mut LbStats) {
        self.penalise(ev, self.cfg.timeout_penalty);
    }
}

struct Builder(BitmapConfig);

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Bitmap(Bitmap::new(self.0.clone(), rng))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: BitmapParams = parse_params(params, "lb.bitmap")?;
    // BitMap tracks a small space of its own inside the header's.
    Ok(Box::new(Builder(BitmapConfig {
        entropy_space: p.entropy_space.min(c.entropy_space),
        sends_per_ev: p.sends_per_ev,
        max_penalty: p.max_penalty,
        ecn_penalty: p.ecn_penalty,
        nack_penalty: p.nack_penalty,
        timeout_penalty: p.timeout_penalty,
    })))
}

const PRESET: &str = r#"
entropy_space = 256          # artifact run_symmetric.py, run_failures.py, run_tier.py: BitMap gets -paths 256
sends_per_ev = 1             # (_no_of_paths; nextEntropy_bitmap masks its walk index with 255: each EV once)
max_penalty = 15             # artifact _max_penalty
ecn_penalty = 1              # artifact processEv_bitmap
nack_penalty = 4             # artifact processEv_bitmap
timeout_penalty = 15         # artifact processEv_bitmap: the maximum
"#;

pub const ENTRY: LbEntry = LbEntry {
    name: "bitmap",
    label: "BitMap",
    color: "#17becf", // cyan
    switch_side: false,
    int_probes: false,
    reorders: true,
    presets: &[("reps_paper", PRESET)],
    check: check_params::<BitmapParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::tests::echo;
    use crate::rng::StreamTag;

    fn bitmap(n: u32) -> (Bitmap, Rng) {
        let mut rng = Rng::new(9, StreamTag::Flow, 0);
        let cfg = BitmapConfig {
            entropy_space: n,
            sends_per_ev: 1,
            max_penalty: 15,
            ecn_penalty: 1,
            nack_penalty: 4,
            timeout_penalty: 15,
        };
        (Bitmap::new(cfg, &mut rng), rng)
    }

    /// Under random feedback, every send takes an EV whose penalty was the
    /// least of all before the send: an unpenalised one whenever one exists.
    #[test]
    fn never_picks_a_penalised_ev_while_an_unpenalised_one_exists() {
        let (mut b, mut rng) = bitmap(8);
        let mut fb = Rng::new(10, StreamTag::Workload, 0);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let mut all_penalised = 0;
        for _ in 0..40_000 {
            let ev = fb.below(8) as u16;
            match fb.below(8) {
                0..=2 => {
                    b.on_ack(t, &echo(ev, true), &mut st);
                }
                3 => b.on_nack(t, ev, &mut st),
                4 if fb.below(10) == 0 => b.on_lost(t, ev, &mut st),
                _ => {
                    let before = b.penalty.clone();
                    let least = *before.iter().min().unwrap();
                    all_penalised += (least > 0) as u32;
                    let ev = b.next_ev(t, &mut rng, &mut st);
                    assert_eq!(before[ev as usize], least, "picked {ev} with penalties {before:?}");
                }
            }
        }
        assert!(
            all_penalised > 100,
            "the walk also met all-penalised states: {all_penalised}"
        );
        assert!(b.penalty.iter().all(|&p| p <= 15));
    }

    #[test]
    fn round_robin_and_a_penalty_decays_by_one_per_skip() {
        let (mut b, mut rng) = bitmap(8);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let mut send = |b: &mut Bitmap| b.next_ev(t, &mut rng, &mut st);
        let start = send(&mut b);
        let lap: Vec<u16> = (1..8).map(|i| (start + i) % 8).collect();
        assert_eq!((0..7).map(|_| send(&mut b)).collect::<Vec<_>>(), lap, "round-robin");
        let victim = (start + 3) % 8;
        b.on_nack(t, victim, &mut LbStats::default()); // penalty 4: skipped on the next 4 laps
        b.on_ack(t, &echo((start + 5) % 8, false), &mut LbStats::default()); // unmarked: no penalty
        for lap in 1..=4 {
            let evs: Vec<u16> = (0..7).map(|_| send(&mut b)).collect();
            assert!(!evs.contains(&victim), "lap {lap}: {evs:?}");
            assert_eq!(b.penalty[victim as usize], 4 - lap);
        }
        let evs: Vec<u16> = (0..8).map(|_| send(&mut b)).collect();
        assert!(evs.contains(&victim), "decayed to zero, used again");
    }

    /// `sends_per_ev = 2`, as the artifact's walk does with `-paths 65535`: each EV
    /// takes two sends in a row, and a penalised one is skipped on both.
    #[test]
    fn with_two_sends_per_ev_each_ev_goes_twice_and_a_penalty_skips_both() {
        let (mut b, mut rng) = bitmap(8);
        b.cfg.sends_per_ev = 2;
        b.next = 0;
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let evs: Vec<u16> = (0..6).map(|_| b.next_ev(t, &mut rng, &mut st)).collect();
        assert_eq!(evs, [0, 0, 1, 1, 2, 2]);
        b.on_nack(t, 4, &mut st); // penalty 4: both of 4's slots skip it, 2 off
        let evs: Vec<u16> = (0..6).map(|_| b.next_ev(t, &mut rng, &mut st)).collect();
        assert_eq!(evs, [3, 3, 5, 5, 6, 6]);
        assert_eq!(b.penalty[4], 2);
    }

    #[test]
    fn feedback_penalties_and_cap() {
        let (mut b, _) = bitmap(8);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        b.on_ack(t, &echo(1, true), &mut st);
        b.on_nack(t, 2, &mut st);
        b.on_lost(t, 3, &mut st);
        b.on_lost(t, 3, &mut st);
        assert_eq!(&b.penalty[1..4], &[1, 4, 15]);
    }
}
