//! N-to-1 incast (REPS §4.2): `senders` hosts, a seeded random choice among
//! the others, each send one message to `receiver` at the same time.

use super::Traffic;
use crate::rng::Rng;
use crate::scenario::{ScenarioError, Workload};
use crate::time::SimTime;
use crate::transport::FlowSpec;

/// `workload.kind = "incast"`: one message of `size` from each sender, all
/// starting at `start`.
pub(super) fn traffic(
    w: &Workload,
    hosts: u32,
    size: Option<u64>,
    start: SimTime,
    rng: &mut Rng,
) -> Result<Traffic, ScenarioError> {
    let n = w.senders.expect("checked by the scenario");
    let receiver = w.receiver.unwrap_or(0);
    if receiver >= hosts {
        return Err(ScenarioError::new(
            "workload.receiver",
            format!("host {receiver} does not exist ({hosts} hosts)"),
        ));
    }
    if n == 0 || n >= hosts {
        return Err(ScenarioError::new(
            "workload.senders",
            format!("must be between 1 and {} (hosts - 1), got {n}", hosts - 1),
        ));
    }
    // Senders: a seeded random choice among the other hosts.
    let mut others: Vec<u32> = (0..hosts).filter(|&h| h != receiver).collect();
    rng.shuffle(&mut others);
    let size = size.expect("required by workload::message_size");
    Ok(Traffic::plain(
        others[..n as usize]
            .iter()
            .map(|&s| FlowSpec {
                src: s,
                dst: receiver,
                size,
                start,
            })
            .collect(),
    ))
}
