//! Wait-To-Decrease (ARCANE §3.0.1, FASTFLOW's rule): keep an exponentially
//! weighted moving average of ECN marks per ACK,
//! avg = α·ecn + (1 − α)·avg, and leave the window alone on a marked ACK
//! while avg < 0.25, so isolated marks from transient imbalance (which the
//! load balancer fixes by itself) do not slow the flow; only when a quarter
//! or more of the ACKs carry marks does congestion control react.
//!
//! ARCANE leaves α, and whether the average is updated before or after the
//! test, unpublished: lbsim updates first, then tests, and takes α from
//! `cc.wtd_alpha` (default 1/16, DCTCP's g). See docs/model-choices.md.

/// ARCANE §3.0.1: "unchanged as long as avg_wtd < 0.25".
pub const THRESHOLD: f64 = 0.25;

#[derive(Clone, Debug)]
pub struct WaitToDecrease {
    alpha: f64,
    avg: f64,
}

impl WaitToDecrease {
    pub fn new(alpha: f64) -> Self {
        WaitToDecrease { alpha, avg: 0.0 }
    }

    /// Fold one ACK's mark into the average; true if a mark should cut the window now.
    #[inline]
    pub fn on_ack(&mut self, ecn: bool) -> bool {
        self.avg = self.alpha * (ecn as u8 as f64) + (1.0 - self.alpha) * self.avg;
        self.avg >= THRESHOLD
    }

    pub fn average(&self) -> f64 {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_follows_the_ewma() {
        let mut w = WaitToDecrease::new(0.5);
        w.on_ack(true);
        assert_eq!(w.average(), 0.5);
        w.on_ack(false);
        assert_eq!(w.average(), 0.25);
        w.on_ack(true);
        assert_eq!(w.average(), 0.625);
    }

    /// With α = 1/16 a run of marks must be 5 long to reach 0.25:
    /// 1 − (15/16)^4 = 0.227, 1 − (15/16)^5 = 0.276.
    #[test]
    fn five_consecutive_marks_reach_the_threshold() {
        let mut w = WaitToDecrease::new(1.0 / 16.0);
        let cuts: Vec<bool> = (0..5).map(|_| w.on_ack(true)).collect();
        assert_eq!(cuts, [false, false, false, false, true]);
    }
}
