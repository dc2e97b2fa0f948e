//! Simulated time, rates and sizes. Time is integer picoseconds so the event
//! line never touches floating point.

use std::fmt;

/// A point in (or span of) simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000_000)
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl std::ops::Add for SimTime {
    type Output = SimTime;
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0 + o.0)
    }
}
impl std::ops::AddAssign for SimTime {
    fn add_assign(&mut self, o: SimTime) {
        self.0 += o.0
    }
}
impl std::ops::Sub for SimTime {
    type Output = SimTime;
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0 - o.0)
    }
}
impl std::ops::Mul<u64> for SimTime {
    type Output = SimTime;
    fn mul(self, k: u64) -> SimTime {
        SimTime(self.0 * k)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us_f64())
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Self {
        Rate(g * 1_000_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` onto a link of this rate, rounded up to a
    /// whole picosecond.
    pub fn serialization(self, bytes: u64) -> SimTime {
        let bits = bytes as u128 * 8 * 1_000_000_000_000;
        SimTime(bits.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes this rate carries in `t`.
    pub fn bytes_in(self, t: SimTime) -> u64 {
        (self.0 as u128 * t.0 as u128 / 8 / 1_000_000_000_000) as u64
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Gbps", self.0 as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_400g() {
        // 4096 B at 400 Gb/s = 81.92 ns.
        assert_eq!(Rate::gbps(400).serialization(4096), SimTime(81_920));
        // 4150 B at 400 Gb/s = 83 ns (REPS artifact packet size).
        assert_eq!(Rate::gbps(400).serialization(4150), SimTime(83_000));
        assert_eq!(Rate::gbps(400).bytes_in(SimTime::from_us(1)), 50_000);
    }
}
