//! Batched balls-into-bins: the model of oblivious packet spraying (OPS) at a
//! switch (REPS §5.1, after Berenbrink et al. [12]).
//!
//! n bins are a switch's n output ports. Each step every non-empty bin
//! removes one ball (one packet leaves per port per step), then λn new balls
//! are thrown independently and uniformly at random (OPS with a large entropy
//! space, §5.1). For λ < 1 the maximum load stays O(1/(1−λ) · log(n/(1−λ)))
//! w.h.p. [12]; as λ → 1 some bin grows without bound (§5.1, Fig. 13, 14).
//!
//! λn is rarely an integer (λ = 0.99, n = 16 in Fig. 13), so step t throws
//! ⌊λnt⌋ − ⌊λn(t−1)⌋ balls: exactly λn per step on average, the rounding
//! spread evenly, no extra randomness beyond the bin choices.

use super::{check_bins, check_steps, stream, Series, TheoryError};

/// Parameters of one run of the batched model.
#[derive(Clone, Debug, PartialEq)]
pub struct OpsParams {
    /// Bins (output ports), n ≥ 1.
    pub n: usize,
    /// Load λ in (0, 1]: λn balls per step (§5.1; Fig. 13 uses 0.99, Fig. 14 full load).
    pub lam: f64,
    /// Steps to simulate (Fig. 13: 10 000; Fig. 14: 200).
    pub steps: u64,
    /// Record every bin's load after every step (Fig. 14), not only the maximum.
    pub record_loads: bool,
}

impl OpsParams {
    pub fn validate(&self) -> Result<(), TheoryError> {
        check_bins("n", self.n)?;
        if !(self.lam > 0.0 && self.lam <= 1.0) {
            return Err(super::bad("lam", format!("must be in (0, 1], got {}", self.lam)));
        }
        check_steps(self.steps, self.n, self.record_loads)
    }
}

/// Balls thrown at step `t` (1-based) at load `lam` with `n` bins.
#[inline]
pub fn arrivals(lam: f64, n: usize, t: u64) -> u64 {
    let rate = lam * n as f64;
    ((rate * t as f64).floor() - (rate * (t - 1) as f64).floor()) as u64
}

/// Run the batched model from empty bins. Deterministic in `seed`.
pub fn run(p: &OpsParams, seed: u64) -> Result<Series, TheoryError> {
    p.validate()?;
    let mut rng = stream(seed, 1);
    let mut loads = vec![0u32; p.n];
    let mut out = Series::with_capacity(p.steps, p.n, p.record_loads);
    for t in 1..=p.steps {
        // Removal first: every non-empty bin serves one ball (§5.1).
        for l in loads.iter_mut() {
            *l = l.saturating_sub(1);
        }
        for _ in 0..arrivals(p.lam, p.n, t) {
            loads[rng.below(p.n as u64) as usize] += 1;
        }
        out.push(loads.iter().copied());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n: usize, lam: f64, steps: u64) -> OpsParams {
        OpsParams {
            n,
            lam,
            steps,
            record_loads: true,
        }
    }

    #[test]
    fn arrivals_average_exactly_lambda_n() {
        let total: u64 = (1..=1000).map(|t| arrivals(0.99, 16, t)).sum();
        assert_eq!(total, (0.99f64 * 16.0 * 1000.0).floor() as u64);
        assert!((1..=1000).all(|t| (15..=16).contains(&arrivals(0.99, 16, t))));
        assert!((1..=50).all(|t| arrivals(1.0, 7, t) == 7));
    }

    #[test]
    fn hand_traced_single_bin() {
        // n = 1, λ = 1/2: the bin gets a ball every other step and serves it the next.
        let s = run(&params(1, 0.5, 6), 3).unwrap();
        assert_eq!(s.max_load, vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(s.loads.unwrap(), vec![0, 1, 0, 1, 0, 1]);
        // λ = 1: the one bin holds exactly the ball of the step.
        assert_eq!(run(&params(1, 1.0, 4), 3).unwrap().balls, vec![1, 1, 1, 1]);
    }

    #[test]
    fn balls_are_conserved() {
        let p = params(8, 0.9, 500);
        let s = run(&p, 11).unwrap();
        let loads = s.loads.as_ref().unwrap();
        let mut prev = vec![0u32; 8];
        for t in 1..=500u64 {
            let row = &loads[(t as usize - 1) * 8..t as usize * 8];
            let served = prev.iter().filter(|&&l| l > 0).count() as u64;
            let before: u64 = prev.iter().map(|&l| l as u64).sum();
            assert_eq!(s.balls[t as usize - 1], before - served + arrivals(0.9, 8, t));
            assert_eq!(s.max_load[t as usize - 1], *row.iter().max().unwrap());
            prev = row.to_vec();
        }
    }

    #[test]
    fn deterministic_per_seed() {
        let p = params(16, 0.99, 300);
        assert_eq!(run(&p, 5).unwrap(), run(&p, 5).unwrap());
        assert_ne!(run(&p, 5).unwrap().loads, run(&p, 6).unwrap().loads);
    }

    #[test]
    fn bad_parameters_are_named() {
        assert_eq!(run(&params(0, 0.5, 10), 1).unwrap_err().param, "n");
        assert_eq!(run(&params(4, 1.5, 10), 1).unwrap_err().param, "lam");
        assert_eq!(run(&params(4, 0.0, 10), 1).unwrap_err().param, "lam");
        assert_eq!(run(&params(4, f64::NAN, 10), 1).unwrap_err().param, "lam");
        assert_eq!(run(&params(4, 0.5, 0), 1).unwrap_err().param, "steps");
    }

    #[test]
    fn more_bins_build_longer_queues() {
        // REPS §5.1, Fig. 13: at λ = 0.99 the maximum load after 10 000 steps
        // grows with n (means over 50 seeds; one seed's spread is about ±35).
        let mean_final = |n: usize| -> f64 {
            let p = OpsParams {
                n,
                lam: 0.99,
                steps: 10_000,
                record_loads: false,
            };
            (1..=50u64)
                .map(|seed| *run(&p, seed).unwrap().max_load.last().unwrap() as f64)
                .sum::<f64>()
                / 50.0
        };
        let means: Vec<f64> = [16, 32, 64, 128].into_iter().map(mean_final).collect();
        assert!(means.windows(2).all(|w| w[0] < w[1]), "{means:?}");
    }

    #[test]
    fn full_load_grows_without_bound() {
        // λ = 1 (Fig. 14): the maximum keeps growing (about as √t).
        let p = OpsParams {
            n: 5,
            lam: 1.0,
            steps: 4000,
            record_loads: false,
        };
        let at = |t: usize| {
            (1..=20u64)
                .map(|s| run(&p, s).unwrap().max_load[t - 1] as f64)
                .sum::<f64>()
                / 20.0
        };
        let (a, b, c) = (at(250), at(1000), at(4000));
        assert!(a < b && b < c && c > 1.5 * a, "{a} {b} {c}");
    }
}
