//! What a run will build, estimated before it builds it: the tree (ports,
//! switches, routing tables), the flows (per-flow state, per-packet state of
//! senders and receivers), packets in flight and the result tables. A run
//! whose estimate exceeds the memory limit (`Limits::max_memory`, the
//! command lines' `--max-memory`) is refused with an error naming the keys
//! that make it large, before anything is allocated; `lbsim validate` goes
//! through the same check, so validating a scenario never materialises a
//! workload that would not fit.
//!
//! The per-item sizes are measured on the engine's structures (see
//! docs/scenarios.md, "Limits") and rounded up; the estimate aims to be
//! within a factor of two of the peak, and on the high side.

use super::derive::{Derived, Sizes};
use crate::scenario::{LbKind, Scenario, ScenarioError};
use crate::topo::TopoParams;
use crate::workload::shape::Shape;

/// Limits a run is held to (not part of the scenario: they depend on the machine).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest estimated memory a run may take, in bytes.
    pub max_memory: u64,
}

/// 8 GiB: what a laptop can give a run; raise it with `--max-memory`.
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// Bytes per item, measured with a 128-host run (docs/scenarios.md, "Limits").
pub mod cost {
    /// A port (link + queue), a host, a switch, with their names and vectors.
    /// A port's link FIFO holds its packets by value (48 B each, a BDP of a
    /// 1 us link at 400 G is 13), so the figure comes from the large runs of
    /// docs/performance.md: 1 MiB permutations of 8192 and 32 768 hosts on
    /// 3 tiers need 1.5-1.8 kB per port beyond the rest of this estimate.
    pub const PORT: f64 = 2_000.0;
    pub const HOST: f64 = 100.0;
    pub const SWITCH: f64 = 300.0;
    /// A transport flow: its state (sender, receiver, congestion control,
    /// balancer) plus its rows in the result tables, in Rust and in Python.
    pub const FLOW: f64 = 2_000.0;
    /// A workload message before it becomes flows (spec, dependencies, ideal).
    pub const MESSAGE: f64 = 200.0;
    /// A data packet's state in its sender (state, send time, EV) and receiver (a bit).
    pub const PACKET: f64 = 12.0;
    /// With ACK coalescing, the receiver logs every arrival.
    pub const PACKET_COALESCED: f64 = 4.0;
    /// A packet in flight: the pool entry, its queue slot and its send-log entry.
    pub const IN_FLIGHT: f64 = 64.0;
    /// An RTT sample (`observe.rtt`), one per ACK.
    pub const RTT_SAMPLE: f64 = 24.0;
    /// A row of a time series (`observe.ports`, `observe.drops`), per bucket.
    pub const SAMPLE: f64 = 64.0;
    /// A FaCa probe of a discovery round: the packet and its echo in flight,
    /// and the EV's entry in its sender's path table.
    pub const PROBE: f64 = 192.0;
    /// The flow-level mode's extra per flow: its path (a port per hop), its
    /// rate and bottleneck, its row with the path's node names, and the
    /// progressive filling's per-flow state.
    pub const FLOW_LEVEL_FLOW: f64 = 600.0;
}

/// What a run holds beyond the tree and the flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// A packet-level run: packet state, packets in flight, time series.
    Packets,
    /// The flow-level mode: a path and a rate per flow, no packet.
    FlowsOnly,
}

/// What the estimate found.
#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    pub bytes: f64,
    pub messages: f64,
    pub flows: f64,
    pub packets: f64,
}

fn gib(b: f64) -> String {
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", (b / (1u64 << 20) as f64).ceil())
    }
}

fn over(key: &str, what: String, need: f64, limits: &Limits) -> ScenarioError {
    ScenarioError::new(
        key,
        format!(
            "{what}: this run would need about {} of memory, more than the limit of {} (--max-memory, max_memory=)",
            gib(need),
            gib(limits.max_memory as f64)
        ),
    )
}

/// The tree alone, before it is built.
pub fn network(p: &TopoParams, failures: bool, limits: &Limits) -> Result<f64, ScenarioError> {
    let hosts = p.hosts as f64;
    let tors = (p.hosts / p.hosts_per_tor.max(1)) as f64;
    let cables = match p.tiers {
        2 => tors * p.uplinks_per_tor as f64,
        _ => 2.0 * tors * p.uplinks_per_tor as f64,
    };
    let switches = tors * 3.0;
    // After a failure, routing keeps per switch and destination ToR the uplinks that lead there.
    let groups = if failures {
        switches * tors * p.uplinks_per_tor as f64 * 4.0
    } else {
        0.0
    };
    let bytes = 2.0 * (hosts + cables) * cost::PORT + hosts * cost::HOST + switches * cost::SWITCH + groups;
    if bytes > limits.max_memory as f64 {
        return Err(over(
            "topology.hosts",
            format!("a tree of {} hosts", p.hosts),
            bytes,
            limits,
        ));
    }
    Ok(bytes)
}

/// Transport flows per message: `lb.subflows.count` when a message may be split, else 1.
fn flows_per_message(s: &Scenario) -> f64 {
    let Some(kind) = LbKind::named("subflows") else {
        return 1.0;
    };
    let used = s.lb.kind == kind || s.lb.mix.iter().any(|m| m.kind == kind);
    let table = s.lb.table(kind);
    let single = table.and_then(|t| t.get("window")).and_then(|v| v.as_str()) == Some("single");
    match (used, single) {
        (true, false) => table
            .and_then(|t| t.get("count"))
            .and_then(|v| v.as_integer())
            .unwrap_or(1)
            .max(1) as f64,
        _ => 1.0,
    }
}

/// At most how many probes FaCa's discovery rounds send at once: each
/// destination of each probing host is discovered with `lb.faca.probe_evs`
/// EVs ("auto": 8 per path), and there are no more such pairs than flows;
/// none when every message is under `lb.faca.min_flow` (never placed).
fn faca_probes(s: &Scenario, d: &Derived, shape: &Shape, net: &crate::net::Network, flows: f64) -> f64 {
    let Some(kind) = LbKind::named("faca") else { return 0.0 };
    if s.lb.kind != kind && s.lb.mix.iter().all(|m| m.kind != kind) {
        return 0.0;
    }
    // Unreadable parameters count as the most probes; `prepare` refuses them with their key.
    let p: Option<crate::lb::faca::FacaParams> =
        crate::scenario::registry::parse_params(s.lb.table(kind), "lb.faca").ok();
    let min_flow = p
        .as_ref()
        .and_then(|p| p.min_flow_bytes(d.host_rate, d.sizes.mtu, d.bdp).ok());
    if min_flow.is_some_and(|m| shape.largest < m as f64) {
        return 0.0;
    }
    let sh = &net.shape;
    let paths = sh.uplinks_per_tor.max(1) as f64
        * if sh.tiers == 3 {
            sh.agg_uplinks.max(1) as f64
        } else {
            1.0
        };
    let evs = p.and_then(|p| p.probe_evs.get("lb.faca.probe_evs").ok().flatten());
    let evs = evs.map_or((8.0 * paths).min(s.lb.entropy_space as f64), |n| n as f64);
    if evs > s.lb.entropy_space as f64 {
        return 0.0; // refused when FaCa is prepared, with a better reason
    }
    let hosts = sh.hosts as f64;
    flows.min(hosts * (hosts - 1.0)) * evs
}

/// The whole run: the tree (`net_bytes`), the workload `shape` as flows and
/// packets, packets in flight and samples. Also refuses what the engine's
/// ids and counters cannot hold (more than 2^32 flows, a message of more
/// than 2^32 packets, a message that takes longer than the largest time to send).
pub fn run(
    s: &Scenario,
    d: &Derived,
    shape: &Shape,
    net_bytes: f64,
    net: &crate::net::Network,
    limits: &Limits,
    holds: Holds,
) -> Result<Estimate, ScenarioError> {
    let switches = net.switches.len();
    let Sizes { mtu, header, .. } = d.sizes;
    let payload = (mtu - header) as f64;
    let messages = shape.messages;
    let flows = messages * flows_per_message(s);
    if flows > u32::MAX as f64 {
        return Err(ScenarioError::new(
            shape.count_key,
            format!("the workload has {flows:.3e} flows; lbsim numbers flows with 32 bits (at most 4294967295)"),
        ));
    }
    let largest_pkts = (shape.largest / payload).ceil();
    if largest_pkts > u32::MAX as f64 {
        return Err(ScenarioError::new(
            shape.size_key,
            format!(
                "a message of {:.3e} bytes is {largest_pkts:.3e} packets; lbsim numbers a message's packets with 32 bits",
                shape.largest
            ),
        ));
    }
    let send_ps = shape.largest * 8.0 * 1e12 / d.host_rate.bps() as f64;
    if send_ps > crate::scenario::units::MAX_TIME.ps() as f64 {
        return Err(ScenarioError::new(
            shape.size_key,
            format!(
                "sending a message of {:.3e} bytes at topology.link_rate takes longer than the largest time lbsim simulates",
                shape.largest
            ),
        ));
    }
    if shape.bytes > (1u64 << 60) as f64 {
        return Err(ScenarioError::new(
            shape.size_key,
            format!(
                "the workload carries {:.3e} bytes, more than lbsim's byte counters hold (2^60)",
                shape.bytes
            ),
        ));
    }
    let packets = shape.bytes / payload + messages;
    let per_packet = cost::PACKET
        + if s.transport.ack_ratio > 1 {
            cost::PACKET_COALESCED
        } else {
            0.0
        }
        + if s.observe.rtt { cost::RTT_SAMPLE } else { 0.0 };
    // In flight at once: every host's window, and every switch queue full.
    let window_pkts = (d.bdp as f64 * 4.0 / mtu as f64).ceil() + 1.0;
    let queue_pkts = (d.queue.capacity as f64 / mtu as f64).ceil();
    let hosts = s.topology.hosts as f64;
    let in_flight = (hosts * window_pkts * 4.0 + 6.0 * hosts * queue_pkts).min(packets);
    let (flow_bytes, packet_bytes) = match holds {
        Holds::Packets => (
            flows * cost::FLOW + messages * cost::MESSAGE,
            packets * per_packet + in_flight * cost::IN_FLIGHT,
        ),
        Holds::FlowsOnly => (
            flows * (cost::FLOW + cost::FLOW_LEVEL_FLOW) + messages * cost::MESSAGE,
            0.0,
        ),
    };
    // Time series: one row per bucket up to the horizon, per sampled port, for drops and per shared buffer.
    let o = &s.observe;
    let series = o.ports.len() as f64 * s.topology.radix as f64
        + if o.drops { 1.0 } else { 0.0 }
        + if o.buffers { switches as f64 } else { 0.0 }
        + if o.switch_lb { switches as f64 } else { 0.0 };
    let buckets = s.stop_at.value.ps() as f64 / o.bucket.value.ps().max(1) as f64;
    let sample_bytes = if series > 0.0 && holds == Holds::Packets {
        buckets * series * cost::SAMPLE
    } else {
        0.0
    };
    if sample_bytes > limits.max_memory as f64 {
        return Err(over(
            "observe.bucket",
            format!(
                "{buckets:.3e} buckets of \"{}\" up to stop_at ({}) for {series} series",
                o.bucket.text, s.stop_at.text
            ),
            sample_bytes,
            limits,
        ));
    }
    let probe_bytes = faca_probes(s, d, shape, net, flows) * cost::PROBE;
    if probe_bytes > limits.max_memory as f64 {
        return Err(over(
            "lb.faca.probe_evs",
            format!("{:.3e} probes in FaCa's discovery rounds", probe_bytes / cost::PROBE),
            probe_bytes,
            limits,
        ));
    }
    let bytes = net_bytes + flow_bytes + packet_bytes + sample_bytes + probe_bytes;
    if bytes > limits.max_memory as f64 {
        let (key, what) = if packet_bytes >= flow_bytes {
            (
                shape.size_key,
                format!("{packets:.3e} packets of state ({per_packet} B each)"),
            )
        } else {
            (shape.count_key, format!("{flows:.3e} flows"))
        };
        return Err(over(key, what, bytes, limits));
    }
    Ok(Estimate {
        bytes,
        messages,
        flows,
        packets,
    })
}
