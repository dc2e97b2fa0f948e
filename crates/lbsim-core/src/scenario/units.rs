//! Quantities written with their unit in scenario files: times ("500ns"),
//! rates ("400Gbps") and amounts of data ("8MiB", "101pkt", "1.5bdp", "20%").
//! They serialize back to the same text, so a resolved scenario reads as
//! the user wrote it.

use crate::time::{Rate, SimTime};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The largest time a scenario may give: 10^6 s (10^18 ps, about 11.6 days).
/// The engine's clock is a u64 of picoseconds (at most about 1.8·10^7 s); this
/// bound leaves room for sums of a few times (a start plus a duration plus a
/// horizon) without overflow.
pub const MAX_TIME: SimTime = SimTime(1_000_000_000_000_000_000);
/// The slowest and fastest link rates: 1 kb/s and 1 Pb/s. Within them a
/// packet's serialization is at least 1 ps and bytes-in-time products fit.
pub const MIN_RATE: Rate = Rate(1_000);
pub const MAX_RATE: Rate = Rate(1_000_000_000_000_000);
/// The largest amount of data: 2^50 bytes (1 PiB). Far beyond what fits in
/// memory as packets (see docs/scenarios.md, "Limits"); sums of many such
/// amounts stay within the engine's u64 byte counters.
pub const MAX_BYTES: u64 = 1 << 50;

fn split_unit(s: &str) -> (f64, &str) {
    let s = s.trim();
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    // "1e3ns": keep the exponent; "5e" would be caught by the parse below.
    let (num, unit) = s.split_at(idx);
    (num.parse::<f64>().unwrap_or(f64::NAN), unit.trim())
}

/// A time span such as "500ns", "70us", "1.5ms", "2s" or "never" (only where allowed).
#[derive(Clone, Debug, PartialEq)]
pub struct Time {
    pub text: String,
    pub value: SimTime,
}

pub fn parse_time(s: &str) -> Result<SimTime, String> {
    let (n, unit) = split_unit(s);
    let scale = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => {
            return Err(format!(
                "expected a time with a unit (ps, ns, us, ms, s), such as \"500ns\"; got \"{s}\""
            ))
        }
    };
    if !n.is_finite() || n < 0.0 {
        return Err(format!("expected a non-negative time such as \"500ns\"; got \"{s}\""));
    }
    let ps = (n * scale).round();
    if ps > MAX_TIME.0 as f64 {
        return Err(format!(
            "\"{s}\" is longer than the largest time lbsim simulates (1000000s)"
        ));
    }
    Ok(SimTime(ps as u64))
}

/// A link rate such as "400Gbps" or "100Gbps".
#[derive(Clone, Debug, PartialEq)]
pub struct RateSpec {
    pub text: String,
    pub value: Rate,
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let (n, unit) = split_unit(s);
    let scale = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => {
            return Err(format!(
                "expected a rate with a unit (Mbps, Gbps, Tbps), such as \"400Gbps\"; got \"{s}\""
            ))
        }
    };
    if !n.is_finite() || n <= 0.0 {
        return Err(format!("expected a positive rate such as \"400Gbps\"; got \"{s}\""));
    }
    let bps = (n * scale).round();
    if bps < MIN_RATE.0 as f64 || bps > MAX_RATE.0 as f64 {
        return Err(format!(
            "\"{s}\" is outside the rates lbsim simulates (1Kbps to 1000Tbps)"
        ));
    }
    Ok(Rate(bps as u64))
}

/// An amount of data: bytes ("4096B", "8MiB", or a bare integer), packets
/// ("101pkt", of full MTU size), bandwidth-delay products ("1.5bdp") or a
/// percentage of a reference amount ("20%", for ECN thresholds).
#[derive(Clone, Debug, PartialEq)]
pub struct Amount {
    pub text: String,
    pub value: AmountValue,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AmountValue {
    Bytes(u64),
    Packets(f64),
    Bdp(f64),
    Percent(f64),
}

pub fn parse_amount(s: &str) -> Result<AmountValue, String> {
    let (n, unit) = split_unit(s);
    if !n.is_finite() || n < 0.0 {
        return Err(format!(
            "expected an amount such as \"8MiB\", \"101pkt\", \"1.5bdp\" or \"20%\"; got \"{s}\""
        ));
    }
    let bytes = |k: f64| whole_bytes(n * k, s).map(AmountValue::Bytes);
    match unit {
        "" | "B" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "TB" => bytes(1e12),
        "KiB" => bytes(1024.0),
        "MiB" => bytes(1024.0 * 1024.0),
        "GiB" => bytes(1024.0 * 1024.0 * 1024.0),
        "TiB" => bytes(1024.0 * 1024.0 * 1024.0 * 1024.0),
        "pkt" | "pkts" if n <= MAX_BYTES as f64 => Ok(AmountValue::Packets(n)),
        "bdp" | "BDP" if n <= MAX_BYTES as f64 => Ok(AmountValue::Bdp(n)),
        "pkt" | "pkts" | "bdp" | "BDP" => Err(too_much(s)),
        "%" if n <= 100.0 => Ok(AmountValue::Percent(n)),
        "%" => Err(format!("\"{s}\": a percentage must be between 0% and 100%")),
        _ => Err(format!(
            "unknown unit \"{unit}\" in \"{s}\"; use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, pkt, bdp or %"
        )),
    }
}

fn too_much(s: &str) -> String {
    format!("\"{s}\" is more than the largest amount lbsim simulates (1PiB, 2^50 bytes)")
}

/// A byte count written with a unit: a whole number of bytes, at most `MAX_BYTES`.
fn whole_bytes(b: f64, s: &str) -> Result<u64, String> {
    if b > MAX_BYTES as f64 {
        return Err(too_much(s));
    }
    // Decimal fractions of a unit ("1.5KB", "0.1MB") are whole bytes up to float rounding.
    if (b - b.round()).abs() > 1e-6 * b.max(1.0) {
        return Err(format!("\"{s}\" is {b} bytes, not a whole number of bytes"));
    }
    Ok(b.round() as u64)
}

impl Amount {
    /// Resolve to bytes. `pkt` is a full packet, `bdp` the network's BDP,
    /// `percent_of` the reference for percentages (None where they make no sense).
    pub fn bytes(&self, pkt: u64, bdp: u64, percent_of: Option<u64>) -> Result<u64, String> {
        let b = match self.value {
            AmountValue::Bytes(b) => return Ok(b),
            AmountValue::Packets(p) => p * pkt as f64,
            AmountValue::Bdp(x) => x * bdp as f64,
            AmountValue::Percent(x) => match percent_of {
                Some(r) => x / 100.0 * r as f64,
                None => return Err(format!("\"{}\": a percentage is not meaningful here", self.text)),
            },
        };
        if b.round() > MAX_BYTES as f64 {
            return Err(format!(
                "\"{}\" is {b:.0} bytes here, more than the largest amount lbsim simulates (1PiB)",
                self.text
            ));
        }
        Ok(b.round() as u64)
    }
}

impl Amount {
    /// Checks for an amount that is not relative to a reference (no
    /// percentage) and, when `positive`, not zero; errors name `key`.
    pub fn check_absolute(&self, key: &str, positive: bool) -> Result<(), super::ScenarioError> {
        let zero = match self.value {
            AmountValue::Bytes(b) => b == 0,
            AmountValue::Packets(x) | AmountValue::Bdp(x) => x == 0.0,
            AmountValue::Percent(_) => {
                let msg = format!("\"{}\": a percentage is not meaningful here", self.text);
                return Err(super::ScenarioError::new(key, msg));
            }
        };
        if positive && zero {
            return Err(super::ScenarioError::new(key, "must be positive"));
        }
        Ok(())
    }
}

/// The shortest period a timer that re-arms itself may have (a failure's
/// recurrence, a retransmission timeout, a probing round, a rate-control
/// timer): one full packet's serialization at the hosts' link rate. A timer
/// faster than a host can send a packet only multiplies events: at 1 ps a run
/// of a millisecond needs 10^9 of them per flow and never reaches its horizon.
pub fn shortest_timer(mtu: u64, host_rate: Rate) -> SimTime {
    host_rate.serialization(mtu)
}

/// Checks a self-re-arming timer against `shortest_timer` (`floor`); the error names `key`.
pub fn check_timer(key: &str, t: &Time, floor: SimTime) -> Result<(), super::ScenarioError> {
    if t.value >= floor {
        return Ok(());
    }
    Err(super::ScenarioError::new(
        key,
        format!(
            "\"{}\" is shorter than one packet's serialization at the hosts' link rate ({:.3} ns: packet.mtu at \
             topology.link_rate), the shortest period lbsim accepts for a timer that re-arms itself",
            t.text,
            floor.ps() as f64 / 1e3
        ),
    ))
}

macro_rules! text_quantity {
    ($ty:ident, $parse:ident, $expect:literal, $allow_int:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s)
                            .map(|value| $ty {
                                text: s.to_string(),
                                value,
                            })
                            .map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, n: i64) -> Result<$ty, E> {
                        if $allow_int && n >= 0 {
                            self.visit_str(&format!("{n}B"))
                        } else {
                            Err(E::custom(format!(
                                "expected {}; got the bare number {n} (add a unit)",
                                $expect
                            )))
                        }
                    }
                    fn visit_f64<E: de::Error>(self, n: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "expected {}; got the bare number {n} (add a unit)",
                            $expect
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.text)
            }
        }
        impl $ty {
            pub fn new(text: &str) -> Self {
                $ty {
                    text: text.to_string(),
                    value: $parse(text).expect("valid literal"),
                }
            }
        }
    };
}

text_quantity!(Time, parse_time, "a time such as \"500ns\"", false);
text_quantity!(RateSpec, parse_rate, "a rate such as \"400Gbps\"", false);
text_quantity!(
    Amount,
    parse_amount,
    "an amount such as \"8MiB\", \"101pkt\" or \"1.5bdp\"",
    true
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_time("500ns").unwrap(), SimTime(500_000));
        assert_eq!(parse_time("41.87us").unwrap(), SimTime(41_870_000));
        assert_eq!(parse_time("10ms").unwrap(), SimTime(10_000_000_000));
        assert!(parse_time("500").is_err());
        assert_eq!(parse_rate("400Gbps").unwrap(), Rate::gbps(400));
        assert_eq!(parse_amount("8MiB").unwrap(), AmountValue::Bytes(8 << 20));
        assert_eq!(parse_amount("101pkt").unwrap(), AmountValue::Packets(101.0));
        assert_eq!(parse_amount("1.5bdp").unwrap(), AmountValue::Bdp(1.5));
        assert!(parse_amount("3 parsecs").is_err());
    }

    /// Issue 20, defect 2: values beyond the engine's integer types were cast
    /// (saturating) and then wrapped in arithmetic; they are refused at the
    /// boundary, which itself is accepted.
    #[test]
    fn quantities_are_checked_against_the_engines_ranges() {
        assert_eq!(parse_time("1000000s").unwrap(), MAX_TIME);
        for t in ["1000000.001s", "20000000s", "6148914.69124s", "1e30s"] {
            let e = parse_time(t).unwrap_err();
            assert!(e.contains("largest time"), "{t}: {e}");
        }
        assert_eq!(parse_rate("1000Tbps").unwrap(), MAX_RATE);
        assert_eq!(parse_rate("1Kbps").unwrap(), MIN_RATE);
        for r in ["1e30Gbps", "1001Tbps", "999bps", "0.5bps"] {
            assert!(parse_rate(r).unwrap_err().contains("outside"), "{r}");
        }
        assert_eq!(parse_amount("1048576GiB").unwrap(), AmountValue::Bytes(MAX_BYTES));
        for a in ["1048577GiB", "1e30B", "1e30pkt", "1e16bdp"] {
            assert!(parse_amount(a).unwrap_err().contains("largest amount"), "{a}");
        }
        // Fractional bytes are refused; decimal fractions of a unit that are whole bytes are not.
        assert!(parse_amount("1.5B").unwrap_err().contains("whole number"));
        assert!(parse_amount("0.3KiB").unwrap_err().contains("whole number"));
        assert_eq!(parse_amount("1.5KB").unwrap(), AmountValue::Bytes(1500));
        assert_eq!(parse_amount("0.1MB").unwrap(), AmountValue::Bytes(100_000));
        assert_eq!(parse_amount("100%").unwrap(), AmountValue::Percent(100.0));
        assert!(parse_amount("150%").unwrap_err().contains("between 0% and 100%"));
        // Relative amounts resolve within range or say so.
        let a = Amount::new("1000000bdp");
        assert!(a.bytes(4096, 1 << 40, None).unwrap_err().contains("largest amount"));
    }
}

/// A time that may also be "auto" (derived from the topology); `None` is auto.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoTime {
    pub text: String,
    pub value: Option<SimTime>,
}

pub fn parse_auto_time(s: &str) -> Result<Option<SimTime>, String> {
    if s.trim() == "auto" {
        Ok(None)
    } else {
        parse_time(s).map(Some).map_err(|e| format!("{e}, or \"auto\""))
    }
}

text_quantity!(AutoTime, parse_auto_time, "a time such as \"70us\" or \"auto\"", false);

/// A time that may also be "never"; `None` is never.
#[derive(Clone, Debug, PartialEq)]
pub struct NeverTime {
    pub text: String,
    pub value: Option<SimTime>,
}

pub fn parse_never_time(s: &str) -> Result<Option<SimTime>, String> {
    if s.trim() == "never" {
        Ok(None)
    } else {
        parse_time(s).map(Some).map_err(|e| format!("{e}, or \"never\""))
    }
}

text_quantity!(
    NeverTime,
    parse_never_time,
    "a time such as \"10ms\" or \"never\"",
    false
);

/// An amount that may also be "auto" (derived from the topology); `None` is auto.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoAmount {
    pub text: String,
    pub value: Option<AmountValue>,
}

impl AutoAmount {
    /// In bytes (as `Amount::bytes`), or `auto` when it is "auto".
    pub fn bytes_or(&self, auto: u64, pkt: u64, bdp: u64) -> Result<u64, String> {
        match self.value {
            None => Ok(auto),
            Some(value) => Amount {
                text: self.text.clone(),
                value,
            }
            .bytes(pkt, bdp, None),
        }
    }
}

pub fn parse_auto_amount(s: &str) -> Result<Option<AmountValue>, String> {
    if s.trim() == "auto" {
        Ok(None)
    } else {
        parse_amount(s).map(Some).map_err(|e| format!("{e}, or \"auto\""))
    }
}

text_quantity!(
    AutoAmount,
    parse_auto_amount,
    "an amount such as \"30KB\" or \"auto\"",
    true
);
