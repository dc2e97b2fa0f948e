//! Quantities written with their unit in scenario files: times ("500ns"),
//! rates ("400Gbps") and amounts of data ("8MiB", "101pkt", "1.5bdp", "20%").
//! They serialize back to the same text, so a resolved scenario reads as
//! the user wrote it.

use crate::time::{Rate, SimTime};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

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
    Ok(SimTime((n * scale).round() as u64))
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
    Ok(Rate((n * scale).round() as u64))
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
    let bytes = |k: f64| Ok(AmountValue::Bytes((n * k).round() as u64));
    match unit {
        "" | "B" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "KiB" => bytes(1024.0),
        "MiB" => bytes(1024.0 * 1024.0),
        "GiB" => bytes(1024.0 * 1024.0 * 1024.0),
        "pkt" | "pkts" => Ok(AmountValue::Packets(n)),
        "bdp" | "BDP" => Ok(AmountValue::Bdp(n)),
        "%" => Ok(AmountValue::Percent(n)),
        _ => Err(format!(
            "unknown unit \"{unit}\" in \"{s}\"; use B, KiB, MiB, GiB, KB, MB, GB, pkt, bdp or %"
        )),
    }
}

impl Amount {
    /// Resolve to bytes. `pkt` is a full packet, `bdp` the network's BDP,
    /// `percent_of` the reference for percentages (None where they make no sense).
    pub fn bytes(&self, pkt: u64, bdp: u64, percent_of: Option<u64>) -> Result<u64, String> {
        Ok(match self.value {
            AmountValue::Bytes(b) => b,
            AmountValue::Packets(p) => (p * pkt as f64).round() as u64,
            AmountValue::Bdp(x) => (x * bdp as f64).round() as u64,
            AmountValue::Percent(x) => match percent_of {
                Some(r) => (x / 100.0 * r as f64).round() as u64,
                None => return Err(format!("\"{}\": a percentage is not meaningful here", self.text)),
            },
        })
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
