//! FaCa's agent in the hosts (FaCa §5.1, §5.3): each host that sends FaCa
//! flows probes the paths to the destinations of its coming flows, keeps a
//! load table per destination from the echoes, and picks each new flow's
//! entropy value by Flowing & Jumping over that table.
//!
//! When a host probes a destination: while some flow of it to that
//! destination has yet to start and is due within `probe_rounds` probe
//! intervals (a flow waiting on others is due from its nominal start on).
//! The placement decisions are the only use of the table, so probing
//! outside these windows would cost bandwidth for nothing. A destination's
//! first round tries `probe_evs` distinct random EVs (discovery); later
//! rounds send one probe per known path, on the first EV known for it.
//! Each host probes every `probe_interval`.

use super::int::{IntStore, ProbeTrace, SharedStore};
use super::table::{Hop, PathTable};
use crate::lb::{AgentOut, HostAgent};
use crate::packet::{Packet, PacketKind, NO_FLOW};
use crate::rng::{Rng, StreamTag};
use crate::time::{Rate, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// How β (FaCa §5.4 eq. 1) reads a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BetaMode {
    /// Bytes in flight: Σ over hops of used bandwidth × (queue delay + latency).
    Used,
    /// The paper's literal B·D: bottleneck capacity × (one-way delay + queue delays).
    Capacity,
}

#[derive(Clone, Copy, Debug)]
pub struct AgentConfig {
    pub interval: SimTime,
    pub probe_rounds: u32,
    /// EVs of a discovery round; None: 8 per path to the destination (`paths_to`).
    pub probe_evs: Option<u32>,
    /// The tree's shape, for the number of paths to a destination.
    pub shape: crate::net::Shape,
    /// k of FaCa eq. 3, per microsecond.
    pub k: f64,
    pub beta: BetaMode,
    pub probe_bytes: u32,
    pub record_bytes: u32,
    pub entropy_space: u32,
    /// Alg. 1 "update E": the load a flow adds to its path when placed, at most this many bytes.
    pub flow_load_cap: u64,
    pub seed: u64,
    /// The route class of probes (the switches' INT policy).
    pub class: u8,
}

/// What a probe tells: β of the path it crossed (FaCa §5.4 eq. 1), in bytes.
pub fn beta(trace: &ProbeTrace, mode: BetaMode) -> f64 {
    let secs = |t: SimTime| t.ps() as f64 * 1e-12;
    match mode {
        BetaMode::Used => trace
            .hops
            .iter()
            .map(|h| h.used_bps / 8.0 * secs(h.queue_delay + h.latency))
            .sum(),
        BetaMode::Capacity => {
            let b = trace.hops.iter().map(|h| h.rate).min().unwrap_or(Rate(0));
            let queued: SimTime = trace.hops.iter().fold(SimTime::ZERO, |a, h| a + h.queue_delay);
            let d = trace.one_way.unwrap_or(SimTime::ZERO) + queued;
            b.bps() as f64 / 8.0 * secs(d)
        }
    }
}

/// Equal-cost paths from `src` to `dst` on the healthy tree: 1 within a
/// rack, else `Shape::tor_paths` between their ToRs.
pub fn paths_to(shape: &crate::net::Shape, src: u32, dst: u32) -> u32 {
    let (a, b) = (src / shape.hosts_per_tor, dst / shape.hosts_per_tor);
    if a == b {
        1
    } else {
        shape.tor_paths(a, b).max(1)
    }
}

#[derive(Default)]
struct Dest {
    table: PathTable,
    /// Flows to this destination not started yet: (nominal start, flow).
    pending: BTreeSet<(SimTime, u32)>,
    discovered: bool,
}

struct Host {
    rng: Rng,
    dests: BTreeMap<u32, Dest>,
    /// The time of the timer pending for this host, if any.
    timer: Option<SimTime>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    probes: u64,
    echoes: u64,
    bytes: u64,
    placed: u64,
    fallbacks: u64,
    /// FaCa flows under `lb.faca.min_flow`: never probed for, never placed.
    short: u64,
}

pub struct Agent {
    cfg: AgentConfig,
    store: SharedStore,
    hosts: BTreeMap<u32, Host>,
    /// Which flows are FaCa's.
    mine: BTreeSet<u32>,
    /// Per host: its NIC's rate, and the bytes its NIC sent for FaCa.
    nic_rate: Vec<Rate>,
    nic_bytes: Vec<u64>,
    stats: Stats,
    /// Every change of a path's estimate, in time order (the `faca_paths` table), when recording.
    log: Vec<EstimateChange>,
    recording: bool,
}

/// A path's estimate changed: a probe's echo came back, or a flow was placed on it.
#[derive(Clone, Debug)]
struct EstimateChange {
    at: SimTime,
    src: u32,
    dst: u32,
    hops: Vec<Hop>,
    /// The probe's β, or the bytes a placed flow added (Alg. 1 "update E").
    sample: f64,
    placed: bool,
    estimate: f64,
}

impl Agent {
    pub fn new(
        cfg: AgentConfig,
        store: SharedStore,
        nic_rate: Vec<Rate>,
        flows: &[(u32, crate::transport::FlowSpec)],
        short: u64,
    ) -> Agent {
        let mut hosts: BTreeMap<u32, Host> = BTreeMap::new();
        for (id, spec) in flows {
            let h = hosts.entry(spec.src).or_insert_with(|| Host {
                rng: Rng::new(cfg.seed, StreamTag::Faca, spec.src as u64),
                dests: BTreeMap::new(),
                timer: None,
            });
            h.dests.entry(spec.dst).or_default().pending.insert((spec.start, *id));
        }
        Agent {
            cfg,
            store,
            hosts,
            mine: flows.iter().map(|(id, _)| *id).collect(),
            nic_bytes: vec![0; nic_rate.len()],
            nic_rate,
            stats: Stats {
                short,
                ..Stats::default()
            },
            log: Vec::new(),
            recording: false,
        }
    }

    /// How far ahead of a flow's start its destination is probed.
    fn lead(&self) -> SimTime {
        SimTime(self.cfg.interval.ps() * self.cfg.probe_rounds as u64)
    }

    /// The table a host keeps for a destination (tests look inside).
    pub fn table(&self, src: u32, dst: u32) -> Option<&PathTable> {
        self.hosts.get(&src)?.dests.get(&dst).map(|d| &d.table)
    }

    /// When host `src` must next act after acting at `now`: now + interval
    /// while some destination is due, else when the earliest becomes due;
    /// None when nothing is pending. At the start (`first`), the earliest
    /// due time itself, t = 0 included.
    fn next_wake(&self, src: u32, now: SimTime, first: bool) -> Option<SimTime> {
        let lead = self.lead();
        let first_due = self.hosts[&src]
            .dests
            .values()
            .filter_map(|d| d.pending.first().map(|p| p.0.saturating_sub(lead)))
            .min()?;
        Some(match first_due <= now && !first {
            true => now + self.cfg.interval,
            false => first_due.max(now),
        })
    }

    fn arm(&mut self, src: u32, now: SimTime, first: bool, out: &mut AgentOut) {
        let next = self.next_wake(src, now, first);
        let h = self.hosts.get_mut(&src).expect("a probing host");
        if let Some(at) = next {
            if h.timer.is_none_or(|t| t <= now || at < t) {
                h.timer = Some(at);
                out.timers.push((at, src));
            }
        }
    }

    fn send_probe(&mut self, src: u32, dst: u32, ev: u16, now: SimTime, out: &mut AgentOut) {
        let serial = self.store.borrow_mut().open(src, dst, ev, now);
        let pkt = Packet {
            ev,
            route: self.cfg.class,
            tag: serial,
            ..Packet::new(PacketKind::Probe, NO_FLOW, src, dst, self.cfg.probe_bytes, now)
        };
        self.stats.probes += 1;
        self.stats.bytes += pkt.size as u64;
        self.nic_bytes[src as usize] += pkt.size as u64;
        out.send.push(pkt);
    }

    /// One probing round of host `src`.
    fn probe_round(&mut self, src: u32, now: SimTime, out: &mut AgentOut) {
        let horizon = now + self.lead();
        let cfg = self.cfg;
        let mut to_send: Vec<(u32, u16)> = Vec::new();
        let h = self.hosts.get_mut(&src).expect("a probing host");
        for (&dst, d) in h.dests.iter_mut() {
            if d.pending.first().is_none_or(|p| p.0 > horizon) {
                continue;
            }
            let usable: Vec<u16> = d.table.paths.iter().filter_map(|p| p.evs.first().copied()).collect();
            if !d.discovered || usable.is_empty() {
                d.discovered = true;
                let space = cfg.entropy_space.max(1);
                let mut evs: BTreeSet<u16> = BTreeSet::new();
                let auto = 8 * paths_to(&cfg.shape, src, dst);
                let want = cfg.probe_evs.unwrap_or(auto).min(space) as usize;
                while evs.len() < want {
                    evs.insert(h.rng.below(space as u64) as u16);
                }
                to_send.extend(evs.into_iter().map(|ev| (dst, ev)));
            } else {
                to_send.extend(usable.into_iter().map(|ev| (dst, ev)));
            }
        }
        for (dst, ev) in to_send {
            self.send_probe(src, dst, ev, now, out);
        }
        // Probes lost on the way never echo: forget them after a long while.
        let stale = SimTime(self.cfg.interval.ps().saturating_mul(1000));
        if now > stale {
            self.store.borrow_mut().expire(now - stale);
        }
    }

    fn learn(&mut self, trace: ProbeTrace, now: SimTime) {
        let b = beta(&trace, self.cfg.beta);
        let hops: Vec<Hop> = trace.hops.iter().map(|r| (r.switch, r.port)).collect();
        let k = self.cfg.k;
        if let Some(d) = self.hosts.get_mut(&trace.src).and_then(|h| h.dests.get_mut(&trace.dst)) {
            let i = d.table.observe(&hops, trace.ev, b, now, k);
            if !self.recording {
                return;
            }
            self.log.push(EstimateChange {
                at: now,
                src: trace.src,
                dst: trace.dst,
                hops,
                sample: b,
                placed: false,
                estimate: d.table.paths[i].estimate.value(),
            });
        }
    }
}

impl HostAgent for Agent {
    fn start(&mut self, out: &mut AgentOut) {
        let srcs: Vec<u32> = self.hosts.keys().copied().collect();
        for src in srcs {
            self.arm(src, SimTime::ZERO, true, out);
        }
    }

    fn on_timer(&mut self, now: SimTime, host: u32, out: &mut AgentOut) {
        let Some(h) = self.hosts.get_mut(&host) else { return };
        if h.timer != Some(now) {
            return; // superseded by an earlier one
        }
        h.timer = None;
        self.probe_round(host, now, out);
        self.arm(host, now, false, out);
    }

    fn on_packet(&mut self, now: SimTime, host: u32, pkt: &Packet, out: &mut AgentOut) {
        match pkt.kind {
            PacketKind::Probe => {
                // The destination answers with the records, back to the source (FaCa §5.3).
                if let Some(t) = self.store.borrow_mut().traces.get_mut(&pkt.tag) {
                    t.one_way = Some(now - pkt.sent_at);
                }
                let echo = Packet {
                    ev: pkt.ev,
                    tag: pkt.tag,
                    ..Packet::new(PacketKind::ProbeEcho, NO_FLOW, host, pkt.src, pkt.size, now)
                };
                self.stats.echoes += 1;
                self.stats.bytes += echo.size as u64;
                self.nic_bytes[host as usize] += echo.size as u64;
                out.send.push(echo);
            }
            PacketKind::ProbeEcho => {
                let trace = self.store.borrow_mut().traces.remove(&pkt.tag);
                if let Some(t) = trace {
                    self.learn(t, now);
                }
            }
            _ => {}
        }
    }

    fn flow_ev(&mut self, now: SimTime, flow: u32, src: u32, dst: u32, size: u64) -> Option<u16> {
        if !self.mine.contains(&flow) {
            return None;
        }
        let h = self.hosts.get_mut(&src)?;
        let d = h.dests.get_mut(&dst)?;
        d.pending.retain(|p| p.1 != flow);
        let usable: Vec<usize> = d.table.usable().collect();
        if usable.is_empty() {
            self.stats.fallbacks += 1;
            return None; // no echo yet: the flow keeps the random EV it was built with
        }
        let loads: Vec<f64> = usable.iter().map(|&i| d.table.paths[i].estimate.value()).collect();
        let rng = &mut h.rng;
        let pick = d.table.placer.place(&loads, &mut |n| rng.below(n as u64) as usize);
        let path = &mut d.table.paths[usable[pick]];
        // Alg. 1 "update E": the flow's bytes in flight, at most the cap.
        let added = size.min(self.cfg.flow_load_cap) as f64;
        path.estimate.add(added);
        if self.recording {
            self.log.push(EstimateChange {
                at: now,
                src,
                dst,
                hops: path.hops.clone(),
                sample: added,
                placed: true,
                estimate: path.estimate.value(),
            });
        }
        let ev = path.evs[h.rng.below(path.evs.len() as u64) as usize];
        self.stats.placed += 1;
        Some(ev)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn record(&mut self, on: bool) {
        self.recording = on;
    }

    fn table(&self, net: &crate::net::Network) -> Option<crate::table::Table> {
        use crate::table::{Column, Table};
        if self.log.is_empty() {
            return None;
        }
        let path = |hops: &[Hop]| {
            let names: Vec<&str> = hops.iter().map(|&(_, p)| net.ports[p as usize].name.as_str()).collect();
            names.join(" ")
        };
        let l = &self.log;
        Some(
            Table::new("faca_paths")
                .with("time_us", Column::F64(l.iter().map(|c| c.at.as_us_f64()).collect()))
                .with("src", Column::U32(l.iter().map(|c| c.src).collect()))
                .with("dst", Column::U32(l.iter().map(|c| c.dst).collect()))
                .with("path", Column::Str(l.iter().map(|c| path(&c.hops)).collect()))
                .with(
                    "event",
                    Column::Str(
                        l.iter()
                            .map(|c| if c.placed { "placed" } else { "probe" }.to_string())
                            .collect(),
                    ),
                )
                .with("sample", Column::F64(l.iter().map(|c| c.sample).collect()))
                .with("estimate", Column::F64(l.iter().map(|c| c.estimate).collect())),
        )
    }

    fn summary(&self, end: SimTime, out: &mut BTreeMap<String, f64>) {
        let s = self.stats;
        out.insert("faca.probes".into(), s.probes as f64);
        out.insert("faca.echoes".into(), s.echoes as f64);
        out.insert("faca.probe_bytes".into(), s.bytes as f64);
        out.insert("faca.placed".into(), s.placed as f64);
        out.insert("faca.fallbacks".into(), s.fallbacks as f64);
        out.insert("faca.short".into(), s.short as f64);
        let secs = end.ps() as f64 * 1e-12;
        let capacity = |h: usize| self.nic_rate[h].bps() as f64 / 8.0 * secs;
        let total: f64 = (0..self.nic_rate.len()).map(capacity).sum();
        if total > 0.0 {
            out.insert("faca.overhead".into(), s.bytes as f64 / total);
            let max = (0..self.nic_rate.len())
                .map(|h| self.nic_bytes[h] as f64 / capacity(h))
                .fold(0.0, f64::max);
            out.insert("faca.overhead_max_host".into(), max);
        }
        let tables: Vec<usize> = self
            .hosts
            .values()
            .flat_map(|h| h.dests.values().map(|d| d.table.paths.len()))
            .collect();
        if !tables.is_empty() {
            let mean = tables.iter().sum::<usize>() as f64 / tables.len() as f64;
            out.insert("faca.paths_per_destination".into(), mean);
        }
    }
}

/// The store, for the builder.
pub fn new_store() -> SharedStore {
    std::rc::Rc::new(std::cell::RefCell::new(IntStore::default()))
}
