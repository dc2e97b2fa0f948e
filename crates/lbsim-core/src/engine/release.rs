//! What a finished message lets start: the messages waiting for it (a
//! workload's `after`), and the next target of the multishot trigger it
//! activates. A trigger is htsim's connection-matrix trigger: each time one
//! of its activating messages is done, its next target (in order) starts, so
//! a node with `parallel` messages under way starts a new one whenever any of
//! them ends (the REPS artifact's AllToAll, `gen_serialn_alltoall.py`). When a
//! message counts as done is `workload.release`.

use super::Simulation;
use crate::event::Event;
use crate::messages::Carriers;
use crate::scenario::Release;
use crate::workload::Trigger;
use std::ops::Range;

const NONE: u32 = u32::MAX;

/// The triggers as the engine runs them (empty: the workload has none, and
/// releasing a flow costs one length check).
#[derive(Clone, Debug, Default)]
pub struct Triggers {
    /// Per message: the trigger it activates when done (`NONE`: none).
    fires: Vec<u32>,
    /// Per message: its flows not yet done (a message done activates its trigger).
    parts_left: Vec<u32>,
    /// Per trigger: its targets' flows, in the order they start, and how many have started.
    targets: Vec<(Vec<Range<u32>>, usize)>,
}

impl Triggers {
    /// The workload's triggers on its flows: each target's flows wait for
    /// one activation more (`waiting_on`). A message activates at most one
    /// trigger and is the target of at most one (checked: `Err` says which).
    pub fn wire(
        triggers: &[Trigger],
        carriers: &Carriers,
        messages: usize,
        waiting_on: &mut [u32],
    ) -> Result<Self, String> {
        if triggers.is_empty() {
            return Ok(Triggers::default());
        }
        let mut t = Triggers {
            fires: vec![NONE; messages],
            parts_left: (0..messages as u32).map(|m| carriers.of(m).len() as u32).collect(),
            targets: Vec::with_capacity(triggers.len()),
        };
        let mut targeted = vec![false; messages];
        for (i, trigger) in triggers.iter().enumerate() {
            for &m in &trigger.activators {
                if std::mem::replace(&mut t.fires[m as usize], i as u32) != NONE {
                    return Err(format!("message {m} activates two triggers"));
                }
            }
            for &m in &trigger.targets {
                if std::mem::replace(&mut targeted[m as usize], true) {
                    return Err(format!("message {m} is the target of two triggers"));
                }
                for f in carriers.of(m) {
                    waiting_on[f as usize] += 1;
                }
            }
            t.targets
                .push((trigger.targets.iter().map(|&m| carriers.of(m)).collect(), 0));
        }
        Ok(t)
    }
}

impl Simulation {
    /// `flow` is done in the sense `release` names: the flows waiting
    /// for it count it, and its message, once whole, activates its trigger.
    pub(super) fn on_flow_done(&mut self, flow: u32, at: Release) {
        if at != self.meta.release {
            return;
        }
        // A flow is done once in each sense: its list is not needed again.
        let deps = self.meta.dependents.get_mut(flow as usize).map(std::mem::take);
        for d in deps.unwrap_or_default() {
            self.count_down(d);
        }
        let m = self.flows[flow as usize].message as usize;
        let t = &mut self.meta.triggers;
        let Some(&trigger) = t.fires.get(m).filter(|&&i| i != NONE) else {
            return;
        };
        t.parts_left[m] -= 1;
        if t.parts_left[m] > 0 {
            return;
        }
        let (targets, started) = &mut t.targets[trigger as usize];
        let Some(next) = targets.get(*started).cloned() else {
            return; // more activations than targets: the rest start nothing
        };
        *started += 1;
        for d in next {
            self.count_down(d);
        }
    }

    /// One of the things flow `d` waits for has happened: start it if it was the last.
    fn count_down(&mut self, d: u32) {
        let f = &mut self.flows[d as usize];
        f.waiting_on -= 1;
        if f.waiting_on == 0 {
            self.events
                .push(f.spec.start.max(self.now), Event::FlowStart { flow: d });
        }
    }
}
