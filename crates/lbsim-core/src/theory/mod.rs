//! Balls-into-bins models of REPS §5 and Appendices B–D: the theory that
//! explains why oblivious packet spraying (OPS) builds unbounded queues at
//! full load, why recycling entropies (REPS) converges, why a small entropy
//! space unbalances OPS, and how ACK coalescing weakens recycling.
//!
//! Independent of the engine: each model is a pure function of its
//! parameters and a seed (`crate::rng` streams), so every result is
//! reproducible. The entropy-space model hashes with the switches' own ECMP
//! hash ([`crate::net::switch::ecmp_hash`]).
//!
//! | file | model | paper |
//! |---|---|---|
//! | [`ops`] | batched balls-into-bins, λn balls per step | §5.1, Fig. 13, 14 |
//! | [`recycled`] | recycled balls-into-bins (colours, threshold τ), with ACK coalescing | §5.1, Thm 5.1, App. C, D.1, Fig. 14, 17 |
//! | [`evs`] | (flow, entropy) pairs hashed onto uplinks, load imbalance | App. B, Fig. 16 |
//!
//! One time step, in both queue models (§5.1): every non-empty bin removes
//! its oldest ball (FIFO), then the step's new balls are thrown; loads are
//! recorded after the throws. Bins start empty unless told otherwise.

pub mod evs;
pub mod ops;
pub mod recycled;

use crate::rng::{Rng, StreamTag};
use std::fmt;

/// A bad model parameter: `param` names it (as the Python API and the
/// `lbsim theory` command spell it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TheoryError {
    pub param: &'static str,
    pub message: String,
}

impl fmt::Display for TheoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.param, self.message)
    }
}

impl std::error::Error for TheoryError {}

pub(crate) fn bad(param: &'static str, message: impl Into<String>) -> TheoryError {
    TheoryError {
        param,
        message: message.into(),
    }
}

/// Largest number of bins (uplinks) a model accepts: far beyond any switch radix.
pub const MAX_BINS: usize = 1 << 20;
/// Largest number of per-bin load samples a run may record (steps × n).
pub const MAX_RECORDED_LOADS: u64 = 1 << 27;

pub fn check_bins(param: &'static str, n: usize) -> Result<(), TheoryError> {
    if n < 1 {
        return Err(bad(param, format!("must be at least 1, got {n}")));
    }
    if n > MAX_BINS {
        return Err(bad(param, format!("must be at most {MAX_BINS}, got {n}")));
    }
    Ok(())
}

pub(crate) fn check_steps(steps: u64, n: usize, record_loads: bool) -> Result<(), TheoryError> {
    if steps < 1 {
        return Err(bad("steps", "must be at least 1, got 0"));
    }
    if steps > u32::MAX as u64 {
        return Err(bad("steps", format!("must be at most {}, got {steps}", u32::MAX)));
    }
    if record_loads && steps.saturating_mul(n as u64) > MAX_RECORDED_LOADS {
        return Err(bad(
            "steps",
            format!("steps × n = {steps} × {n} is too many per-bin loads to record (at most {MAX_RECORDED_LOADS})"),
        ));
    }
    Ok(())
}

/// Index of the theory models' random streams. The models never run inside
/// a simulation, so they borrow the workload tag with an index no workload
/// uses ("theory" in ASCII) and a per-model sub-index.
const THEORY_STREAM: u64 = 0x7468_656f_7279 << 8;

/// The random stream of one model run.
pub(crate) fn stream(seed: u64, model: u8) -> Rng {
    Rng::new(seed, StreamTag::Workload, THEORY_STREAM | model as u64)
}

/// Threshold τ = ⌈4 ln n⌉ of Theorem 5.1 (REPS §5.1: τ ≥ 4 ln n), at least 1.
pub fn theorem_tau(n: usize) -> u32 {
    ((4.0 * (n.max(1) as f64).ln()).ceil() as u32).max(1)
}

/// Colour multiplier b = ⌈2.4 ln n⌉ of Theorem 5.1 (REPS §5.1: b ≥ 2.4 ln n,
/// b·n colours; App. C uses b ≥ 12/5 ln n in Lemma C.1), at least 1.
pub fn theorem_b(n: usize) -> u32 {
    ((2.4 * (n.max(1) as f64).ln()).ceil() as u32).max(1)
}

/// Per-step queue statistics of one run of a queue model (index = step − 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Largest bin load after the step's throws.
    pub max_load: Vec<u32>,
    /// Balls in all bins after the step's throws.
    pub balls: Vec<u64>,
    /// Per-bin loads after each step, row-major (steps × n), when asked for.
    pub loads: Option<Vec<u32>>,
}

impl Series {
    pub(crate) fn with_capacity(steps: u64, n: usize, record_loads: bool) -> Self {
        let s = steps as usize;
        Series {
            max_load: Vec::with_capacity(s),
            balls: Vec::with_capacity(s),
            loads: record_loads.then(|| Vec::with_capacity(s * n)),
        }
    }

    /// Append one step from the bins' loads.
    pub(crate) fn push(&mut self, loads: impl Iterator<Item = u32> + Clone) {
        let (mut mx, mut total) = (0u32, 0u64);
        for l in loads.clone() {
            mx = mx.max(l);
            total += l as u64;
        }
        self.max_load.push(mx);
        self.balls.push(total);
        if let Some(v) = self.loads.as_mut() {
            v.extend(loads);
        }
    }

    /// Repeat the last step `times` more times (a frozen state).
    pub(crate) fn repeat_last(&mut self, times: usize, n: usize) {
        if let (Some(&m), Some(&b)) = (self.max_load.last(), self.balls.last()) {
            self.max_load.extend(std::iter::repeat_n(m, times));
            self.balls.extend(std::iter::repeat_n(b, times));
        }
        if let Some(v) = self.loads.as_mut() {
            if v.len() >= n {
                let last: Vec<u32> = v[v.len() - n..].to_vec();
                for _ in 0..times {
                    v.extend_from_slice(&last);
                }
            }
        }
    }

    pub fn steps(&self) -> usize {
        self.max_load.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theorem_constants() {
        // REPS Thm 5.1: τ ≥ 4 ln n, b ≥ 2.4 ln n; n = 16: 4 ln 16 = 11.09, 2.4 ln 16 = 6.65.
        assert_eq!((theorem_tau(16), theorem_b(16)), (12, 7));
        assert_eq!((theorem_tau(128), theorem_b(128)), (20, 12));
        assert_eq!((theorem_tau(1), theorem_b(1)), (1, 1));
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(check_bins("n", 0).unwrap_err().param, "n");
        assert_eq!(check_steps(0, 4, false).unwrap_err().param, "steps");
        assert!(check_steps(1 << 20, 1 << 10, true).is_err());
        assert_eq!(bad("lam", "x").to_string(), "lam: x");
    }
}
