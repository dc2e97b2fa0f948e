//! Adaptive routing as a load balancer kind (`lb.kind = "adaptive"`): the
//! switches pick each packet's uplink by queue length (`net::adaptive`), so
//! the sender's entropy value is irrelevant; the flow's packets carry the
//! `adaptive` flag instead (REPS §4.1, "Adaptive RoCE").

use super::{LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::time::SimTime;

pub struct Adaptive;

impl LoadBalancer for Adaptive {
    /// Any constant: no switch hashes an adaptive packet's EV.
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
        0
    }
}
