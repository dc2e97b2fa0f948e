//! FaCa (FaCa §5) as a load balancer kind (`lb.kind = "faca"`): host-side
//! flow placement. Hosts probe the paths to their destinations with INT
//! probes on many entropy values (`agent`, switches' side in
//! `net::policy::faca`), learn which value maps to which path and how
//! loaded each path is (`table`, `estimate`), and pin each new flow to one
//! value chosen by Flowing & Jumping (`flowing`). The flow's data then
//! takes plain switch ECMP on that value: the probed path. See docs/faca.md.

pub mod agent;
pub mod estimate;
pub mod flowing;
pub mod int;
pub mod table;

use super::{AgentFlows, HostAgent, Lb, LbBuilder, LbCommon, LbEntry, LbStats, LoadBalancer};
use crate::net::policy::faca::FacaInt;
use crate::net::{Network, PolicySite, SwitchPolicy};
use crate::rng::Rng;
use crate::scenario::registry::{check_params, parse_params, Params};
use crate::scenario::{AutoAmount, ScenarioError, Time};
use crate::time::SimTime;
use agent::{Agent, AgentConfig, BetaMode};
use serde::{Deserialize, Serialize};

/// A number, or the word "auto".
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OrAuto<T> {
    Value(T),
    Word(String),
}

impl<T: Copy> OrAuto<T> {
    pub(crate) fn get(&self, key: &str) -> Result<Option<T>, ScenarioError> {
        match self {
            OrAuto::Value(v) => Ok(Some(*v)),
            OrAuto::Word(w) if w == "auto" => Ok(None),
            OrAuto::Word(w) => Err(ScenarioError::new(
                key,
                format!("must be a number or \"auto\", got \"{w}\""),
            )),
        }
    }
}

/// `lb.faca`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FacaParams {
    /// Each probing host sends a round of probes this often.
    pub probe_interval: Time,
    /// A destination is probed while a flow to it starts within this many intervals.
    pub probe_rounds: u32,
    /// Distinct EVs of a destination's first (discovery) round; "auto": 8 per path to it.
    pub probe_evs: OrAuto<u32>,
    /// k of FaCa §5.4 eq. 3, per microsecond; "auto": 1 / (2 · probe_interval).
    pub k: OrAuto<f64>,
    /// β (FaCa §5.4 eq. 1): "used" (bytes in flight) or "capacity" (bottleneck capacity × delay).
    pub beta: BetaMode,
    /// A probe's size on leaving its host, and what each switch's INT record adds.
    pub probe_bytes: u32,
    pub record_bytes: u32,
    /// Flows smaller than this are not probed for nor placed: they keep their
    /// random EV, as under ECMP. "auto": what the sender's NIC carries in one
    /// probe interval (a flow that ends before a probe round could pay off).
    #[serde(default = "auto_amount")]
    pub min_flow: AutoAmount,
}

fn auto_amount() -> AutoAmount {
    AutoAmount::new("auto")
}

impl FacaParams {
    /// The smallest flow FaCa places (`min_flow`) for a sender whose NIC runs
    /// at `nic_rate`: "auto" is what that NIC carries in one probe interval.
    pub fn min_flow_bytes(&self, nic_rate: crate::time::Rate, mtu: u64, bdp: u64) -> Result<u64, ScenarioError> {
        let auto = nic_rate.bytes_in(self.probe_interval.value);
        self.min_flow
            .bytes_or(auto, mtu, bdp)
            .map_err(|e| ScenarioError::new("lb.faca.min_flow", e))
    }
}

impl Params for FacaParams {
    fn validate(&self, key: &str) -> Result<(), ScenarioError> {
        if self.probe_interval.value == SimTime::ZERO {
            return Err(ScenarioError::new(format!("{key}.probe_interval"), "must be positive"));
        }
        if self.probe_rounds == 0 {
            return Err(ScenarioError::new(format!("{key}.probe_rounds"), "must be at least 1"));
        }
        if let Some(0) = self.probe_evs.get(&format!("{key}.probe_evs"))? {
            return Err(ScenarioError::new(format!("{key}.probe_evs"), "must be at least 1"));
        }
        if let Some(k) = self.k.get(&format!("{key}.k"))? {
            if !(k.is_finite() && k >= 0.0) {
                return Err(ScenarioError::new(
                    format!("{key}.k"),
                    format!("must be a finite number ≥ 0 (per microsecond), got {k}"),
                ));
            }
        }
        if matches!(self.min_flow.value, Some(crate::scenario::AmountValue::Percent(_))) {
            return Err(ScenarioError::new(
                format!("{key}.min_flow"),
                "must be an amount of data, like \"256KB\", or \"auto\"",
            ));
        }
        if self.probe_bytes < 64 {
            return Err(ScenarioError::new(
                format!("{key}.probe_bytes"),
                "must be at least 64 (a minimal Ethernet frame)",
            ));
        }
        Ok(())
    }
}

/// A FaCa flow's balancer: one EV for the whole flow, as ECMP, but the
/// host's agent pins it when the flow starts. The random EV it is built
/// with is what a flow keeps when no probe has come back yet.
#[derive(Clone)]
pub struct Faca {
    ev: u16,
}

impl Faca {
    /// The flow's EV (pinned, or drawn at random when nothing was known).
    pub fn ev(&self) -> u16 {
        self.ev
    }
}

impl LoadBalancer for Faca {
    fn next_ev(&mut self, _now: SimTime, _rng: &mut Rng, _stats: &mut LbStats) -> u16 {
        self.ev
    }
    fn pin(&mut self, ev: u16) {
        self.ev = ev;
    }
}

struct Builder {
    params: FacaParams,
    common: LbCommon,
    store: int::SharedStore,
}

impl LbBuilder for Builder {
    fn balancer(&self, _base_rtt: SimTime, rng: &mut Rng) -> Lb {
        Lb::Faca(Faca {
            ev: rng.below(self.common.entropy_space as u64) as u16,
        })
    }
    fn switch_policy(&self, _site: &PolicySite) -> Option<Box<dyn SwitchPolicy>> {
        let p = &self.params;
        Some(Box::new(FacaInt::new(
            self.store.clone(),
            p.probe_interval.value,
            p.record_bytes,
        )))
    }
    fn host_agent(&self, net: &Network, flows: AgentFlows, class: Option<u8>) -> Option<Box<dyn HostAgent>> {
        if flows.is_empty() {
            return None;
        }
        let (p, c) = (&self.params, &self.common);
        let interval = p.probe_interval.value;
        let cfg = AgentConfig {
            interval,
            probe_rounds: p.probe_rounds,
            probe_evs: p.probe_evs.get("lb.faca.probe_evs").ok().flatten(),
            shape: net.shape,
            // No k in FaCa §5.4: a time constant 1/k of two probe intervals (docs/faca.md).
            k: p.k
                .get("lb.faca.k")
                .ok()
                .flatten()
                .unwrap_or(1.0 / (2.0 * interval.as_us_f64())),
            beta: p.beta,
            probe_bytes: p.probe_bytes,
            record_bytes: p.record_bytes,
            entropy_space: c.entropy_space,
            flow_load_cap: c.bdp,
            seed: c.seed,
            class: class.expect("FaCa's probes have a route class"),
        };
        let nic_rate: Vec<crate::time::Rate> = net.hosts.iter().map(|h| net.ports[h.nic as usize].rate).collect();
        // Only flows worth a probe round are placed (`lb.faca.min_flow`; checked in `prepare`).
        let min_bytes = |src: u32| {
            p.min_flow_bytes(nic_rate[src as usize], c.mtu, c.bdp)
                .unwrap_or(u64::MAX)
        };
        let placed: Vec<_> = flows
            .iter()
            .filter(|(_, f)| f.size >= min_bytes(f.src))
            .copied()
            .collect();
        let short = (flows.len() - placed.len()) as u64;
        if placed.is_empty() {
            return None;
        }
        Some(Box::new(Agent::new(cfg, self.store.clone(), nic_rate, &placed, short)))
    }
}

fn prepare(params: Option<&toml::Value>, c: &LbCommon) -> Result<Box<dyn LbBuilder>, ScenarioError> {
    let p: FacaParams = parse_params(params, "lb.faca")?;
    crate::scenario::units::check_timer("lb.faca.probe_interval", &p.probe_interval, c.shortest_timer)?;
    // An explicit min_flow is checked here, once, rather than defaulted flow by flow.
    p.min_flow
        .bytes_or(0, c.mtu, c.bdp)
        .map_err(|e| ScenarioError::new("lb.faca.min_flow", e))?;
    // A discovery round probes this many distinct EVs: there are only entropy_space of them.
    if let Some(n) = p.probe_evs.get("lb.faca.probe_evs")?.filter(|&n| n > c.entropy_space) {
        return Err(ScenarioError::new(
            "lb.faca.probe_evs",
            format!(
                "{n} distinct EVs per discovery round, but lb.entropy_space has only {}",
                c.entropy_space
            ),
        ));
    }
    Ok(Box::new(Builder {
        params: p,
        common: *c,
        store: agent::new_store(),
    }))
}

pub const ENTRY: LbEntry = LbEntry {
    name: "faca",
    label: "FaCa",
    color: "#637939", // olive
    switch_side: false,
    int_probes: true,
    reorders: false,
    presets: &[(
        "reps_paper",
        r#"
probe_interval = "20us"   # not in FaCa: chosen so probes stay < 1 % of a NIC (docs/faca.md)
probe_rounds = 3          # a destination is probed from 3 intervals before a flow to it starts
probe_evs = "auto"        # discovery: 8 distinct EVs per path to the destination (FaCa §5.5: source ports map to paths)
k = "auto"                # FaCa §5.4 eq. 3 gives no k: 1/k = two probe intervals
beta = "used"             # FaCa §5.4 eq. 1, B = used bandwidth: idle paths weigh nothing
probe_bytes = 64          # a minimal frame; not in FaCa
record_bytes = 16         # one INT hop record: switch id, port, queue delay, rate/utilisation; not in FaCa
min_flow = "auto"         # not in FaCa (its evaluation places elephant flows): flows under one probe interval at line rate keep ECMP's EV
"#,
    )],
    check: check_params::<FacaParams>,
    prepare,
};
