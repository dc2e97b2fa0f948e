//! The DCTCP variant the REPS paper runs (REPS §4.1: "the same DCTCP variant
//! used in MPRDMA"), with per-ACK window updates. Rules and units as in the
//! REPS artifact's `updateCwndOnAck_MPRDMA` (all in bytes):
//! - unmarked ACK: cwnd += acked · MTU / cwnd (about one MTU per window), capped at max;
//! - marked ACK:   cwnd −= acked / 4, floored at one MTU;
//! - loss (timeout or NACK): cwnd −= the lost packet's size, floored at one MTU.
//!
//! The cap applies on increase only, as in the artifact, so an initial
//! window above the cap (151 packets vs 1.5 BDP) is kept until the first cut.

#[derive(Clone, Debug)]
pub struct DctcpVariant {
    pub cwnd: u64,
    pub max_cwnd: u64,
    pub mtu: u64,
}

impl DctcpVariant {
    pub fn new(initial: u64, max: u64, mtu: u64) -> Self {
        DctcpVariant {
            cwnd: initial.max(mtu),
            max_cwnd: max.max(mtu),
            mtu,
        }
    }

    #[inline]
    pub fn on_ack(&mut self, acked: u64, ecn: bool) {
        if ecn {
            self.cwnd = self.cwnd.saturating_sub(acked / 4).max(self.mtu);
        } else if self.cwnd < self.max_cwnd {
            self.cwnd = (self.cwnd + acked * self.mtu / self.cwnd).min(self.max_cwnd);
        }
    }

    #[inline]
    pub fn on_loss(&mut self, bytes: u64) {
        self.cwnd = self.cwnd.saturating_sub(bytes).max(self.mtu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additive_increase_is_one_mtu_per_window() {
        let mut c = DctcpVariant::new(10 * 4096, 100 * 4096, 4096);
        // A window's worth of unmarked ACKs grows cwnd by about one MTU.
        for _ in 0..10 {
            c.on_ack(4096, false);
        }
        assert!((c.cwnd as i64 - 11 * 4096).abs() < 4096 / 5, "{}", c.cwnd);
    }

    #[test]
    fn marks_and_losses_cut_and_floor() {
        let mut c = DctcpVariant::new(8 * 4096, 8 * 4096, 4096);
        c.on_ack(4096, true);
        assert_eq!(c.cwnd, 8 * 4096 - 1024);
        c.on_loss(4096);
        assert_eq!(c.cwnd, 7 * 4096 - 1024);
        for _ in 0..100 {
            c.on_loss(4096);
        }
        assert_eq!(c.cwnd, 4096);
        c.on_ack(4096, false);
        assert_eq!(c.cwnd, 2 * 4096, "at one MTU, one unmarked ACK adds one MTU");
        let mut capped = DctcpVariant::new(151 * 4150, 625_284, 4150);
        capped.on_ack(4150, false);
        assert_eq!(capped.cwnd, 151 * 4150, "cap applies only on increase");
    }
}
