//! The golden regression suite: small scenarios (`tests/golden/*.toml`)
//! covering every load balancer, congestion control, queue discipline (PFC
//! included), failure kind and workload, each with the digest of its flow
//! table checked in
//! (`tests/golden/digests.txt`). A change that moves a digest fails here
//! until the digest is updated in the same commit, with a sentence saying
//! why on its line. `LBSIM_GOLDEN=update cargo test --release --test golden`
//! rewrites the digests that moved, marking their reason "TODO: say why",
//! which this test refuses until it is replaced.

mod common;
use common::{golden_dir as dir, golden_scenarios};
use lbsim_core::{metrics, run, Scenario};
use std::collections::BTreeMap;
use std::path::Path;

/// name -> (digest, reason), from digests.txt.
fn checked_in() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(dir().join("digests.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.splitn(3, char::is_whitespace).filter(|p| !p.is_empty());
            let name = parts.next().unwrap().to_string();
            let digest = parts.next().unwrap_or("").to_string();
            let reason = l.splitn(3, ' ').nth(2).unwrap_or("").trim().to_string();
            (name, (digest, reason))
        })
        .collect()
}

fn digest_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let out = run(&s, Some(&dir())).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    metrics::flow_table(&out.flows).digest()
}

#[test]
fn flow_tables_match_their_checked_in_digests() {
    let files = golden_scenarios();
    assert!(files.len() >= 20, "the golden scenarios are there");
    let known = checked_in();
    let mut now = BTreeMap::new();
    let mut moved = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let d = digest_of(f);
        match known.get(&name) {
            Some((old, reason)) if *old == d => now.insert(name, (d, reason.clone())),
            Some((old, _)) => {
                moved.push(format!("{name}: {old} -> {d}"));
                now.insert(name, (d, "TODO: say why".into()))
            }
            None => {
                moved.push(format!("{name}: new -> {d}"));
                now.insert(name, (d, "TODO: say why".into()))
            }
        };
    }
    if std::env::var("LBSIM_GOLDEN").as_deref() == Ok("update") && !moved.is_empty() {
        let mut text = String::from(HEADER);
        for (name, (d, reason)) in &now {
            text += &format!("{name} {d} {reason}\n");
        }
        std::fs::write(dir().join("digests.txt"), text).unwrap();
    }
    assert!(
        moved.is_empty(),
        "golden flow tables moved:\n  {}\nIf the change is intended, run LBSIM_GOLDEN=update cargo test --release \
         --test golden and replace each \"TODO: say why\" in tests/golden/digests.txt with a sentence saying why, \
         in the same commit.",
        moved.join("\n  ")
    );
    let unexplained: Vec<&String> = known
        .iter()
        .filter(|(_, (_, r))| r.is_empty() || r.starts_with("TODO"))
        .map(|(n, _)| n)
        .collect();
    assert!(
        unexplained.is_empty(),
        "digests without a reason in tests/golden/digests.txt: {unexplained:?}"
    );
    let stale: Vec<&String> = known.keys().filter(|n| !now.contains_key(*n)).collect();
    assert!(stale.is_empty(), "digests of scenarios that no longer exist: {stale:?}");
}

const HEADER: &str = "# Golden flow-table digests (tests/golden.rs): <scenario> <digest> <why it has this value>.\n\
# A commit that moves a digest updates its line here and says why in the reason.\n";
