//! LetFlow as a load balancer kind (`lb.kind = "letflow"`): flowlet
//! switching in the switches (`net::policy::letflow`), each new flowlet on a
//! uniformly random uplink (Vanini et al., NSDI '17), with the flowlet gap
//! ConWeave evaluates it with (100 us, ConWeave §4.1 "Schemes compared").
//!
//! Not to be confused with `lb.kind = "flowlet"`, the REPS paper's
//! sender-side variant: there the host starts a flowlet after a gap of half
//! its base RTT and draws a new entropy value, which the switches hash; here
//! the switches see the gaps and draw the uplink themselves.

use super::ecmp::Ecmp;
use super::{Lb, LbBuilder, LbCommon, LbEntry};
use crate::net::policy::letflow::LetFlow;
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.letflow`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LetflowParams {
    /// An idle gap longer than this starts a new flowlet.
    pub flowlet_timeout: Time,
}

impl Params for LetflowParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        positive(&self.flowlet_timeout, &format!("{key}.flowlet_timeout"))
    }
}

/// A time key that must be longer than zero.
pub(super) fn positive(t: &Time, key: &str) -> Result<(), ScenarioError> {
    if t.value == SimTime::ZERO {
        return Err(ScenarioError::new(key, "must be positive"));
    }
    Ok(())
}

struct Builder {
    seed: u64,
    timeout: SimTime,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    /// The host keeps one entropy value per flow, which only its ACKs' ECMP hash uses.
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Letflow(Ecmp::new(rng, self.entropy_space))
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        Some(Box::new(LetFlow::new(self.seed, site.switch, self.timeout)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: LetflowParams = parse_params(params, "lb.letflow")?;
    Ok(Box::new(Builder {
        seed: c.seed,
        timeout: p.flowlet_timeout.value,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "letflow",
    label: "LetFlow",
    color: "#e6ab02", // gold
    switch_side: true,
    int_probes: false,
    reorders: false,
    presets: &[(
        "reps_paper",
        "flowlet_timeout = \"100us\"   # ConWeave §4.1 and its artifact (network-load-balance.cc letflow_flowletTimeout)\n",
    )],
    check: check_params::<LetflowParams>,
    prepare,
};
