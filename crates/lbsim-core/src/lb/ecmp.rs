//! ECMP: one entropy value for the whole flow, drawn once at random, so all
//! its packets hash onto one path (REPS §2.2).

use super::{Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, NoParams};
use crate::scenario::ScenarioError;
use crate::time::SimTime;

#[derive(Clone)]
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

struct Builder(u32);

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Ecmp(Ecmp::new(rng, self.0))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    parse_params::<NoParams>(params, "lb.ecmp")?;
    Ok(Box::new(Builder(c.entropy_space)))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "ecmp",
    label: "ECMP",
    color: "#7f7f7f", // grey: the baseline
    switch_side: false,
    int_probes: false,
    reorders: false,
    presets: &[],
    check: check_params::<NoParams>,
    prepare,
};
