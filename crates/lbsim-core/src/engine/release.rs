//! What a finished message lets start: the messages waiting for it (a
//! workload's `after`, when it is done in the sense `workload.release`
//! names), and the targets of the trigger it activates. Triggers are htsim's
//! connection-matrix triggers: a multishot one starts its next target each
//! time one of its activators is done, so a node with `parallel` messages
//! under way starts a new one whenever any of them ends (the REPS
//! artifact's AllToAll, `gen_serialn_alltoall.py`); a oneshot or barrier one
//! starts all its targets at its first (or n-th) activation.

use super::Simulation;
use crate::event::Event;
use crate::messages::Carriers;
use crate::scenario::Release;
use crate::workload::{Fires, Trigger};
use std::ops::Range;

const NONE: u32 = u32::MAX;

/// The triggers as the engine runs them (empty: the workload has none, and
/// a flow done costs one length check).
#[derive(Clone, Debug, Default)]
pub struct Triggers {
    /// Per sense (arrival, ack) and message: the trigger it activates when done (`NONE`: none).
    fires: [Vec<u32>; 2],
    /// Per sense and message: its flows not yet done in that sense.
    parts_left: [Vec<u32>; 2],
    armed: Vec<Armed>,
}

/// One trigger: its targets' flows in order, its rule, and how often it was activated.
#[derive(Clone, Debug)]
struct Armed {
    targets: Vec<Range<u32>>,
    fires: Fires,
    activations: u32,
}

fn sense(r: Release) -> usize {
    match r {
        Release::Arrival => 0,
        Release::Ack => 1,
    }
}

impl Triggers {
    /// The workload's triggers on its flows (a trigger without its own sense
    /// takes `release`): each target's flows wait for one thing more
    /// (`waiting_on`). A message activates at most one trigger per sense and
    /// is the target of at most one (`Err` says which message breaks this).
    pub fn wire(
        triggers: &[Trigger],
        carriers: &Carriers,
        messages: usize,
        release: Release,
        waiting_on: &mut [u32],
    ) -> Result<Self, String> {
        if triggers.is_empty() {
            return Ok(Triggers::default());
        }
        let parts: Vec<u32> = (0..messages as u32).map(|m| carriers.of(m).len() as u32).collect();
        let mut t = Triggers {
            fires: [vec![NONE; messages], vec![NONE; messages]],
            parts_left: [parts.clone(), parts],
            armed: Vec::with_capacity(triggers.len()),
        };
        let mut targeted = vec![false; messages];
        for (i, trigger) in triggers.iter().enumerate() {
            let fires = &mut t.fires[sense(trigger.on.unwrap_or(release))];
            for &m in &trigger.activators {
                if std::mem::replace(&mut fires[m as usize], i as u32) != NONE {
                    return Err(format!(
                        "message {m} activates two triggers when done in the same sense"
                    ));
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
            t.armed.push(Armed {
                targets: trigger.targets.iter().map(|&m| carriers.of(m)).collect(),
                fires: trigger.fires,
                activations: 0,
            });
        }
        Ok(t)
    }
}

impl Simulation {
    /// `flow` is done in the sense `at`: if that is `workload.release`'s,
    /// the flows waiting for it count it; and its message, once all its
    /// flows are done in that sense, activates its trigger for it.
    pub(super) fn on_flow_done(&mut self, flow: u32, at: Release) {
        if at == self.meta.release {
            // A flow is done once in each sense: its list is not needed again.
            let deps = self.meta.dependents.get_mut(flow as usize).map(std::mem::take);
            for d in deps.unwrap_or_default() {
                self.count_down(d);
            }
        }
        let m = self.flows[flow as usize].message as usize;
        let (fires, left) = (
            &self.meta.triggers.fires[sense(at)],
            &mut self.meta.triggers.parts_left[sense(at)],
        );
        let Some(&trigger) = fires.get(m).filter(|&&i| i != NONE) else {
            return;
        };
        left[m] -= 1;
        if left[m] > 0 {
            return;
        }
        let armed = &mut self.meta.triggers.armed[trigger as usize];
        armed.activations += 1;
        let start = match armed.fires {
            Fires::Each => armed.activations as usize - 1..armed.activations as usize,
            Fires::AllAt(n) if armed.activations == n => 0..armed.targets.len(),
            Fires::AllAt(_) => return,
        };
        // More activations than targets start nothing.
        let flows: Vec<u32> = armed
            .targets
            .get(start)
            .into_iter()
            .flatten()
            .flat_map(|r| r.clone())
            .collect();
        for d in flows {
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
