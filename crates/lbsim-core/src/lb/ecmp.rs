//! ECMP: one entropy value for the whole flow, drawn once at random, so all
//! its packets hash onto one path (REPS §2.2).

use super::{LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::time::SimTime;

pub struct Ecmp {
    ev: u16,
}

impl Ecmp {
    pub fn new(rng: &mut Rng, entropy_space: u32) -> Self {
        Ecmp {
            ev: rng.below(entropy_space as u64) as u16,
        }
    }
}

impl LoadBalancer for Ecmp {
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
        self.ev
    }
}
