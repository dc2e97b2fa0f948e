//! Checks a scenario needs beyond its keys' own ranges, each naming its key:
//! values that fit their types one by one but whose combination would
//! overflow the engine's integer time or byte counters, and combinations
//! that make no sense (a ToR with more uplinks than ports, an ACK larger
//! than a data packet, a window that starts above its own maximum, ACK
//! batches that can never fill).
//!
//! Overflow is ruled out here, once, before anything is built, by bounding
//! the inputs of every sum the engine makes: with every time at most
//! `MAX_TIME` (10^18 ps) and the round trip, the RTO and a message's
//! serialization each checked below to stay within it, the engine's sums of a
//! few such times stay below u64::MAX (1.8·10^19 ps).

use super::derive::{Derived, Sizes};
use crate::scenario::units::{check_timer, shortest_timer, Time, MAX_BYTES, MAX_TIME};
use crate::scenario::{BdpBasis, CcKind, Scenario, ScenarioError};
use crate::time::Rate;

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(key, msg))
}

/// The largest MTU: 1 MiB (a packet's size is a u32 on the wire; real jumbo frames are 9 KB).
pub const MAX_MTU: u64 = 1 << 20;

/// Picoseconds to serialize `bytes` at `rate`, exactly, without overflow.
fn ser_ps(rate: Rate, bytes: u64) -> u128 {
    (bytes as u128 * 8 * 1_000_000_000_000).div_ceil(rate.bps() as u128)
}

fn seconds(ps: u128) -> String {
    format!("{:.3}s", ps as f64 / 1e12)
}

/// Before the tree is built: its shape fits the radix, packet sizes are
/// consistent, and a round trip on the longest path fits the clock.
pub fn before_build(s: &Scenario, sizes: Sizes) -> Result<(), ScenarioError> {
    let t = &s.topology;
    let (ports, ports_key) = (t.tor_ports(), t.tor_radix_key());
    if let Some(u) = t.uplinks_per_tor {
        if u > ports {
            return err(
                "topology.uplinks_per_tor",
                format!("{u} uplinks do not fit a ToR of {ports_key} = {ports} ports"),
            );
        }
    }
    if let Some(h) = t.hosts_per_tor {
        if h > ports {
            return err(
                "topology.hosts_per_tor",
                format!("{h} hosts do not fit a ToR of {ports_key} = {ports} ports"),
            );
        }
    }
    if let (Some(u), Some(h)) = (t.uplinks_per_tor, t.hosts_per_tor) {
        if u as u64 + h as u64 > ports as u64 {
            return err(
                "topology.uplinks_per_tor",
                format!("{u} uplinks and {h} hosts (topology.hosts_per_tor) do not fit a ToR of {ports_key} = {ports} ports"),
            );
        }
    }
    if t.tor_radix == Some(0) {
        return err("topology.tor_radix", "must be at least 2");
    }
    if sizes.mtu > MAX_MTU {
        return err(
            "packet.mtu",
            format!("must be at most 1MiB ({MAX_MTU} B), got {} B", sizes.mtu),
        );
    }
    if sizes.control > sizes.mtu {
        return err(
            "packet.ack",
            format!("({} B) must not exceed packet.mtu ({} B)", sizes.control, sizes.mtu),
        );
    }
    // A round trip: 2 × (2 × tiers) links, each a serialization, a link and a switch latency.
    let links = 4 * t.tiers as u128;
    let rate = t.link_rate.value;
    let (ser, link, switch) = (
        ser_ps(rate, sizes.mtu),
        t.link_latency.value.ps() as u128,
        t.switch_latency.value.ps() as u128,
    );
    let rtt = links * (ser + link + switch);
    if rtt > MAX_TIME.ps() as u128 {
        let key = if ser >= link.max(switch) {
            "topology.link_rate"
        } else if link >= switch {
            "topology.link_latency"
        } else {
            "topology.switch_latency"
        };
        return err(
            key,
            format!(
                "a round trip on the longest path would take {}, longer than the largest time lbsim simulates (1000000s)",
                seconds(rtt)
            ),
        );
    }
    // The BDP (rate × that round trip) is a byte count: keep it within range.
    if rate.bps() as u128 * rtt / 8 / 1_000_000_000_000 > MAX_BYTES as u128 {
        return err(
            "topology.link_latency",
            "the bandwidth-delay product (link rate × round trip) is more than 1PiB",
        );
    }
    Ok(())
}

/// After the derived values: the RTO fits the clock, windows are
/// consistent, and coalesced ACK batches can fill.
pub fn derived(s: &Scenario, d: &Derived) -> Result<(), ScenarioError> {
    let mtu = d.sizes.mtu;
    let bytes =
        |a: &crate::scenario::Amount, key: &str| a.bytes(mtu, d.bdp, None).map_err(|e| ScenarioError::new(key, e));
    // The RTO "auto" adds one full-queue drain per hop (derive::Derived::of): check it did not wrap.
    let drain = ser_ps(d.host_rate, d.queue.capacity) * 4 * s.topology.tiers as u128;
    if s.transport.rto.value.is_none() && d.base_rtt.ps() as u128 + drain > MAX_TIME.ps() as u128 {
        return err(
            "queue.capacity",
            format!(
                "draining it at every hop makes the RTO (\"auto\") {}, longer than the largest time lbsim simulates",
                seconds(drain)
            ),
        );
    }
    timers(s, d)?;
    if s.cc.kind == CcKind::named("eqds").expect("eqds is registered") {
        return Ok(()); // no window
    }
    let initial = bytes(&s.cc.initial_cwnd, "cc.initial_cwnd")?;
    let max = bytes(&s.cc.max_cwnd, "cc.max_cwnd")?;
    // A window holds whole packets; less than one is a slip, most often a
    // bare number meant as packets ("150" is 150 bytes).
    for (key, amount, value) in [
        ("cc.initial_cwnd", &s.cc.initial_cwnd, initial),
        ("cc.max_cwnd", &s.cc.max_cwnd, max),
    ] {
        if value < mtu {
            let number = amount.text.strip_suffix('B').filter(|n| n.parse::<f64>().is_ok());
            return err(
                key,
                format!(
                    "({value} B, \"{}\") is smaller than one packet ({mtu} B); a bare number is bytes: write packets \
                     as \"{}pkt\", or a multiple of the BDP such as \"1.5bdp\"",
                    amount.text,
                    number.unwrap_or("10")
                ),
            );
        }
    }
    // Per pair, a first window above the cap is the REPS artifact's own setting (151 packets
    // against 1.5 BDP = 150.7 between ToRs, 75.3 under one): it falls to the cap at the first
    // unmarked ACK. One cap for all flows: a first window above it is a slip.
    if initial > max && s.cc.max_cwnd_basis == BdpBasis::Network {
        return err(
            "cc.initial_cwnd",
            format!(
                "({initial} B, \"{}\") must not exceed cc.max_cwnd ({max} B, \"{}\")",
                s.cc.initial_cwnd.text, s.cc.max_cwnd.text
            ),
        );
    }
    // With ack_delay = "never" a partial batch waits for ack_ratio packets; a
    // first window smaller than that never sends them, gets no ACK to grow,
    // and a flow longer than one window never finishes.
    let ratio = s.transport.ack_ratio as u64;
    if s.transport.ack_delay.value.is_none() && ratio > 1 && ratio * mtu > initial {
        return err(
            "transport.ack_ratio",
            format!(
                "one ACK per {ratio} packets ({} B) needs a window that holds them, but cc.initial_cwnd is {initial} B; \
                 with transport.ack_delay = \"never\" the first batch would never fill (lower ack_ratio or set ack_delay)",
                ratio * mtu
            ),
        );
    }
    Ok(())
}

/// The scenario's own timers that re-arm themselves, each at least
/// `units::shortest_timer` (balancers and congestion controls check theirs
/// when they are prepared, from `LbCommon::shortest_timer` and `CcCommon`).
fn timers(s: &Scenario, d: &Derived) -> Result<(), ScenarioError> {
    let floor = shortest_timer(d.sizes.mtu, d.host_rate);
    if let Some(rto) = s.transport.rto.value {
        let t = Time {
            text: s.transport.rto.text.clone(),
            value: rto,
        };
        check_timer("transport.rto", &t, floor)?;
    }
    if let Some(r) = s.transport.rdma.as_ref().filter(|_| s.transport.kind.is_rdma()) {
        check_timer("transport.rdma.irn_rto_low", &r.irn_rto_low, floor)?;
        check_timer("transport.rdma.irn_rto_high", &r.irn_rto_high, floor)?;
    }
    for (i, f) in s.failures.iter().enumerate() {
        if let Some(every) = &f.every {
            check_timer(&format!("failures[{i}].every"), every, floor)?;
        }
    }
    Ok(())
}

/// The no-progress guard's window: `stall_rtos` times the longest of the
/// RTO, the base RTT and one MTU's serialization on the slowest link the
/// scenario has (a link degraded to a crawl delivers rarely, not never).
pub fn stall_window(s: &Scenario, d: &Derived) -> Option<crate::time::SimTime> {
    if s.stall_rtos == 0 {
        return None;
    }
    let slowest = s
        .failures
        .iter()
        .chain(&s.rate_overrides)
        .filter_map(|f| f.rate.as_ref().map(|r| r.value))
        .fold(d.host_rate, Rate::min);
    let unit = (d.rto.ps() as u128)
        .max(d.base_rtt.ps() as u128)
        .max(ser_ps(slowest, d.sizes.mtu));
    Some(crate::time::SimTime(
        (unit * s.stall_rtos as u128).min(u64::MAX as u128) as u64,
    ))
}
