//! Scenario files: TOML, parsed with serde, unknown keys rejected, every
//! error naming the key. A scenario is its preset (every key given a value)
//! with the user's file merged on top, so no value comes from a silent
//! default in code; the merged result is what a run writes as its resolved
//! scenario.
//!
//! This file holds the top-level schema and its checks; `presets` the
//! built-in layers and merging, `workload` the `[workload]` table and its
//! per-kind keys, `failures` the failure entries, `units` amounts, rates and
//! times, `registry` the per-part tables of `[lb]` and `[cc]`.

pub mod failures;
mod presets;
pub mod queue;
pub mod registry;
mod transport;
pub mod units;
mod workload;

pub use crate::workload::collective::Layout;
pub use failures::{Direction, Failure, FailureKind, LinkSet, Routing};
pub use presets::preset_names;
use presets::{merge, preset_name, preset_table, REPLACED_WHOLE};
pub use queue::{EcnAt, FullDrop, Queue, QueueKind, SharedQueue};
pub use registry::{CcKind, LbKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
pub use transport::{warnings, AckInfo, IrnRecovery, RdmaTransport, RttSamples, RtxOrder, Transport, TransportKind};
pub use units::{Amount, AmountValue, AutoAmount, AutoTime, NeverTime, RateSpec, Time};
pub use workload::{Arrivals, LoadBasis, Release, TracePattern, Workload, WorkloadKind};

/// A problem with a scenario, naming the key (dotted path) it concerns.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub key: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        let (key, mut message) = (key.into(), message.into());
        // Shown as "key: message": a message that starts with its key would say it twice.
        let rest = message.strip_prefix(key.as_str()).filter(|_| !key.is_empty());
        if let Some(rest) = rest.and_then(|r| r.strip_prefix(": ").or_else(|| r.strip_prefix(' '))) {
            message = rest.to_string();
        }
        ScenarioError {
            key,
            message: compact_numbers(&message),
        }
    }
}

/// Numbers longer than any integer a scenario holds (a float's plain form:
/// 1e308 prints with 309 digits) are echoed in scientific notation.
fn compact_numbers(message: &str) -> String {
    const LONGEST_INTEGER: usize = 20; // u64::MAX has 20 digits
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let len = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        let number = &tail[..len];
        match number.parse::<f64>() {
            Ok(x) if number.len() > LONGEST_INTEGER => out.push_str(&format!("{x:e}")),
            _ => out.push_str(number),
        }
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Which preset the file builds on: "reps_paper" (default), "reps_artifact", "rdma_lossless" or "rdma_irn".
    #[serde(default = "presets::default_preset")]
    pub preset: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(deserialize_with = "seed")]
    pub seed: u64,
    pub stop_at: Time,
    /// Stop early when no payload arrives for this many RTOs (or base RTTs,
    /// or MTU serializations on the slowest link, whichever is longest)
    /// while started flows are unfinished (after failures settle); 0: never.
    pub stall_rtos: u32,
    pub topology: Topology,
    pub packet: PacketSizes,
    pub queue: Queue,
    pub transport: Transport,
    pub cc: Cc,
    pub lb: Lb,
    pub workload: Workload,
    pub routing: Routing,
    pub observe: Observe,
    pub metrics: Metrics,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
    /// Static asymmetry: links that run at another rate from the start (the
    /// same target keys as a failure, plus `rate`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_overrides: Vec<Failure>,
}

/// `[metrics]`: how a run measures what it reports.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// When a flow has completed; its ideal FCT ends at the same event.
    pub fct: FctEnd,
}

/// The event that ends a flow's completion time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FctEnd {
    /// The last payload byte reaches the receiver (REPS and its artifact's htsim).
    #[default]
    LastByte,
    /// The sender holds the ACK of the last byte (the ConWeave artifact's ns-3: its FCT and its
    /// "standalone" ideal both include the round trip).
    LastAck,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// 2 (ToR + spine) or 3 (ToR + aggregation + core).
    pub tiers: u8,
    pub hosts: u32,
    /// Switch port count.
    pub radix: u32,
    /// k in k:1 at the ToR: k times more host-facing ports than uplinks.
    pub oversubscription: u32,
    pub link_rate: RateSpec,
    pub link_latency: Time,
    pub switch_latency: Time,
    /// Overrides of what radix and oversubscription imply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_tor: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplinks_per_tor: Option<u32>,
    /// Ports of a ToR when they differ from `radix` (ConWeave's k = 8 fat tree: 12-port ToRs
    /// with 8 servers and 4 uplinks under 8-port aggregation and core switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tor_radix: Option<u32>,
    /// 3 tiers: core-facing uplinks per aggregation switch, when fewer than
    /// `radix / 2` (k:1 at the aggregation layer; the REPS artifact's 8:1
    /// 1024-host tree, `fat_tree_1024_8os.topo`, is 4:1 at the ToR and 2:1 here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agg_uplinks: Option<u32>,
}

impl Topology {
    /// Ports of a ToR: `tor_radix`, else `radix`.
    pub fn tor_ports(&self) -> u32 {
        self.tor_radix.unwrap_or(self.radix)
    }

    /// How errors about a ToR's ports name its port count.
    pub fn tor_radix_key(&self) -> &'static str {
        if self.tor_radix.is_some() {
            "topology.tor_radix"
        } else {
            "topology.radix"
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketSizes {
    /// Full data packet on the wire, header included.
    pub mtu: Amount,
    pub header: Amount,
    /// ACK and NACK size.
    pub ack: Amount,
}

/// `[cc]`: the algorithm (`kind`, a `cc::REGISTRY` name), the keys window
/// algorithms share, and each algorithm's own table (`cc.<name>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cc {
    pub kind: CcKind,
    pub initial_cwnd: Amount,
    pub max_cwnd: Amount,
    /// Whose BDP a "bdp" in `max_cwnd` is: the network's (its longest path) or each flow's own pair's.
    pub max_cwnd_basis: BdpBasis,
    /// DCTCP variant: ignore ECN marks while their per-ACK average stays below 0.25 (ARCANE §3.0.1).
    pub wait_to_decrease: bool,
    /// Weight of the newest ACK in that average.
    pub wtd_alpha: f64,
    /// `cc.<name>` tables, each checked by its algorithm's registry entry.
    #[serde(flatten)]
    pub tables: BTreeMap<String, toml::Value>,
}

const CC_KEYS: &[&str] = &[
    "kind",
    "initial_cwnd",
    "max_cwnd",
    "max_cwnd_basis",
    "wait_to_decrease",
    "wtd_alpha",
];

/// The round trip a "bdp" in `cc.max_cwnd` is taken over (`cc.max_cwnd_basis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BdpBasis {
    /// The network's longest path: one cap for every flow.
    Network,
    /// The flow's own source and destination: a pair under one ToR gets about half
    /// (the REPS artifact: uec.cpp `initNscc` and `update_base_rtt`).
    Pair,
}

/// `[lb]`: the balancer (`kind`, a `lb::REGISTRY` name), the header's
/// entropy space, mixed traffic, and each balancer's own table (`lb.<name>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lb {
    pub kind: LbKind,
    pub entropy_space: u32,
    /// `lb.<name>` tables, each checked by its balancer's registry entry.
    #[serde(flatten)]
    pub tables: BTreeMap<String, toml::Value>,
    /// Mixed traffic: a fraction of the flows, drawn at random, use another
    /// load balancer (REPS Fig. 5: 10 % ECMP); the rest use `kind`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<LbShare>,
}

const LB_KEYS: &[&str] = &["kind", "entropy_space", "mix"];

impl Lb {
    /// A balancer's own table, if the scenario has one.
    pub fn table(&self, kind: LbKind) -> Option<&toml::Value> {
        self.tables.get(kind.name())
    }

    /// Every kind the scenario runs: `kind` and the mix's.
    pub fn kinds(&self) -> impl Iterator<Item = LbKind> + '_ {
        std::iter::once(self.kind).chain(self.mix.iter().map(|m| m.kind))
    }
}

impl Cc {
    /// An algorithm's own table, if the scenario has one.
    pub fn table(&self, kind: CcKind) -> Option<&toml::Value> {
        self.tables.get(kind.name())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LbShare {
    pub kind: LbKind,
    pub fraction: f64,
}

/// Time series and samples a run records (all off by default).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observe {
    /// Ports whose bytes sent and queue depth are sampled every bucket: a
    /// link name, or a switch name for its uplinks (a top-tier switch: its downlinks).
    pub ports: Vec<String>,
    /// Sampling interval (REPS Fig. 1: 20 us).
    pub bucket: Time,
    /// Packets dropped per cause per bucket.
    pub drops: bool,
    /// One RTT sample per ACK, per flow.
    pub rtt: bool,
    /// Shared-buffer occupancy per switch per bucket (`queue.kind = "shared"`).
    pub buffers: bool,
    /// Switch-side balancers' state per switch per bucket (ConWeave's reorder queues and memory).
    pub switch_lb: bool,
    /// Host-side balancers' state over time (FaCa: every change of a path's load estimate).
    pub host_lb: bool,
    /// One row per port at the end of the run: what it sent, what its queue
    /// dropped, its largest backlog (table `port_totals`).
    pub port_totals: bool,
}

/// `seed`: TOML integers are 64-bit signed, so a seed is 0 ..= i64::MAX
/// (serde's own message would say "u64").
fn seed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct V;
    const WANT: &str = "an integer from 0 to 9223372036854775807";
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(WANT)
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<u64, E> {
            u64::try_from(n).map_err(|_| E::custom(format!("must be {WANT}, got {n}")))
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<u64, E> {
            match i64::try_from(n) {
                Ok(_) => Ok(n),
                Err(_) => Err(E::custom(format!("must be {WANT} (TOML's largest integer), got {n}"))),
            }
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<u64, E> {
            Err(E::custom(format!(
                "must be {WANT} (TOML's largest integer), got \"{s}\""
            )))
        }
        fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<u64, E> {
            Err(E::custom(format!("must be {WANT}, got {n}")))
        }
    }
    d.deserialize_any(V)
}

/// Parse a value given on a command line: TOML syntax if it parses as a
/// value ("8", "true", "[1,2]", "\"x\""), otherwise a bare string ("reps", "8MiB").
pub fn parse_override_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Set a dotted key ("lb.kind") in a TOML table, creating tables on the way.
pub fn set_dotted(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ScenarioError::new(key, "not a valid dotted key"));
    }
    let mut t = table;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        // "failures[0]": an entry of a list of tables the file gives.
        if let Some((name, index)) = p.strip_suffix(']').and_then(|p| p.split_once('[')) {
            let at = parts[..=i].join(".");
            let list = match t.get_mut(name) {
                Some(toml::Value::Array(list)) => list,
                _ => {
                    return Err(ScenarioError::new(
                        at,
                        format!("the file has no list {name:?} to index"),
                    ))
                }
            };
            let n = list.len();
            let entry = index.parse::<usize>().ok().and_then(|k| list.get_mut(k));
            t = match entry {
                Some(toml::Value::Table(inner)) => inner,
                _ => {
                    return Err(ScenarioError::new(
                        at,
                        format!("is not an entry of {name} (the file gives {n}, numbered from 0)"),
                    ))
                }
            };
            continue;
        }
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = match entry {
            toml::Value::Table(inner) => inner,
            _ => {
                return Err(ScenarioError::new(
                    parts[..=i].join("."),
                    "is a value, not a table; cannot set a key inside it",
                ))
            }
        };
    }
    t.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

impl Scenario {
    /// Parse a scenario file's text, with `overrides` (dotted key, value text) applied on top.
    pub fn from_toml_with(text: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let mut user: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ScenarioError::new("", format!("not valid TOML: {}", e.message().trim())))?;
        for (k, v) in overrides {
            // An override inside a table the file replaces whole (workload)
            // changes one key of the preset's table when the file has none,
            // instead of replacing that table by a single key.
            let top = k.split('.').next().unwrap_or_default();
            if k.contains('.') && REPLACED_WHOLE.contains(&top) && !user.contains_key(top) {
                if let Some(t) = preset_table(&preset_name(&user)?)?.remove(top) {
                    user.insert(top.to_string(), t);
                }
            }
            set_dotted(&mut user, k, parse_override_value(v))?;
        }
        Self::from_table(user)
    }

    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_toml_with(text, &[])
    }

    /// Build from a user table (merged over its preset).
    pub fn from_table(user: toml::Table) -> Result<Scenario, ScenarioError> {
        let mut merged = preset_table(&preset_name(&user)?)?;
        let rts_from_preset = user.get("transport").and_then(|t| t.get("timeout_rts")).is_none();
        let ratio_from_user = user.get("topology").and_then(|t| t.get("oversubscription")).is_some();
        merge(&mut merged, user, "");
        let de = toml::Value::Table(merged);
        let mut scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            let msg = e.inner().to_string();
            // toml ends its message with " in `key`": the error names the key already.
            let msg = msg
                .trim()
                .strip_suffix(&format!("in `{key}`"))
                .unwrap_or(msg.trim())
                .trim_end();
            ScenarioError::new(if key == "." { String::new() } else { key }, msg.to_string())
        })?;
        // A preset turns the timeout RTS on where it means something (a
        // window CC on "sack"); only a user's own `true` elsewhere is an error.
        let t = &mut scenario.transport;
        if rts_from_preset && !Transport::timeout_rts_fits(t.kind, scenario.cc.kind) {
            t.timeout_rts = false;
        }
        scenario.check_keys()?;
        if ratio_from_user {
            scenario.topology.check_ratio()?;
        }
        Ok(scenario)
    }

    /// The resolved scenario as TOML text (every value explicit).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("scenario serializes")
    }

    /// Checks that need no topology: keys that do not apply, obvious ranges.
    fn check_keys(&self) -> Result<(), ScenarioError> {
        if let Some(name) = &self.name {
            check_name(name)?;
        }
        self.workload.check_keys()?;
        self.queue.check()?;
        self.check_parts()?;
        if !(2..=3).contains(&self.topology.tiers) {
            return Err(ScenarioError::new(
                "topology.tiers",
                format!("must be 2 or 3, got {}", self.topology.tiers),
            ));
        }
        if self.lb.entropy_space == 0 || self.lb.entropy_space > 65536 {
            return Err(ScenarioError::new("lb.entropy_space", "must be between 1 and 65536"));
        }
        self.transport.check(&self.queue, self.cc.kind)?;
        let c = &self.cc;
        if !(c.wtd_alpha > 0.0 && c.wtd_alpha <= 1.0) {
            return Err(ScenarioError::new(
                "cc.wtd_alpha",
                format!("must be in (0, 1], got {}", c.wtd_alpha),
            ));
        }
        Ok(())
    }

    /// The per-part tables of `[lb]` and `[cc]`, each checked by its registry entry.
    fn check_parts(&self) -> Result<(), ScenarioError> {
        let lb = |name: &str| LbKind::named(name).map(|k| crate::lb::entry(k).check);
        registry::check_tables("lb", &self.lb.tables, LB_KEYS, lb, &LbKind::known())?;
        let cc = |name: &str| CcKind::named(name).map(|k| crate::cc::entry(k).check);
        registry::check_tables("cc", &self.cc.tables, CC_KEYS, cc, &CcKind::known())
    }
}

impl Topology {
    /// With both `hosts_per_tor` and `uplinks_per_tor` given (by the file or
    /// its preset), they set the ToR's ratio: an `oversubscription` the user
    /// gives must agree, or it would be ignored.
    fn check_ratio(&self) -> Result<(), ScenarioError> {
        let (Some(u), Some(h)) = (self.uplinks_per_tor, self.hosts_per_tor) else {
            return Ok(());
        };
        let k = self.oversubscription as u64;
        if h as u64 == u as u64 * k {
            return Ok(());
        }
        Err(ScenarioError::new(
            "topology.oversubscription",
            format!(
                "{k}:1 disagrees with topology.hosts_per_tor = {h} and topology.uplinks_per_tor = {u} (from the file or \
                 its preset), which set the ToR's ratio when both are given; leave oversubscription out or make them agree"
            ),
        ))
    }
}

/// The longest scenario name: it names a results directory.
pub const MAX_NAME_LEN: usize = 100;

/// A scenario's `name` becomes a directory name (`results/<name>`), so it
/// must be one plain path component: letters, digits, spaces, `-`, `_`,
/// `.`, `+` and `=`, not starting with a dot or a space nor ending with a
/// space, at most `MAX_NAME_LEN` characters.
fn check_name(name: &str) -> Result<(), ScenarioError> {
    let bad = |msg: String| Err(ScenarioError::new("name", msg));
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
        return bad(format!(
            "must be 1 to {MAX_NAME_LEN} characters, got {}",
            name.chars().count()
        ));
    }
    if let Some(c) = name.chars().find(|&c| !(c.is_alphanumeric() || " -_.+=".contains(c))) {
        return bad(format!(
            "{name:?} has {c:?}; a name becomes a directory name, so use letters, digits, spaces, '-', '_', '.', '+' and '='"
        ));
    }
    if name.starts_with('.') {
        return bad(format!(
            "{name:?} starts with '.': a name becomes a directory name, which would be hidden"
        ));
    }
    if name.starts_with(' ') || name.ends_with(' ') {
        return bad(format!("{name:?} starts or ends with a space"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_the_paper_preset() {
        let s = Scenario::from_toml("").unwrap();
        assert_eq!(s.topology.hosts, 128);
        assert_eq!(s.transport.rto.value, Some(crate::time::SimTime::from_us(70)));
        let a = Scenario::from_toml("preset = \"reps_artifact\"").unwrap();
        assert_eq!(a.transport.rto.value, None);
        assert_eq!(a.topology.hosts, 128, "artifact preset builds on the paper's");
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Scenario::from_toml("[topology]\nradixx = 4").unwrap_err();
        assert_eq!(e.key, "topology.radixx");
        assert!(e.message.contains("radixx"), "{e}");
        let e = Scenario::from_toml("[lb]\nkind = \"magic\"").unwrap_err();
        assert_eq!(e.key, "lb.kind");
        let e = Scenario::from_toml("[topology]\nlink_latency = 500").unwrap_err();
        assert_eq!(e.key, "topology.link_latency");
        assert!(e.message.contains("unit"), "{e}");
    }

    #[test]
    fn overrides_and_round_trip() {
        let s = Scenario::from_toml_with("", &[("lb.kind".into(), "ops".into()), ("seed".into(), "9".into())]).unwrap();
        assert_eq!(s.lb.kind.name(), "ops");
        assert_eq!(s.seed, 9);
        let again = Scenario::from_toml(&s.to_toml()).unwrap();
        assert_eq!(again.to_toml(), s.to_toml());
        // An override inside the workload changes one key of the preset's workload.
        let w = Scenario::from_toml_with("", &[("workload.size".into(), "1MiB".into())]).unwrap();
        assert_eq!(w.workload.kind, WorkloadKind::Permutation);
        assert_eq!(w.workload.size.unwrap().value, AmountValue::Bytes(1 << 20));
        let e = Scenario::from_toml_with("", &[("seed.x".into(), "1".into())]).unwrap_err();
        assert_eq!(e.key, "seed");
    }
}
