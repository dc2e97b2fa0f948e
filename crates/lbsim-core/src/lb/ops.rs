//! Oblivious packet spraying: a uniformly random entropy value per packet,
//! retransmissions included (REPS §2.2).

use super::{LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::time::SimTime;

pub struct Ops {
    entropy_space: u32,
}

impl Ops {
    pub fn new(entropy_space: u32) -> Self {
        Ops { entropy_space }
    }
}

impl LoadBalancer for Ops {
    #[inline]
    fn next_ev(&mut self, _now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        stats.explored += 1;
        rng.below(self.entropy_space as u64) as u16
    }
}
