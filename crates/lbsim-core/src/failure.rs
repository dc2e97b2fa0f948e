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
//! at once); a named target is taken as given.
//!
//! Failure drops are silent: no trimming and no NACK, whatever the queue
//! does with congestion (REPS §3.2: the sender learns only by timeout).

use crate::net::{routing, Network, Node, PortId};
use crate::rng::{Rng, StreamTag};
use crate::scenario::{Direction, Failure, FailureKind, LinkSet, Scenario, ScenarioError};
use crate::time::{Rate, SimTime};

/// What a failure does to each of its ports while it lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    Down,
    Degrade(Rate),
    Loss(f64),
    DropNth(u32),
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

/// The ports a link target covers, with its reverse direction when asked.
fn link_ports(net: &Network, port: PortId, direction: Direction) -> Vec<PortId> {
    let mut v = vec![port];
    if direction == Direction::Both {
        v.push(net.ports[port as usize].reverse);
    }
    v
}

/// The ports a switch failure covers: every link from or to it when it goes
/// down; only its output links when it loses, drops or slows packets (so a
/// packet crossing it meets the fault once).
fn switch_ports(net: &Network, sw: u32, kind: FailureKind) -> Vec<PortId> {
    let me = Node::Switch(sw);
    (0..net.ports.len() as PortId)
        .filter(|&p| {
            let port = &net.ports[p as usize];
            port.from == me || (kind == FailureKind::Down && port.to == me)
        })
        .collect()
}

/// Uplinks (cables by their upward direction) in a link set.
fn link_set(net: &Network, set: LinkSet) -> Vec<PortId> {
    net.switches
        .iter()
        .filter(|s| match set {
            LinkSet::TorUplinks => s.tier == 0,
            LinkSet::AggUplinks => s.tier == 1,
            LinkSet::Fabric => true,
        })
        .flat_map(|s| s.up.iter().copied())
        .collect()
}

/// How many members of a set of `len` a pick takes.
fn pick_size(f: &Failure, key: &str, len: usize) -> Result<usize, ScenarioError> {
    let given = [f.count.is_some(), f.fraction.is_some(), f.all_but.is_some()];
    if given.iter().filter(|&&g| g).count() != 1 {
        return err(
            format!("{key}.count"),
            "a random pick needs exactly one of count, fraction or all_but",
        );
    }
    let n = if let Some(c) = f.count {
        c as usize
    } else if let Some(x) = f.fraction {
        if !(0.0..=1.0).contains(&x) {
            return err(format!("{key}.fraction"), format!("must be between 0 and 1, got {x}"));
        }
        // Rounded to the nearest member, at least one when the fraction is positive.
        let n = (x * len as f64).round() as usize;
        if x > 0.0 {
            n.max(1)
        } else {
            0
        }
    } else {
        let k = f.all_but.unwrap_or(0) as usize;
        if k > len {
            return err(format!("{key}.all_but"), format!("the set has only {len} members"));
        }
        len - k
    };
    if n > len {
        return err(
            format!("{key}.count"),
            format!("the set has only {len} members, {n} asked"),
        );
    }
    Ok(n)
}

/// Resolve one entry's targets: each a group of ports failing together, in
/// the order staggering applies. `alive` holds every port not already taken
/// down by an earlier entry (for the connectivity guard) and is updated.
fn targets(
    f: &Failure,
    key: &str,
    kind: FailureKind,
    net: &Network,
    rng: &mut Rng,
    alive: &mut [bool],
) -> Result<Vec<Vec<PortId>>, ScenarioError> {
    let named = [
        f.link.is_some(),
        f.switch.is_some(),
        f.links.is_some(),
        f.switches.is_some(),
    ];
    if named.iter().filter(|&&x| x).count() != 1 {
        return err(
            format!("{key}.link"),
            "give exactly one target: link, switch, links (a set) or switches (a tier)",
        );
    }
    let direction = f.direction.unwrap_or(Direction::Forward);
    if f.direction.is_some() && f.switch.is_some() | f.switches.is_some() {
        return err(format!("{key}.direction"), "applies to links, not switches");
    }
    if f.of.is_some() && f.links.is_none() {
        return err(
            format!("{key}.of"),
            "narrows a link set (`links`) to one switch's uplinks",
        );
    }
    let is_pick = f.links.is_some() || f.switches.is_some();
    if !is_pick && (f.count.is_some() || f.fraction.is_some() || f.all_but.is_some() || f.allow_disconnect) {
        return err(
            format!("{key}.count"),
            "count, fraction, all_but and allow_disconnect apply to random picks (links or switches)",
        );
    }

    let mark_down = |alive: &mut [bool], t: &[PortId]| t.iter().for_each(|&p| alive[p as usize] = false);
    let named = if let Some(name) = &f.link {
        let Some(port) = net.port_by_name(name) else {
            return err(
                format!("{key}.link"),
                format!("no link named \"{name}\" (links are named like \"t0_0->t1_3\" or \"h0->t0_0\")"),
            );
        };
        Some(link_ports(net, port, direction))
    } else if let Some(name) = &f.switch {
        let Some(sw) = net.switch_by_name(name) else {
            return err(
                format!("{key}.switch"),
                format!("no switch named \"{name}\" (like \"t1_0\")"),
            );
        };
        Some(switch_ports(net, sw, kind))
    } else {
        None
    };
    if let Some(t) = named {
        if kind == FailureKind::Down {
            mark_down(alive, &t);
        }
        return Ok(vec![t]);
    }

    // A random pick from a set.
    let mut candidates: Vec<Vec<PortId>> = if let Some(set) = f.links {
        let mut ups = link_set(net, set);
        if let Some(of) = &f.of {
            let Some(sw) = net.switch_by_name(of) else {
                return err(format!("{key}.of"), format!("no switch named \"{of}\""));
            };
            ups.retain(|&p| net.ports[p as usize].from == Node::Switch(sw));
            if ups.is_empty() {
                return err(
                    format!("{key}.of"),
                    format!("switch \"{of}\" has no uplinks in this set"),
                );
            }
        }
        ups.into_iter().map(|p| link_ports(net, p, direction)).collect()
    } else {
        let tier = f.switches.as_deref().unwrap_or_default();
        let t: u8 = match tier {
            "t0" => 0,
            "t1" => 1,
            "t2" => 2,
            other => {
                return err(
                    format!("{key}.switches"),
                    format!("must be a tier, \"t0\", \"t1\" or \"t2\"; got \"{other}\""),
                )
            }
        };
        let sws: Vec<u32> = (0..net.switches.len() as u32)
            .filter(|&s| net.switches[s as usize].tier == t)
            .collect();
        if sws.is_empty() {
            return err(format!("{key}.switches"), format!("this topology has no tier {tier}"));
        }
        // A ToR's failure always cuts its hosts off.
        if t == 0 && !f.allow_disconnect && kind == FailureKind::Down {
            return err(
                format!("{key}.switches"),
                "a ToR going down cuts its hosts off; set allow_disconnect = true if that is the point",
            );
        }
        sws.into_iter().map(|s| switch_ports(net, s, kind)).collect()
    };
    let n = pick_size(f, key, candidates.len())?;
    rng.shuffle(&mut candidates);
    let guard = kind == FailureKind::Down && !f.allow_disconnect;
    let mut picked = Vec::with_capacity(n);
    for c in candidates {
        if picked.len() == n {
            break;
        }
        if kind == FailureKind::Down {
            let before: Vec<bool> = c.iter().map(|&p| alive[p as usize]).collect();
            mark_down(alive, &c);
            if guard && !routing::connected(net, alive) {
                for (&p, &was) in c.iter().zip(&before) {
                    alive[p as usize] = was;
                }
                continue;
            }
        }
        picked.push(c);
    }
    if picked.len() < n {
        return err(
            format!("{key}.count"),
            format!(
                "only {} of the {n} picks can go down without cutting a host off (counting earlier failures); \
                 ask for fewer or set allow_disconnect = true",
                picked.len()
            ),
        );
    }
    Ok(picked)
}

fn check_kind_keys(f: &Failure, key: &str, kind: FailureKind) -> Result<Fault, ScenarioError> {
    let given = [
        ("rate", f.rate.is_some()),
        ("loss", f.loss.is_some()),
        ("nth", f.nth.is_some()),
    ];
    let wanted = match kind {
        FailureKind::Down => "",
        FailureKind::Degrade => "rate",
        FailureKind::Loss => "loss",
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
            Fault::Degrade(r.value)
        }
        FailureKind::Loss => match f.loss {
            Some(p) if p > 0.0 && p <= 1.0 => Fault::Loss(p),
            Some(p) => {
                return err(
                    format!("{key}.loss"),
                    format!("must be a probability in (0, 1], got {p}"),
                )
            }
            None => {
                return err(
                    format!("{key}.loss"),
                    "a loss failure needs its loss probability, like 1e-4",
                )
            }
        },
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
        let fault = check_kind_keys(f, &key, kind)?;
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
        let stagger = f.stagger.as_ref().map(|t| t.value).unwrap_or(SimTime::ZERO);
        for (j, ports) in targets(f, &key, kind, net, &mut rng, &mut alive)?
            .into_iter()
            .enumerate()
        {
            plans.push(FailurePlan {
                fault,
                ports,
                start: start + SimTime(stagger.ps() * j as u64),
                duration,
                every,
                remaining: f.times,
                entry: i,
            });
        }
    }
    Ok(plans)
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
        let Fault::Degrade(rate) = check_kind_keys(f, &key, FailureKind::Degrade)? else {
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
