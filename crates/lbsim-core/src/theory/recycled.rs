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

use super::{bad, check_bins, check_steps, stream, Series, TheoryError};
use crate::rng::Rng;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
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

#[derive(Clone, Copy, Debug)]
struct Ball {
    seq: u64,
    colour: u32,
}

#[derive(Clone, Copy, Debug)]
struct Removal {
    seq: u64,
    bin: u32,
    colour: u32,
    /// Load of the bin before the removal.
    load: u32,
}

/// The state of the recycled process, one [`step`](Recycled::step) at a time.
pub struct Recycled {
    n: usize,
    tau: u32,
    ack_every: u64,
    schedule: Schedule,
    colours: u32,
    bins: Vec<VecDeque<Ball>>,
    /// The bin each colour remembers (NONE: none).
    memory: Vec<u32>,
    /// Balls of each colour in the bins (plus, mid-step, recycled ones about to be rethrown).
    in_flight: Vec<u32>,
    /// Colours with two or more balls in flight.
    shared: u32,
    /// Immediate schedule: colours without a ball, in round-robin order.
    free: VecDeque<u32>,
    /// Next colour in ring order (round-robin batches; immediate: collisions).
    cursor: u32,
    seq: u64,
    removed: u64,
    step: u64,
    collisions: u64,
    rng: Rng,
    removals: Vec<Removal>,
    recycle: Vec<u32>,
}

impl Recycled {
    /// A validated process in its initial state (empty bins, or `initial_loads`).
    pub fn new(p: &RecycledParams, seed: u64) -> Result<Self, TheoryError> {
        p.validate()?;
        let colours = p.b * p.n as u32;
        let mut s = Recycled {
            n: p.n,
            tau: p.tau,
            ack_every: p.ack_every as u64,
            schedule: p.schedule,
            colours,
            bins: vec![VecDeque::new(); p.n],
            memory: vec![NONE; colours as usize],
            in_flight: vec![0; colours as usize],
            shared: 0,
            free: match p.schedule {
                Schedule::Immediate => (0..colours).collect(),
                Schedule::RoundRobin => VecDeque::new(),
            },
            cursor: 0,
            seq: 0,
            removed: 0,
            step: 0,
            collisions: 0,
            rng: stream(seed, 2),
            removals: Vec::with_capacity(p.n),
            recycle: Vec::with_capacity(p.n),
        };
        if let Some(init) = &p.initial_loads {
            for (bin, &l) in init.iter().enumerate() {
                for _ in 0..l {
                    let c = s.fresh_colour();
                    s.put(bin as u32, c);
                }
            }
        }
        Ok(s)
    }

    /// Steps taken so far.
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// Balls in each bin.
    pub fn loads(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.bins.iter().map(|q| q.len() as u32)
    }

    /// The bin colour `c` remembers.
    pub fn memory(&self, c: u32) -> Option<u32> {
        let m = self.memory[c as usize];
        (m != NONE).then_some(m)
    }

    /// Colours of the balls in `bin`, oldest first.
    pub fn bin_colours(&self, bin: usize) -> Vec<u32> {
        self.bins[bin].iter().map(|b| b.colour).collect()
    }

    pub fn collisions(&self) -> u64 {
        self.collisions
    }

    /// True once the state can never change again (see the module documentation).
    pub fn is_frozen(&self) -> bool {
        self.schedule == Schedule::Immediate
            && self.ack_every == 1
            && self.shared == 0
            && self.bins.iter().all(|q| !q.is_empty() && q.len() as u32 <= self.tau)
    }

    fn add_ball(&mut self, c: u32) {
        let f = &mut self.in_flight[c as usize];
        *f += 1;
        if *f == 2 {
            self.shared += 1;
        }
    }

    fn drop_ball(&mut self, c: u32) {
        let f = &mut self.in_flight[c as usize];
        *f -= 1;
        if *f == 1 {
            self.shared -= 1;
        }
    }

    /// Throw a ball of colour `c` into `bin` (its ball count is already updated).
    fn push(&mut self, bin: u32, c: u32) {
        self.bins[bin as usize].push_back(Ball {
            seq: self.seq,
            colour: c,
        });
        self.seq += 1;
    }

    fn put(&mut self, bin: u32, c: u32) {
        self.add_ball(c);
        self.push(bin, c);
    }

    /// The colour of a fresh ball (immediate schedule: the next free colour
    /// in round-robin order, else a collision; round-robin: the ring's next).
    fn fresh_colour(&mut self) -> u32 {
        if let Some(c) = self.free.pop_front() {
            return c;
        }
        let c = self.cursor;
        self.cursor = (self.cursor + 1) % self.colours;
        if self.schedule == Schedule::Immediate {
            // Every colour has a ball in flight: this fresh ball shares one,
            // and the colour starts over, remembering nothing.
            self.collisions += 1;
            self.memory[c as usize] = NONE;
        } else if self.in_flight[c as usize] > 0 {
            self.collisions += 1;
        }
        c
    }

    /// Throw a ball of colour `c` (already counted in flight): into the bin
    /// the colour remembers, else uniformly at random. Returns whether the
    /// throw was random.
    fn place(&mut self, c: u32) -> bool {
        let m = self.memory[c as usize];
        let (bin, random) = if m != NONE {
            (m, false)
        } else {
            (self.rng.below(self.n as u64) as u32, true)
        };
        self.push(bin, c);
        random
    }

    /// Throw a new ball of colour `c` (see [`place`](Self::place)).
    fn throw(&mut self, c: u32) -> bool {
        self.add_ball(c);
        self.place(c)
    }

    /// One time step (removals, then throws). Returns the number of balls
    /// thrown at random.
    pub fn step(&mut self) -> u32 {
        self.step += 1;
        // Every non-empty bin removes its oldest ball (§5.1, FIFO).
        self.removals.clear();
        for (i, q) in self.bins.iter_mut().enumerate() {
            let load = q.len() as u32;
            if let Some(b) = q.pop_front() {
                self.removals.push(Removal {
                    seq: b.seq,
                    bin: i as u32,
                    colour: b.colour,
                    load,
                });
            }
        }
        // In the order the balls were thrown (a receiver's arrival order).
        self.removals.sort_unstable_by_key(|r| r.seq);
        self.recycle.clear();
        for k in 0..self.removals.len() {
            let r = self.removals[k];
            let c = r.colour as usize;
            self.drop_ball(r.colour);
            self.removed += 1;
            // App. D.1: with ACK coalescing only every k-th removal reports back.
            let feedback = self.removed.is_multiple_of(self.ack_every);
            if feedback && r.load <= self.tau {
                // §5.1: at most τ balls: remember the bin, unless remembering another.
                if self.memory[c] == NONE {
                    self.memory[c] = r.bin;
                }
                if self.schedule == Schedule::Immediate {
                    self.add_ball(r.colour);
                    self.recycle.push(r.colour);
                }
            } else if feedback {
                // §5.1: more than τ balls: the colour forgets its bin.
                self.memory[c] = NONE;
            }
            if self.schedule == Schedule::Immediate && self.in_flight[c] == 0 {
                // Not recycled and no other ball: free for a fresh throw, knowing nothing.
                self.memory[c] = NONE;
                self.free.push_back(r.colour);
            }
        }
        let mut random = 0u32;
        match self.schedule {
            Schedule::Immediate => {
                // Recycled colours return to their bins at once (App. C; a
                // colour that forgot since, through a second ball, throws at random) ...
                for k in 0..self.recycle.len() {
                    let c = self.recycle[k];
                    random += self.place(c) as u32;
                }
                // ... and fresh colours make up the step's n throws.
                for _ in self.recycle.len()..self.n {
                    let c = self.fresh_colour();
                    random += self.throw(c) as u32;
                }
            }
            Schedule::RoundRobin => {
                let batch = ((self.step - 1) % (self.colours / self.n as u32) as u64) as u32;
                for c in batch * self.n as u32..(batch + 1) * self.n as u32 {
                    if self.in_flight[c as usize] > 0 {
                        self.collisions += 1;
                    }
                    random += self.throw(c) as u32;
                }
            }
        }
        random
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n: usize, tau: u32, b: u32) -> RecycledParams {
        RecycledParams {
            n,
            tau,
            b,
            ack_every: 1,
            schedule: Schedule::Immediate,
            steps: 100,
            record_loads: true,
            initial_loads: None,
        }
    }

    #[test]
    fn hand_traced_single_bin() {
        // n = 1: step 1 throws one fresh ball (colour 0); from step 2 on it is
        // removed from a bin holding 1 ≤ τ and recycled: frozen at once.
        let p = params(1, 2, 3);
        let mut s = Recycled::new(&p, 1).unwrap();
        assert_eq!(s.step(), 1);
        assert_eq!(s.bin_colours(0), vec![0]);
        assert!(s.is_frozen());
        assert_eq!(s.step(), 0);
        assert_eq!((s.bin_colours(0), s.memory(0)), (vec![0], Some(0)));
        let r = run(&p, 1).unwrap();
        assert_eq!(r.summary.converged_step, Some(1));
        assert!(r.series.max_load.iter().all(|&m| m == 1) && r.series.steps() == 100);
    }

    #[test]
    fn hand_traced_overfull_bin_forgets() {
        // n = 1, τ = 1, three balls (colours 0, 1, 2): each removal is from a
        // bin holding 3 > τ, so the colour forgets and a fresh colour (3, 4,
        // 5, then 0 again: round-robin over free colours) is thrown.
        let mut p = params(1, 1, 6);
        p.initial_loads = Some(vec![3]);
        let mut s = Recycled::new(&p, 1).unwrap();
        assert_eq!(s.bin_colours(0), vec![0, 1, 2]);
        for (t, want) in [
            (1, vec![1, 2, 3]),
            (2, vec![2, 3, 4]),
            (3, vec![3, 4, 5]),
            (4, vec![4, 5, 0]),
        ] {
            assert_eq!(s.step(), 1, "step {t}");
            assert_eq!(s.bin_colours(0), want, "step {t}");
            assert_eq!(s.memory(want[0]), None);
        }
        assert!(!s.is_frozen());
        // 3 balls in 1 bin with τ = 1 can never converge (balls are conserved).
        let r = run(&p, 1).unwrap();
        assert_eq!(r.summary.converged_step, None);
        assert_eq!(
            (r.summary.last_over_tau, r.summary.peak_load, r.summary.final_balls),
            (100, 3, 3)
        );
        assert!(r.fresh.iter().all(|&f| f == 1));
    }

    #[test]
    fn hand_traced_two_bins() {
        // n = 2, τ = 1, bins [2, 1]: bin 0 (2 > τ) forgets colour 0, bin 1
        // (1 ≤ τ) recycles colour 2 into itself; one fresh throw (colour 3).
        let mut p = params(2, 1, 2);
        p.initial_loads = Some(vec![2, 1]);
        let mut s = Recycled::new(&p, 7).unwrap();
        assert_eq!((s.bin_colours(0), s.bin_colours(1)), (vec![0, 1], vec![2]));
        assert_eq!(s.step(), 1);
        assert_eq!(s.memory(0), None);
        assert_eq!(s.memory(2), Some(1));
        let b1 = s.bin_colours(1);
        assert_eq!(b1[0], 2);
        let fresh_in_0 = s.bin_colours(0).contains(&3);
        assert_eq!(s.bin_colours(0).len() + b1.len(), 3);
        assert_eq!(fresh_in_0, b1.len() == 1);
        assert_eq!(s.bin_colours(0)[0], 1);
    }

    #[test]
    fn balls_grow_only_by_empty_bins() {
        // n throws per step, one removal per non-empty bin: balls grow by the
        // number of empty bins, and a bin grows only through fresh balls (App. C).
        let p = RecycledParams {
            steps: 400,
            record_loads: true,
            ..RecycledParams::theorem(16, 400)
        };
        let r = run(&p, 3).unwrap();
        let loads = r.series.loads.unwrap();
        let mut prev = vec![0u32; 16];
        for t in 0..r.summary.converged_step.unwrap() as usize {
            let row = &loads[t * 16..(t + 1) * 16];
            let empty = prev.iter().filter(|&&l| l == 0).count() as u64;
            assert_eq!(r.series.balls[t], prev.iter().map(|&l| l as u64).sum::<u64>() + empty);
            let growth: u32 = row.iter().zip(&prev).map(|(&a, &b)| a.saturating_sub(b)).sum();
            assert!(
                growth <= r.fresh[t],
                "step {}: growth {growth} > fresh {}",
                t + 1,
                r.fresh[t]
            );
            prev = row.to_vec();
        }
    }

    #[test]
    fn frozen_state_repeats() {
        let p = RecycledParams {
            record_loads: true,
            ..RecycledParams::theorem(16, 300)
        };
        let r = run(&p, 9).unwrap();
        let t = r.summary.converged_step.expect("converges") as usize;
        // Simulating past the freeze gives exactly the repeated state.
        let mut s = Recycled::new(&p, 9).unwrap();
        for _ in 0..t {
            s.step();
        }
        let frozen: Vec<u32> = s.loads().collect();
        for _ in 0..50 {
            assert_eq!(s.step(), 0);
            assert_eq!(s.loads().collect::<Vec<_>>(), frozen);
        }
        let loads = r.series.loads.as_ref().unwrap();
        assert_eq!(&loads[loads.len() - 16..], &frozen[..]);
        assert_eq!(r.series.steps(), 300);
    }

    #[test]
    fn round_robin_batches_cycle_and_remember() {
        // n = 2, b = 2, τ large: step 1 throws colours 0, 1 at random, step 2
        // colours 2, 3 at random. By step 3 colours 0 and 1 have both been
        // removed (at step 2, or the second of a shared bin at step 3 before
        // the throws), so batch 0 throws them into the bins they remember.
        let mut p = params(2, 100, 2);
        p.schedule = Schedule::RoundRobin;
        let mut s = Recycled::new(&p, 4).unwrap();
        assert_eq!(s.step(), 2);
        let first: Vec<Option<u32>> = [0u32, 1]
            .map(|c| (0..2u32).find(|&i| s.bin_colours(i as usize).contains(&c)))
            .to_vec();
        assert_eq!(s.step(), 2);
        assert_eq!(s.step(), 0);
        for c in [0u32, 1] {
            let m = s.memory(c).expect("remembers");
            assert_eq!(Some(m), first[c as usize]);
            assert_eq!(s.bin_colours(m as usize).iter().filter(|&&x| x == c).count(), 1);
        }
    }

    #[test]
    fn coalescing_recycles_every_kth_removal() {
        // n = 1, τ large, ack_every 2: the single ball is recycled at every
        // other removal and replaced by a fresh colour otherwise.
        let mut p = params(1, 100, 4);
        p.ack_every = 2;
        let mut s = Recycled::new(&p, 1).unwrap();
        assert_eq!(s.step(), 1); // colour 0
        assert_eq!(s.step(), 1); // removal 1: no feedback; fresh colour 1
        assert_eq!(s.bin_colours(0), vec![1]);
        assert_eq!(s.step(), 0); // removal 2: feedback, colour 1 recycled
        assert_eq!((s.bin_colours(0), s.memory(1)), (vec![1], Some(0)));
        assert_eq!(s.step(), 1); // removal 3: none; colour 1 freed, fresh colour 2
        assert_eq!((s.bin_colours(0), s.memory(1)), (vec![2], None));
        assert!(!s.is_frozen());
    }

    #[test]
    fn deterministic_per_seed_and_errors_named() {
        let p = RecycledParams {
            record_loads: true,
            ..RecycledParams::theorem(8, 200)
        };
        assert_eq!(run(&p, 5).unwrap(), run(&p, 5).unwrap());
        assert_ne!(run(&p, 5).unwrap().series.loads, run(&p, 6).unwrap().series.loads);
        let bad_n = RecycledParams { n: 0, ..p.clone() };
        assert_eq!(run(&bad_n, 1).unwrap_err().param, "n");
        let bad_b = RecycledParams { b: 0, ..p.clone() };
        assert_eq!(run(&bad_b, 1).unwrap_err().param, "b");
        let bad_k = RecycledParams {
            ack_every: 0,
            ..p.clone()
        };
        assert_eq!(run(&bad_k, 1).unwrap_err().param, "ack_every");
        let bad_init = RecycledParams {
            initial_loads: Some(vec![1; 3]),
            ..p.clone()
        };
        assert_eq!(run(&bad_init, 1).unwrap_err().param, "initial_loads");
        assert_eq!(Schedule::parse("fifo").unwrap_err().param, "schedule");
    }

    /// n·ln n, the unit of Theorem 5.1's O(n log n) convergence time.
    fn n_ln_n(n: usize) -> f64 {
        n as f64 * (n as f64).ln()
    }

    /// The steps within which at least 95 of 100 seeds converge, in units of n ln n.
    fn c95(p: &RecycledParams) -> f64 {
        let mut cs: Vec<f64> = (1..=100u64)
            .map(|seed| {
                run_summary(p, seed)
                    .unwrap()
                    .converged_step
                    .map_or(f64::INFINITY, |t| t as f64 / n_ln_n(p.n))
            })
            .collect();
        cs.sort_by(f64::total_cmp);
        cs[94]
    }

    #[test]
    fn theorem_5_1_converges_in_order_n_log_n() {
        // Thm 5.1: n ≥ 16, τ = ⌈4 ln n⌉, b = ⌈2.4 ln n⌉, full load: converged
        // (every bin non-empty and at most τ for good) within c·n ln n steps
        // in ≥ 95 of 100 seeds. From empty bins (phase 1 of App. C, a coupon
        // collector) and from App. C's worst phase-2 start.
        for n in [16, 32, 64, 128] {
            let steps = (50.0 * n_ln_n(n)) as u64;
            let p = RecycledParams::theorem(n, steps);
            let c = c95(&p);
            assert!(c <= 1.5, "n = {n}: c95 = {c}");
            let p2 = RecycledParams {
                initial_loads: Some(phase_two_start(n)),
                ..p.clone()
            };
            // Draining the pile alone takes 2n ln n steps: c is about 2, whatever n.
            let c2 = c95(&p2);
            assert!((1.5..=2.5).contains(&c2), "n = {n}: phase-2 c95 = {c2}");
        }
    }

    #[test]
    fn phase_two_start_matches_the_bound() {
        let v = phase_two_start(16);
        assert_eq!(v.iter().sum::<u32>(), (2.0 * n_ln_n(16)) as u32 + 16);
        assert!(v.iter().all(|&l| l >= 1) && v[0] > theorem_tau_of(16));
    }

    fn theorem_tau_of(n: usize) -> u32 {
        super::super::theorem_tau(n)
    }

    #[test]
    fn coalescing_weakens_recycling_but_beats_ops() {
        // App. D.1, Fig. 17 (n = 16, 10 000 steps, full load): with 2:1 and 4:1
        // coalescing the maximum load stays near τ (time mean under 2τ); 8:1
        // still keeps it well below OPS's.
        let n = 16;
        let mean_max = |k: u32, seed: u64| {
            let p = RecycledParams {
                ack_every: k,
                ..RecycledParams::theorem(n, 10_000)
            };
            let r = run(&p, seed).unwrap();
            r.series.max_load.iter().map(|&m| m as f64).sum::<f64>() / 10_000.0
        };
        let tau = super::super::theorem_tau(n) as f64;
        for seed in 1..=3 {
            let ops = super::super::ops::run(
                &super::super::ops::OpsParams {
                    n,
                    lam: 1.0,
                    steps: 10_000,
                    record_loads: false,
                },
                seed,
            )
            .unwrap();
            let ops_mean = ops.max_load.iter().map(|&m| m as f64).sum::<f64>() / 10_000.0;
            let (k1, k2, k4, k8) = (
                mean_max(1, seed),
                mean_max(2, seed),
                mean_max(4, seed),
                mean_max(8, seed),
            );
            assert!(k1 <= tau && k1 < k2 && k2 < k4 && k4 < k8, "{k1} {k2} {k4} {k8}");
            assert!(k2 <= 2.0 * tau && k4 <= 2.0 * tau, "τ = {tau}: 2:1 {k2}, 4:1 {k4}");
            assert!(k8 < 0.5 * ops_mean, "8:1 {k8} vs OPS {ops_mean}");
        }
    }

    #[test]
    fn literal_round_robin_schedule_builds_up() {
        // The literal reading of §5.1 at Thm 5.1's constants: balls pile up
        // (more than the App. C bound of 2n ln n + n) and bins stay above τ.
        let p = RecycledParams {
            schedule: Schedule::RoundRobin,
            ..RecycledParams::theorem(16, 3000)
        };
        let s = run_summary(&p, 1).unwrap();
        assert!(s.final_balls as f64 > 2.0 * n_ln_n(16) + 16.0, "{s:?}");
        assert!(s.last_over_tau > 2900, "{s:?}");
    }
}
