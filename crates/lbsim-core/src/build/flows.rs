//! From the workload's messages to transport flows: each message gets its
//! load balancer (`lb.kind` or an `lb.mix` share), which says how its
//! messages become flows (subflows split them, MP-RDMA picks its own window
//! rule); each flow gets its congestion control, balancer and random
//! stream. Also the parts the run uses: the builders of its balancers and
//! congestion controls, and the route class of each switch-side balancer.

use super::derive::Derived;
use crate::cc::{self, CcBuilder, CcCommon, CongestionControl};
use crate::engine::{Triggers, WorkloadMeta};
use crate::lb::{self, LbBuilder, LbCommon};
use crate::messages::{split, Carriers};
use crate::net::{Network, PolicySite};
use crate::rng::{Rng, StreamTag};
use crate::scenario::{BdpBasis, CcKind, FctEnd, LbKind, Release, RtxOrder, Scenario, ScenarioError, TransportKind};
use crate::time::SimTime;
use crate::transport::{packetize, Flow, FlowSpec, RdmaTimer, Recovery};
use crate::workload::Traffic;
use std::collections::BTreeMap;

/// The builders of every balancer and congestion control the run uses.
pub struct Parts {
    lbs: BTreeMap<LbKind, Box<dyn LbBuilder>>,
    ccs: BTreeMap<CcKind, Box<dyn CcBuilder>>,
    /// Route class of each switch-side balancer, in registry order from 1.
    routes: BTreeMap<LbKind, u8>,
    /// `cc.initial_cwnd` in bytes: each flow's starting window.
    initial_cwnd: u64,
    rdma: Option<RdmaSender>,
}

/// How an RDMA transport's senders recover, and IRN's window in packets.
#[derive(Clone, Copy)]
struct RdmaSender {
    recovery: Recovery,
    timer: RdmaTimer,
    window: Option<u32>,
    /// IRN rewinds to the cumulative ACK on a NACK (`transport.rdma.irn_recovery`).
    irn_rewind: bool,
}

/// `[transport.rdma]` as each sender needs it.
fn rdma_sender(s: &Scenario, d: &Derived) -> Result<Option<RdmaSender>, ScenarioError> {
    let (Some(r), true) = (&s.transport.rdma, s.transport.kind.is_rdma()) else {
        return Ok(None);
    };
    let payload = d.sizes.mtu - d.sizes.header;
    Ok(Some(match s.transport.kind {
        TransportKind::Gbn => RdmaSender {
            recovery: Recovery::GoBackN,
            timer: RdmaTimer::new(d.rto, d.rto, 0),
            window: None,
            irn_rewind: false,
        },
        _ => {
            let key = "transport.rdma.irn_window";
            let bytes = r
                .irn_window
                .bytes_or(d.bdp, d.sizes.mtu, d.bdp)
                .map_err(|e| ScenarioError::new(key, e))?;
            if bytes == 0 {
                // Rounded up to one packet it would be stop-and-wait, which nobody asks for with "0B".
                return Err(ScenarioError::new(
                    key,
                    "must be positive: IRN sends new packets only while fewer bytes than this are in flight",
                ));
            }
            let packets = bytes.div_ceil(payload);
            if packets > u16::MAX as u64 {
                let msg = format!("{bytes} B is {packets} packets; IRN's NACKs count up to 65535 packets in flight");
                return Err(ScenarioError::new(key, msg));
            }
            RdmaSender {
                recovery: Recovery::Irn,
                timer: RdmaTimer::new(r.irn_rto_low.value, r.irn_rto_high.value, r.irn_low_inflight),
                window: Some(packets as u32),
                irn_rewind: r.irn_recovery == crate::scenario::IrnRecovery::Rewind,
            }
        }
    }))
}

impl Parts {
    pub fn prepare(s: &Scenario, d: &Derived, net: &Network) -> Result<Parts, ScenarioError> {
        let common = LbCommon {
            entropy_space: s.lb.entropy_space,
            mtu: d.sizes.mtu,
            bdp: d.bdp,
            rto: d.rto,
            seed: s.seed,
            shape: net.shape,
            hop_latency: s.topology.link_latency.value + s.topology.switch_latency.value,
            control_bytes: d.sizes.control,
            transport: s.transport.kind,
            lossless: s.queue.kind == crate::scenario::QueueKind::Shared
                && s.queue.shared.as_ref().is_some_and(|q| q.pfc),
            shortest_timer: crate::scenario::units::shortest_timer(d.sizes.mtu, d.host_rate),
        };
        let mut lbs = BTreeMap::new();
        for kind in std::iter::once(s.lb.kind).chain(s.lb.mix.iter().map(|m| m.kind)) {
            if let std::collections::btree_map::Entry::Vacant(slot) = lbs.entry(kind) {
                slot.insert((lb::entry(kind).prepare)(s.lb.table(kind), &common)?);
            }
        }
        let window = |a: &crate::scenario::Amount, key: &str| -> Result<u64, ScenarioError> {
            let v = a
                .bytes(d.sizes.mtu, d.bdp, None)
                .map_err(|e| ScenarioError::new(key, e))?;
            if v == 0 {
                return Err(ScenarioError::new(key, "must be positive"));
            }
            Ok(v)
        };
        let initial_cwnd = window(&s.cc.initial_cwnd, "cc.initial_cwnd")?;
        let cc_common = CcCommon {
            mtu: d.sizes.mtu,
            bdp: d.bdp,
            max_cwnd: window(&s.cc.max_cwnd, "cc.max_cwnd")?,
            wtd_alpha: s.cc.wait_to_decrease.then_some(s.cc.wtd_alpha),
            line_rate: d.host_rate,
        };
        let mut ccs = BTreeMap::new();
        let overrides = lbs.values().filter_map(|b| b.plan().cc);
        for kind in std::iter::once(s.cc.kind).chain(overrides) {
            if let std::collections::btree_map::Entry::Vacant(slot) = ccs.entry(kind) {
                slot.insert((cc::entry(kind).prepare)(s.cc.table(kind), &cc_common)?);
            }
        }
        let switch_side = lbs
            .keys()
            .copied()
            .filter(|&k| lb::entry(k).switch_side || lb::entry(k).int_probes);
        let routes = switch_side.zip(1u8..).collect();
        Ok(Parts {
            lbs,
            ccs,
            routes,
            initial_cwnd,
            rdma: rdma_sender(s, d)?,
        })
    }

    /// Install each switch-side balancer's policy in every switch, one route class each.
    pub fn install_policies(&self, net: &mut Network) {
        for (kind, &class) in &self.routes {
            let b = &self.lbs[kind];
            let per_switch = (0..net.switches.len() as u32)
                .map(|switch| {
                    let site = PolicySite { net, switch, class };
                    b.switch_policy(&site).expect("a switch-side balancer has a policy")
                })
                .collect();
            let added = net.policies.add_class(lb::entry(*kind).name, per_switch);
            debug_assert_eq!(added, class);
        }
    }

    /// The host agent of the first balancer that has one (FaCa), given the flows.
    pub fn host_agent(&self, net: &Network, flows: &[Flow]) -> Option<Box<dyn lb::HostAgent>> {
        self.lbs.iter().find_map(|(kind, b)| {
            let mine: Vec<(u32, FlowSpec)> = flows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.lb_kind == *kind)
                .map(|(i, f)| (i as u32, f.spec))
                .collect();
            b.host_agent(net, &mine, self.routes.get(kind).copied())
        })
    }

    /// The receiving hosts' agent of the congestion controls that have one
    /// (EQDS's credit pacers); `links[h]` is the link into host h.
    pub fn receiver_cc(&self, net: &Network, flows: usize) -> Option<Box<dyn cc::ReceiverCc>> {
        let hpt = net.shape.hosts_per_tor;
        let links = || {
            (0..net.shape.hosts)
                .map(|h| net.switches[net.hosts[h as usize].tor as usize].down[(h % hpt) as usize])
                .collect()
        };
        self.ccs.values().find_map(|b| b.receiver(links(), flows))
    }
}

/// The load balancer of each message: `lb.kind`, except for the `lb.mix`
/// shares, each a random `fraction` of the messages (rounded to the
/// nearest) drawn from those not yet taken.
fn lb_kinds(s: &Scenario, messages: usize) -> Result<Vec<LbKind>, ScenarioError> {
    let mut kinds = vec![s.lb.kind; messages];
    let mut free: Vec<usize> = (0..messages).collect();
    let mut rng = Rng::new(s.seed, StreamTag::LbMix, 0);
    rng.shuffle(&mut free);
    for (i, share) in s.lb.mix.iter().enumerate() {
        let key = format!("lb.mix[{i}].fraction");
        if !(0.0..=1.0).contains(&share.fraction) {
            return Err(ScenarioError::new(
                key,
                format!("must be between 0 and 1, got {}", share.fraction),
            ));
        }
        let n = (share.fraction * messages as f64).round() as usize;
        if n > free.len() {
            return Err(ScenarioError::new(key, "the shares add up to more than every flow"));
        }
        for f in free.drain(..n) {
            kinds[f] = share.kind;
        }
    }
    Ok(kinds)
}

/// The flows carrying the workload's messages, and what the engine needs
/// to know about them beyond the flows themselves.
pub fn create(
    s: &Scenario,
    net: &Network,
    d: &Derived,
    parts: &Parts,
    traffic: &Traffic,
) -> Result<(Vec<Flow>, WorkloadMeta), ScenarioError> {
    let (mtu, header, control) = (d.sizes.mtu as u32, d.sizes.header as u32, d.sizes.control);
    let fct_end = s.metrics.fct;
    let ideal = |spec: &FlowSpec| {
        let (npkts, full, last) = packetize(spec.size, mtu, header);
        let data = net.ideal_fct(spec.src, spec.dst, npkts, full, last);
        match fct_end {
            FctEnd::LastByte => data,
            // The last packet's ACK on its way back (ConWeave's ideal includes the base RTT).
            FctEnd::LastAck => data + net.one_way(spec.dst, spec.src, control),
        }
    };
    let initial_cwnd = parts.initial_cwnd;
    let kinds = lb_kinds(s, traffic.flows.len())?;
    let mut flows: Vec<Flow> = Vec::with_capacity(traffic.flows.len());
    let mut carriers = Carriers::default();
    let mut message_ideal = Vec::with_capacity(traffic.flows.len());
    for (m, (spec, &kind)) in traffic.flows.iter().zip(&kinds).enumerate() {
        carriers.push(flows.len() as u32);
        let rtt = net.base_rtt(spec.src, spec.dst, d.sizes.mtu, control);
        // The REPS artifact caps each pair at 1.5 x its own BDP (uec.cpp initNscc, lowered to the
        // measured RTT by update_base_rtt): lbsim's idle RTT of the pair is what it measures.
        let max_window = match s.cc.max_cwnd_basis {
            BdpBasis::Network => None,
            BdpBasis::Pair => Some(
                s.cc.max_cwnd
                    .bytes(d.sizes.mtu, d.host_rate.bytes_in(rtt), None)
                    .map_err(|e| ScenarioError::new("cc.max_cwnd", e))?,
            ),
        };
        // REPS Fig. 2 normalises a message's completion: its ideal is the whole message alone on one path.
        message_ideal.push(ideal(spec));
        let builder = &parts.lbs[&kind];
        let plan = builder.plan();
        let pieces = plan.subflows.map_or_else(|| vec![*spec], |n| split(*spec, n));
        let initial = match plan.share_window && plan.subflows.is_some() {
            true => initial_cwnd / pieces.len() as u64,
            false => initial_cwnd,
        };
        let cc = &parts.ccs[&plan.cc.unwrap_or(s.cc.kind)];
        for (j, piece) in pieces.iter().enumerate() {
            // Unsplit flows keep their stream (index = message); subflows draw from their own.
            let mut rng = match plan.subflows {
                Some(_) => Rng::new(s.seed, StreamTag::Subflow, (m as u64) << 32 | j as u64),
                None => Rng::new(s.seed, StreamTag::Flow, m as u64),
            };
            let lb = builder.balancer(rtt, &mut rng);
            let (mut cc, transport) = (cc.sender(initial), s.transport.kind);
            if let Some(max) = max_window {
                cc.set_max_window(max);
            }
            let mut f = Flow::new(*piece, mtu, header, transport, cc, lb, kind, rng, rtt);
            f.ideal = ideal(piece);
            f.message = m as u32;
            f.step = traffic.step[m];
            // A host-side balancer's probe class (FaCa) is not its data's: data hashes its EV.
            f.route = match lb::entry(kind).switch_side {
                true => parts.routes.get(&kind).copied().unwrap_or(0),
                false => 0,
            };
            if let Some(delta) = plan.ooo_limit {
                f.tx.set_ooo_limit(delta);
            }
            f.tx.set_rtx_by_seq(s.transport.rtx_order == RtxOrder::Seq);
            f.tx.set_rts_uncounted(!s.transport.rts_in_flight);
            if let Some(r) = parts.rdma {
                f.tx.set_rdma(r.recovery, r.timer);
                f.tx.set_irn_rewind(r.irn_rewind);
                if let Some(window) = r.window {
                    f.tx.set_ooo_limit(window);
                }
            }
            flows.push(f);
        }
    }
    carriers.finish(flows.len() as u32);
    let release = s.workload.release.unwrap_or_default();
    let meta = wire_dependencies(&mut flows, &carriers, traffic, message_ideal, fct_end, release)?;
    Ok((flows, meta))
}

/// The messages' dependencies and triggers as the flows' (each flow's
/// `waiting_on`), and the rest the engine needs to know about the workload.
fn wire_dependencies(
    flows: &mut [Flow],
    carriers: &Carriers,
    traffic: &Traffic,
    message_ideal: Vec<SimTime>,
    fct_end: FctEnd,
    release: Release,
) -> Result<WorkloadMeta, ScenarioError> {
    let (mut waiting_on, dependents) = carriers.flow_dependencies(&traffic.after);
    let triggers = Triggers::wire(
        &traffic.triggers,
        carriers,
        traffic.flows.len(),
        release,
        &mut waiting_on,
    )
    .map_err(|e| ScenarioError::new("workload", e))?;
    for (f, w) in flows.iter_mut().zip(waiting_on) {
        f.waiting_on = w;
    }
    Ok(WorkloadMeta {
        dependents,
        triggers,
        release,
        message_ideal,
        measure_from: traffic.measure_from,
        measure_until: traffic.measure_until,
        collective: traffic.collective,
        fct_end,
    })
}
