//! Adaptive routing as a load balancer kind (`lb.kind = "adaptive"`): the
//! switches pick each packet's uplink by queue length (the switch policy
//! `net::policy::adaptive`), so the sender's entropy value is irrelevant
//! (REPS §4.1, "Adaptive RoCE"). Flows of other kinds in the same run are
//! still hashed: the switches adapt only this kind's packets.

use super::{Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::net::policy::adaptive::Adaptive as AdaptivePolicy;
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, NoParams};
use crate::scenario::ScenarioError;
use crate::time::SimTime;

#[derive(Clone)]
pub struct Adaptive;

impl LoadBalancer for Adaptive {
    /// Any constant: no switch hashes an adaptive packet's EV.
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
        0
    }
}

struct Builder {
    seed: u64,
}

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Adaptive(Adaptive)
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        Some(Box::new(AdaptivePolicy::new(self.seed, site.switch)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    parse_params::<NoParams>(params, "lb.adaptive")?;
    Ok(Box::new(Builder { seed: c.seed }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "adaptive",
    label: "Adaptive",
    color: "#e377c2", // pink
    switch_side: true,
    int_probes: false,
    reorders: true,
    presets: &[],
    check: check_params::<NoParams>,
    prepare,
};
