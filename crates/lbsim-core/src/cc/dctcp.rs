//! The DCTCP variant the REPS paper runs (REPS §4.1: "the same DCTCP variant
//! used in MPRDMA"), with per-ACK window updates. Rules and units as in the
//! REPS artifact's `updateCwndOnAck_MPRDMA` (all in bytes):
//! - unmarked ACK: cwnd += acked · MTU / cwnd (about one MTU per window), then
//!   clamped to max: a window above the cap (an initial 151 packets against
//!   a pair's smaller cap, `cc.max_cwnd_basis = "pair"`) falls to it at the
//!   first unmarked ACK, as the artifact's `if (_cwnd > _maxwnd) _cwnd = _maxwnd`;
//! - marked ACK:   cwnd −= acked / 4, floored at one MTU;
//! - loss (timeout or NACK): cwnd −= the lost packet's size, floored at one MTU.
//!
//! MP-RDMA's own paper takes 1/2 packet per marked ACK: `mprdma.rs` builds
//! this variant with that cut (`mark_cut_divisor` = 2).
//!
//! Option: Wait-To-Decrease (ARCANE §3.0.1, `cc.wait_to_decrease`): a
//! marked ACK cuts only once the average of marks reaches 0.25; below it a
//! marked ACK leaves the window unchanged. Losses cut as always.

use super::wait_to_decrease::WaitToDecrease;
use super::{AckSignal, Cc, CcBuilder, CcCommon, CcEntry, CongestionControl};
use crate::scenario::registry::{check_params, parse_params, NoParams};
use crate::scenario::ScenarioError;

#[derive(Clone, Debug)]
pub struct DctcpVariant {
    pub cwnd: u64,
    pub max_cwnd: u64,
    pub mtu: u64,
    /// A marked ACK takes away acked / this: 4 in the REPS artifact, 2 in MP-RDMA.
    pub mark_cut_divisor: u64,
    pub wtd: Option<WaitToDecrease>,
}

impl DctcpVariant {
    pub fn new(initial: u64, max: u64, mtu: u64) -> Self {
        DctcpVariant {
            cwnd: initial.max(mtu),
            max_cwnd: max.max(mtu),
            mtu,
            mark_cut_divisor: 4, // REPS artifact updateCwndOnAck_MPRDMA
            wtd: None,
        }
    }

    /// With Wait-To-Decrease, weighting each ACK's mark by `alpha`.
    pub fn with_wait_to_decrease(mut self, alpha: f64) -> Self {
        self.wtd = Some(WaitToDecrease::new(alpha));
        self
    }

    /// An ACK newly acknowledged `acked` bytes; `ecn` is its echoed mark.
    #[inline]
    pub fn ack(&mut self, acked: u64, ecn: bool) {
        let cut = match &mut self.wtd {
            None => ecn,
            Some(w) => w.on_ack(ecn) && ecn,
        };
        if cut {
            self.cwnd = self.cwnd.saturating_sub(acked / self.mark_cut_divisor).max(self.mtu);
        } else if !ecn {
            self.cwnd = (self.cwnd + acked * self.mtu / self.cwnd).min(self.max_cwnd);
        }
    }

    #[inline]
    pub fn on_loss(&mut self, bytes: u64) {
        self.cwnd = self.cwnd.saturating_sub(bytes).max(self.mtu);
    }
}

impl CongestionControl for DctcpVariant {
    /// Window-limited like the REPS artifact's sender: in flight < cwnd.
    #[inline]
    fn may_send(&self, inflight: u64) -> bool {
        inflight < self.cwnd
    }

    #[inline]
    fn window(&self) -> Option<u64> {
        Some(self.cwnd)
    }

    fn set_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mtu);
    }

    fn set_max_window(&mut self, bytes: u64) {
        self.max_cwnd = bytes.max(self.mtu);
    }

    #[inline]
    fn on_ack(&mut self, a: &AckSignal) {
        if a.acked > 0 {
            self.ack(a.acked, a.ecn);
        }
        // MP-RDMA: an ACK from a slow path frees no window (`lb/mprdma.rs`).
        if a.slow_path > 0 {
            self.on_loss(a.slow_path);
        }
    }

    #[inline]
    fn on_nack(&mut self, bytes: u64) {
        self.on_loss(bytes);
    }

    #[inline]
    fn on_timeout(&mut self, bytes: u64) {
        self.on_loss(bytes);
    }
}

struct Builder(CcCommon);

impl CcBuilder for Builder {
    fn sender(&self, initial_window: u64) -> Cc {
        let c = &self.0;
        let v = DctcpVariant::new(initial_window, c.max_cwnd, c.mtu);
        Cc::Dctcp(match c.wtd_alpha {
            Some(alpha) => v.with_wait_to_decrease(alpha),
            None => v,
        })
    }
}

fn prepare(params: Option<&toml::Value>, common: &CcCommon) -> Result<Box<dyn CcBuilder>, ScenarioError> {
    parse_params::<NoParams>(params, "cc.dctcp")?;
    Ok(Box::new(Builder(*common)))
}

/// `cc.kind = "dctcp"`: its window keys are the shared `cc.initial_cwnd`,
/// `cc.max_cwnd`, `cc.wait_to_decrease` and `cc.wtd_alpha`.
pub const ENTRY: CcEntry = CcEntry {
    name: "dctcp",
    presets: &[],
    check: check_params::<NoParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additive_increase_is_one_mtu_per_window() {
        let mut c = DctcpVariant::new(10 * 4096, 100 * 4096, 4096);
        // A window's worth of unmarked ACKs grows cwnd by about one MTU.
        for _ in 0..10 {
            c.ack(4096, false);
        }
        assert!((c.cwnd as i64 - 11 * 4096).abs() < 4096 / 5, "{}", c.cwnd);
    }

    #[test]
    fn marks_and_losses_cut_and_floor() {
        let mut c = DctcpVariant::new(8 * 4096, 8 * 4096, 4096);
        c.ack(4096, true);
        assert_eq!(c.cwnd, 8 * 4096 - 1024);
        c.on_loss(4096);
        assert_eq!(c.cwnd, 7 * 4096 - 1024);
        for _ in 0..100 {
            c.on_loss(4096);
        }
        assert_eq!(c.cwnd, 4096);
        c.ack(4096, false);
        assert_eq!(c.cwnd, 2 * 4096, "at one MTU, one unmarked ACK adds one MTU");
        // The artifact's 151 packets against an intra-ToR pair's cap of 75.3: a marked ACK
        // only cuts, the first unmarked one clamps (uec.cpp updateCwndOnAck_MPRDMA).
        let mut capped = DctcpVariant::new(151 * 4150, 312_642, 4150);
        capped.ack(4150, true);
        assert_eq!(capped.cwnd, 151 * 4150 - 4150 / 4);
        capped.ack(4150, false);
        assert_eq!(capped.cwnd, 312_642, "an unmarked ACK clamps to the cap");
    }

    /// ARCANE §3.0.1: one mark in ten keeps the average (α = 1/16) below
    /// 0.25, so the window never shrinks; without WTD every mark cuts.
    #[test]
    fn wait_to_decrease_ignores_isolated_marks_and_cuts_on_sustained_ones() {
        let mtu = 4096;
        let full = 64 * mtu;
        let mut wtd = DctcpVariant::new(full, full, mtu).with_wait_to_decrease(1.0 / 16.0);
        let mut plain = DctcpVariant::new(full, full, mtu);
        for i in 0..200 {
            let ecn = i % 10 == 9;
            wtd.ack(mtu, ecn);
            plain.ack(mtu, ecn);
            assert_eq!(wtd.cwnd, full, "isolated marks never cut (ACK {i})");
        }
        assert!(wtd.wtd.as_ref().unwrap().average() < 0.25);
        assert!(
            plain.cwnd < full - 2 * mtu,
            "plain DCTCP cuts on every mark: {}",
            plain.cwnd
        );
        // Sustained marks: the average climbs as 1 − (1 − a0)(15/16)^k; from
        // the first k where that reaches 0.25, every marked ACK cuts by acked/4.
        let a0 = wtd.wtd.as_ref().unwrap().average();
        let first = (1..)
            .find(|&k| 1.0 - (1.0 - a0) * (15.0f64 / 16.0).powi(k) >= 0.25)
            .unwrap();
        assert!(first >= 2, "one more mark is not enough: {first}");
        for k in 1..=20 {
            let w = wtd.cwnd;
            wtd.ack(mtu, true);
            let want = if k >= first { w - mtu / 4 } else { w };
            assert_eq!(wtd.cwnd, want, "mark {k} of a run (first cut at {first})");
        }
        // A loss cuts whatever the average says.
        let mut lossy = DctcpVariant::new(full, full, mtu).with_wait_to_decrease(1.0 / 16.0);
        lossy.on_loss(mtu);
        assert_eq!(lossy.cwnd, full - mtu);
    }
}
