//! The `[queue]` table: which queue discipline switch ports run and its
//! settings (`net::queue`).

use super::{Amount, AmountValue, AutoAmount, ScenarioError, Time};
pub use crate::net::queue::shared::Scheduling;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnAt {
    Enqueue,
    Dequeue,
}

/// Who loses when a data packet finds a two-class queue's data class full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FullDrop {
    /// The arrival (drop-tail; trimmed instead with trimming).
    Tail,
    /// A fair coin: the newest waiting data packet (the queue's tail) or the
    /// arrival (REPS artifact compositequeue.cpp, `receivePacket`).
    CoinNewest,
}

/// The discipline of switch ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// Per port: control ahead of a drop-tail or trimming data class of `capacity` bytes (REPS, htsim).
    TwoClass,
    /// Per switch: one shared buffer with dynamic thresholds, eight classes, optional PFC (`[queue.shared]`).
    Shared,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    pub kind: QueueKind,
    /// Two-class: the data class's capacity.
    pub capacity: Amount,
    pub ecn_kmin: Amount,
    pub ecn_kmax: Amount,
    /// RED's marking probability at `ecn_kmax` (marks rise linearly from 0 at `ecn_kmin`).
    pub ecn_pmax: f64,
    pub ecn_at: EcnAt,
    /// Two-class: cut a packet that does not fit to its header instead of dropping it.
    pub trimming: bool,
    /// Two-class: which packet loses when the data class is full.
    pub full_drop: FullDrop,
    /// Two-class: the data packet being serialized counts against `capacity` until it is sent.
    pub count_in_service: bool,
    /// `kind = "shared"`: the switch buffer and PFC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedQueue>,
}

/// `[queue.shared]`: a switch's shared buffer (`net::queue::shared`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedQueue {
    /// The whole buffer of a switch.
    pub size: Amount,
    /// Egress dynamic threshold: a queue may hold this × the free buffer.
    pub egress_alpha: f64,
    /// With PFC, the egress threshold also limits (and may drop) the lossless class.
    pub egress_limits_lossless: bool,
    /// The class data packets travel in (1-7; 0 is control).
    pub data_class: u8,
    pub scheduling: Scheduling,
    /// Lossless data class: PFC pauses the upstream instead of dropping.
    pub pfc: bool,
    /// Ingress dynamic threshold of a priority group (PFC's XOFF point), a fraction of the free shared pool.
    pub pfc_alpha: f64,
    /// Per port and group, for what arrives after a pause: bytes, or "auto" = 2 × rate × (link + switch latency) + 3 MTU + a pause frame.
    pub headroom: AutoAmount,
    /// A paused group resumes this far below its threshold.
    pub hysteresis: Amount,
    /// How long a pause frame pauses; re-sent while the group stays over its threshold.
    pub pause_time: Time,
    /// With PFC: end the run as a PFC deadlock when no packet moves for this long while pauses are in force.
    pub deadlock_after: Time,
}

impl Queue {
    /// Checks that need no topology.
    pub fn check(&self) -> Result<(), ScenarioError> {
        let bad = |key: &str, msg: String| Err(ScenarioError::new(key, msg));
        if !(self.ecn_pmax > 0.0 && self.ecn_pmax <= 1.0) {
            return bad("queue.ecn_pmax", format!("must be in (0, 1], got {}", self.ecn_pmax));
        }
        match (self.kind, &self.shared) {
            (QueueKind::TwoClass, _) => Ok(()),
            (QueueKind::Shared, None) => bad(
                "queue.shared",
                "is required with queue.kind = \"shared\" (size, egress_alpha, data_class, ...)".into(),
            ),
            (QueueKind::Shared, Some(s)) => {
                if self.trimming {
                    return bad(
                        "queue.trimming",
                        "needs queue.kind = \"two_class\" (a shared buffer does not trim)".into(),
                    );
                }
                if self.full_drop != FullDrop::Tail {
                    return bad(
                        "queue.full_drop",
                        "\"coin_newest\" needs queue.kind = \"two_class\": a shared buffer drops the arrival; \
                         set queue.full_drop = \"tail\" (the reps_artifact preset sets \"coin_newest\")"
                            .into(),
                    );
                }
                if self.count_in_service {
                    return bad(
                        "queue.count_in_service",
                        "needs queue.kind = \"two_class\": a shared buffer counts a packet until it leaves its \
                         queue; set queue.count_in_service = false (the reps_artifact preset sets true)"
                            .into(),
                    );
                }
                if self.ecn_at == EcnAt::Enqueue {
                    return bad(
                        "queue.ecn_at",
                        "a shared buffer marks at dequeue (RED on the egress queue)".into(),
                    );
                }
                s.check()
            }
        }
    }
}

impl SharedQueue {
    fn check(&self) -> Result<(), ScenarioError> {
        let bad = |key: &str, msg: String| Err(ScenarioError::new(format!("queue.shared.{key}"), msg));
        if !(1..=7).contains(&self.data_class) {
            return bad(
                "data_class",
                format!("must be a class 1-7 (0 is the control class), got {}", self.data_class),
            );
        }
        for (key, alpha) in [("egress_alpha", self.egress_alpha), ("pfc_alpha", self.pfc_alpha)] {
            if !(alpha > 0.0 && alpha.is_finite()) {
                return bad(key, format!("must be a positive number, got {alpha}"));
            }
        }
        // A pause frame carries its time in whole nanoseconds, in 32 bits.
        let pause_ps = self.pause_time.value.ps();
        if pause_ps == 0 || !pause_ps.is_multiple_of(1000) || pause_ps / 1000 > u32::MAX as u64 {
            return bad(
                "pause_time",
                format!(
                    "must be a whole number of nanoseconds from 1ns to 4.294967295s (a pause frame carries it in 32 bits of ns), got \"{}\"",
                    self.pause_time.text
                ),
            );
        }
        if self.deadlock_after.value.ps() == 0 {
            return bad("deadlock_after", "must be positive".into());
        }
        if matches!(self.size.value, AmountValue::Percent(_)) {
            return bad("size", "must be an amount of data, like \"9MiB\"".into());
        }
        self.size.check_absolute("queue.shared.size", true)?;
        if matches!(self.headroom.value, Some(AmountValue::Percent(_))) {
            return bad(
                "headroom",
                "must be an amount of data, like \"30KB\", or \"auto\"".into(),
            );
        }
        self.hysteresis.check_absolute("queue.shared.hysteresis", false)
    }
}
