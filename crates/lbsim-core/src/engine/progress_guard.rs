//! The no-progress guard: a run whose flows can never finish (every uplink
//! of a ToR down with `allow_disconnect`, a link losing every packet, a
//! route that never converges) would retransmit until `stop_at`, so its wall
//! time would grow with the horizon. The guard stops it instead, with
//! `StopReason::NoProgress`, once no payload has reached any receiver for
//! `stall_rtos` × the longest of the RTO, the base RTT and one MTU's
//! serialization on the slowest link (`build::checks::stall_window`) of
//! simulated time while some started flow is
//! unfinished, counted from the last moment a failure could still change the
//! network (its last transition plus routing convergence).
//!
//! It looks at fixed simulated times, every `LOOKS_PER_WINDOW`th of the
//! window, each look seeing every event up to its time and none after: a run
//! stops at the same simulated time however many events the engine needs to
//! get there (it looked every 2^14 events before the engine's switch ports
//! stopped scheduling `TxDone` events, which moved the stop). The loop pays
//! one time comparison per event.

use super::{Simulation, StopReason};
use crate::failure::FailurePlan;
use crate::time::SimTime;

/// Looks per window: a stuck run stops at most an eighth of a window late.
const LOOKS_PER_WINDOW: u64 = 8;

#[derive(Clone, Debug)]
pub(super) struct ProgressGuard {
    /// How long without payload delivered counts as stuck; None: never stop.
    window: Option<SimTime>,
    /// Failures change the network until then (SimTime::MAX: recurring for ever).
    quiet_after: SimTime,
    /// The simulated time of the next look (`SimTime::MAX`: none).
    pub(super) next_look_at: SimTime,
    /// Time between looks.
    period: SimTime,
    last_delivered: u64,
    last_progress: SimTime,
}

impl ProgressGuard {
    pub(super) fn new(window: Option<SimTime>) -> Self {
        ProgressGuard {
            window,
            quiet_after: SimTime::ZERO,
            next_look_at: SimTime::MAX,
            period: window.map_or(SimTime::MAX, |w| SimTime((w.ps() / LOOKS_PER_WINDOW).max(1))),
            last_delivered: 0,
            last_progress: SimTime::ZERO,
        }
    }

    /// The last time `plans` change a link, plus routing's lag behind it.
    pub(super) fn set_failures(&mut self, plans: &[FailurePlan], convergence: Option<SimTime>) {
        let lag = convergence.unwrap_or(SimTime::ZERO).ps();
        let last = plans.iter().map(|p| {
            let d = p.duration.map_or(0, |d| d.ps());
            match (p.every, p.remaining) {
                (None, _) => p.start.ps().saturating_add(d),
                (Some(e), Some(n)) => p
                    .start
                    .ps()
                    .saturating_add(e.ps().saturating_mul(n as u64 - 1))
                    .saturating_add(d),
                (Some(_), None) => u64::MAX,
            }
        });
        self.quiet_after = SimTime(last.max().unwrap_or(0).saturating_add(lag));
    }
}

impl Simulation {
    /// Stop when no payload arrives for `window` while flows are stuck
    /// (None: never). Call after `set_failures`: the window counts from the
    /// last failure change plus routing convergence.
    pub fn set_stall_window(&mut self, window: Option<SimTime>) {
        let mut g = ProgressGuard::new(window);
        g.set_failures(&self.failures, self.convergence);
        if window.is_some() {
            g.next_look_at = SimTime(self.now.ps().saturating_add(g.period.ps()));
        }
        self.guard = g;
    }

    /// The guard's looks due before the next event, at `next` (every one of
    /// them sees the same state): None to go on, Some(NoProgress) when stuck,
    /// with the clock at the look that found it so.
    #[cold]
    #[inline(never)]
    pub(super) fn look_for_progress(&mut self, next: SimTime) -> Option<StopReason> {
        let g = &mut self.guard;
        let (at, period) = (g.next_look_at.ps(), g.period.ps());
        let window = g.window?;
        // The first look on the grid at + k * period at or after `t`.
        let grid_from = |t: u64| at.saturating_add(t.saturating_sub(at).div_ceil(period).saturating_mul(period));
        g.next_look_at = SimTime(grid_from(next.ps()));
        if self.counters.payload_delivered != g.last_delivered {
            g.last_delivered = self.counters.payload_delivered;
            g.last_progress = SimTime(at);
        }
        let since = g.last_progress.max(g.quiet_after);
        let stop_at = grid_from(since.ps().saturating_add(window.ps()));
        if stop_at >= next.ps() {
            return None;
        }
        // Only started, unfinished flows can be stuck; an idle gap between arrivals is not.
        let stuck = self.flows.iter().any(|f| f.tx.active && !f.is_done());
        if stuck {
            self.now = SimTime(stop_at);
        }
        stuck.then_some(StopReason::NoProgress)
    }

    /// Why the run stopped early, in words: the no-progress guard's or the
    /// PFC watchdog's note (None for the other reasons).
    pub fn stop_note(&self) -> Option<String> {
        self.no_progress_note().or_else(|| self.pfc_deadlock_note())
    }

    /// Why the guard stopped the run, in words (None if it did not).
    pub fn no_progress_note(&self) -> Option<String> {
        if self.stop_reason != Some(StopReason::NoProgress) {
            return None;
        }
        let window = self.guard.window.unwrap_or(SimTime::ZERO);
        let stuck = self.flows.iter().filter(|f| f.tx.active && !f.is_done()).count();
        let waiting = self.flows.iter().filter(|f| !f.tx.active).count();
        Some(format!(
            "no progress: no data reached any receiver for {window} (stall_rtos times the longest of the RTO ({}), \
             the base RTT and an MTU on the slowest link) after the last failure change, \
             with {stuck} started flows unfinished{}; stopped at {}",
            self.params.transport.rto,
            if waiting > 0 {
                format!(" and {waiting} never started")
            } else {
                String::new()
            },
            self.now
        ))
    }
}
