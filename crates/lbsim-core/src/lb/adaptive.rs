//! Adaptive routing as a load balancer kind (`lb.kind = "adaptive"`): the
//! switches pick each packet's uplink by queue length (the switch policy
//! `net::policy::adaptive`), so the sender's entropy value is irrelevant
//! (REPS §4.1, "Adaptive RoCE"). Flows of other kinds in the same run are
//! still hashed: the switches adapt only this kind's packets.

use super::{Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::net::policy::adaptive::{Adaptive as AdaptivePolicy, Backlog, Ties};
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::ScenarioError;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.adaptive`: the switches' rule (`net::policy::adaptive` says more).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveParams {
    /// What a queue's length is: "bytes_left" or "whole_packets".
    pub backlog: Backlog,
    /// Which of several equally short queues a packet takes: "route_order" or "random".
    pub ties: Ties,
}

impl Params for AdaptiveParams {}

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
    params: AdaptiveParams,
}

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Adaptive(Adaptive)
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        let AdaptiveParams { backlog, ties } = self.params;
        Some(Box::new(AdaptivePolicy::new(self.seed, site.switch, backlog, ties)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let params = parse_params::<AdaptiveParams>(params, "lb.adaptive")?;
    Ok(Box::new(Builder { seed: c.seed, params }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "adaptive",
    label: "Adaptive",
    color: "#e377c2", // pink
    switch_side: true,
    int_probes: false,
    reorders: true,
    presets: &[(
        "reps_paper",
        // REPS §4.1 names NVIDIA's adaptive RoCE and says neither what a queue's
        // length is nor how ties go; these are its simulator's (REPS artifact
        // fat_tree_switch.cpp adaptive_nvidia, permute_paths; compositequeue.cpp).
        r#"
backlog = "whole_packets"    # REPS artifact: CompositeQueue::queuesize(), read before a same-time completion
ties = "route_order"         # REPS artifact adaptive_nvidia: first shortest of a route list shuffled once
"#,
    )],
    check: check_params::<AdaptiveParams>,
    prepare,
};
