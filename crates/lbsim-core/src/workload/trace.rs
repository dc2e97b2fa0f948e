//! Datacenter traces (REPS §4.2): flow sizes drawn from a size distribution
//! (a built-in CDF or a file), arriving at every host at a target load.

use super::cdf::{self, SizeCdf};
use super::{NetInfo, Traffic};
use crate::rng::{Rng, StreamTag};
use crate::scenario::{Arrivals, LoadBasis, ScenarioError, TracePattern, Workload};
use crate::time::{Rate, SimTime};
use crate::transport::FlowSpec;
use std::path::Path;

/// Where, when and how fast a trace's flows arrive.
#[derive(Clone, Copy, Debug)]
pub struct TraceParams {
    pub hosts: u32,
    /// Hosts under one ToR (consecutive numbers), for `TracePattern::Partners`.
    pub hosts_per_tor: u32,
    /// Each host's link rate.
    pub rate: Rate,
    /// Offered load per host, a fraction of `rate`.
    pub load: f64,
    pub start: SimTime,
    pub duration: SimTime,
    pub arrivals: Arrivals,
    pub pattern: TracePattern,
    /// `TracePattern::Partners`: the share of flows to the partner.
    pub partner_share: f64,
}

/// The REPS artifact's share of trace flows to a host's partner:
/// `get_dst` sends a flow elsewhere when `random.randint(0, 100) < 5`, 5 of
/// its 101 values (traffic_gen_utils.py).
const ARTIFACT_PARTNER_SHARE: f64 = 96.0 / 101.0;

/// Each host's partner: a permutation in which no host maps to itself nor,
/// where the tree allows, to a host under its own ToR (hosts `hosts_per_tor`
/// to a ToR, in order). Senders in random order each take a random receiver
/// not yet taken from another ToR (the REPS artifact's greedy matching,
/// traffic_gen_utils.py `generate_traffic_matrix`). Where only receivers
/// under its own ToR (or itself) are left, the artifact settles for one;
/// lbsim trades with an earlier sender so that both pairs cross ToRs.
fn partners(hosts: u32, hosts_per_tor: u32, rng: &mut Rng) -> Vec<u32> {
    let tor = |h: u32| h / hosts_per_tor.max(1);
    let mut order: Vec<u32> = (0..hosts).collect();
    rng.shuffle(&mut order);
    let mut free: Vec<u32> = (0..hosts).collect();
    let mut partner = vec![u32::MAX; hosts as usize];
    for (done, &src) in order.iter().enumerate() {
        if let Some(d) = take_random(&mut free, rng, |d| tor(d) != tor(src)) {
            partner[src as usize] = d;
            continue;
        }
        // Left: receivers under src's own ToR, perhaps src itself. Give one
        // of them to an earlier sender e from another ToR whose receiver
        // src may take instead.
        let d = take_random(&mut free, rng, |d| d != src).unwrap_or(src);
        let earlier = &order[..done];
        let fits = |e: u32| tor(e) != tor(d) && tor(partner[e as usize]) != tor(src);
        let k = earlier.iter().filter(|&&e| fits(e)).count();
        let e = if k > 0 {
            *earlier
                .iter()
                .filter(|&&e| fits(e))
                .nth(rng.below(k as u64) as usize)
                .unwrap()
        } else if d == src {
            earlier[rng.below(done as u64) as usize] // any trade keeps it a derangement
        } else {
            partner[src as usize] = d; // one ToR: nothing crosses
            continue;
        };
        partner[src as usize] = std::mem::replace(&mut partner[e as usize], d);
    }
    partner
}

/// Remove and return a uniformly random element of `free` that is `ok`, if any.
fn take_random(free: &mut Vec<u32>, rng: &mut Rng, ok: impl Fn(u32) -> bool) -> Option<u32> {
    // A few blind draws first: almost always one is ok, and the draw stays
    // uniform over the ok ones; else count them (near the end of the matching).
    for _ in 0..32 {
        if free.is_empty() {
            return None;
        }
        let i = rng.below(free.len() as u64) as usize;
        if ok(free[i]) {
            return Some(free.swap_remove(i));
        }
    }
    let n = free.iter().filter(|&&d| ok(d)).count();
    if n == 0 {
        return None;
    }
    let k = rng.below(n as u64) as usize;
    let i = free.iter().enumerate().filter(|&(_, &d)| ok(d)).nth(k)?.0;
    Some(free.swap_remove(i))
}

/// Flows with sizes from `cdf` arriving at every sending host from `start` for
/// `duration`, offering `load` × `rate` on average, each to a uniformly random
/// other host (`Uniform`) or server (`ClientServer`: hosts below `hosts / 2`
/// send to the others). Each host draws from its own stream (so hosts are
/// independent and adding one does not move the others' flows). Flows are
/// ordered by start.
pub fn trace(cdf: &SizeCdf, p: &TraceParams, seed: u64) -> Vec<FlowSpec> {
    let TraceParams {
        hosts,
        rate,
        load,
        start,
        duration,
        arrivals,
        pattern,
        hosts_per_tor,
        partner_share,
    } = *p;
    let (senders, servers) = match pattern {
        TracePattern::Uniform | TracePattern::Partners => (hosts, 0),
        TracePattern::ClientServer => (hosts / 2, hosts - hosts / 2),
    };
    let partner = match pattern {
        TracePattern::Partners => partners(hosts, hosts_per_tor, &mut Rng::new(seed, StreamTag::Workload, 0)),
        _ => Vec::new(),
    };
    let uniform = |src: u32, rng: &mut Rng| {
        let d = rng.below(hosts as u64 - 1) as u32;
        d + u32::from(d >= src)
    };
    let mean_gap_s = cdf.mean() * 8.0 / (load * rate.bps() as f64);
    let end = start + duration;
    let mut flows = Vec::new();
    for src in 0..senders {
        let mut rng = Rng::new(seed, StreamTag::Workload, 1 + src as u64);
        let mut t = start.ps() as f64;
        loop {
            let size = cdf.sample(&mut rng);
            let at = match arrivals {
                // Exponential gap, mean = mean size at the load's rate (ConWeave traffic_gen.py).
                Arrivals::Poisson => {
                    t += -(1.0 - rng.unit()).ln() * mean_gap_s * 1e12;
                    t
                }
                // Back to back at the load's rate: the next flow waits this one's size (REPS artifact traffic_gen.py).
                Arrivals::Deterministic => {
                    let at = t;
                    t += size as f64 * 8.0 / (load * rate.bps() as f64) * 1e12;
                    at
                }
            };
            if at >= end.ps() as f64 {
                break;
            }
            let dst = match pattern {
                TracePattern::Uniform => uniform(src, &mut rng),
                TracePattern::ClientServer => senders + rng.below(servers as u64) as u32,
                TracePattern::Partners if rng.unit() < partner_share => partner[src as usize],
                TracePattern::Partners => uniform(src, &mut rng),
            };
            flows.push(FlowSpec {
                src,
                dst,
                size,
                start: SimTime(at as u64),
            });
        }
    }
    flows.sort_by_key(|f| (f.start, f.src));
    flows
}

/// `workload.cdf`: a built-in distribution, else a CDF file (relative to `base_dir`).
pub(crate) fn size_cdf(name: &str, base_dir: Option<&Path>) -> Result<SizeCdf, ScenarioError> {
    if let Some(c) = SizeCdf::builtin(name) {
        return Ok(c);
    }
    let path = base_dir.map_or_else(|| Path::new(name).to_path_buf(), |d| d.join(name));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let known: Vec<&str> = cdf::BUILTIN.iter().map(|(n, _)| *n).collect();
        ScenarioError::new(
            "workload.cdf",
            format!(
                "\"{name}\" is neither a built-in ({}) nor a readable file: {e}",
                known.join(", ")
            ),
        )
    })?;
    SizeCdf::parse(&text).map_err(|m| ScenarioError::new("workload.cdf", format!("{}: {m}", path.display())))
}

/// `workload.kind = "trace"`: the flows arriving from `start` for
/// `duration`, measured until `cooldown` after the arrivals end.
pub(super) fn traffic(
    w: &Workload,
    net: NetInfo,
    start: SimTime,
    seed: u64,
    base_dir: Option<&Path>,
) -> Result<Traffic, ScenarioError> {
    let name = w.cdf.as_ref().expect("checked by the scenario");
    let cdf = size_cdf(name, base_dir)?;
    let load = w.load.expect("checked by the scenario");
    if !(load > 0.0 && load <= 1.0) {
        return Err(ScenarioError::new(
            "workload.load",
            format!("must be in (0, 1], got {load}"),
        ));
    }
    if net.hosts < 2 {
        return Err(ScenarioError::new("topology.hosts", "a trace needs at least 2 hosts"));
    }
    let duration = w.duration.as_ref().expect("checked by the scenario").value;
    let arrivals = w.arrivals.unwrap_or(Arrivals::Poisson);
    // ConWeave run.py: a "50 %" load on a 2:1 tree offers each host 25 %.
    let host_load = match w.load_basis.unwrap_or(LoadBasis::Host) {
        LoadBasis::Host => load,
        LoadBasis::Fabric => load * net.fabric_share,
    };
    let pattern = w.pattern.unwrap_or(TracePattern::Uniform);
    let partner_share = match (pattern, w.partner_share) {
        (TracePattern::Partners, share) => share.unwrap_or(ARTIFACT_PARTNER_SHARE),
        (_, Some(_)) => {
            return Err(ScenarioError::new(
                "workload.partner_share",
                "applies only to workload.pattern = \"partners\"",
            ))
        }
        (_, None) => 0.0,
    };
    if !(0.0..=1.0).contains(&partner_share) {
        return Err(ScenarioError::new(
            "workload.partner_share",
            format!("must be in [0, 1], got {partner_share}"),
        ));
    }
    let p = TraceParams {
        hosts: net.hosts,
        hosts_per_tor: net.hosts_per_tor,
        rate: net.host_rate,
        load: host_load,
        start,
        duration,
        arrivals,
        pattern,
        partner_share,
    };
    let mut t = Traffic::plain(trace(&cdf, &p, seed));
    t.measure_until = w.cooldown.as_ref().map(|c| start + duration + c.value);
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offered load: the bytes of the flows that start in the window, over
    /// hosts × rate × window, is the target within 2 % (issue "traces").
    #[test]
    fn trace_offers_the_target_load() {
        let rate = Rate::gbps(400);
        // Windows long enough that the sum's standard error is under 0.5 %.
        for (name, arrivals, window) in [
            ("websearch", Arrivals::Poisson, SimTime::from_us(200_000)),
            ("alistorage2019", Arrivals::Poisson, SimTime::from_us(20_000)),
            ("websearch", Arrivals::Deterministic, SimTime::from_us(200_000)),
        ] {
            let cdf = SizeCdf::builtin(name).unwrap();
            for load in [0.4, 0.8] {
                let p = TraceParams {
                    hosts: 128,
                    rate,
                    load,
                    start: SimTime::ZERO,
                    duration: window,
                    arrivals,
                    pattern: TracePattern::Uniform,
                    hosts_per_tor: 8,
                    partner_share: 0.0,
                };
                let flows = trace(&cdf, &p, 3);
                let bytes: u64 = flows.iter().map(|f| f.size).sum();
                let offered = bytes as f64 * 8.0 / (128.0 * rate.bps() as f64 * window.as_us_f64() * 1e-6);
                assert!(
                    (offered / load - 1.0).abs() < 0.02,
                    "{name} {arrivals:?} {load}: offered {offered}"
                );
                assert!(flows.iter().all(|f| f.src != f.dst && f.dst < 128 && f.start < window));
            }
        }
        let cdf = SizeCdf::builtin("solar2022").unwrap();
        let p = TraceParams {
            hosts: 16,
            rate,
            load: 0.5,
            start: SimTime::ZERO,
            duration: SimTime::from_us(100),
            arrivals: Arrivals::Poisson,
            pattern: TracePattern::Uniform,
            hosts_per_tor: 8,
            partner_share: 0.0,
        };
        let gen = || trace(&cdf, &p, 1);
        let a = gen();
        assert_eq!(a, gen(), "same seed, same trace");
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
    }

    /// The REPS artifact's pairing: a permutation with no host paired with
    /// itself nor, where the tree allows, with a host under its own ToR (16
    /// ToRs of 8; 2 ToRs of 8: a perfect matching across; 1 ToR: a derangement).
    #[test]
    fn partners_are_a_permutation_across_tors() {
        for (hosts, per_tor) in [(128, 8), (16, 8), (8, 8), (2, 2), (1024, 32)] {
            for seed in 0..20 {
                let p = partners(hosts, per_tor, &mut Rng::new(seed, StreamTag::Workload, 0));
                let mut seen = vec![false; hosts as usize];
                for (src, &dst) in p.iter().enumerate() {
                    assert!(
                        dst < hosts && dst != src as u32 && !seen[dst as usize],
                        "{hosts} {seed}: {p:?}"
                    );
                    seen[dst as usize] = true;
                    if hosts > per_tor {
                        assert_ne!(dst / per_tor, src as u32 / per_tor, "{hosts} {seed}: {src} -> {dst}");
                    }
                }
            }
        }
    }

    /// Pattern "partners": each flow goes to its host's partner with the
    /// given share (within 5 standard deviations), the others anywhere
    /// else; so receivers are about as loaded as their partner's sender,
    /// not hit by chance as under "uniform".
    #[test]
    fn partner_flows_follow_the_share() {
        let cdf = SizeCdf::builtin("websearch").unwrap();
        let mut p = TraceParams {
            hosts: 128,
            hosts_per_tor: 8,
            rate: Rate::gbps(400),
            load: 0.8,
            start: SimTime::ZERO,
            duration: SimTime::from_us(5_000),
            arrivals: Arrivals::Deterministic,
            pattern: TracePattern::Partners,
            partner_share: ARTIFACT_PARTNER_SHARE,
        };
        let flows = trace(&cdf, &p, 42);
        let pair = partners(128, 8, &mut Rng::new(42, StreamTag::Workload, 0));
        let n = flows.len() as f64;
        let to_partner = flows.iter().filter(|f| f.dst == pair[f.src as usize]).count() as f64;
        let q = ARTIFACT_PARTNER_SHARE;
        // A stray flow may still land on the partner (1 in 127).
        let expect = q + (1.0 - q) / 127.0;
        let sd = (n * expect * (1.0 - expect)).sqrt();
        assert!((to_partner - n * expect).abs() < 5.0 * sd, "{to_partner} of {n}");
        assert!(flows.iter().all(|f| f.src != f.dst));
        let max_over_mean = |flows: &[FlowSpec]| {
            let mut bytes = vec![0u64; 128];
            flows.iter().for_each(|f| bytes[f.dst as usize] += f.size);
            *bytes.iter().max().unwrap() as f64 / (bytes.iter().sum::<u64>() as f64 / 128.0)
        };
        let partnered = max_over_mean(&flows);
        p.pattern = TracePattern::Uniform;
        let uniform = max_over_mean(&trace(&cdf, &p, 42));
        assert!(
            partnered < uniform,
            "busiest receiver: partners {partnered}, uniform {uniform}"
        );
    }

    /// ConWeave's testbed pattern: only the first half sends, every flow to the second half, each
    /// server about equally often, and the clients still offer the target load.
    #[test]
    fn client_server_sends_from_the_first_half_to_the_second() {
        let (hosts, rate, load, window) = (16, Rate::gbps(25), 0.4, SimTime::from_us(200_000));
        let p = TraceParams {
            hosts,
            rate,
            load,
            start: SimTime::ZERO,
            duration: window,
            arrivals: Arrivals::Poisson,
            pattern: TracePattern::ClientServer,
            hosts_per_tor: 8,
            partner_share: 0.0,
        };
        let flows = trace(&SizeCdf::builtin("solar2022").unwrap(), &p, 7);
        assert!(flows.iter().all(|f| f.src < 8 && (8..16).contains(&f.dst)));
        let mut per_server = [0u32; 8];
        flows.iter().for_each(|f| per_server[(f.dst - 8) as usize] += 1);
        let n = flows.len() as f64;
        // Each server's count within 5 standard deviations of n / 8.
        let sd = (n * (1.0 / 8.0) * (7.0 / 8.0)).sqrt();
        assert!(
            per_server.iter().all(|&c| (c as f64 - n / 8.0).abs() < 5.0 * sd),
            "{per_server:?}"
        );
        let bytes: u64 = flows.iter().map(|f| f.size).sum();
        let offered = bytes as f64 * 8.0 / (8.0 * rate.bps() as f64 * window.as_us_f64() * 1e-6);
        assert!((offered / load - 1.0).abs() < 0.03, "offered {offered}");
    }
}
