//! DRILL as a load balancer kind (`lb.kind = "drill"`): per-packet micro
//! load balancing in the switches (`net::policy::drill`), DRILL(d, m) with
//! ConWeave's setting d = 2, m = 1 (ConWeave §4.1; Ghorbani et al.,
//! SIGCOMM '17, recommend it). It sprays one flow's packets over several
//! uplinks, so they arrive out of order.

use super::ecmp::Ecmp;
use super::{Lb, LbBuilder, LbCommon, LbEntry};
use crate::net::policy::drill::Drill;
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::ScenarioError;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.drill`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrillParams {
    /// d: uplinks sampled at random per packet (at least 1).
    pub samples: u32,
    /// m: least loaded uplinks remembered from the previous packet (0: none).
    pub memory: u32,
}

impl Params for DrillParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.samples == 0 {
            return Err(ScenarioError::new(format!("{key}.samples"), "must be at least 1"));
        }
        Ok(())
    }
}

struct Builder {
    seed: u64,
    p: DrillParams,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    /// The host keeps one entropy value per flow, which only its ACKs' ECMP hash uses.
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Drill(Ecmp::new(rng, self.entropy_space))
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        Some(Box::new(Drill::new(
            self.seed,
            site.switch,
            self.p.samples,
            self.p.memory,
        )))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: DrillParams = parse_params(params, "lb.drill")?;
    Ok(Box::new(Builder {
        seed: c.seed,
        p,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "drill",
    label: "DRILL",
    color: "#e7298a", // magenta: apart from ConWeave's green in the same figures
    switch_side: true,
    int_probes: false,
    reorders: true,
    presets: &[(
        "reps_paper",
        "samples = 2                  # ConWeave §4.1: DRILL(2,1) (artifact switch-node.cc m_drill_candidate = 2)\n\
         memory = 1                   # ConWeave §4.1: DRILL(2,1), one remembered port\n",
    )],
    check: check_params::<DrillParams>,
    prepare,
};
