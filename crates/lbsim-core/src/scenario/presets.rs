//! Presets: the built-in layers (`presets/*.toml`, plus each registered
//! load balancer's and congestion control's own values) every scenario
//! starts from, and how a user's table is merged on top of them.

use super::ScenarioError;

const PRESET_PAPER: &str = include_str!("../../presets/reps_paper.toml");
const PRESET_ARTIFACT: &str = include_str!("../../presets/reps_artifact.toml");
const PRESET_LOSSLESS: &str = include_str!("../../presets/rdma_lossless.toml");
const PRESET_IRN: &str = include_str!("../../presets/rdma_irn.toml");

/// Tables the user's file replaces whole instead of merging key by key:
/// their keys depend on `kind`, so a preset's keys must not leak in.
pub(super) const REPLACED_WHOLE: &[&str] = &["workload"];

pub fn preset_names() -> &'static [&'static str] {
    &["reps_paper", "reps_artifact", "rdma_lossless", "rdma_irn"]
}

/// A preset's chain of layers, the base first, with each layer's file.
fn preset_chain(name: &str) -> Option<&'static [(&'static str, &'static str)]> {
    const PAPER: (&str, &str) = ("reps_paper", PRESET_PAPER);
    const ARTIFACT: (&str, &str) = ("reps_artifact", PRESET_ARTIFACT);
    const LOSSLESS: (&str, &str) = ("rdma_lossless", PRESET_LOSSLESS);
    const IRN: (&str, &str) = ("rdma_irn", PRESET_IRN);
    match name {
        "reps_paper" => Some(&[PAPER]),
        "reps_artifact" => Some(&[PAPER, ARTIFACT]),
        "rdma_lossless" => Some(&[PAPER, LOSSLESS]),
        "rdma_irn" => Some(&[PAPER, LOSSLESS, IRN]),
        _ => None,
    }
}

/// A preset as one table: each layer's file, then each registered part's
/// values for that layer under its own table (`lb.<name>`, `cc.<name>`).
pub(super) fn preset_table(name: &str) -> Result<toml::Table, ScenarioError> {
    let Some(chain) = preset_chain(name) else {
        return Err(ScenarioError::new(
            "preset",
            format!("unknown preset \"{name}\"; known: {}", preset_names().join(", ")),
        ));
    };
    let mut t = toml::Table::new();
    for (layer, file) in chain {
        merge(&mut t, file.parse().expect("built-in preset parses"), "");
        let parts = crate::lb::REGISTRY.iter().map(|e| ("lb", e.name, e.presets));
        let parts = parts.chain(crate::cc::REGISTRY.iter().map(|e| ("cc", e.name, e.presets)));
        for (section, part, presets) in parts {
            for (_, text) in presets.iter().filter(|(l, _)| l == layer) {
                let values: toml::Table = text.parse().expect("built-in part preset parses");
                let mut wrapped = toml::Table::new();
                wrapped.insert(part.to_string(), toml::Value::Table(values));
                let mut outer = toml::Table::new();
                outer.insert(section.to_string(), toml::Value::Table(wrapped));
                merge(&mut t, outer, "");
            }
        }
    }
    Ok(t)
}

/// The preset a user table builds on.
pub(super) fn preset_name(user: &toml::Table) -> Result<String, ScenarioError> {
    match user.get("preset") {
        None => Ok(default_preset()),
        Some(toml::Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ScenarioError::new("preset", "must be a string")),
    }
}

/// Merge `over` into `base` key by key (`prefix`: the dotted path of `base`);
/// a table in `REPLACED_WHOLE` replaces the base's instead.
pub(super) fn merge(base: &mut toml::Table, over: toml::Table, prefix: &str) {
    for (k, v) in over {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !REPLACED_WHOLE.contains(&path.as_str()) => {
                merge(b, o, &path)
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The preset of a file that names none.
pub(super) fn default_preset() -> String {
    "reps_paper".into()
}
