//! Flowlet switching at the sender, LetFlow-style (Vanini et al., "Let It
//! Flow", NSDI '17): a flowlet is a burst of a flow's packets separated
//! from the next by an idle gap longer than the flowlet timeout; each new
//! flowlet takes a new random entropy value. REPS §4.1 sets an aggressive
//! timeout of half the RTT (`lb.flowlet.timeout = "auto"`: half the flow's
//! base RTT).
//!
//! The gap is measured between the flow's own sends, as LetFlow measures
//! it between packets; the REPS artifact (`uec.cpp` `nextEntropy_flowlet`)
//! measures it from the last ACK instead and holds a new path for one RTO
//! (docs/model-choices.md).

use super::{Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{AutoTime, ScenarioError};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.flowlet`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowletParams {
    /// Idle gap that starts a new flowlet; "auto" = half the flow's base RTT (REPS §4.1).
    pub timeout: AutoTime,
}

impl Params for FlowletParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.timeout.value == Some(SimTime::ZERO) {
            return Err(ScenarioError::new(
                format!("{key}.timeout"),
                "must be positive (or \"auto\")",
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Flowlet {
    entropy_space: u32,
    timeout: SimTime,
    ev: u16,
    last_send: Option<SimTime>,
}

impl Flowlet {
    pub fn new(timeout: SimTime, entropy_space: u32, rng: &mut Rng) -> Self {
        Flowlet {
            entropy_space,
            timeout,
            ev: rng.below(entropy_space as u64) as u16,
            last_send: None,
        }
    }
}

impl LoadBalancer for Flowlet {
    fn next_ev(&mut self, now: SimTime, rng: &mut Rng, stats: &mut LbStats) -> u16 {
        if self.last_send.is_some_and(|last| now - last > self.timeout) {
            self.ev = rng.below(self.entropy_space as u64) as u16;
            stats.explored += 1;
        }
        self.last_send = Some(now);
        self.ev
    }
}

struct Builder {
    timeout: Option<SimTime>,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    fn balancer(&self, base_rtt: SimTime, rng: &mut Rng) -> Lb {
        // REPS §4.1: a flowlet timeout of half the RTT.
        let timeout = self.timeout.unwrap_or(SimTime(base_rtt.ps() / 2));
        Lb::Flowlet(Flowlet::new(timeout, self.entropy_space, rng))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: FlowletParams = parse_params(params, "lb.flowlet")?;
    Ok(Box::new(Builder {
        timeout: p.timeout.value,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "flowlet",
    label: "Flowlet",
    color: "#bcbd22", // olive
    switch_side: false,
    int_probes: false,
    reorders: false,
    presets: &[
        (
            "reps_paper",
            "timeout = \"auto\"             # REPS §4.1: half the RTT (\"auto\": half the flow's base RTT)\n",
        ),
        (
            "reps_artifact",
            "timeout = \"auto\"             # artifact: flowlet_timeout = 0.5 * _base_rtt\n",
        ),
    ],
    check: check_params::<FlowletParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    #[test]
    fn a_new_entropy_only_after_a_gap_longer_than_the_timeout() {
        let mut rng = Rng::new(5, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let timeout = SimTime::from_us(3);
        let mut f = Flowlet::new(timeout, 65536, &mut rng);
        let mut send = |us_ps: u64| f.next_ev(SimTime(us_ps), &mut rng, &mut st);
        let us = 1_000_000;
        let first = send(0);
        // A burst, then a gap of exactly the timeout: one flowlet.
        for t in [us / 10, 2 * us / 10, 2 * us / 10 + 3 * us] {
            assert_eq!(send(t), first);
        }
        // A gap one picosecond longer than the timeout starts a new flowlet.
        let second = send(2 * us / 10 + 6 * us + 1);
        assert_ne!(second, first);
        assert_eq!(send(2 * us / 10 + 7 * us), second, "kept within the new burst");
        assert_eq!(st.explored, 1);
    }
}
