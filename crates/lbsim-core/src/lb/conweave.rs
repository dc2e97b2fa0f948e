//! ConWeave as a load balancer kind (`lb.kind = "conweave"`, ConWeave
//! SIGCOMM '23): the ToRs reroute and reorder (`net::policy::conweave`); the
//! sender's entropy value only spreads the flow's ACKs and ConWeave's
//! control packets, which the switches hash as ECMP does (one random EV per
//! flow, as `lb::ecmp`). Intra-rack flows bypass ConWeave.

use super::ecmp::Ecmp;
use super::{Lb, LbBuilder, LbCommon, LbEntry};
use crate::net::policy::conweave::{ConWeave as ConWeavePolicy, ConWeaveConfig};
use crate::net::{PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{AutoTime, ScenarioError, Time};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.conweave`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConWeaveParams {
    /// θ_reply; "auto": the ToR-to-ToR base RTT plus `reply_extra`.
    pub reply_timeout: AutoTime,
    pub reply_extra: Time,
    /// θ_path_busy.
    pub path_busy: Time,
    /// θ_inactive; "auto": 300 us on two tiers, 1 ms on three.
    pub inactive: AutoTime,
    /// θ_resume_default; "auto": 200 us on two tiers, on three 600 us lossless and 300 us otherwise.
    pub resume_default: AutoTime,
    /// θ_resume_extra; "auto": 16 us, 64 us on a lossless three-tier tree.
    pub resume_extra: AutoTime,
    /// Reorder queues per ToR downlink; 0 reroutes without reordering.
    pub reorder_queues: u32,
    /// New paths avoid those a NOTIFY made busy.
    pub path_aware: bool,
}

impl Params for ConWeaveParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        let positive = [
            ("reply_timeout", self.reply_timeout.value),
            ("inactive", self.inactive.value),
            ("resume_default", self.resume_default.value),
        ];
        for (k, v) in positive {
            if v == Some(SimTime::ZERO) {
                return Err(ScenarioError::new(
                    format!("{key}.{k}"),
                    "must be positive (or \"auto\")",
                ));
            }
        }
        if self.reorder_queues > 1024 {
            return Err(ScenarioError::new(
                format!("{key}.reorder_queues"),
                format!(
                    "{} reorder queues per port is more than a switch has (the paper: 31 of 32)",
                    self.reorder_queues
                ),
            ));
        }
        Ok(())
    }
}

struct Builder {
    cfg: ConWeaveConfig,
    seed: u64,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::ConWeave(Ecmp::new(rng, self.entropy_space))
    }
    fn switch_policy(&self, site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        Some(Box::new(ConWeavePolicy::new(self.cfg, self.seed, site.switch)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: ConWeaveParams = parse_params(params, "lb.conweave")?;
    if !c.transport.is_rdma() {
        return Err(ScenarioError::new(
            "lb.kind",
            "\"conweave\" reorders in the network for RDMA NICs and needs transport.kind = \"gbn\" or \"irn\" \
             (the presets rdma_lossless and rdma_irn set them)",
        ));
    }
    let s = c.shape;
    let three = s.tiers == 3;
    let paths = if three {
        s.uplinks_per_tor * s.agg_uplinks
    } else {
        s.uplinks_per_tor
    };
    if paths > 256 {
        return Err(ScenarioError::new(
            "lb.kind",
            format!(
                "\"conweave\" names a path in 8 bits (ConWeave §3.4) but this tree has {paths} paths between racks"
            ),
        ));
    }
    let us = SimTime::from_us;
    let cfg = ConWeaveConfig {
        reply_timeout: p.reply_timeout.value,
        reply_extra: p.reply_extra.value,
        path_busy: p.path_busy.value,
        // ConWeave artifact run.py: cwh_tx_expiry_time 300 us (leaf-spine), 1000 us (fat tree).
        inactive: p.inactive.value.unwrap_or(if three { us(1000) } else { us(300) }),
        // ConWeave artifact run.py: cwh_default_voq_waiting_time 200 us (leaf-spine); fat tree
        // 600 us lossless, 300 us IRN.
        resume_default: p.resume_default.value.unwrap_or(match (three, c.lossless) {
            (false, _) => us(200),
            (true, true) => us(600),
            (true, false) => us(300),
        }),
        // ConWeave artifact run.py: cwh_extra_voq_flush_time 16 us; 64 us on a lossless fat tree.
        resume_extra: p
            .resume_extra
            .value
            .unwrap_or(if three && c.lossless { us(64) } else { us(16) }),
        reorder_queues: p.reorder_queues,
        control_bytes: c.control_bytes.max(64) as u32,
        path_aware: p.path_aware,
        shape: s,
        hop_latency: c.hop_latency,
    };
    Ok(Box::new(Builder {
        cfg,
        seed: c.seed,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "conweave",
    label: "ConWeave",
    color: "#2ca02c", // green
    switch_side: true,
    int_probes: false,
    // The destination ToR puts rerouted packets back in order.
    reorders: false,
    presets: &[(
        "reps_paper",
        r#"
reply_timeout = "auto"       # θ_reply: ToR-to-ToR base RTT + reply_extra (artifact; 8 us leaf-spine, ConWeave Table 3)
reply_extra = "4us"          # ConWeave artifact run.py: cwh_extra_reply_deadline 4 us
path_busy = "16us"           # θ_path_busy: ConWeave artifact run.py 16 us (ConWeave Table 3 says 8 us)
inactive = "auto"            # θ_inactive: 300 us leaf-spine (ConWeave Table 3), 1 ms fat tree (artifact run.py)
resume_default = "auto"      # θ_resume_default: 200 us leaf-spine, 600/300 us fat tree lossless/IRN (artifact run.py; ConWeave App. A)
resume_extra = "auto"        # θ_resume_extra: 16 us, 64 us lossless fat tree (artifact run.py)
reorder_queues = 31          # ConWeave §3.4.2: 31 of a 100G port's 32 queues hold out-of-order packets
path_aware = true            # ConWeave §3.2.2: new paths avoid those a NOTIFY marked busy
"#,
    )],
    check: check_params::<ConWeaveParams>,
    prepare,
};
