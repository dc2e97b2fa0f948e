//! WCMP as a load balancer kind (`lb.kind = "wcmp"`): weighted ECMP in the
//! switches (`net::policy::wcmp`), the baseline FaCa compares against (FaCa
//! §7.3). Each uplink's weight is its capacity, unless `lb.wcmp.weights`
//! gives the ToRs' uplinks theirs. The host keeps one entropy value per flow,
//! as under ECMP.

use super::ecmp::Ecmp;
use super::{Lb, LbBuilder, LbCommon, LbEntry};
use crate::net::policy::wcmp::Wcmp;
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::ScenarioError;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.wcmp`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WcmpParams {
    /// Weights of every ToR's uplinks, in uplink order (uplink i leads to
    /// tier-1 switch i of the ToR's group); absent: each uplink's capacity.
    /// Switches above the ToRs weigh by capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<u64>>,
}

/// The largest weight: 2^32 − 1. A weight is a relative share, so this loses
/// nothing, and the sum over a switch's uplinks (at most 2^16 of them, the
/// largest radix) then fits the u64 the switch draws its hash point from.
pub const MAX_WEIGHT: u64 = u32::MAX as u64;

impl Params for WcmpParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if let Some(w) = &self.weights {
            if let Some((i, x)) = w.iter().enumerate().find(|(_, &x)| x > MAX_WEIGHT) {
                return Err(ScenarioError::new(
                    format!("{key}.weights"),
                    format!(
                        "weight {i} is {x}, more than the largest weight ({MAX_WEIGHT}); weights are relative \
                         shares, so scale them down together"
                    ),
                ));
            }
            if w.iter().all(|&x| x == 0) {
                return Err(ScenarioError::new(
                    format!("{key}.weights"),
                    "needs at least one positive weight",
                ));
            }
        }
        Ok(())
    }
}

struct Builder {
    weights: Option<Vec<u64>>,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Wcmp(Ecmp::new(rng, self.entropy_space))
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        let sw = &site.net.switches[site.switch as usize];
        let weights = match (&self.weights, sw.tier) {
            (Some(w), 0) => w.clone(),
            // Capacity in Mb/s: integer weights with the rates' own proportions.
            _ => sw
                .up
                .iter()
                .map(|&p| site.net.ports[p as usize].base_rate.bps() / 1_000_000)
                .collect(),
        };
        Some(Box::new(Wcmp::new(&sw.up, weights)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: WcmpParams = parse_params(params, "lb.wcmp")?;
    if let Some(w) = &p.weights {
        if w.len() != c.shape.uplinks_per_tor as usize {
            return Err(ScenarioError::new(
                "lb.wcmp.weights",
                format!(
                    "gives {} weights, but every ToR has {} uplinks (one weight per uplink)",
                    w.len(),
                    c.shape.uplinks_per_tor
                ),
            ));
        }
    }
    Ok(Box::new(Builder {
        weights: p.weights,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "wcmp",
    label: "WCMP",
    color: "#8c6d31", // dark khaki
    switch_side: true,
    int_probes: false,
    reorders: false,
    presets: &[],
    check: check_params::<WcmpParams>,
    prepare,
};
