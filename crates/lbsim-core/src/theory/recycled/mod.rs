//! Recycled balls-into-bins: the model of REPS at one switch (REPS §5.1,
//! Theorem 5.1, proof in Appendix C), with ACK coalescing (Appendix D.1).
//!
//! There are b·n colours (entropy values) and a threshold τ (the ECN marking
//! threshold). Each step every non-empty bin removes its oldest ball (FIFO).
//! If the bin held at most τ balls (the packet left unmarked), the ball's
//! colour remembers the bin, unless it already remembers another one; if the
//! bin held more than τ (marked), the colour forgets its bin. Then n balls
//! are thrown: a colour that remembers a bin throws into it, any other
//! colour throws uniformly at random (a fresh entropy).
//!
//! # Which colours throw when ([`Schedule`])
//! §5.1 says the colours are "cycled round-robin in batches of n". Read
//! literally ([`Schedule::RoundRobin`]: batch (t−1) mod b throws at step t),
//! a colour comes back b steps after it was last thrown, whether or not its
//! ball has left. The proof in App. C analyses a different process: "the
//! number of balls in a bin only increases if it receives a fresh ball",
//! "once a bin is non-empty, it remains non-empty", and a bin at τ has drift
//! k/n (its removed ball comes straight back, plus k/n fresh ones). Those
//! hold only if a recycled colour is thrown again in the step that removed
//! its ball ([`Schedule::Immediate`], the default): each step throws the
//! recycled colours into their bins and fills the rest of the n throws with
//! fresh colours, taken round-robin from the colours that have no ball in
//! flight. This is also what REPS does: an unmarked ACK's entropy is reused
//! by the next packet (§3.1). With b·n ≥ the balls in flight (App. C: at most
//! 2n ln n + n, hence b ≥ 2.4 ln n) every ball has its own colour; if colours
//! run out, a fresh ball shares the colour next in round-robin order (a
//! *collision*, counted; the "more than one ball per colour" case of App. C).
//! Literally read, the round-robin schedule does not converge at the
//! theorem's constants (see docs/theory.md); it is kept for comparison.
//!
//! # Removal order and ACK coalescing
//! The removals of one step are processed in the order their balls were
//! thrown (the order a receiver would see the packets). With coalescing
//! every `ack_every`-th removal (counted over the whole run) gives feedback
//! (App. D.1: only the ACK's triggering packet's entropy returns, §4.5.1);
//! other removed colours are not recycled and, under the immediate
//! schedule, become free for fresh throws.
//!
//! # Convergence
//! Under the immediate schedule without coalescing, once every bin is
//! non-empty and at most τ and no colour has two balls, every removal is
//! recycled into its own bin and nothing changes again: the process has
//! converged (Theorem 5.1). The run reports that step and, from then on,
//! repeats the frozen loads without simulating them.

mod process;
#[cfg(test)]
mod tests;

pub use process::Recycled;

use super::{bad, check_bins, check_steps, Series, TheoryError};

/// Largest colour space a run accepts (b·n).
pub const MAX_COLOURS: u64 = 1 << 28;

/// When a colour throws (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A recycled colour is thrown again in the step that removed it; fresh
    /// colours fill the step's n throws (the process App. C analyses).
    Immediate,
    /// Batch (t−1) mod b of n colours throws at step t (§5.1 read literally).
    RoundRobin,
}

impl Schedule {
    pub fn parse(s: &str) -> Result<Self, TheoryError> {
        match s {
            "immediate" => Ok(Schedule::Immediate),
            "round_robin" | "round-robin" => Ok(Schedule::RoundRobin),
            _ => Err(bad(
                "schedule",
                format!("unknown schedule {s:?}: expected \"immediate\" or \"round_robin\""),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Schedule::Immediate => "immediate",
            Schedule::RoundRobin => "round_robin",
        }
    }
}

/// Parameters of one run of the recycled model.
#[derive(Clone, Debug, PartialEq)]
pub struct RecycledParams {
    /// Bins (output ports), n ≥ 1.
    pub n: usize,
    /// Threshold τ: a removal from a bin holding more than τ balls forgets (Thm 5.1: τ ≥ 4 ln n).
    pub tau: u32,
    /// b·n colours (Thm 5.1: b ≥ 2.4 ln n).
    pub b: u32,
    /// Every `ack_every`-th removal gives feedback (1: every one; App. D.1: 2, 4, 8).
    pub ack_every: u32,
    pub schedule: Schedule,
    pub steps: u64,
    pub record_loads: bool,
    /// Balls in each bin before step 1, all fresh (no colour remembers a bin). None: empty.
    pub initial_loads: Option<Vec<u32>>,
}

impl RecycledParams {
    /// Theorem 5.1's parameters (τ = ⌈4 ln n⌉, b = ⌈2.4 ln n⌉), immediate schedule, no coalescing.
    pub fn theorem(n: usize, steps: u64) -> Self {
        RecycledParams {
            n,
            tau: super::theorem_tau(n),
            b: super::theorem_b(n),
            ack_every: 1,
            schedule: Schedule::Immediate,
            steps,
            record_loads: false,
            initial_loads: None,
        }
    }

    pub fn validate(&self) -> Result<(), TheoryError> {
        check_bins("n", self.n)?;
        if self.b < 1 {
            return Err(bad("b", "must be at least 1, got 0"));
        }
        let colours = self.b as u64 * self.n as u64;
        if colours > MAX_COLOURS {
            return Err(bad("b", format!("b·n = {colours} colours is more than {MAX_COLOURS}")));
        }
        if self.ack_every < 1 {
            return Err(bad("ack_every", "must be at least 1, got 0"));
        }
        if let Some(init) = &self.initial_loads {
            if init.len() != self.n {
                return Err(bad(
                    "initial_loads",
                    format!("has {} bins, expected n = {}", init.len(), self.n),
                ));
            }
            let total: u64 = init.iter().map(|&l| l as u64).sum();
            if total > u32::MAX as u64 / 2 {
                return Err(bad("initial_loads", format!("{total} balls is too many")));
            }
        }
        check_steps(self.steps, self.n, self.record_loads)
    }
}

/// What a run found, without its per-step series.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecycledSummary {
    /// The step after which the state never changes again (immediate schedule
    /// without coalescing only; None if not reached within the run).
    pub converged_step: Option<u64>,
    /// The last step at which some bin held more than τ balls (0: never).
    pub last_over_tau: u64,
    /// The largest load of any bin at any step.
    pub peak_load: u32,
    /// Balls in the bins after the last step.
    pub final_balls: u64,
    /// Throws whose colour already had a ball in flight.
    pub collisions: u64,
}

/// One run: per-step series plus the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct RecycledRun {
    pub series: Series,
    /// Balls thrown uniformly at random (fresh colours) at each step.
    pub fresh: Vec<u32>,
    pub summary: RecycledSummary,
}

/// The worst start App. C's second phase allows: 2n ln n + n balls (the
/// bound on the balls left by the first phase), every bin non-empty, the
/// surplus ⌊2n ln n⌋ piled in bin 0 (the largest potential Y₀ of the drift
/// argument). All balls fresh.
pub fn phase_two_start(n: usize) -> Vec<u32> {
    let mut v = vec![1u32; n];
    if let Some(first) = v.first_mut() {
        *first += (2.0 * n as f64 * (n.max(1) as f64).ln()) as u32;
    }
    v
}

fn simulate(
    p: &RecycledParams,
    seed: u64,
    mut series: Option<&mut Series>,
    fresh: Option<&mut Vec<u32>>,
) -> Result<RecycledSummary, TheoryError> {
    let mut s = Recycled::new(p, seed)?;
    let mut sum = RecycledSummary::default();
    let mut fresh = fresh;
    for t in 1..=p.steps {
        let random = s.step();
        let loads = s.loads();
        let mx = loads.clone().max().unwrap_or(0);
        sum.peak_load = sum.peak_load.max(mx);
        if mx > p.tau {
            sum.last_over_tau = t;
        }
        if let Some(series) = series.as_deref_mut() {
            series.push(loads);
        }
        if let Some(f) = fresh.as_deref_mut() {
            f.push(random);
        }
        if s.is_frozen() {
            sum.converged_step = Some(t);
            let rest = (p.steps - t) as usize;
            if let Some(series) = series.as_deref_mut() {
                series.repeat_last(rest, p.n);
            }
            if let Some(f) = fresh.as_deref_mut() {
                f.extend(std::iter::repeat_n(0, rest));
            }
            break;
        }
    }
    sum.final_balls = s.loads().map(|l| l as u64).sum();
    sum.collisions = s.collisions();
    Ok(sum)
}

/// Run the recycled model, recording per-step series. Deterministic in `seed`.
pub fn run(p: &RecycledParams, seed: u64) -> Result<RecycledRun, TheoryError> {
    let mut series = Series::with_capacity(p.steps.min(u32::MAX as u64), p.n, p.record_loads);
    let mut fresh = Vec::new();
    let summary = simulate(p, seed, Some(&mut series), Some(&mut fresh))?;
    Ok(RecycledRun { series, fresh, summary })
}

/// Run the recycled model for its summary only (stops as soon as it has converged).
pub fn run_summary(p: &RecycledParams, seed: u64) -> Result<RecycledSummary, TheoryError> {
    let p = RecycledParams {
        record_loads: false,
        ..p.clone()
    };
    simulate(&p, seed, None, None)
}
