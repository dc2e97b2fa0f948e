//! `workload.kind = "connection_matrix"`: an htsim connection matrix, the
//! traffic files of the REPS artifact and of htsim's other users, read as
//! they define it (htsim `connection_matrix.cpp`, `trigger.cpp`):
//!
//! ```text
//! Nodes 128
//! Connections 3
//! Triggers 1
//! 9->92 id 1 start 0 size 4000000 send_done_trigger 1
//! 92->102 id 2 trigger 1 size 4000000
//! 102->76 id 3 trigger 1 size 4000000
//! trigger id 1 multishot
//! ```
//!
//! A connection is a message from host a to host b of `size` bytes that
//! starts at `start` (picoseconds) or when its `trigger` fires;
//! `send_done_trigger` and `recv_done_trigger` name the trigger it activates
//! when its sender holds the last ACK or its receiver has the last byte. A
//! `oneshot` trigger starts all its targets at its first activation, a
//! `barrier` one at activation `count`, a `multishot` one its next target at
//! each activation (targets in file order). Messages are numbered in file
//! order; `id` is the matrix's own label. Lines starting with `#` are
//! comments, as in htsim. Not read: `prio` and `failure` lines (lbsim's
//! failures are `[[failures]]`): a matrix with them, or a `Failures` count
//! other than 0, is refused.

use super::{Fires, Traffic, Trigger};
use crate::scenario::units::{MAX_BYTES, MAX_TIME};
use crate::scenario::Release;
use crate::time::SimTime;
use crate::transport::FlowSpec;
use std::collections::{BTreeMap, HashSet};

/// A trigger as the matrix describes it: its rule once declared, and the
/// messages that activate it (with the sense) and that it starts.
#[derive(Default)]
struct Declared {
    fires: Option<Fires>,
    activators: Vec<(u32, Release, usize)>,
    targets: Vec<u32>,
}

pub fn parse_connection_matrix(text: &str, hosts: u32) -> Result<Traffic, String> {
    let mut out = Traffic::default();
    let mut triggers: BTreeMap<u32, Declared> = BTreeMap::new();
    let mut counts: [Option<(usize, usize)>; 3] = [None; 3]; // Nodes, Connections, Triggers: (value, line)
    let mut ids = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = tokens.first().filter(|t| !t.starts_with('#')) else {
            continue; // blank, or a comment as htsim skips them
        };
        let header = ["Nodes", "Connections", "Triggers"].iter().position(|h| *h == first);
        if let Some(h) = header {
            let v = tokens
                .get(1)
                .and_then(|v| v.parse().ok())
                .ok_or(format!("line {ln}: {first} needs a number"))?;
            counts[h] = Some((v, ln));
            if h == 0 && v > hosts as usize {
                return Err(format!(
                    "line {ln}: the matrix is for {v} nodes, the topology has {hosts} hosts"
                ));
            }
        } else if first.contains("->") {
            let c = connection(&tokens, ln, hosts)?;
            if !ids.insert(c.id) {
                return Err(format!("line {ln}: connection id {} is used twice", c.id));
            }
            let m = out.flows.len() as u32;
            out.flows.push(c.spec);
            out.after.push(Vec::new());
            out.step.push(0);
            if let Some(t) = c.trigger {
                triggers.entry(t).or_default().targets.push(m);
            }
            for (t, on) in c.activates {
                triggers.entry(t).or_default().activators.push((m, on, ln));
            }
        } else if first == "trigger" {
            let (id, fires) = trigger(&tokens, ln)?;
            let d = triggers.entry(id).or_default();
            if d.fires.is_some() {
                return Err(format!("line {ln}: trigger {id} is declared twice"));
            }
            d.fires = Some(fires);
        } else if first == "Failures" && tokens.get(1) == Some(&"0") {
            continue; // no failures: nothing to refuse
        } else if first == "failure" || first == "Failures" {
            return Err(format!(
                "line {ln}: failures in a connection matrix are not read; give them as [[failures]] in the scenario"
            ));
        } else {
            return Err(format!(
                "line {ln}: \"{first}\" is neither a connection (a->b), a trigger nor a header"
            ));
        }
    }
    if let Some((n, ln)) = counts[1].filter(|&(n, _)| n != out.flows.len()) {
        return Err(format!(
            "line {ln}: says {n} connections, the file has {}",
            out.flows.len()
        ));
    }
    let declared = triggers.values().filter(|d| d.fires.is_some()).count();
    if let Some((n, ln)) = counts[2].filter(|&(n, _)| n != declared) {
        return Err(format!("line {ln}: says {n} triggers, the file declares {declared}"));
    }
    for (id, d) in triggers {
        let Some(fires) = d.fires else {
            let ln = d.activators.first().map(|a| a.2);
            let at = ln.map(|l| format!("line {l}: ")).unwrap_or_default();
            return Err(format!(
                "{at}trigger {id} is used but never declared (trigger id {id} oneshot|multishot|barrier)"
            ));
        };
        let on = d.activators.first().map(|a| a.1);
        if let Some(&(_, _, ln)) = d.activators.iter().find(|a| Some(a.1) != on) {
            return Err(format!(
                "line {ln}: trigger {id} is activated both on send_done and on recv_done; lbsim takes one sense per trigger"
            ));
        }
        if d.targets.is_empty() {
            continue; // activating it starts nothing
        }
        out.triggers.push(Trigger {
            activators: d.activators.iter().map(|a| a.0).collect(),
            targets: d.targets,
            fires,
            on,
        });
    }
    if out.flows.is_empty() {
        return Err("no connections".into());
    }
    Ok(out)
}

/// One connection line.
struct Connection {
    id: u64,
    spec: FlowSpec,
    trigger: Option<u32>,
    activates: Vec<(u32, Release)>,
}

fn connection(tokens: &[&str], ln: usize, hosts: u32) -> Result<Connection, String> {
    let (a, b) = tokens[0].split_once("->").expect("checked by the caller");
    let host = |v: &str, what: &str| -> Result<u32, String> {
        let h: u32 = v
            .parse()
            .map_err(|_| format!("line {ln}: {what} \"{v}\" is not a host number"))?;
        if h >= hosts {
            return Err(format!("line {ln}: {what} {h} does not exist ({hosts} hosts)"));
        }
        Ok(h)
    };
    let (src, dst) = (host(a, "source")?, host(b, "destination")?);
    if src == dst {
        return Err(format!("line {ln}: source and destination are both {src}"));
    }
    let (mut id, mut size, mut start, mut trigger, mut activates) = (None, None, None, None, Vec::new());
    let mut seen = HashSet::new();
    let mut rest = tokens[1..].iter();
    while let Some(&key) = rest.next() {
        if !seen.insert(key) {
            return Err(format!("line {ln}: \"{key}\" is given twice"));
        }
        let value = rest.next().ok_or(format!("line {ln}: \"{key}\" needs a value"))?;
        let number = |what: &str| -> Result<u64, String> {
            value
                .parse()
                .map_err(|_| format!("line {ln}: {what} \"{value}\" is not a whole number"))
        };
        let trigger_id = |what: &str| -> Result<u32, String> {
            match value.parse() {
                Ok(0) | Err(_) => Err(format!("line {ln}: {what} \"{value}\" is not a trigger id (1, 2, ...)")),
                Ok(t) => Ok(t),
            }
        };
        match key {
            "id" => id = Some(number("id")?),
            "size" => size = Some(number("size")?),
            "start" => {
                let ps: f64 = value
                    .parse()
                    .map_err(|_| format!("line {ln}: start \"{value}\" is not a number"))?;
                if ps.is_nan() || ps < 0.0 || ps > MAX_TIME.ps() as f64 {
                    return Err(format!("line {ln}: start {value} ps is not a time from 0 to 1000000 s"));
                }
                start = Some(SimTime(ps.round() as u64));
            }
            "trigger" => trigger = Some(trigger_id("trigger")?),
            "send_done_trigger" => activates.push((trigger_id(key)?, Release::Ack)),
            "recv_done_trigger" => activates.push((trigger_id(key)?, Release::Arrival)),
            "prio" => return Err(format!("line {ln}: prio is not modelled")),
            _ => return Err(format!("line {ln}: unknown connection key \"{key}\"")),
        }
    }
    let id = id
        .filter(|&i| i != 0)
        .ok_or(format!("line {ln}: a connection needs an id other than 0"))?;
    let size = size.ok_or(format!("line {ln}: a connection needs a size"))?;
    if size == 0 || size > MAX_BYTES {
        return Err(format!("line {ln}: size {size} is not from 1 B to 1 PiB"));
    }
    let start = match (start, trigger) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "line {ln}: a connection has a start time or a trigger, not both"
            ))
        }
        (None, None) => return Err(format!("line {ln}: a connection needs a start time or a trigger")),
        (s, _) => s.unwrap_or(SimTime::ZERO),
    };
    Ok(Connection {
        id,
        spec: FlowSpec { src, dst, size, start },
        trigger,
        activates,
    })
}

/// A trigger line: `trigger id N oneshot|multishot|barrier [count C]`.
fn trigger(tokens: &[&str], ln: usize) -> Result<(u32, Fires), String> {
    let (mut id, mut kind, mut count) = (None, None, None);
    let mut rest = tokens[1..].iter();
    while let Some(&key) = rest.next() {
        match key {
            "oneshot" | "multishot" | "barrier" if kind.is_none() => kind = Some(key),
            "oneshot" | "multishot" | "barrier" => return Err(format!("line {ln}: a trigger has one kind")),
            "id" | "count" => {
                let v: u32 = rest
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&v| v > 0)
                    .ok_or(format!("line {ln}: trigger {key} needs a positive whole number"))?;
                *(if key == "id" { &mut id } else { &mut count }) = Some(v);
            }
            _ => return Err(format!("line {ln}: unknown trigger key \"{key}\"")),
        }
    }
    let id = id.ok_or(format!("line {ln}: a trigger needs an id"))?;
    let fires = match (kind, count) {
        (Some("multishot"), None) => Fires::Each,
        (Some("oneshot"), None) => Fires::AllAt(1),
        (Some("barrier"), Some(c)) => Fires::AllAt(c),
        (Some("barrier"), None) => return Err(format!("line {ln}: a barrier trigger needs a count")),
        (Some(k), Some(_)) => return Err(format!("line {ln}: only a barrier trigger takes a count, not {k}")),
        (None, _) => {
            return Err(format!(
                "line {ln}: a trigger needs a kind (oneshot, multishot or barrier)"
            ))
        }
        _ => unreachable!("kind is one of three"),
    };
    Ok((id, fires))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RING: &str = "# a comment\nNodes 8\nConnections 3\nTriggers 2\nFailures 0\n\
        1->2 id 7 start 1000000 size 4000\n\
        2->3 id 8 trigger 1 size 4000 send_done_trigger 2\n\
        3->4 id 9 trigger 2 size 4000\n\
        trigger id 1 oneshot\ntrigger id 2 multishot\n";

    #[test]
    fn reads_connections_and_triggers() {
        // Trigger 1 is declared but never activated: its target never starts.
        let t = parse_connection_matrix(RING, 8).unwrap();
        assert_eq!(t.flows.len(), 3);
        assert_eq!((t.flows[0].src, t.flows[0].dst, t.flows[0].size), (1, 2, 4000));
        assert_eq!(t.flows[0].start, SimTime::from_us(1));
        assert_eq!(
            t.triggers,
            vec![
                Trigger {
                    activators: vec![],
                    targets: vec![1],
                    fires: Fires::AllAt(1),
                    on: None
                },
                Trigger {
                    activators: vec![1],
                    targets: vec![2],
                    fires: Fires::Each,
                    on: Some(Release::Ack)
                },
            ]
        );
    }

    #[test]
    fn bad_matrices_say_which_line() {
        for (text, says) in [
            ("Nodes 300\n", "line 1: the matrix is for 300 nodes"),
            (
                "1->1 id 1 start 0 size 5\n",
                "line 1: source and destination are both 1",
            ),
            (
                "1->2 id 1 size 5\n",
                "line 1: a connection needs a start time or a trigger",
            ),
            ("1->2 id 1 start 0 trigger 1 size 5\n", "not both"),
            ("1->2 id 1 start 0\n", "needs a size"),
            ("1->2 start 0 size 5\n", "needs an id"),
            (
                "1->2 id 1 start 0 size 5\n2->3 id 1 start 0 size 5\n",
                "line 2: connection id 1 is used twice",
            ),
            ("1->2 id 1 start 0 size 5 prio 3\n", "prio is not modelled"),
            ("1->2 id 1 start 0 size 5 size 6\n", "line 1: \"size\" is given twice"),
            (
                "1->2 id 1 start 0 size 5 send_done_trigger 4\n",
                "line 1: trigger 4 is used but never declared",
            ),
            (
                "1->2 id 1 start 0 size 5\ntrigger id 2 barrier\n",
                "line 2: a barrier trigger needs a count",
            ),
            ("1->2 id 1 start 0 size 5\ntrigger id 2\n", "needs a kind"),
            (
                "Connections 2\n1->2 id 1 start 0 size 5\n",
                "line 1: says 2 connections, the file has 1",
            ),
            ("1->2 id 1 start -5 size 5\n", "not a time"),
            ("1->9 id 1 start 0 size 5\n", "destination 9 does not exist"),
            ("failure 1 2\n", "give them as [[failures]]"),
            ("Failures 2\n", "line 1: failures in a connection matrix are not read"),
            (
                "1->2 id 1 start 0 size 5 send_done_trigger 1\n2->3 id 2 start 0 size 5 recv_done_trigger 1\n\
                 3->4 id 3 trigger 1 size 5\ntrigger id 1 barrier count 2\n",
                "line 2: trigger 1 is activated both on send_done and on recv_done",
            ),
            ("", "no connections"),
        ] {
            let e = parse_connection_matrix(text, 8).expect_err(text);
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }
}
