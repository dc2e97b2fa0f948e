//! CONGA as a load balancer kind (`lb.kind = "conga"`): leaf-to-leaf
//! congestion-aware flowlet switching in the switches
//! (`net::policy::conga`; Alizadeh et al., SIGCOMM '14), with the constants
//! the ConWeave artifact runs it with (`network-load-balance.cc`, "Conga
//! params"; ConWeave §4.1 sets the 100 us flowlet gap). CONGA is designed
//! for 2-tier leaf-spine fabrics; a 3-tier tree is refused.

use super::ecmp::Ecmp;
use super::letflow::positive;
use super::{Lb, LbBuilder, LbCommon, LbEntry};
use crate::net::policy::conga::{Conga, CongaConfig};
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.conga`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CongaParams {
    /// An idle gap longer than this starts a new flowlet.
    pub flowlet_timeout: Time,
    /// T_dre: the DRE registers decay once per period.
    pub dre_period: Time,
    /// α: the fraction of a DRE register each decay removes, in (0, 1].
    pub dre_alpha: f64,
    /// Q: congestion metrics are quantised to Q bits (1 to 7).
    pub quantize_bits: u32,
    /// Remote metrics and feedback not refreshed for this long count as zero / absent.
    pub aging: Time,
}

impl Params for CongaParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        positive(&self.flowlet_timeout, &format!("{key}.flowlet_timeout"))?;
        positive(&self.dre_period, &format!("{key}.dre_period"))?;
        positive(&self.aging, &format!("{key}.aging"))?;
        if !(self.dre_alpha > 0.0 && self.dre_alpha <= 1.0) {
            return Err(ScenarioError::new(
                format!("{key}.dre_alpha"),
                format!("must be in (0, 1], got {}", self.dre_alpha),
            ));
        }
        if !(1..=7).contains(&self.quantize_bits) {
            return Err(ScenarioError::new(
                format!("{key}.quantize_bits"),
                format!("must be 1 to 7 (the header's 7-bit fields), got {}", self.quantize_bits),
            ));
        }
        Ok(())
    }
}

struct Builder {
    seed: u64,
    cfg: CongaConfig,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    /// The host keeps one entropy value per flow, which only its ACKs' ECMP hash uses.
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Conga(Ecmp::new(rng, self.entropy_space))
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        Some(Box::new(Conga::new(site, self.cfg, self.seed)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: CongaParams = parse_params(params, "lb.conga")?;
    if c.shape.tiers != 2 {
        return Err(ScenarioError::new(
            "topology.tiers",
            format!(
                "lb.kind = \"conga\" runs on 2-tier leaf-spine trees only (CONGA SIGCOMM '14 §3), got {} tiers",
                c.shape.tiers
            ),
        ));
    }
    if c.shape.uplinks_per_tor > 255 {
        return Err(ScenarioError::new(
            "topology.uplinks_per_tor",
            format!(
                "lb.kind = \"conga\" names a leaf's uplink in an 8-bit LBTag: at most 255, got {}",
                c.shape.uplinks_per_tor
            ),
        ));
    }
    Ok(Box::new(Builder {
        seed: c.seed,
        cfg: CongaConfig {
            flowlet_timeout: p.flowlet_timeout.value,
            dre_period: p.dre_period.value,
            dre_alpha: p.dre_alpha,
            quantize_bits: p.quantize_bits,
            aging: p.aging.value,
        },
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "conga",
    label: "CONGA",
    color: "#7b4173", // plum
    switch_side: true,
    int_probes: false,
    reorders: false,
    presets: &[(
        "reps_paper",
        "flowlet_timeout = \"100us\"   # ConWeave §4.1; artifact network-load-balance.cc conga_flowletTimeout\n\
         dre_period = \"50us\"         # artifact network-load-balance.cc conga_dreTime\n\
         dre_alpha = 0.2              # artifact network-load-balance.cc conga_alpha\n\
         quantize_bits = 3            # CONGA §3 (3-bit metrics); artifact conga_quantizeBit\n\
         aging = \"500us\"             # artifact network-load-balance.cc conga_agingTime\n",
    )],
    check: check_params::<CongaParams>,
    prepare,
};
