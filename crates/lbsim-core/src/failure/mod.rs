//! Failures and static asymmetry: from `[[failures]]` and `[[rate_overrides]]`
//! entries to concrete ports, times and faults.
//!
//! A failure entry names its target (a link, a switch, or a random pick from
//! a set of links or switches), its kind (down, degraded rate, random loss,
//! every nth packet lost) and its timing (start, duration or permanent,
//! recurrence, staggering across targets). Random picks draw from the
//! entry's own seeded stream (`StreamTag::Failure`, entry index), so adding an
//! entry does not move the others' picks. A random pick of `down` failures
//! never leaves a host unable to reach another unless `allow_disconnect` is
//! set (checked against every earlier `down` entry too, as if all were down
//! at once); a named target is taken as given. Resolving targets lives in
//! `targets`; this file holds the plans, the fault kinds and rate overrides.
//!
//! Failure drops are silent: no trimming and no NACK, whatever the queue
//! does with congestion (REPS §3.2: the sender learns only by timeout).

pub mod bit_errors;
mod targets;

use crate::net::{Network, PortId};
use crate::rng::{Rng, StreamTag};
use crate::scenario::{Failure, FailureKind, Scenario, ScenarioError};
use crate::time::{Rate, SimTime};
use targets::targets;

/// What a failure does to each of its ports while it lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    Down,
    Degrade(Rate),
    Loss(f64),
    DropNth(u32),
    /// The artifact's switch bit errors (`switch_ber`), with the share of
    /// switch arrivals that mark; network-wide, so its plan has no ports.
    SwitchBer(f64),
    /// The artifact's cable bit errors (`cable_ber`), with the share of link
    /// entries that mark; network-wide too.
    CableBer(f64),
}

/// One target's failure with its timing, ready for the event loop.
#[derive(Clone, Debug)]
pub struct FailurePlan {
    pub fault: Fault,
    pub ports: Vec<PortId>,
    pub start: SimTime,
    /// None: lasts for the rest of the run.
    pub duration: Option<SimTime>,
    /// Recurrence period, and how many occurrences remain (None: unbounded).
    pub every: Option<SimTime>,
    pub remaining: Option<u32>,
    /// Index of the scenario entry, for reports.
    pub entry: usize,
}

fn err<T>(key: String, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(key, msg))
}

/// The fault an entry of `kind` causes, after checking that it gives no
/// other kind's key (`rate`, `loss`, `nth`).
fn check_kind_keys(f: &Failure, key: &str, kind: FailureKind, link_rate: Rate) -> Result<Fault, ScenarioError> {
    let given = [
        ("rate", f.rate.is_some()),
        ("loss", f.loss.is_some()),
        ("nth", f.nth.is_some()),
    ];
    let wanted = match kind {
        FailureKind::Down => "",
        FailureKind::Degrade => "rate",
        FailureKind::Loss | FailureKind::SwitchBer | FailureKind::CableBer => "loss",
        FailureKind::DropNth => "nth",
    };
    for (k, is) in given {
        if is && k != wanted {
            return err(
                format!("{key}.{k}"),
                format!("does not apply to failure kind \"{kind:?}\"").to_lowercase(),
            );
        }
    }
    fault(f, key, kind, link_rate)
}

/// The fault of `kind` with its own key's value, which must be given and in range.
fn fault(f: &Failure, key: &str, kind: FailureKind, link_rate: Rate) -> Result<Fault, ScenarioError> {
    Ok(match kind {
        FailureKind::Down => Fault::Down,
        FailureKind::Degrade => {
            let Some(r) = &f.rate else {
                return err(
                    format!("{key}.rate"),
                    "a degrade failure needs the rate the link runs at, like \"200Gbps\"",
                );
            };
            if r.value.bps() == 0 {
                return err(
                    format!("{key}.rate"),
                    "must be positive (a dead link is kind = \"down\")",
                );
            }
            if r.value > link_rate {
                // A faster link would also beat every flow's ideal, which assumes the healthy tree.
                return err(
                    format!("{key}.rate"),
                    format!("({}) must not exceed topology.link_rate ({link_rate})", r.text),
                );
            }
            Fault::Degrade(r.value)
        }
        FailureKind::Loss => Fault::Loss(share(
            f.loss,
            key,
            "a probability in (0, 1]",
            "a loss failure needs its loss probability, like 1e-4",
        )?),
        FailureKind::SwitchBer => Fault::SwitchBer(share(
            f.loss,
            key,
            "a share in (0, 1] of the packets arriving at switches",
            "a switch_ber failure needs the share of switch arrivals that mark, like 0.01 (the artifact's 1 % file)",
        )?),
        FailureKind::CableBer => Fault::CableBer(share(
            f.loss,
            key,
            "a share in (0, 1] of the packets entering links",
            "a cable_ber failure needs the share of link entries that mark, like 0.01 (the artifact's 1 % file)",
        )?),
        FailureKind::DropNth => match f.nth {
            Some(n) if n >= 1 => Fault::DropNth(n),
            _ => {
                return err(
                    format!("{key}.nth"),
                    "a drop_nth failure needs nth >= 1 (every nth packet is lost)",
                )
            }
        },
    })
}

/// All `[[failures]]` entries as plans, one per target.
pub fn plan(s: &Scenario, net: &Network) -> Result<Vec<FailurePlan>, ScenarioError> {
    let mut alive = vec![true; net.ports.len()];
    let mut plans = Vec::new();
    for (i, f) in s.failures.iter().enumerate() {
        let key = format!("failures[{i}]");
        let kind = f.kind.unwrap_or(FailureKind::Down);
        let fault = check_kind_keys(f, &key, kind, s.topology.link_rate.value)?;
        let mut rng = Rng::new(s.seed, StreamTag::Failure, i as u64);
        let start = f.at.as_ref().map(|t| t.value).unwrap_or(SimTime::ZERO);
        let duration = f.duration.as_ref().map(|t| t.value);
        if duration == Some(SimTime::ZERO) {
            return err(
                format!("{key}.duration"),
                "must be positive (leave it out for a permanent failure)",
            );
        }
        let every = f.every.as_ref().map(|t| t.value);
        if let Some(p) = every {
            match duration {
                Some(d) if d < p => {}
                Some(_) => return err(format!("{key}.every"), "must be longer than duration"),
                None => {
                    return err(
                        format!("{key}.every"),
                        "a recurring failure needs a duration shorter than every",
                    )
                }
            }
        }
        if f.times.is_some() && every.is_none() {
            return err(
                format!("{key}.times"),
                "counts occurrences of a recurring failure (set every)",
            );
        }
        if f.times == Some(0) {
            return err(format!("{key}.times"), "must be at least 1");
        }
        if matches!(kind, FailureKind::SwitchBer | FailureKind::CableBer) {
            bit_error_keys(s, f, i, &key, kind)?;
            plans.push(FailurePlan {
                fault,
                ports: Vec::new(),
                start,
                duration,
                every,
                remaining: f.times,
                entry: i,
            });
            continue;
        }
        let stagger = f.stagger.as_ref().map(|t| t.value).unwrap_or(SimTime::ZERO);
        for (j, ports) in targets(f, &key, kind, net, &mut rng, &mut alive)?
            .into_iter()
            .enumerate()
        {
            plans.push(FailurePlan {
                fault,
                ports,
                // Saturating by design: a target staggered past the clock's end never fails
                // (every time beyond the horizon is the same), instead of wrapping to an early time.
                start: SimTime(start.ps().saturating_add(stagger.ps().saturating_mul(j as u64))),
                duration,
                every,
                remaining: f.times,
                entry: i,
            });
        }
    }
    Ok(plans)
}

/// `loss`, a share in (0, 1]: `must` says what it must be, `missing` what a failure without it lacks.
fn share(loss: Option<f64>, key: &str, must: &str, missing: &str) -> Result<f64, ScenarioError> {
    match loss {
        Some(p) if p > 0.0 && p <= 1.0 => Ok(p),
        Some(p) => err(format!("{key}.loss"), format!("must be {must}, got {p}")),
        None => err(format!("{key}.loss"), missing),
    }
}

/// A `switch_ber` or `cable_ber` entry takes no target (it covers every
/// switch, or every link and switch, as the artifact's do), and a run has at most one of
/// them (they would share one set of marks).
fn bit_error_keys(s: &Scenario, f: &Failure, i: usize, key: &str, kind: FailureKind) -> Result<(), ScenarioError> {
    let (name, covers) = match kind {
        FailureKind::CableBer => ("cable_ber", "every link and switch"),
        _ => ("switch_ber", "every switch"),
    };
    for (k, is) in [
        ("link", f.link.is_some()),
        ("switch", f.switch.is_some()),
        ("links", f.links.is_some()),
        ("switches", f.switches.is_some()),
        ("of", f.of.is_some()),
        ("count", f.count.is_some()),
        ("fraction", f.fraction.is_some()),
        ("all_but", f.all_but.is_some()),
        ("direction", f.direction.is_some()),
        ("allow_disconnect", f.allow_disconnect),
        ("stagger", f.stagger.is_some()),
    ] {
        if is {
            return err(
                format!("{key}.{k}"),
                format!("does not apply to kind \"{name}\": it counts packets at {covers} (leave the target out)"),
            );
        }
    }
    let bit_errors = |g: &Failure| matches!(g.kind, Some(FailureKind::SwitchBer | FailureKind::CableBer));
    if s.failures[..i].iter().any(bit_errors) {
        return err(
            format!("{key}.kind"),
            "a scenario can have only one switch_ber or cable_ber entry (they would share one set of marks)",
        );
    }
    Ok(())
}

/// Apply `[[rate_overrides]]`: links that run at another rate from the start.
pub fn apply_rate_overrides(s: &Scenario, net: &mut Network) -> Result<(), ScenarioError> {
    for (i, f) in s.rate_overrides.iter().enumerate() {
        let key = format!("rate_overrides[{i}]");
        if f.kind.is_some_and(|k| k != FailureKind::Degrade) {
            return err(
                format!("{key}.kind"),
                "a rate override is always a rate (leave kind out)",
            );
        }
        for (k, is) in [
            ("at", f.at.is_some()),
            ("duration", f.duration.is_some()),
            ("every", f.every.is_some()),
            ("times", f.times.is_some()),
            ("stagger", f.stagger.is_some()),
        ] {
            if is {
                return err(
                    format!("{key}.{k}"),
                    "a rate override holds for the whole run (use [[failures]] with kind = \"degrade\" for timed ones)",
                );
            }
        }
        let Fault::Degrade(rate) = check_kind_keys(f, &key, FailureKind::Degrade, s.topology.link_rate.value)? else {
            unreachable!("degrade checked")
        };
        let mut rng = Rng::new(s.seed, StreamTag::Asymmetry, i as u64);
        let mut alive = vec![true; net.ports.len()];
        for ports in targets(f, &key, FailureKind::Degrade, net, &mut rng, &mut alive)? {
            for p in ports {
                let port = &mut net.ports[p as usize];
                port.set_rate(rate);
                port.base_rate = rate;
            }
        }
    }
    Ok(())
}
