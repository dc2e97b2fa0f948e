//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM '15), in the Mellanox form the ConWeave artifact's
//! ns-3 runs (its `RdmaHw` "mlx" reaction point). A flow starts at line rate
//! with no window and is paced exactly: after a packet of s bytes at rate R
//! the next may leave s·8/R later. Its receiver asks for cuts with CNPs
//! (the ECN bit of an ACK or NACK, `transport::gbn`, `transport::irn`).
//!
//! - First CNP: α = `initial_alpha`, rate and target = rate × `rate_on_first_cnp`,
//!   and three periodic timers start (the artifact's rule).
//! - Every `alpha_interval`: α ← (1−g)·α + g if a CNP came since the last
//!   update, else (1−g)·α.
//! - Every `decrease_interval` (offset by 1 ns from the first CNP, so after
//!   that instant's α update): if a CNP came, target ← rate (only after an
//!   increase, unless `clamp_target`), rate ← max(`min_rate`, rate·(1−α/2)),
//!   and the increase timer starts over.
//! - Every `increase_interval`: the first `fast_recovery` periods move the
//!   rate halfway to the target; then the target grows by `ai` once and by
//!   `hai` after (capped at line rate) and the rate moves halfway to it.
//!
//! The timers are evaluated lazily and exactly: when a packet leaves or a
//! CNP arrives, every timer instant up to now is replayed in order (α
//! updates, then increases, then decreases at one instant, as the artifact's
//! scheduling order gives), so when a flow is looked at never changes its rates.

use super::{AckSignal, Cc, CcBuilder, CcCommon, CcEntry, CongestionControl};
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{RateSpec, ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `cc.dcqcn`: every constant of the reaction point.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnParams {
    /// EWMA gain of α.
    pub g: f64,
    /// α at the first CNP.
    pub initial_alpha: f64,
    pub alpha_interval: Time,
    pub decrease_interval: Time,
    /// Rate (and target) on the first CNP, a fraction of the current rate.
    pub rate_on_first_cnp: f64,
    /// Clamp the target to the rate at every cut (false: only after an increase).
    pub clamp_target: bool,
    pub increase_interval: Time,
    /// Increase periods of fast recovery before additive increase.
    pub fast_recovery: u32,
    /// Additive increase of the target.
    pub ai: RateSpec,
    /// Hyper increase of the target.
    pub hai: RateSpec,
    pub min_rate: RateSpec,
}

impl Params for DcqcnParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        let bad = |k: &str, msg: String| Err(ScenarioError::new(format!("{key}.{k}"), msg));
        for (k, v) in [
            ("g", self.g),
            ("initial_alpha", self.initial_alpha),
            ("rate_on_first_cnp", self.rate_on_first_cnp),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(k, format!("must be in (0, 1], got {v}"));
            }
        }
        // Not the packet-serialization floor of other timers (units::check_timer): the
        // artifact's 1 us α timer is shorter than a 9000 B packet at 10 Gb/s, and a rate
        // timer fires per flow, not per packet; 1 ns keeps a run's events bounded.
        for (k, t) in [
            ("alpha_interval", &self.alpha_interval),
            ("decrease_interval", &self.decrease_interval),
            ("increase_interval", &self.increase_interval),
        ] {
            if t.value.ps() <= 1000 {
                return bad(k, format!("must be longer than 1 ns, got \"{}\"", t.text));
            }
        }
        Ok(())
    }
}

/// The run-wide constants, in the units the arithmetic uses.
#[derive(Debug)]
struct Config {
    g: f64,
    initial_alpha: f64,
    alpha_interval: SimTime,
    decrease_interval: SimTime,
    rate_on_first_cnp: f64,
    clamp_target: bool,
    increase_interval: SimTime,
    fast_recovery: u32,
    /// Rates in bits per second.
    ai: f64,
    hai: f64,
    min_rate: f64,
    line: f64,
}

/// One flow's reaction point.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    c: Arc<Config>,
    /// Current and target rate, bits per second.
    pub rate: f64,
    pub target: f64,
    pub alpha: f64,
    /// A CNP arrived: the timers run.
    started: bool,
    /// A CNP came since the last α update.
    alpha_cnp: bool,
    alpha_next: SimTime,
    /// Decrease checks fall at `decrease_base` + k·interval, k ≥ 1.
    decrease_base: SimTime,
    /// The next check that will cut (a CNP came since the last one).
    decrease_at: Option<SimTime>,
    increase_at: Option<SimTime>,
    stage: u32,
    next_avail: SimTime,
}

const ONE_NS: SimTime = SimTime(1000);

impl Dcqcn {
    fn new(c: Arc<Config>) -> Self {
        Dcqcn {
            rate: c.line,
            target: c.line,
            alpha: c.initial_alpha,
            c,
            started: false,
            alpha_cnp: false,
            alpha_next: SimTime::ZERO,
            decrease_base: SimTime::ZERO,
            decrease_at: None,
            increase_at: None,
            stage: 0,
            next_avail: SimTime::ZERO,
        }
    }

    /// The rate at `now` (bits per second), with every timer up to now applied.
    pub fn rate_at(&mut self, now: SimTime) -> f64 {
        self.advance(now);
        self.rate
    }

    /// A CNP arrived at `now`.
    pub fn on_cnp(&mut self, now: SimTime) {
        self.advance(now);
        if !self.started {
            self.started = true;
            self.alpha = self.c.initial_alpha;
            self.alpha_next = now + self.c.alpha_interval;
            self.decrease_base = now + ONE_NS;
            self.decrease_at = Some(self.decrease_base + self.c.decrease_interval);
            self.rate *= self.c.rate_on_first_cnp;
            self.target = self.rate;
            return;
        }
        self.alpha_cnp = true;
        if self.decrease_at.is_none() {
            let i = self.c.decrease_interval.ps();
            let k = now.ps().saturating_sub(self.decrease_base.ps()) / i + 1;
            self.decrease_at = Some(self.decrease_base + SimTime(k * i));
        }
    }

    /// Replay every timer instant up to `now`, in order.
    fn advance(&mut self, now: SimTime) {
        if !self.started {
            return;
        }
        loop {
            let inc = self.increase_at.unwrap_or(SimTime::MAX);
            let dec = self.decrease_at.unwrap_or(SimTime::MAX);
            let t = inc.min(dec);
            if t > now {
                break;
            }
            self.advance_alpha(t);
            if inc <= dec {
                self.increase(t);
            } else {
                self.decrease(t);
            }
        }
        self.advance_alpha(now);
    }

    /// Apply the α updates due by `t`: the first with the CNP bit, the rest
    /// without, one multiplication each (so that when the flow is looked at
    /// never changes the result), stopping early once α is 0.
    fn advance_alpha(&mut self, t: SimTime) {
        if self.alpha_next > t {
            return;
        }
        let i = self.c.alpha_interval.ps();
        let n = (t.ps() - self.alpha_next.ps()) / i + 1;
        let keep = 1.0 - self.c.g;
        self.alpha = keep * self.alpha + if self.alpha_cnp { self.c.g } else { 0.0 };
        self.alpha_cnp = false;
        for _ in 1..n {
            if self.alpha == 0.0 {
                break;
            }
            self.alpha *= keep;
        }
        self.alpha_next = SimTime(self.alpha_next.ps() + n * i);
    }

    fn decrease(&mut self, t: SimTime) {
        if self.c.clamp_target || self.stage != 0 {
            self.target = self.rate;
        }
        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.c.min_rate);
        self.stage = 0;
        self.decrease_at = None;
        self.increase_at = Some(t + self.c.increase_interval);
    }

    fn increase(&mut self, t: SimTime) {
        let c = &self.c;
        if self.stage > c.fast_recovery {
            self.target = (self.target + c.hai).min(c.line);
        } else if self.stage == c.fast_recovery {
            self.target = (self.target + c.ai).min(c.line);
        }
        self.rate = (self.rate + self.target) / 2.0;
        self.stage += 1;
        self.increase_at = Some(t + c.increase_interval);
    }
}

impl CongestionControl for Dcqcn {
    /// No window: only the rate limits a DCQCN flow (the artifact's `HAS_WIN 0`).
    fn may_send(&self, _inflight: u64) -> bool {
        true
    }

    fn on_send(&mut self, now: SimTime, bytes: u32) {
        let rate = self.rate_at(now);
        let gap = (bytes as f64 * 8.0 * 1e12 / rate).ceil() as u64;
        self.next_avail = now + SimTime(gap);
    }

    fn paced_until(&mut self, now: SimTime) -> Option<SimTime> {
        (self.next_avail > now).then_some(self.next_avail)
    }

    fn on_ack(&mut self, a: &AckSignal) {
        if a.ecn {
            self.on_cnp(a.now);
        }
    }
}

struct Builder(Arc<Config>);

impl CcBuilder for Builder {
    fn sender(&self, _initial_window: u64) -> Cc {
        Cc::Dcqcn(Dcqcn::new(self.0.clone()))
    }
}

fn prepare(params: Option<&toml::Value>, common: &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError> {
    let p: DcqcnParams = parse_params(params, "cc.dcqcn")?;
    let line = common.line_rate.bps() as f64;
    if p.min_rate.value.bps() as f64 > line {
        return Err(ScenarioError::new(
            "cc.dcqcn.min_rate",
            format!("{} is above the hosts' link rate", p.min_rate.text),
        ));
    }
    Ok(Box::new(Builder(Arc::new(Config {
        g: p.g,
        initial_alpha: p.initial_alpha,
        alpha_interval: p.alpha_interval.value,
        decrease_interval: p.decrease_interval.value,
        rate_on_first_cnp: p.rate_on_first_cnp,
        clamp_target: p.clamp_target,
        increase_interval: p.increase_interval.value,
        fast_recovery: p.fast_recovery,
        ai: p.ai.value.bps() as f64,
        hai: p.hai.value.bps() as f64,
        min_rate: p.min_rate.value.bps() as f64,
        line,
    }))))
}

pub const ENTRY: CcEntry = CcEntry {
    name: "dcqcn",
    presets: &[(
        "reps_paper",
        r#"
g = 0.00390625               # ConWeave artifact run.py: EWMA_GAIN 1/256
initial_alpha = 1.0          # ConWeave artifact RdmaHw::cnp_received_mlx: alpha = 1 on the first CNP
alpha_interval = "1us"       # ConWeave artifact run.py: ALPHA_RESUME_INTERVAL 1
decrease_interval = "4us"    # ConWeave artifact run.py: RATE_DECREASE_INTERVAL 4
rate_on_first_cnp = 1.0      # ConWeave artifact RdmaHw: RateOnFirstCnp 1.0 (no cut on the first CNP)
clamp_target = false         # ConWeave artifact run.py: CLAMP_TARGET_RATE 0
increase_interval = "300us"  # ConWeave artifact run.py: RP_TIMER 300
fast_recovery = 1            # ConWeave artifact run.py: FAST_RECOVERY_TIMES 1
ai = "40Mbps"                # ConWeave artifact run.py: RATE_AI = 10 * 100 / 25 Mb/s at 100 G
hai = "100Mbps"              # ConWeave artifact run.py: RATE_HAI = 25 * 100 / 25 Mb/s at 100 G
min_rate = "100Mbps"         # ConWeave artifact run.py: MIN_RATE 100Mb/s
"#,
    )],
    check: check_params::<DcqcnParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1.0 / 256.0;

    fn flow() -> Dcqcn {
        Dcqcn::new(Arc::new(Config {
            g: G,
            initial_alpha: 1.0,
            alpha_interval: SimTime::from_us(1),
            decrease_interval: SimTime::from_us(4),
            rate_on_first_cnp: 1.0,
            clamp_target: false,
            increase_interval: SimTime::from_us(300),
            fast_recovery: 1,
            ai: 40e6,
            hai: 100e6,
            min_rate: 100e6,
            line: 100e9,
        }))
    }

    /// One CNP at 10 us: no cut at once; the check at 14 us + 1 ns cuts by
    /// α/2 with α = (1−g)⁴ after four updates without CNP (about half);
    /// then k increase periods of 300 us with the target at line rate move
    /// the rate to line − (line − cut)/2ᵏ.
    #[test]
    fn the_first_cut_nearly_halves_and_recovery_follows_the_closed_form() {
        let mut f = flow();
        let us = SimTime::from_us;
        f.on_cnp(us(10));
        assert_eq!(f.rate_at(us(14)), 100e9, "no cut before the first check");
        let alpha = (1.0 - G).powi(4);
        let cut = 100e9 * (1.0 - alpha / 2.0);
        let check = us(14) + ONE_NS;
        assert!((f.rate_at(check) - cut).abs() < 1.0, "{} vs {cut}", f.rate);
        assert!((cut / 100e9 - 0.5).abs() < 0.01, "about half");
        let mut before = cut;
        for k in 1..=3 {
            let t = check + SimTime::from_us(300 * k);
            assert_eq!(f.rate_at(t - SimTime(1)), before, "not before the timer");
            let expect = 100e9 - (100e9 - cut) / 2f64.powi(k as i32);
            assert!((f.rate_at(t) - expect).abs() < 1.0, "k={k}: {} vs {expect}", f.rate);
            before = f.rate;
        }
    }

    /// α tends to the fraction of its updates that saw a CNP: 1 with a CNP
    /// every microsecond (and the rate halves every 4 us down to the
    /// floor), 1/2 with one every other microsecond.
    #[test]
    fn alpha_tracks_the_share_of_updates_with_a_cnp() {
        for (every, share) in [(1, 1.0), (2, 0.5)] {
            let mut f = flow();
            for t in (0..4000).step_by(every) {
                f.on_cnp(SimTime::from_us(t));
            }
            assert!((f.alpha - share).abs() < 0.01, "{}", f.alpha);
            assert_eq!(f.rate_at(SimTime::from_us(4000)), 100e6);
        }
    }

    /// Lazy evaluation equals stepping: querying at every microsecond and
    /// querying once at the end agree bit for bit.
    #[test]
    fn lazy_and_stepped_evaluation_agree() {
        let cnps = [3, 5, 6, 40, 41, 700, 1500];
        let run = |step: bool| {
            let mut f = flow();
            for t in 0..3000u64 {
                if cnps.contains(&t) {
                    f.on_cnp(SimTime::from_us(t));
                } else if step {
                    f.rate_at(SimTime::from_us(t));
                }
            }
            (f.rate_at(SimTime::from_us(3000)), f.target, f.stage)
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a.0.to_bits(), b.0.to_bits());
        assert_eq!((a.1.to_bits(), a.2), (b.1.to_bits(), b.2));
    }
}
