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
    /// Each host's link rate.
    pub rate: Rate,
    /// Offered load per host, a fraction of `rate`.
    pub load: f64,
    pub start: SimTime,
    pub duration: SimTime,
    pub arrivals: Arrivals,
    pub pattern: TracePattern,
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
    } = *p;
    let (senders, servers) = match pattern {
        TracePattern::Uniform => (hosts, 0),
        TracePattern::ClientServer => (hosts / 2, hosts - hosts / 2),
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
                TracePattern::Uniform => {
                    let d = rng.below(hosts as u64 - 1) as u32;
                    d + u32::from(d >= src)
                }
                TracePattern::ClientServer => senders + rng.below(servers as u64) as u32,
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
    let p = TraceParams {
        hosts: net.hosts,
        rate: net.host_rate,
        load: host_load,
        start,
        duration,
        arrivals,
        pattern: w.pattern.unwrap_or(TracePattern::Uniform),
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
        };
        let gen = || trace(&cdf, &p, 1);
        let a = gen();
        assert_eq!(a, gen(), "same seed, same trace");
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
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
