//! Seeded random streams. Every component that makes random choices owns
//! its own stream derived from the scenario seed and a (tag, index) pair,
//! so adding a component never reshuffles anyone else's draws.

/// SplitMix64 finaliser: a bijective 64-bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Stream tags: one per kind of component owning randomness.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum StreamTag {
    Workload = 1,
    Port = 2,
    Flow = 3,
    SwitchSalt = 4,
    Failure = 5,
    /// Random loss on a port (apart from its ECN draws).
    PortFault = 6,
    /// Random picks of `[[rate_overrides]]`.
    Asymmetry = 7,
    /// Which flows of a mixed workload use which load balancer.
    LbMix = 8,
    /// A switch's tie-breaks between equally short queues (adaptive routing).
    SwitchTieBreak = 9,
    /// A message's subflows: index (message << 32) | subflow, apart from
    /// `Flow`'s so unsplit flows keep their draws.
    Subflow = 10,
    /// A switch's LetFlow draws (one uplink per flowlet).
    LetFlow = 11,
    /// A switch's DRILL samples.
    Drill = 12,
    /// A switch's CONGA tie-breaks between equally congested uplinks.
    Conga = 13,
    /// A switch's ConWeave path draws.
    ConWeave = 20,
    /// A host's FaCa agent: its discovery EVs and Flowing & Jumping draws.
    Faca = 21,
}

/// A small, fast PRNG (SplitMix64 sequence). 8 bytes of state, so every
/// port and flow can afford its own.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64, tag: StreamTag, index: u64) -> Self {
        let s = mix64(seed ^ mix64((tag as u64) << 56 ^ mix64(index.wrapping_add(0x9e37_79b9))));
        Rng { state: s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// Uniform integer in `0..n` (n > 0), by multiply-shift (bias < 2^-32 for
    /// the small n used here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform float in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7, StreamTag::Flow, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::new(7, StreamTag::Flow, 3);
        let mut y = Rng::new(7, StreamTag::Flow, 4);
        let mut z = Rng::new(7, StreamTag::Port, 3);
        let (x0, y0, z0) = (x.next_u64(), y.next_u64(), z.next_u64());
        assert!(x0 != y0 && x0 != z0 && y0 != z0);
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut r = Rng::new(1, StreamTag::Workload, 0);
        let mut counts = [0u32; 8];
        for _ in 0..80_000 {
            counts[r.below(8) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }
}
