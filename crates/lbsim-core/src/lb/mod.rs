//! Sender-side load balancers: each picks the entropy value (EV) of every
//! data packet and may learn from the EV echoed by ACKs and NACKs. The
//! sender never knows which path an EV maps to (REPS §2.2).
//!
//! Adding a load balancer: one file implementing `LoadBalancer`, one variant
//! in `Lb`, one arm in `build::load_balancer`, and its kind and parameter
//! table in the scenario.

pub mod adaptive;
pub mod arcane;
pub mod bitmap;
pub mod ecmp;
pub mod flowlet;
pub mod mprdma;
pub mod ops;
pub mod plb;
pub mod reps;
pub mod subflows;

use crate::rng::Rng;
use crate::time::SimTime;

/// What a timeout looked like, for balancers that react to failures.
#[derive(Clone, Copy, Debug)]
pub struct TimeoutInfo {
    /// The App. A heuristic says this loss looks like a failure rather than congestion.
    pub looks_like_failure: bool,
}

/// Counters a balancer keeps about itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct LbStats {
    /// EVs drawn at random.
    pub explored: u64,
    /// EVs reused from feedback.
    pub recycled: u64,
    pub freeze_entries: u64,
    /// Total time spent frozen (closed intervals only, plus the open one at the end).
    pub frozen_ps: u64,
}

pub trait LoadBalancer {
    fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16;
    fn on_ack(&mut self, _now: SimTime, _ev: u16, _ecn: bool, _stats: &mut LbStats) {}
    fn on_nack(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {}
    fn on_timeout(&mut self, _now: SimTime, _info: TimeoutInfo, _stats: &mut LbStats) {}
    /// The retransmission timer declared lost a packet that was sent on `ev`.
    fn on_lost(&mut self, _now: SimTime, _ev: u16, _stats: &mut LbStats) {}
}

pub enum Lb {
    Ecmp(ecmp::Ecmp),
    Ops(ops::Ops),
    Reps(reps::Reps),
    Adaptive(adaptive::Adaptive),
    Plb(plb::Plb),
    Flowlet(flowlet::Flowlet),
    Mprdma(mprdma::Mprdma),
    Bitmap(bitmap::Bitmap),
    Arcane(arcane::Arcane),
    Subflows(subflows::Subflows),
}

macro_rules! dispatch {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Lb::Ecmp($b) => $e,
            Lb::Ops($b) => $e,
            Lb::Reps($b) => $e,
            Lb::Adaptive($b) => $e,
            Lb::Plb($b) => $e,
            Lb::Flowlet($b) => $e,
            Lb::Mprdma($b) => $e,
            Lb::Bitmap($b) => $e,
            Lb::Arcane($b) => $e,
            Lb::Subflows($b) => $e,
        }
    };
}

impl Lb {
    /// The scenario name of this balancer (`lb.kind`).
    pub fn name(&self) -> &'static str {
        match self {
            Lb::Ecmp(_) => "ecmp",
            Lb::Ops(_) => "ops",
            Lb::Reps(_) => "reps",
            Lb::Adaptive(_) => "adaptive",
            Lb::Plb(_) => "plb",
            Lb::Flowlet(_) => "flowlet",
            Lb::Mprdma(_) => "mprdma",
            Lb::Bitmap(_) => "bitmap",
            Lb::Arcane(_) => "arcane",
            Lb::Subflows(_) => "subflows",
        }
    }

    #[inline]
    pub fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        dispatch!(self, b => b.next_ev(now, rng, stats))
    }
    #[inline]
    pub fn on_ack(&mut self, now: SimTime, ev: u16, ecn: bool, stats: &mut LbStats) {
        dispatch!(self, b => b.on_ack(now, ev, ecn, stats))
    }
    #[inline]
    pub fn on_nack(&mut self, now: SimTime, ev: u16, stats: &mut LbStats) {
        dispatch!(self, b => b.on_nack(now, ev, stats))
    }
    #[inline]
    pub fn on_timeout(&mut self, now: SimTime, info: TimeoutInfo, stats: &mut LbStats) {
        dispatch!(self, b => b.on_timeout(now, info, stats))
    }
    #[inline]
    pub fn on_lost(&mut self, now: SimTime, ev: u16, stats: &mut LbStats) {
        dispatch!(self, b => b.on_lost(now, ev, stats))
    }
}
