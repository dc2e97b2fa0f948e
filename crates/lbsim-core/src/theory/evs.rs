//! Entropy-space imbalance: why a small entropy value set (EVS) unbalances
//! OPS (REPS Appendix B, Fig. 16; §4.5.2).
//!
//! Each of f flows sprays over all E entropy values of the EVS; a switch maps
//! each (flow, entropy) pair onto one of its n uplinks with its ECMP hash.
//! Every pair is one ball (App. B: "we throw for each active flow a number of
//! balls equal to the EVS size, with each ball being a unique EV"), so the
//! load imbalance of the uplinks is λ = l/(fE/n) − 1, l the largest uplink
//! count [52]. With fE/n ≫ log n it tends to 0; with fE ≈ n it is
//! Θ(log n / log log n).
//!
//! The hash is the switches' own ([`ecmp_hash`], [`hash_to_index`]), not an
//! idealised uniform draw: flow j is the packet header (src = j, dst = a
//! random host of the trial), distinct per flow as App. B notes ("each flow
//! is from a different sender"), and the per-switch salt is the one the
//! engine gives switch 0 of a scenario with the trial's seed.

use super::{bad, check_bins, stream, TheoryError};
use crate::net::switch::{ecmp_hash, hash_to_index};
use crate::rng::{Rng, StreamTag};

/// Largest EVS: the 16-bit entropy field (REPS §2.1: a UDP source port).
pub const MAX_EVS: u32 = 1 << 16;
/// Largest number of flows (distinct source ids in the hash key's top bits).
pub const MAX_FLOWS: u32 = 1 << 24;

/// One trial: uplink counts' maximum and mean, and the imbalance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvsTrial {
    pub max_load: u64,
    pub mean_load: f64,
    /// λ = max/mean − 1 (App. B).
    pub imbalance: f64,
}

/// Check the parameters of [`trial`].
pub fn validate(uplinks: usize, flows: u32, evs: u32) -> Result<(), TheoryError> {
    check_bins("uplinks", uplinks)?;
    if !(1..=MAX_FLOWS).contains(&flows) {
        return Err(bad("flows", format!("must be in 1..={MAX_FLOWS}, got {flows}")));
    }
    if !(1..=MAX_EVS).contains(&evs) {
        return Err(bad(
            "evs",
            format!("must be in 1..={MAX_EVS} (a 16-bit entropy field), got {evs}"),
        ));
    }
    Ok(())
}

/// The uplink counts of one trial: every (flow, entropy) pair hashed by a switch.
pub fn uplink_counts(uplinks: usize, flows: u32, evs: u32, seed: u64) -> Result<Vec<u64>, TheoryError> {
    validate(uplinks, flows, evs)?;
    // The salt the engine gives switch 0 under this seed (topo.rs).
    let salt = Rng::new(seed, StreamTag::SwitchSalt, 0).next_u64();
    let mut rng = stream(seed, 3);
    let mut counts = vec![0u64; uplinks];
    for src in 0..flows {
        let dst = rng.below(1 << 24) as u32;
        for ev in 0..evs {
            let h = ecmp_hash(src, dst, ev as u16, salt);
            counts[hash_to_index(h, uplinks)] += 1;
        }
    }
    Ok(counts)
}

/// One trial of the App. B experiment. Deterministic in `seed`.
pub fn trial(uplinks: usize, flows: u32, evs: u32, seed: u64) -> Result<EvsTrial, TheoryError> {
    let counts = uplink_counts(uplinks, flows, evs, seed)?;
    let max_load = counts.iter().copied().max().unwrap_or(0);
    let mean_load = flows as f64 * evs as f64 / uplinks as f64;
    Ok(EvsTrial {
        max_load,
        mean_load,
        imbalance: max_load as f64 / mean_load - 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_the_switch_ecmp_choices() {
        // Switch::ecmp_pick picks group[hash_to_index(ecmp_hash(src, dst, ev, salt), len)];
        // the model's counts are exactly those picks for each (flow, entropy) packet,
        // with the salt topo.rs gives switch 0.
        let salt = Rng::new(9, StreamTag::SwitchSalt, 0).next_u64();
        let counts = uplink_counts(8, 3, 50, 9).unwrap();
        let mut rng = stream(9, 3);
        let mut want = vec![0u64; 8];
        for src in 0..3u32 {
            let dst = rng.below(1 << 24) as u32;
            for ev in 0..50u16 {
                let key = (src as u64) << 40 ^ (dst as u64) << 16 ^ ev as u64;
                let h = crate::rng::mix64(key ^ salt);
                want[((h as u128 * 8) >> 64) as usize] += 1;
            }
        }
        assert_eq!(counts, want);
        assert_eq!(counts.iter().sum::<u64>(), 150);
        // A different seed is a different switch salt and different headers.
        assert_ne!(uplink_counts(8, 3, 50, 10).unwrap(), counts);
    }

    #[test]
    fn imbalance_definition() {
        // One ball on 4 uplinks: max 1, mean 1/4, λ = 3 (App. B: l/(m/n) − 1).
        let t = trial(4, 1, 1, 1).unwrap();
        assert_eq!((t.max_load, t.mean_load, t.imbalance), (1, 0.25, 3.0));
        // One uplink: never imbalanced.
        assert_eq!(trial(1, 5, 100, 1).unwrap().imbalance, 0.0);
    }

    #[test]
    fn larger_evs_balance_better() {
        // App. B, Fig. 16b: 32 uplinks, 32 flows: 2^16 EVs under 1 %, 2^8 over 10 % (means over seeds).
        let mean = |evs: u32| {
            (1..=20u64)
                .map(|s| trial(32, 32, evs, s).unwrap().imbalance)
                .sum::<f64>()
                / 20.0
        };
        let (small, large) = (mean(1 << 8), mean(1 << 16));
        assert!(small > 0.10 && large < 0.01, "2^8: {small}, 2^16: {large}");
    }

    #[test]
    fn errors_name_the_parameter() {
        assert_eq!(trial(0, 1, 1, 1).unwrap_err().param, "uplinks");
        assert_eq!(trial(4, 0, 1, 1).unwrap_err().param, "flows");
        assert_eq!(trial(4, 1, 0, 1).unwrap_err().param, "evs");
        assert_eq!(trial(4, 1, MAX_EVS + 1, 1).unwrap_err().param, "evs");
    }
}
