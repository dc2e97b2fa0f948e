//! Oblivious packet spraying: a uniformly random entropy value per packet,
//! retransmissions included (REPS §2.2).

use super::{Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, NoParams};
use crate::scenario::ScenarioError;
use crate::time::SimTime;

#[derive(Clone)]
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

struct Builder(u32);

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Ops(Ops::new(self.0))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    parse_params::<NoParams>(params, "lb.ops")?;
    Ok(Box::new(Builder(c.entropy_space)))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "ops",
    label: "OPS",
    color: "#1f77b4", // blue
    switch_side: false,
    int_probes: false,
    reorders: true,
    presets: &[],
    check: check_params::<NoParams>,
    prepare,
};
