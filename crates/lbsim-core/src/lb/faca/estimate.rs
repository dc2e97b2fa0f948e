//! FaCa's load estimate (FaCa §5.4): a path's load is its bandwidth-delay
//! product β = B·D (eq. 1), smoothed by an EWMA whose weight decays with
//! the time since the last update, E(t) = α·E(t − Δt) + (1 − α)·β with
//! α = e^(−k·Δt) (eq. 2-3, Newton's law of cooling).

use crate::time::SimTime;

/// E(t) of one path, in bytes (β's unit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    value: f64,
    /// When the last probe result was folded in (Δt is measured from here).
    at: SimTime,
    /// No probe result yet: the first one is taken as it is.
    seeded: bool,
}

impl Estimate {
    pub fn value(&self) -> f64 {
        self.value
    }

    /// When the last probe result came in.
    pub fn updated_at(&self) -> SimTime {
        self.at
    }

    /// Fold in a probe's β at `now`; `k` per microsecond. FaCa §5.4 eq. 2:
    /// E(t) = α·E(t − Δt) + (1 − α)·β, eq. 3: α = 1 / e^(k·Δt). The first
    /// sample has no E(t − Δt) to weigh against, so it is β itself. A
    /// sample older than the last (an echo overtaken by a later one) counts
    /// with Δt = 0, i.e. not at all.
    pub fn update(&mut self, now: SimTime, beta: f64, k: f64) {
        if !self.seeded {
            *self = Estimate {
                value: beta,
                at: now,
                seeded: true,
            };
            return;
        }
        let dt_us = now.saturating_sub(self.at).as_us_f64();
        let alpha = (-k * dt_us).exp();
        self.value = alpha * self.value + (1.0 - alpha) * beta;
        self.at = self.at.max(now);
    }

    /// Alg. 1 "update E": a flow just placed on the path adds its expected
    /// load before any probe can show it.
    pub fn add(&mut self, bytes: f64) {
        self.value += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sample_is_taken_as_it_is() {
        let mut e = Estimate::default();
        e.update(SimTime::from_us(3), 500.0, 0.1);
        assert_eq!(e.value(), 500.0);
        assert_eq!(e.updated_at(), SimTime::from_us(3));
    }

    #[test]
    fn no_time_elapsed_keeps_the_old_value() {
        let mut e = Estimate::default();
        e.update(SimTime::from_us(10), 1000.0, 0.5);
        e.update(SimTime::from_us(10), 0.0, 0.5);
        assert_eq!(e.value(), 1000.0, "Δt = 0: α = 1");
        // k = 0 never forgets either.
        e.update(SimTime::from_us(1000), 0.0, 0.0);
        assert_eq!(e.value(), 1000.0);
    }

    #[test]
    fn a_long_gap_follows_beta() {
        let mut e = Estimate::default();
        e.update(SimTime::ZERO, 1000.0, 0.1);
        e.update(SimTime::from_us(1000), 7.0, 0.1); // k·Δt = 100
        assert!((e.value() - 7.0).abs() < 1e-9, "{}", e.value());
    }

    #[test]
    fn one_time_constant_weighs_the_old_value_by_one_over_e() {
        let mut e = Estimate::default();
        e.update(SimTime::ZERO, 1000.0, 0.1);
        e.update(SimTime::from_us(10), 0.0, 0.1); // k·Δt = 1
        assert!((e.value() - 1000.0 / std::f64::consts::E).abs() < 1e-9);
        // An older sample than the last changes nothing.
        let before = e.value();
        e.update(SimTime::from_us(5), 5000.0, 0.1);
        assert_eq!(e.value(), before);
        e.add(10.0);
        assert!((e.value() - before - 10.0).abs() < 1e-12);
    }
}
