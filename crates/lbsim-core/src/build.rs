//! From a parsed scenario to a ready simulation: resolve the topology,
//! derive base RTT, BDP and RTO, size the queues, generate the workload,
//! create flows with their load balancer and congestion control, and
//! schedule failures. Every error names the scenario key.

use crate::cc::credit_pacer::CreditPacers;
use crate::cc::{mprdma_window, CongestionControl, DctcpVariant, EqdsSender};
use crate::failure;
use crate::lb::arcane::{Arcane, ArcaneConfig};
use crate::lb::bitmap::{Bitmap, BitmapConfig};
use crate::lb::plb::{Plb, PlbConfig};
use crate::lb::reps::{Reps, RepsConfig};
use crate::lb::{adaptive::Adaptive, ecmp::Ecmp, flowlet::Flowlet, mprdma::Mprdma, ops::Ops, subflows::Subflows, Lb};
use crate::messages::{split, Carriers};
use crate::net::PortId;
use crate::net::{Network, Node, QueueParams};
use crate::observe::Observer;
use crate::rng::{Rng, StreamTag};
use crate::scenario::{Amount, AmountValue, CcKind, EcnAt, LbKind, Scenario, ScenarioError, SubflowWindow};
use crate::sim::{SimParams, Simulation, WorkloadMeta};
use crate::time::SimTime;
use crate::topo::{self, TopoParams};
use crate::transport::{packetize, Flow};
use crate::workload::{self, NetInfo};
use std::path::Path;

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

/// Topology parameters resolved from radix and oversubscription.
fn topo_params(s: &Scenario) -> Result<TopoParams, ScenarioError> {
    let t = &s.topology;
    if t.radix < 2 {
        return err("topology.radix", format!("must be at least 2, got {}", t.radix));
    }
    if t.oversubscription == 0 {
        return err("topology.oversubscription", "must be at least 1 (k in k:1)");
    }
    // k:1 at the ToR: uplinks = radix / (k + 1), host ports = k · uplinks.
    let uplinks = t.uplinks_per_tor.unwrap_or(t.radix / (t.oversubscription + 1));
    let hpt = t.hosts_per_tor.unwrap_or(uplinks * t.oversubscription);
    if uplinks == 0 {
        return err(
            "topology.radix",
            format!(
                "radix {} leaves no uplinks at {}:1 oversubscription",
                t.radix, t.oversubscription
            ),
        );
    }
    if hpt == 0 {
        return err("topology.hosts_per_tor", "must be at least 1");
    }
    if t.hosts == 0 || t.hosts % hpt != 0 {
        return err(
            "topology.hosts",
            format!(
                "must be a positive multiple of the hosts per ToR ({hpt}), got {}",
                t.hosts
            ),
        );
    }
    let tors = t.hosts / hpt;
    let half = (t.radix / 2).max(1);
    if t.tiers == 2 && tors > t.radix {
        return err(
            "topology.hosts",
            format!(
                "a 2-tier tree of radix {} has at most {} ToRs ({} hosts); {} hosts need {tors}",
                t.radix,
                t.radix,
                t.radix * hpt,
                t.hosts
            ),
        );
    }
    if t.tiers == 3 && tors.div_ceil(half) > t.radix {
        return err(
            "topology.hosts",
            format!(
                "a 3-tier tree of radix {} has at most {} pods of {half} ToRs",
                t.radix, t.radix
            ),
        );
    }
    if t.link_rate.value.bps() == 0 {
        return err("topology.link_rate", "must be positive");
    }
    Ok(TopoParams {
        tiers: t.tiers,
        hosts: t.hosts,
        hosts_per_tor: hpt,
        uplinks_per_tor: uplinks,
        tors_per_pod: half,
        agg_uplinks: half,
        host_rate: t.link_rate.value,
        fabric_rate: t.link_rate.value,
        link_latency: t.link_latency.value,
        switch_latency: t.switch_latency.value,
        queue: QueueParams {
            capacity: u64::MAX,
            kmin: u64::MAX,
            kmax: u64::MAX,
            ecn_at_dequeue: true,
            trimming: false,
            header_bytes: 0,
        },
        seed: s.seed,
    })
}

/// Build a simulation from a scenario. `base_dir` resolves relative file
/// paths (the scenario file's folder).
pub fn build(s: &Scenario, base_dir: Option<&Path>) -> Result<Simulation, ScenarioError> {
    let mtu = bytes_only(&s.packet.mtu, "packet.mtu")?;
    let header = bytes_only(&s.packet.header, "packet.header")?;
    let ack = bytes_only(&s.packet.ack, "packet.ack")?;
    if header >= mtu {
        return err(
            "packet.header",
            format!("({header} B) must be smaller than packet.mtu ({mtu} B)"),
        );
    }
    if mtu > u32::MAX as u64 / 2 {
        return err("packet.mtu", "is too large");
    }
    let mut net: Network = topo::build(topo_params(s)?);

    // Base RTT of the longest path and the BDP it implies at the host rate.
    let (a, b) = net.farthest_pair();
    let base_rtt = net.base_rtt(a, b, mtu, ack);
    let host_rate = s.topology.link_rate.value;
    let bdp = host_rate.bytes_in(base_rtt);
    let hops = net.path(a, b, 0).len() as u64;

    let q = &s.queue;
    let capacity = q
        .capacity
        .bytes(mtu, bdp, None)
        .map_err(|e| ScenarioError::new("queue.capacity", e))?;
    if capacity < mtu {
        return err(
            "queue.capacity",
            format!("({capacity} B) must hold at least one packet ({mtu} B)"),
        );
    }
    let kmin = q
        .ecn_kmin
        .bytes(mtu, bdp, Some(capacity))
        .map_err(|e| ScenarioError::new("queue.ecn_kmin", e))?;
    let kmax = q
        .ecn_kmax
        .bytes(mtu, bdp, Some(capacity))
        .map_err(|e| ScenarioError::new("queue.ecn_kmax", e))?;
    if kmin > kmax {
        return err(
            "queue.ecn_kmin",
            format!("({kmin} B) must not exceed queue.ecn_kmax ({kmax} B)"),
        );
    }
    let qp = QueueParams {
        capacity,
        kmin,
        kmax,
        ecn_at_dequeue: q.ecn_at == EcnAt::Dequeue,
        trimming: q.trimming,
        header_bytes: header as u32,
    };
    for port in &mut net.ports {
        port.params = match port.from {
            // Host NICs pull from their flows; they neither mark nor drop (as in the artifact).
            Node::Host(_) => QueueParams {
                kmin: u64::MAX,
                kmax: u64::MAX,
                capacity: u64::MAX,
                ..qp
            },
            Node::Switch(_) => qp,
        };
    }

    // RTO "auto": base RTT plus one full-queue drain per hop (REPS artifact main_uec.cpp).
    let rto = match s.transport.rto.value {
        Some(t) if t > SimTime::ZERO => t,
        Some(_) => return err("transport.rto", "must be positive"),
        None => base_rtt + host_rate.serialization(capacity) * hops,
    };

    let cwnd_key = |a: &Amount, key: &str| -> Result<u64, ScenarioError> {
        let v = a.bytes(mtu, bdp, None).map_err(|e| ScenarioError::new(key, e))?;
        if v == 0 {
            return err(key, "must be positive");
        }
        Ok(v)
    };
    let init_cwnd = cwnd_key(&s.cc.initial_cwnd, "cc.initial_cwnd")?;
    let max_cwnd = cwnd_key(&s.cc.max_cwnd, "cc.max_cwnd")?;
    // EQDS: whole packets a message sends before any credit (at least one, to announce it).
    let unsolicited = cwnd_key(&s.cc.eqds.unsolicited, "cc.eqds.unsolicited")?.div_ceil(mtu) as u32;
    let lbs = LbConfigs::new(s, mtu, bdp, rto)?;

    let sh = net.shape;
    let info = NetInfo {
        hosts: sh.hosts,
        hosts_per_tor: sh.hosts_per_tor,
        host_rate,
        fabric_share: (sh.uplinks_per_tor as f64 / sh.hosts_per_tor as f64).min(1.0),
    };
    let traffic = workload::generate(&s.workload, info, s.seed, base_dir)?;
    let kinds = lb_kinds(s, traffic.flows.len())?;
    let sub = &s.lb.subflows;
    let mut flows: Vec<Flow> = Vec::with_capacity(traffic.flows.len());
    let mut carriers = Carriers::default();
    let mut message_ideal = Vec::with_capacity(traffic.flows.len());
    for (m, (&spec, kind)) in traffic.flows.iter().zip(kinds).enumerate() {
        carriers.push(flows.len() as u32);
        let rtt = net.base_rtt(spec.src, spec.dst, mtu, ack);
        // REPS Fig. 2 normalises a message's completion: its ideal is the whole message alone on one path.
        let (npkts, full, last) = packetize(spec.size, mtu as u32, header as u32);
        message_ideal.push(net.ideal_fct(spec.src, spec.dst, npkts, full, last));
        let own_windows = kind == LbKind::Subflows && sub.window != SubflowWindow::Single;
        let parts = if own_windows {
            split(spec, sub.count)
        } else {
            vec![spec]
        };
        // "share": the message's initial window divided among its subflows.
        let initial = match sub.window {
            SubflowWindow::Share if own_windows => init_cwnd / parts.len() as u64,
            _ => init_cwnd,
        };
        for (j, &part) in parts.iter().enumerate() {
            // Unsplit flows keep their stream (index = message); subflows draw from their own.
            let mut rng = if own_windows {
                Rng::new(s.seed, StreamTag::Subflow, (m as u64) << 32 | j as u64)
            } else {
                Rng::new(s.seed, StreamTag::Flow, m as u64)
            };
            // MPRDMA flows run their own window rule (lb.mprdma.cc), the others cc.kind.
            let cc_kind = if kind == LbKind::Mprdma {
                s.lb.mprdma.cc
            } else {
                s.cc.kind
            };
            let cc = match cc_kind {
                CcKind::Dctcp => {
                    let v = DctcpVariant::new(initial, max_cwnd, mtu);
                    CongestionControl::Dctcp(match s.cc.wait_to_decrease {
                        true => v.with_wait_to_decrease(s.cc.wtd_alpha),
                        false => v,
                    })
                }
                CcKind::Eqds => CongestionControl::Eqds(EqdsSender::new(unsolicited, s.cc.eqds.rts)),
                CcKind::Mprdma => CongestionControl::Mprdma(mprdma_window(initial, max_cwnd, mtu)),
            };
            let lb = lbs.load_balancer(kind, &mut rng, rtt);
            let mut f = Flow::new(part, mtu as u32, header as u32, cc, lb, rng, rtt);
            let (npkts, full, last) = packetize(part.size, mtu as u32, header as u32);
            f.ideal = net.ideal_fct(part.src, part.dst, npkts, full, last);
            f.message = m as u32;
            f.step = traffic.step[m];
            if kind == LbKind::Mprdma && s.lb.mprdma.ooo_limit > 0 {
                // MP-RDMA: no new packet at or beyond snd_una + Δ.
                f.set_ooo_limit(s.lb.mprdma.ooo_limit);
            }
            flows.push(f);
        }
    }
    carriers.finish(flows.len() as u32);
    let (waiting_on, dependents) = carriers.flow_dependencies(&traffic.after);
    for (f, w) in flows.iter_mut().zip(waiting_on) {
        f.waiting_on = w;
    }

    let params = SimParams {
        rto,
        trimming: q.trimming,
        ack_bytes: ack as u32,
        ack_ratio: s.transport.ack_ratio,
        ack_delay: s.transport.ack_delay.value,
        freeze_rtt_factor: s.lb.reps.freeze_rtt_factor,
        stop_at: s.stop_at.value,
        base_rtt,
        bdp_bytes: bdp,
        queue_bytes: capacity,
    };

    // Failures and asymmetry act on the tree whose base RTT, BDP and queues were derived above.
    let plans = failure::plan(s, &net)?;
    failure::apply_rate_overrides(s, &mut net)?;
    let observer = observer(s, &net)?;
    let pacers = (s.cc.kind == CcKind::Eqds).then(|| {
        // The link into each host sets its pace: its ToR's downlink.
        let hpt = net.shape.hosts_per_tor;
        let links = (0..s.topology.hosts)
            .map(|h| net.switches[net.hosts[h as usize].tor as usize].down[(h % hpt) as usize])
            .collect();
        CreditPacers::new(
            links,
            flows.len(),
            unsolicited,
            mtu,
            s.cc.eqds.pull_rate,
            s.cc.eqds.retransmit_priority,
        )
    });

    let mut sim = Simulation::new(net, flows, params);
    sim.set_workload_meta(WorkloadMeta {
        dependents,
        message_ideal,
        measure_from: traffic.measure_from,
        measure_until: traffic.measure_until,
        collective: traffic.collective,
    });
    if let Some(p) = pacers {
        sim.set_credit_pacers(p);
    }
    sim.set_failures(plans, s.routing.convergence.value);
    if let Some(obs) = observer {
        sim.set_observer(obs);
    }
    Ok(sim)
}

/// Every balancer's parameters, resolved once for all flows.
struct LbConfigs {
    entropy_space: u32,
    reps: RepsConfig,
    plb: PlbConfig,
    flowlet_timeout: Option<SimTime>,
    bitmap: BitmapConfig,
    arcane: ArcaneConfig,
    /// EVs per subflows flow: one per subflow, or all `count` when one window carries the message.
    subflow_evs: u32,
    mprdma_ooo_limit: u32,
    rto: SimTime,
}

impl LbConfigs {
    fn new(s: &Scenario, mtu: u64, bdp: u64, rto: SimTime) -> Result<Self, ScenarioError> {
        let packets = |a: &Amount, key: &str| -> Result<u32, ScenarioError> {
            let bytes = a.bytes(mtu, bdp, None).map_err(|e| ScenarioError::new(key, e))?;
            Ok(bytes.div_ceil(mtu) as u32)
        };
        let l = &s.lb;
        let space = l.entropy_space;
        Ok(LbConfigs {
            entropy_space: space,
            reps: RepsConfig {
                buffer_size: l.reps.buffer_size as usize,
                entropy_space: space,
                freezing: l.reps.freezing,
                freezing_timeout: l.reps.freezing_timeout.value,
                explore_after_freeze: packets(&l.reps.explore_after_freeze, "lb.reps.explore_after_freeze")?,
                force_freeze_at: l.reps.force_freeze_at.value,
            },
            plb: PlbConfig {
                entropy_space: space,
                congestion_threshold: l.plb.congestion_threshold,
                congested_rounds: l.plb.congested_rounds,
                pause_after_timeout: l.plb.pause_after_timeout.value,
            },
            flowlet_timeout: l.flowlet.timeout.value,
            // BitMap and ARCANE track a small space of their own inside the header's.
            bitmap: BitmapConfig {
                entropy_space: l.bitmap.entropy_space.min(space),
                max_penalty: l.bitmap.max_penalty,
                ecn_penalty: l.bitmap.ecn_penalty,
                nack_penalty: l.bitmap.nack_penalty,
                timeout_penalty: l.bitmap.timeout_penalty,
            },
            arcane: ArcaneConfig {
                entropy_space: l.arcane.entropy_space.min(space),
                buffer_size: l.arcane.buffer_size as usize,
                explore_packets: packets(&l.arcane.explore, "lb.arcane.explore")?,
            },
            subflow_evs: match l.subflows.window {
                SubflowWindow::Single => l.subflows.count,
                SubflowWindow::Full | SubflowWindow::Share => 1,
            },
            mprdma_ooo_limit: l.mprdma.ooo_limit,
            rto,
        })
    }

    /// A flow's balancer; `base_rtt` is the flow's own idle round trip.
    fn load_balancer(&self, kind: LbKind, rng: &mut Rng, base_rtt: SimTime) -> Lb {
        let space = self.entropy_space;
        match kind {
            LbKind::Ecmp => Lb::Ecmp(Ecmp::new(rng, space)),
            LbKind::Ops => Lb::Ops(Ops::new(space)),
            LbKind::Reps => Lb::Reps(Reps::new(self.reps.clone())),
            LbKind::Plb => Lb::Plb(Plb::new(self.plb.clone(), base_rtt, self.rto, rng)),
            LbKind::Flowlet => {
                // REPS §4.1: a flowlet timeout of half the RTT.
                let timeout = self.flowlet_timeout.unwrap_or(SimTime(base_rtt.ps() / 2));
                Lb::Flowlet(Flowlet::new(timeout, space, rng))
            }
            LbKind::Mprdma => Lb::Mprdma(Mprdma::new(space, self.mprdma_ooo_limit)),
            LbKind::Bitmap => Lb::Bitmap(Bitmap::new(self.bitmap.clone(), rng)),
            LbKind::Arcane => Lb::Arcane(Arcane::new(self.arcane.clone())),
            LbKind::Adaptive => Lb::Adaptive(Adaptive),
            LbKind::Subflows => Lb::Subflows(Subflows::new(rng, space, self.subflow_evs)),
        }
    }
}

/// The load balancer of each flow: `lb.kind`, except for the `lb.mix`
/// shares, each a random `fraction` of the flows (rounded to the nearest
/// flow) drawn from those not yet taken.
fn lb_kinds(s: &Scenario, flows: usize) -> Result<Vec<LbKind>, ScenarioError> {
    let mut kinds = vec![s.lb.kind; flows];
    let mut free: Vec<usize> = (0..flows).collect();
    let mut rng = Rng::new(s.seed, StreamTag::LbMix, 0);
    rng.shuffle(&mut free);
    for (i, share) in s.lb.mix.iter().enumerate() {
        if !(0.0..=1.0).contains(&share.fraction) {
            return err(
                &format!("lb.mix[{i}].fraction"),
                format!("must be between 0 and 1, got {}", share.fraction),
            );
        }
        let n = (share.fraction * flows as f64).round() as usize;
        if n > free.len() {
            return err(
                &format!("lb.mix[{i}].fraction"),
                "the shares add up to more than every flow",
            );
        }
        for f in free.drain(..n) {
            kinds[f] = share.kind;
        }
    }
    Ok(kinds)
}

/// The time-series recorder `[observe]` asks for, if any.
fn observer(s: &Scenario, net: &crate::net::Network) -> Result<Option<Observer>, ScenarioError> {
    let o = &s.observe;
    let mut ports: Vec<PortId> = Vec::new();
    for (i, name) in o.ports.iter().enumerate() {
        if let Some(p) = net.port_by_name(name) {
            ports.push(p);
        } else if let Some(sw) = net.switch_by_name(name).map(|i| &net.switches[i as usize]) {
            ports.extend(if sw.up.is_empty() { &sw.down } else { &sw.up });
        } else {
            return err(
                &format!("observe.ports[{i}]"),
                format!("no link or switch named \"{name}\" (like \"t0_0\" for a ToR's uplinks, or \"t0_0->t1_0\")"),
            );
        }
    }
    if o.bucket.value == SimTime::ZERO {
        return err("observe.bucket", "must be positive");
    }
    if ports.is_empty() && !o.drops && !o.rtt {
        return Ok(None);
    }
    Ok(Some(Observer::new(o.bucket.value, ports, o.drops, o.rtt)))
}
