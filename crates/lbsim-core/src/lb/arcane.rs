//! ARCANE: adaptive routing with caching and network exploration (ARCANE
//! workshop paper, §3, Alg. 1), the first version of REPS. For its first
//! BDP of packets a flow tries the entropies one after the other (lines
//! 6-7); the EV of every unmarked ACK goes into a circular buffer of 8
//! (lines 3, 13-16); afterwards each send reuses the oldest cached EV and
//! falls back to the next sequential one when the buffer is empty (lines
//! 9, 19-24).
//!
//! How it differs from REPS (`reps.rs`): exploration walks the EVs in order
//! (REPS draws them at random); it lasts the first BDP even when EVs are
//! already cached (REPS reuses as soon as one is); an EV is taken out of the
//! buffer when used (REPS keeps it, invalidated, for freezing mode); there
//! is no freezing mode; and the entropy space is 256 (line 1; REPS: 16 bits).
//!
//! Choices (docs/model-choices.md): the entropy space is
//! `lb.arcane.entropy_space` (256) capped by `lb.entropy_space`; line 6's
//! `p.seqnum < bdp` counts sends, retransmissions included, against
//! `lb.arcane.explore` (one BDP of the longest path); a full buffer
//! overwrites its oldest entry, as REPS's does.

use super::{AckEcho, AckPath, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{Amount, ScenarioError};
use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// `lb.arcane` (ARCANE workshop paper, Alg. 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArcaneParams {
    /// Alg. 1 line 1: entropies explored in order, capped by `lb.entropy_space`.
    pub entropy_space: u32,
    /// Alg. 1 line 3.
    pub buffer_size: u32,
    /// Alg. 1 line 6: sequential exploration lasts this many bytes of sends.
    pub explore: Amount,
}

impl Params for ArcaneParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.entropy_space == 0 || self.entropy_space > 65536 {
            return Err(ScenarioError::new(
                format!("{key}.entropy_space"),
                "must be between 1 and 65536",
            ));
        }
        if self.buffer_size == 0 || self.buffer_size > 255 {
            return Err(ScenarioError::new(
                format!("{key}.buffer_size"),
                "must be between 1 and 255",
            ));
        }
        self.explore.check_absolute(&format!("{key}.explore"), false)
    }
}

#[derive(Clone, Debug)]
pub struct ArcaneConfig {
    pub entropy_space: u32,
    pub buffer_size: usize,
    /// Sends that explore sequentially (line 6: one BDP of packets).
    pub explore_packets: u32,
}

#[derive(Clone, Debug)]
pub struct Arcane {
    cfg: ArcaneConfig,
    /// Line 2: next_entropy, counted without wrapping so that "all entropies
    /// tried" (line 6) is `next_entropy >= entropy_space`.
    next_entropy: u64,
    sent: u32,
    /// Circular buffer of unmarked EVs: `len` entries ending before `head`.
    cache: Vec<u16>,
    head: usize,
    len: usize,
}

impl Arcane {
    pub fn new(cfg: ArcaneConfig) -> Self {
        Arcane {
            cache: vec![0; cfg.buffer_size],
            cfg,
            next_entropy: 0,
            sent: 0,
            head: 0,
            len: 0,
        }
    }

    /// Lines 7 and 21: `next_entropy++ % num_entropies`.
    fn sequential(&mut self) -> u16 {
        let ev = (self.next_entropy % self.cfg.entropy_space as u64) as u16;
        self.next_entropy += 1;
        ev
    }
}

impl LoadBalancer for Arcane {
    /// Alg. 1 ARCANE_ONSEND.
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, stats: &mut LbStats) -> u16 {
        let exploring = self.sent < self.cfg.explore_packets && self.next_entropy < self.cfg.entropy_space as u64;
        self.sent = self.sent.saturating_add(1);
        if exploring || self.len == 0 {
            stats.explored += 1;
            return self.sequential();
        }
        // Line 23 (GET_EARLIEST_ENTROPY): the oldest cached EV.
        let n = self.cfg.buffer_size;
        let oldest = (self.head + n - self.len) % n;
        self.len -= 1;
        stats.recycled += 1;
        self.cache[oldest]
    }

    /// Alg. 1 ARCANE_ONRECV, lines 14-15: cache the EV of an unmarked ACK.
    fn on_ack(&mut self, _now: SimTime, ack: &AckEcho, _stats: &mut LbStats) -> AckPath {
        if !ack.ecn {
            self.cache[self.head] = ack.ev;
            self.head = (self.head + 1) % self.cfg.buffer_size;
            self.len = (self.len + 1).min(self.cfg.buffer_size);
        }
        AckPath::Normal
    }
}

struct Builder(ArcaneConfig);

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, _rng: &mut Rng) -> Lb {
        Lb::Arcane(Arcane::new(self.0.clone()))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: ArcaneParams = parse_params(params, "lb.arcane")?;
    Ok(Box::new(Builder(ArcaneConfig {
        entropy_space: p.entropy_space.min(c.entropy_space),
        buffer_size: p.buffer_size as usize,
        explore_packets: c.packets(&p.explore, "lb.arcane.explore")?,
    })))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "arcane",
    label: "ARCANE",
    color: "#ff7f0e", // orange
    switch_side: false,
    int_probes: false,
    reorders: true,
    // Not in the REPS artifact: both presets run Alg. 1 as published.
    presets: &[(
        "reps_paper",
        r#"
entropy_space = 256          # ARCANE Alg. 1 line 1
buffer_size = 8              # ARCANE Alg. 1 line 3
explore = "1bdp"             # ARCANE Alg. 1 line 6: p.seqnum < bdp
"#,
    )],
    check: check_params::<ArcaneParams>,
    prepare,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::tests::echo;
    use crate::rng::StreamTag;

    fn run(a: &mut Arcane, steps: &[(&str, u16, bool)]) -> Vec<u16> {
        let mut rng = Rng::new(1, StreamTag::Flow, 0);
        let mut st = LbStats::default();
        let t = SimTime::ZERO;
        let mut sent = Vec::new();
        for &(op, ev, ecn) in steps {
            match op {
                "ack" => {
                    a.on_ack(t, &echo(ev, ecn), &mut st);
                }
                _ => sent.push(a.next_ev(t, &mut rng, &mut st)),
            }
        }
        sent
    }

    const SEND: (&str, u16, bool) = ("send", 0, false);

    #[test]
    fn explores_sequentially_for_a_bdp_then_recycles_the_oldest_unmarked() {
        let mut a = Arcane::new(ArcaneConfig {
            entropy_space: 256,
            buffer_size: 2,
            explore_packets: 4,
        });
        let sent = run(
            &mut a,
            &[
                SEND,
                SEND,
                ("ack", 0, false),
                SEND,             // still the first BDP: sequential although EV 0 is cached (line 6)
                ("ack", 1, true), // marked: not cached (line 14)
                SEND,
                ("ack", 2, false),
                ("ack", 3, false), // buffer of 2 full: EV 0 is overwritten
                SEND,              // past the first BDP: the oldest cached (line 9)
                SEND,
                SEND, // buffer empty: the next sequential EV (line 21)
                ("ack", 9, false),
                SEND,
            ],
        );
        assert_eq!(sent, vec![0, 1, 2, 3, 2, 3, 4, 9]);
    }

    #[test]
    fn exploration_ends_once_every_entropy_was_tried() {
        let mut a = Arcane::new(ArcaneConfig {
            entropy_space: 3,
            buffer_size: 8,
            explore_packets: 100,
        });
        let sent = run(&mut a, &[SEND, ("ack", 1, false), SEND, SEND, SEND, SEND, SEND]);
        // Three sequential tries cover the space (line 6); then cache, then wrap around (line 21).
        assert_eq!(sent, vec![0, 1, 2, 1, 0, 1]);
    }
}
