//! Scenario keys for failures and static asymmetry (`[[failures]]`,
//! `[[rate_overrides]]`, `[routing]`). What each key means for the engine is
//! in `crate::failure`; docs/scenarios.md has the reference with examples.

use super::{RateSpec, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The link carries nothing (a switch target: every link from or to it).
    Down,
    /// The link runs at `rate`.
    Degrade,
    /// Each packet crossing the link is lost with probability `loss` (bit-error-like).
    Loss,
    /// Every `nth` packet crossing the link is lost.
    DropNth,
    /// The REPS artifact's switch bit errors, network-wide: a share `loss` of
    /// the packets arriving at switches mark their sequence number, and the
    /// next data packet with a marked number to reach any receiver is lost
    /// (`crate::failure::bit_errors`). Takes no target.
    SwitchBer,
    /// The REPS artifact's cable bit errors: as `switch_ber`, but a share
    /// `loss` of the packets entering links mark, at least 10 ns apart.
    CableBer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Only the named direction (`a->b`; for a link set, the upward one).
    Forward,
    /// Both directions of the cable.
    Both,
}

/// Sets of links a random pick draws from (cables named by their upward direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkSet {
    /// ToR to tier 1.
    TorUplinks,
    /// Tier 1 to tier 2 (3-tier trees).
    AggUplinks,
    /// Every switch-to-switch cable.
    Fabric,
}

/// One `[[failures]]` entry (also the shape of a `[[rate_overrides]]` entry).
///
/// Target: exactly one of `link`, `switch`, `links` (a set, optionally only
/// the uplinks `of` one switch) or `switches` (a tier: "t0", "t1", "t2").
/// A set is narrowed by `count`, `fraction` or `all_but`, drawn at random
/// from the failure's own seeded stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<LinkSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches: Option<String>,
    /// With `links`: only the uplinks of this switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Every member of the set but this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_but: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// A random pick may leave some host unable to reach another (off by default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_disconnect: bool,
    /// `degrade`: the rate the link runs at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateSpec>,
    /// `loss`: probability each packet is lost; `switch_ber` (`cable_ber`):
    /// the share of switch arrivals (link entries) that mark their sequence number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// `drop_nth`: every nth packet is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u32>,
    /// Start time (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
    /// How long each occurrence lasts; absent = for the rest of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Time>,
    /// Recurrence period (flapping: down for `duration` every `every`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Time>,
    /// Number of occurrences with `every`; absent = until the run ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// Staggered failures: the i-th target starts at `at + i·stagger`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger: Option<Time>,
}

/// How routing reacts to links going down and up.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// After a link goes down (or comes back), switches keep their old ECMP
    /// groups this long before routing removes (re-adds) it; "never" keeps
    /// them for ever.
    pub convergence: super::NeverTime,
}
