//! Which ports a failure entry hits: a named link or switch as given, or a
//! seeded random pick from a set of links or a tier of switches, with the
//! connectivity guard that keeps a random pick of `down` failures from
//! cutting a host off.

use super::err;
use crate::net::{routing, Network, Node, PortId};
use crate::rng::Rng;
use crate::scenario::{Direction, Failure, FailureKind, LinkSet, ScenarioError};

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
pub(super) fn targets(
    f: &Failure,
    key: &str,
    kind: FailureKind,
    net: &Network,
    rng: &mut Rng,
    alive: &mut [bool],
) -> Result<Vec<Vec<PortId>>, ScenarioError> {
    check_target_keys(f, key)?;
    let direction = f.direction.unwrap_or(Direction::Forward);
    if let Some(t) = named_target(f, key, kind, net, direction)? {
        if kind == FailureKind::Down {
            mark_down(alive, &t);
        }
        return Ok(vec![t]);
    }

    // A random pick from a set.
    let mut candidates: Vec<Vec<PortId>> = if let Some(set) = f.links {
        link_candidates(f, key, set, net, direction)?
    } else {
        switch_candidates(f, key, kind, net)?
    };
    let n = pick_size(f, key, candidates.len())?;
    rng.shuffle(&mut candidates);
    pick(f, key, kind, net, candidates, n, alive)
}

/// Exactly one target, and only the keys that apply to it.
fn check_target_keys(f: &Failure, key: &str) -> Result<(), ScenarioError> {
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
    Ok(())
}

fn mark_down(alive: &mut [bool], t: &[PortId]) {
    t.iter().for_each(|&p| alive[p as usize] = false)
}

/// The ports of a `link` or `switch` named by the entry (None: a random pick).
fn named_target(
    f: &Failure,
    key: &str,
    kind: FailureKind,
    net: &Network,
    direction: Direction,
) -> Result<Option<Vec<PortId>>, ScenarioError> {
    if let Some(name) = &f.link {
        let Some(port) = net.port_by_name(name) else {
            return err(
                format!("{key}.link"),
                format!("no link named \"{name}\" (links are named like \"t0_0->t1_3\" or \"h0->t0_0\")"),
            );
        };
        Ok(Some(link_ports(net, port, direction)))
    } else if let Some(name) = &f.switch {
        let Some(sw) = net.switch_by_name(name) else {
            return err(
                format!("{key}.switch"),
                format!("no switch named \"{name}\" (like \"t1_0\")"),
            );
        };
        Ok(Some(switch_ports(net, sw, kind)))
    } else {
        Ok(None)
    }
}

/// `links`: the set's uplinks (only those of switch `of`, if given), each
/// with its reverse when `direction` is both.
fn link_candidates(
    f: &Failure,
    key: &str,
    set: LinkSet,
    net: &Network,
    direction: Direction,
) -> Result<Vec<Vec<PortId>>, ScenarioError> {
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
    Ok(ups.into_iter().map(|p| link_ports(net, p, direction)).collect())
}

/// `switches`: the ports of every switch in the tier.
fn switch_candidates(
    f: &Failure,
    key: &str,
    kind: FailureKind,
    net: &Network,
) -> Result<Vec<Vec<PortId>>, ScenarioError> {
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
    Ok(sws.into_iter().map(|s| switch_ports(net, s, kind)).collect())
}

/// The first `n` of the shuffled `candidates`. A `down` pick marks its ports
/// in `alive`; unless `allow_disconnect`, one that would leave some host
/// unable to reach another is skipped (the connectivity guard).
fn pick(
    f: &Failure,
    key: &str,
    kind: FailureKind,
    net: &Network,
    candidates: Vec<Vec<PortId>>,
    n: usize,
    alive: &mut [bool],
) -> Result<Vec<Vec<PortId>>, ScenarioError> {
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
