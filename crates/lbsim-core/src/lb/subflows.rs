//! MPTCP-like subflows (REPS §4.1: "we divide each message into 8 subflows
//! and route each one individually similarly to using multiple QPs"): a
//! transport flow owns a fixed set of EVs, drawn once, and its packets take
//! them in turn. A message split into subflows (`build.rs`) gives each
//! subflow a set of one EV, so each stays on its own path like an ECMP flow;
//! with `lb.subflows.window = "single"` the whole message is one flow over
//! `count` EVs, as the REPS artifact's `mp` balancer does.

use super::{FlowPlan, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::ScenarioError;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// How the subflows of a message share congestion control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubflowWindow {
    /// Each subflow is its own connection (a QP) with its own window, starting at `cc.initial_cwnd`.
    Full,
    /// Each subflow has its own window, starting at `cc.initial_cwnd` / count.
    Share,
    /// One connection and one window; its packets take the subflows' EVs in
    /// turn (the REPS artifact's `mp` balancer).
    Single,
}

/// `lb.subflows`: MPTCP-like subflows (REPS §4.1: "we divide each message into 8 subflows").
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubflowsParams {
    /// Subflows per message, each on one fixed EV.
    pub count: u32,
    pub window: SubflowWindow,
}

impl Params for SubflowsParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.count == 0 {
            return Err(ScenarioError::new(format!("{key}.count"), "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Clone)]
pub struct Subflows {
    evs: Vec<u16>,
    next: usize,
}

impl Subflows {
    /// `count` consecutive EVs from a random first one, wrapping in the
    /// space: distinct whenever the space allows (REPS artifact uec.cpp
    /// nextEntropy_mp: (i + base) mod paths for i < mp_flows).
    pub fn new(rng: &mut Rng, entropy_space: u32, count: u32) -> Self {
        let base = rng.below(entropy_space as u64) as u32;
        Subflows {
            evs: (0..count.max(1))
                .map(|i| ((base as u64 + i as u64) % entropy_space as u64) as u16)
                .collect(),
            next: 0,
        }
    }

    /// The EVs this flow cycles through.
    pub fn evs(&self) -> &[u16] {
        &self.evs
    }
}

impl LoadBalancer for Subflows {
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
        let ev = self.evs[self.next];
        self.next += 1;
        if self.next == self.evs.len() {
            self.next = 0;
        }
        ev
    }
}

struct Builder {
    p: SubflowsParams,
    entropy_space: u32,
}

impl LbBuilder for Builder {
    /// Own windows: the message splits into `count` flows (`messages::split`); "single": one flow.
    fn plan(&self) -> FlowPlan {
        let own = self.p.window != SubflowWindow::Single;
        FlowPlan {
            subflows: own.then_some(self.p.count),
            share_window: self.p.window == SubflowWindow::Share,
            ..FlowPlan::default()
        }
    }
    /// One EV per subflow, or all `count` when one window carries the message.
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        let evs = match self.p.window {
            SubflowWindow::Single => self.p.count,
            SubflowWindow::Full | SubflowWindow::Share => 1,
        };
        Lb::Subflows(Subflows::new(rng, self.entropy_space, evs))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: SubflowsParams = parse_params(params, "lb.subflows")?;
    Ok(Box::new(Builder {
        p,
        entropy_space: c.entropy_space,
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "subflows",
    label: "MPTCP",   // REPS §4.1 names the 8-subflow baseline after MPTCP
    color: "#393b79", // indigo
    switch_side: false,
    int_probes: false,
    reorders: false,
    presets: &[
        (
            "reps_paper",
            r#"
count = 8                    # REPS §4.1: "we divide each message into 8 subflows"
window = "full"              # REPS §4.1: "similarly to using multiple QPs": each its own connection
"#,
        ),
        (
            "reps_artifact",
            r#"
count = 8                    # artifact run scripts: -mp_flows 8
window = "single"            # artifact uec.cpp nextEntropy_mp: one window, packets cycle over 8 EVs
"#,
        ),
    ],
    check: check_params::<SubflowsParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamTag;

    #[test]
    fn packets_cycle_over_fixed_distinct_evs() {
        let mut rng = Rng::new(5, StreamTag::Flow, 0);
        let mut sf = Subflows::new(&mut rng, 65536, 8);
        let evs = sf.evs().to_vec();
        let mut sorted = evs.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 8, "distinct: {evs:?}");
        let mut st = LbStats::default();
        let got: Vec<u16> = (0..24).map(|_| sf.next_ev(SimTime::ZERO, &mut rng, &mut st)).collect();
        for (i, ev) in got.iter().enumerate() {
            assert_eq!(*ev, evs[i % 8], "packet {i} takes the subflows in turn");
        }
        // A small space wraps: 8 subflows over 5 EVs reuse them, never leave the space.
        let small = Subflows::new(&mut rng, 5, 8);
        assert!(small.evs().iter().all(|&e| e < 5));
        let one = Subflows::new(&mut rng, 65536, 1);
        assert_eq!(one.evs().len(), 1);
    }
}
