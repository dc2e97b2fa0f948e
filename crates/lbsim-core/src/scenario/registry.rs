//! How scenario keys reach registered parts (load balancers, congestion
//! controls): `lb.kind` and `cc.kind` name a registry entry, and each entry
//! reads its own table (`lb.<name>`, `cc.<name>`) with its own typed
//! parameters, so a new part brings its keys, their checks and their
//! preset values with it.

use super::ScenarioError;
use crate::{cc, lb};
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A part's typed parameters: read from its table, then checked.
pub trait Params: DeserializeOwned {
    /// Ranges and relations serde cannot express; errors name `key.field`.
    fn validate(&self, _key: &str) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// Parameters of a part that has none: its table, if given, must be empty.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params for NoParams {}

/// Read a part's table (`key` is its dotted name) into its typed
/// parameters and check them; a missing table reads as an empty one.
pub fn parse_params<P: Params>(v: Option<&toml::Value>, key: &str) -> Result<P, ScenarioError> {
    let empty = toml::Value::Table(toml::Table::new());
    let v = v.unwrap_or(&empty);
    if !v.is_table() {
        return Err(ScenarioError::new(key, "must be a table of parameters"));
    }
    let p: P = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." {
            key.to_string()
        } else {
            format!("{key}.{path}")
        };
        ScenarioError::new(key, e.inner().to_string().trim().to_string())
    })?;
    p.validate(key)?;
    Ok(p)
}

/// `parse_params` as a check, for registry entries.
pub fn check_params<P: Params>(v: &toml::Value, key: &str) -> Result<(), ScenarioError> {
    parse_params::<P>(Some(v), key).map(|_| ())
}

macro_rules! registry_kind {
    ($name:ident, $registry:path, $what:literal) => {
        /// An index into the registry, read and written as the entry's name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u8);

        impl $name {
            pub fn named(name: &str) -> Option<$name> {
                $registry
                    .iter()
                    .position(|e| e.name == name)
                    .map(|i| $name(i as u8))
            }
            pub fn name(self) -> &'static str {
                $registry[self.0 as usize].name
            }
            /// Every registered name, for error messages.
            pub fn known() -> String {
                $registry.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = String::deserialize(d)?;
                $name::named(&name).ok_or_else(|| {
                    de::Error::custom(format!(
                        concat!("unknown ", $what, " \"{}\"; known: {}"),
                        name,
                        $name::known()
                    ))
                })
            }
        }
    };
}

registry_kind!(LbKind, lb::REGISTRY, "load balancer");
registry_kind!(CcKind, cc::REGISTRY, "congestion control");

/// Check a section's per-part tables: every key that is not one of the
/// section's own must name a registered part, whose entry checks the table.
pub fn check_tables(
    section: &str,
    tables: &std::collections::BTreeMap<String, toml::Value>,
    own_keys: &[&str],
    lookup: impl Fn(&str) -> Option<fn(&toml::Value, &str) -> Result<(), ScenarioError>>,
    known: &str,
) -> Result<(), ScenarioError> {
    for (name, value) in tables {
        let key = format!("{section}.{name}");
        let Some(check) = lookup(name) else {
            return Err(ScenarioError::new(
                key,
                format!(
                    "unknown key; {section} takes {} and a table per part ({known})",
                    own_keys.join(", ")
                ),
            ));
        };
        check(value, &key)?;
    }
    Ok(())
}
