//! The values a scenario resolves to before anything runs: packet sizes,
//! the tree's shape, and what follows from the built tree (base RTT, BDP,
//! queue sizes and ECN thresholds, RTO). Every error names its key.

use crate::net::queue::shared::{PfcParams, SharedParams};
use crate::net::queue::{SharedBuffer, SharedQueue, TwoClassQueue};
use crate::net::{Network, Node, Queue, QueueParams};
use crate::scenario::{Amount, AmountValue, EcnAt, FullDrop, QueueKind, Scenario, ScenarioError, Topology};
use crate::time::{Rate, SimTime};
use crate::topo::{port_queue_rng, TopoParams};

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError::new(key, msg))
}

fn bytes_only(a: &Amount, key: &str) -> Result<u64, ScenarioError> {
    match a.value {
        AmountValue::Bytes(b) if b > 0 => Ok(b),
        _ => err(
            key,
            format!(
                "must be a positive number of bytes such as \"4096B\", got \"{}\"",
                a.text
            ),
        ),
    }
}

/// Packet sizes on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub mtu: u64,
    pub header: u64,
    /// ACKs, NACKs, credits, RTS.
    pub control: u64,
}

impl Sizes {
    pub fn of(s: &Scenario) -> Result<Sizes, ScenarioError> {
        let mtu = bytes_only(&s.packet.mtu, "packet.mtu")?;
        let header = bytes_only(&s.packet.header, "packet.header")?;
        let control = bytes_only(&s.packet.ack, "packet.ack")?;
        if header >= mtu {
            return err(
                "packet.header",
                format!("({header} B) must be smaller than packet.mtu ({mtu} B)"),
            );
        }
        if mtu > u32::MAX as u64 / 2 {
            return err("packet.mtu", "is too large");
        }
        Ok(Sizes { mtu, header, control })
    }
}

/// Topology parameters resolved from radix and oversubscription.
pub fn topo_params(s: &Scenario) -> Result<TopoParams, ScenarioError> {
    let t = &s.topology;
    let (uplinks, hpt) = tor_ports(t)?;
    if t.hosts == 0 || !t.hosts.is_multiple_of(hpt) {
        return err(
            "topology.hosts",
            format!(
                "must be a positive multiple of the hosts per ToR ({hpt}), got {}",
                t.hosts
            ),
        );
    }
    let half = (t.radix / 2).max(1);
    check_tree_size(t, hpt, half)?;
    let agg_uplinks = agg_uplinks(t, half)?;
    if t.link_rate.value.bps() == 0 {
        return err("topology.link_rate", "must be positive");
    }
    Ok(TopoParams {
        tiers: t.tiers,
        hosts: t.hosts,
        hosts_per_tor: hpt,
        uplinks_per_tor: uplinks,
        tors_per_pod: half,
        agg_uplinks,
        host_rate: t.link_rate.value,
        fabric_rate: t.link_rate.value,
        link_latency: t.link_latency.value,
        switch_latency: t.switch_latency.value,
        seed: s.seed,
    })
}

/// The largest radix: ports are numbered within their switch in 16 bits.
pub const MAX_RADIX: u32 = 1 << 16;

/// A ToR's uplinks and host ports, from radix and oversubscription unless given.
fn tor_ports(t: &Topology) -> Result<(u32, u32), ScenarioError> {
    if t.radix < 2 {
        return err("topology.radix", format!("must be at least 2, got {}", t.radix));
    }
    // A port's index within its switch is a u16 (net::Port::local).
    if t.radix > MAX_RADIX {
        return err(
            "topology.radix",
            format!(
                "must be at most {MAX_RADIX} ports (a port's index in its switch is 16 bits), got {}",
                t.radix
            ),
        );
    }
    if t.oversubscription == 0 {
        return err("topology.oversubscription", "must be at least 1 (k in k:1)");
    }
    let k = t.oversubscription as u64;
    // k:1 at the ToR: uplinks = radix / (k + 1), host ports = k · uplinks (in u64: k may be u32::MAX).
    let ports = t.tor_ports();
    let uplinks = t.uplinks_per_tor.unwrap_or((ports as u64 / (k + 1)) as u32);
    let hpt = match t.hosts_per_tor {
        Some(h) => h as u64,
        None => uplinks as u64 * k,
    };
    if uplinks as u64 + hpt > ports as u64 && uplinks > 0 {
        let key = if t.hosts_per_tor.is_some() {
            "topology.hosts_per_tor"
        } else {
            "topology.oversubscription"
        };
        return err(
            key,
            format!(
                "{uplinks} uplinks and {hpt} hosts per ToR ({}:1) do not fit a ToR of {} = {ports} ports",
                t.oversubscription,
                t.tor_radix_key()
            ),
        );
    }
    let hpt = hpt as u32;
    if uplinks == 0 {
        if t.uplinks_per_tor.is_some() {
            return err("topology.uplinks_per_tor", "must be at least 1");
        }
        return err(
            "topology.oversubscription",
            format!(
                "{}:1 leaves no uplinks on a ToR of topology.radix = {} ports (it must be below the radix)",
                t.oversubscription, t.radix
            ),
        );
    }
    if hpt == 0 {
        return err("topology.hosts_per_tor", "must be at least 1");
    }
    Ok((uplinks, hpt))
}

/// Core-facing uplinks per aggregation switch: `topology.agg_uplinks`, else
/// half its ports (it has `half` ToRs below it).
fn agg_uplinks(t: &Topology, half: u32) -> Result<u32, ScenarioError> {
    let Some(u) = t.agg_uplinks else {
        return Ok(half);
    };
    if t.tiers != 3 {
        return err(
            "topology.agg_uplinks",
            format!(
                "is the aggregation layer's, which only a 3-tier tree has (tiers = {})",
                t.tiers
            ),
        );
    }
    if u == 0 || u > t.radix - half {
        return err(
            "topology.agg_uplinks",
            format!(
                "must be between 1 and {} (an aggregation switch of radix {} has {half} ToRs below it), got {u}",
                t.radix - half,
                t.radix
            ),
        );
    }
    Ok(u)
}

/// The ToRs fit the tree: a 2-tier tree has at most radix of them, a 3-tier
/// tree at most radix pods of radix / 2.
fn check_tree_size(t: &Topology, hpt: u32, half: u32) -> Result<(), ScenarioError> {
    let tors = t.hosts / hpt;
    if t.tiers == 2 && tors > t.radix {
        let most = t.radix * hpt;
        let msg = format!(
            "a 2-tier tree of radix {} has at most {} ToRs ({most} hosts); {} hosts need {tors}",
            t.radix, t.radix, t.hosts
        );
        return err("topology.hosts", msg);
    }
    if t.tiers == 3 && tors.div_ceil(half) > t.radix {
        let msg = format!(
            "a 3-tier tree of radix {} has at most {} pods of {half} ToRs",
            t.radix, t.radix
        );
        return err("topology.hosts", msg);
    }
    Ok(())
}

/// What follows from the built, healthy tree.
#[derive(Clone, Copy, Debug)]
pub struct Derived {
    pub sizes: Sizes,
    pub host_rate: Rate,
    /// Base RTT of the longest path, and the BDP it implies at the host rate.
    pub base_rtt: SimTime,
    pub bdp: u64,
    pub queue: QueueParams,
    pub rto: SimTime,
}

impl Derived {
    pub fn of(s: &Scenario, net: &Network, sizes: Sizes) -> Result<Derived, ScenarioError> {
        let (a, b) = net.farthest_pair();
        let base_rtt = net.base_rtt(a, b, sizes.mtu, sizes.control);
        let host_rate = s.topology.link_rate.value;
        let bdp = host_rate.bytes_in(base_rtt);
        let queue = queue_params(s, sizes, bdp)?;
        // RTO "auto": base RTT plus one full-queue drain per hop (REPS artifact main_uec.cpp).
        let hops = net.path(a, b, 0).len() as u64;
        let rto = match s.transport.rto.value {
            Some(t) if t > SimTime::ZERO => t,
            Some(_) => return err("transport.rto", "must be positive"),
            None => base_rtt + host_rate.serialization(queue.capacity) * hops,
        };
        Ok(Derived {
            sizes,
            host_rate,
            base_rtt,
            bdp,
            queue,
            rto,
        })
    }
}

/// The switches' queue: capacity and ECN thresholds in bytes.
fn queue_params(s: &Scenario, sizes: Sizes, bdp: u64) -> Result<QueueParams, ScenarioError> {
    let q = &s.queue;
    let mtu = sizes.mtu;
    let bytes = |a: &Amount, key: &str, of: Option<u64>| a.bytes(mtu, bdp, of).map_err(|e| ScenarioError::new(key, e));
    let capacity = bytes(&q.capacity, "queue.capacity", None)?;
    if capacity < mtu {
        return err(
            "queue.capacity",
            format!("({capacity} B) must hold at least one packet ({mtu} B)"),
        );
    }
    let kmin = bytes(&q.ecn_kmin, "queue.ecn_kmin", Some(capacity))?;
    let kmax = bytes(&q.ecn_kmax, "queue.ecn_kmax", Some(capacity))?;
    if kmin > kmax {
        return err(
            "queue.ecn_kmin",
            format!("({kmin} B) must not exceed queue.ecn_kmax ({kmax} B)"),
        );
    }
    Ok(QueueParams {
        capacity,
        kmin,
        kmax,
        pmax: q.ecn_pmax,
        ecn_at_dequeue: q.ecn_at == EcnAt::Dequeue,
        trimming: q.trimming,
        header_bytes: sizes.header as u32,
        full_drop_coin: q.full_drop == FullDrop::CoinNewest,
        count_in_service: q.count_in_service,
    })
}

/// Give every port its queue. Host NICs pull from their flows and neither
/// mark nor drop (as in the artifacts); switch ports get the scenario's
/// discipline (`queue.kind`). Queues are sized from the built tree's base
/// RTT, so this follows the topology step.
pub fn install_queues(net: &mut Network, s: &Scenario, d: &Derived) -> Result<(), ScenarioError> {
    let shared = match (s.queue.kind, &s.queue.shared) {
        (QueueKind::Shared, Some(q)) => Some(shared_params(s, q, d)?),
        _ => None,
    };
    if let Some(params) = shared {
        net.buffers = net
            .switches
            .iter()
            .map(|sw| SharedBuffer::new(params, sw.down.len() + sw.up.len()))
            .collect();
        let ports = net.buffers.iter().map(|b| b.ports() as u64).max().unwrap_or(0);
        let total = params.pfc.map_or(0, |p| p.headroom).saturating_mul(ports);
        if total >= params.size {
            let msg = format!(
                "({total} B over a switch's ports) must leave room in queue.shared.size ({} B)",
                params.size
            );
            return err("queue.shared.headroom", msg);
        }
        if let Some(pfc) = params.pfc {
            // A paused group resumes once it is `hysteresis` below alpha × the free ingress pool,
            // which is at most alpha × the whole pool: below the hysteresis it never resumes.
            let pool = params.size - total;
            if pfc.alpha * (pool as f64) <= pfc.hysteresis as f64 {
                return err(
                    "queue.shared.pfc_alpha",
                    format!(
                        "{:?} × the ingress pool ({pool} B: queue.shared.size less the headroom of a switch's ports) is \
                         at most queue.shared.hysteresis ({} B): a paused port would never resume",
                        pfc.alpha, pfc.hysteresis
                    ),
                );
            }
        }
    }
    for (id, port) in net.ports.iter_mut().enumerate() {
        let rng = port_queue_rng(s.seed, id as u32);
        port.queue = match (port.from, shared.is_some()) {
            (Node::Host(_), _) => {
                let nic = QueueParams {
                    header_bytes: d.queue.header_bytes,
                    ..QueueParams::UNLIMITED
                };
                Queue::TwoClass(TwoClassQueue::new(nic, rng))
            }
            (Node::Switch(_), false) => Queue::TwoClass(TwoClassQueue::new(d.queue, rng)),
            (Node::Switch(_), true) => Queue::Shared(Box::new(SharedQueue::new(port.local as usize, rng))),
        };
    }
    Ok(())
}

/// `[queue.shared]` in bytes and times.
fn shared_params(s: &Scenario, q: &crate::scenario::SharedQueue, d: &Derived) -> Result<SharedParams, ScenarioError> {
    let mtu = d.sizes.mtu;
    let bytes = |a: &Amount, key: &str| a.bytes(mtu, d.bdp, None).map_err(|e| ScenarioError::new(key, e));
    let size = bytes(&q.size, "queue.shared.size")?;
    if size < mtu {
        return err(
            "queue.shared.size",
            format!("({size} B) must hold at least one packet (packet.mtu = {mtu} B)"),
        );
    }
    // Headroom "auto": what arrives after the packet that crosses the threshold, at worst: a
    // round trip of the link and the switch's latency, the packet the pause frame waits behind, the frame itself and the
    // packet the upstream finishes; plus the crossing packet. The ConWeave artifact's
    // 2 x rate x delay + 2 MTU is one packet and a frame short: it overflowed, and dropped,
    // in a 128-host run (docs/rdma.md).
    let rate = s.topology.link_rate.value;
    let frame = crate::engine::pfc::PFC_FRAME_BYTES as u64;
    let hop = s.topology.link_latency.value + s.topology.switch_latency.value;
    let auto = 2 * rate.bytes_in(hop) + 3 * mtu + frame;
    let headroom = q
        .headroom
        .bytes_or(auto, mtu, d.bdp)
        .map_err(|e| ScenarioError::new("queue.shared.headroom", e))?;
    if q.pfc && headroom < mtu {
        // Less than "auto" is a study of headroom sizing (its overflows are counted as drops);
        // less than a packet cannot hold even the one that crosses the pause threshold.
        return err(
            "queue.shared.headroom",
            format!(
                "({headroom} B) must hold at least one packet (packet.mtu = {mtu} B) on a lossless fabric; \
                 \"auto\" is {auto} B here"
            ),
        );
    }
    // A queue the egress threshold limits admits a packet while it stays under egress_alpha ×
    // the free buffer: data packets when data is lossy (or limited anyway), else the ACKs.
    let (limited, what) = match !q.pfc || q.egress_limits_lossless {
        true => (mtu, "data packet (packet.mtu"),
        false => (d.sizes.control, "ACK (packet.ack"),
    };
    if q.egress_alpha * (size as f64) < limited as f64 {
        return err(
            "queue.shared.egress_alpha",
            format!(
                "{:?} × queue.shared.size ({size} B) is less than one {what} = {limited} B): none would ever be admitted",
                q.egress_alpha
            ),
        );
    }
    let threshold = |a: &Amount, key: &str| match a.value {
        AmountValue::Percent(_) => err(
            key,
            format!(
                "\"{}\": a shared buffer marks at byte thresholds, like \"100KB\"",
                a.text
            ),
        ),
        _ => bytes(a, key),
    };
    let kmin = threshold(&s.queue.ecn_kmin, "queue.ecn_kmin")?;
    let kmax = threshold(&s.queue.ecn_kmax, "queue.ecn_kmax")?;
    if kmin > kmax {
        return err(
            "queue.ecn_kmin",
            format!("({kmin} B) must not exceed queue.ecn_kmax ({kmax} B)"),
        );
    }
    let hysteresis = bytes(&q.hysteresis, "queue.shared.hysteresis")?;
    if q.pfc && hysteresis >= size {
        // A group resumes only this far below a threshold that is a share of the buffer: never.
        return err(
            "queue.shared.hysteresis",
            format!("({hysteresis} B) must be less than queue.shared.size ({size} B), or a paused group never resumes"),
        );
    }
    if q.pfc {
        // The switch re-sends a pause every half pause time: each refresh must fit on the link
        // (a shorter one floods it with frames, an event every few picoseconds).
        let frame = rate.serialization(crate::engine::pfc::PFC_FRAME_BYTES as u64);
        let pause = q.pause_time.value;
        if pause.ps() < 2 * frame.ps() {
            return err(
                "queue.shared.pause_time",
                format!(
                    "(\"{}\") must be at least two PFC frames' time on a topology.link_rate link ({}), or its refreshes cannot keep up",
                    q.pause_time.text,
                    SimTime(2 * frame.ps())
                ),
            );
        }
        // A watchdog shorter than a pause would take any full pause for a deadlock.
        if q.deadlock_after.value < pause {
            return err(
                "queue.shared.deadlock_after",
                format!(
                    "(\"{}\") must be at least queue.shared.pause_time (\"{}\"): a pause alone holds a class that long",
                    q.deadlock_after.text, q.pause_time.text
                ),
            );
        }
    }
    let pfc = q.pfc.then_some(PfcParams {
        alpha: q.pfc_alpha,
        headroom,
        hysteresis,
        pause_time: q.pause_time.value,
    });
    Ok(SharedParams {
        size,
        egress_alpha: q.egress_alpha,
        egress_limits_lossless: q.egress_limits_lossless,
        pfc,
        data_class: q.data_class,
        scheduling: q.scheduling,
        kmin,
        kmax,
        pmax: s.queue.ecn_pmax,
    })
}
