//! lbsim-core: a packet-level datacenter network simulator for studying
//! load balancing (ECMP, oblivious packet spraying, REPS, ...) on fat trees.
//!
//! ```no_run
//! let scenario = lbsim_core::Scenario::from_toml("[lb]\nkind = \"ops\"").unwrap();
//! let out = lbsim_core::run(&scenario, None).unwrap();
//! println!("max FCT {} us", out.summary.max_fct_us);
//! ```

pub mod alloc;
pub mod build;
mod cache;
pub mod cc;
pub mod engine;
pub mod event;
pub mod failure;
pub mod flowlevel;
pub mod lb;
pub mod messages;
pub mod metrics;
pub mod net;
pub mod observe;
pub mod packet;
pub mod rng;
pub mod scenario;
pub mod table;
pub mod theory;
pub mod time;
pub mod topo;
pub mod transport;
pub mod workload;

pub use engine::{LineMode, Progress, Simulation, StopReason};
pub use metrics::{Counters, FlowRecord, MessageRecord, Summary};
pub use scenario::{Scenario, ScenarioError};

use std::path::Path;

/// Everything a finished run reports.
pub struct RunOutput {
    pub scenario: Scenario,
    pub summary: Summary,
    /// One row per transport flow.
    pub flows: Vec<FlowRecord>,
    /// One row per workload message (the flows themselves unless some were split into subflows).
    pub messages: Vec<MessageRecord>,
    /// Tables beyond the flows: `messages` (when some were split), a collective's `steps`,
    /// time series (`ports`, `drops_series`, `rtt`) and `failures`.
    pub tables: Vec<table::Table>,
    pub counters: Counters,
    /// Packets still in the network when the run stopped (0 when it drained).
    pub packets_in_network: usize,
    pub stop_reason: StopReason,
    /// The run's progress when it stopped, as a progress callback would see it.
    pub progress: Progress,
    /// Why the run stopped early, in words, when the no-progress guard or the PFC watchdog stopped it.
    pub stop_note: Option<String>,
    /// What the build estimated the run would take (memory, flows, packets).
    pub estimate: build::Estimate,
    /// The switch ports ran without `TxDone` events (`LineMode`; results do not depend on it).
    pub lazy_lines: bool,
}

/// Build and run a scenario to its end.
pub fn run(scenario: &Scenario, base_dir: Option<&Path>) -> Result<RunOutput, ScenarioError> {
    run_with_progress(scenario, base_dir, u64::MAX, &mut |_| true)
}

/// Run, calling `progress` every `every` events; the callback returns false to stop.
pub fn run_with_progress(
    scenario: &Scenario,
    base_dir: Option<&Path>,
    every: u64,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutput, ScenarioError> {
    run_with(scenario, base_dir, &build::Limits::default(), every, progress)
}

/// Run within `limits` (a scenario estimated to need more memory is refused
/// before it is built), calling `progress` every `every` events. At the end
/// the engine's invariants are checked (`Simulation::invariant_violations`);
/// a violation is an engine bug and panics with the counters.
pub fn run_with(
    scenario: &Scenario,
    base_dir: Option<&Path>,
    limits: &build::Limits,
    every: u64,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> Result<RunOutput, ScenarioError> {
    let (mut sim, estimate) = build::build_with(scenario, base_dir, limits)?;
    Ok(run_built(scenario, &mut sim, estimate, every, progress))
}

/// Run a simulation built from `scenario` (by `build::build_with`, then
/// perhaps tuned: `Simulation::set_line_mode`) and collect its output.
pub fn run_built(
    scenario: &Scenario,
    sim: &mut Simulation,
    estimate: build::Estimate,
    every: u64,
    progress: &mut dyn FnMut(Progress) -> bool,
) -> RunOutput {
    let stop_reason = sim.run_with_progress(every, progress);
    sim.assert_invariants();
    let flows = sim.flow_records();
    let messages = sim.message_records();
    let mut summary = sim.summary(&messages);
    summary.warnings = scenario::warnings(scenario);
    let tables = sim.extra_tables(&messages);
    let final_progress = sim.progress();
    RunOutput {
        scenario: scenario.clone(),
        summary,
        flows,
        messages,
        tables,
        counters: sim.counters,
        packets_in_network: sim.packets_in_network(),
        stop_reason,
        progress: final_progress,
        stop_note: sim.stop_note(),
        estimate,
        lazy_lines: sim.lazy_lines(),
    }
}

impl RunOutput {
    /// Write `scenario.toml`, `summary.json`, `flows.csv` and one CSV per
    /// further table into `dir`, replacing a previous run there as a whole:
    /// the files go to a new sibling directory that then takes `dir`'s place,
    /// so no table of an earlier run is left beside the new ones. A `dir`
    /// that exists and holds something other than a run is left alone (an error).
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        write_result_dir(dir, |tmp| {
            std::fs::write(tmp.join("scenario.toml"), self.scenario.to_toml())?;
            metrics::flow_table(&self.flows).write_csv(&tmp.join("flows.csv"))?;
            for t in &self.tables {
                t.write_csv(&tmp.join(format!("{}.csv", t.name)))?;
            }
            // summary.json last: its presence marks a complete run directory.
            std::fs::write(tmp.join("summary.json"), metrics::summary_json(&self.summary))
        })
    }

    /// Every table of the run, the flow table first (unchanged below).
    pub fn all_tables(&self) -> Vec<table::Table> {
        let mut v = vec![metrics::flow_table(&self.flows)];
        v.extend(self.tables.iter().cloned());
        v
    }
}

impl flowlevel::FlowLevelOutput {
    /// Write `scenario.toml`, `flows.csv`, `ports.csv` and `summary.json`
    /// into `dir`, with the same rules as `RunOutput::write_dir`: an earlier
    /// result there is replaced whole, anything else is left alone (an error).
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        write_result_dir(dir, |tmp| {
            std::fs::write(tmp.join("scenario.toml"), self.scenario.to_toml())?;
            for t in self.tables() {
                t.write_csv(&tmp.join(format!("{}.csv", t.name)))?;
            }
            std::fs::write(tmp.join("summary.json"), self.summary_json())
        })
    }
}

/// Write a result directory whole: `write` fills a new sibling directory,
/// which then takes `dir`'s place, so no file of an earlier result is left
/// beside the new ones; a failed write leaves `dir` as it was. A `dir` that
/// holds something other than a result is left alone (an error).
fn write_result_dir(dir: &Path, write: impl FnOnce(&Path) -> std::io::Result<()>) -> std::io::Result<()> {
    check_output_dir(dir).map_err(std::io::Error::other)?;
    let (parent, name) = split_dir(dir);
    std::fs::create_dir_all(&parent)?;
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp)?;
    if let Err(e) = write(&tmp) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    replace_dir(&tmp, dir)
}

/// A directory's parent (`.` for a bare name) and its last component.
fn split_dir(dir: &Path) -> (std::path::PathBuf, String) {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = dir
        .file_name()
        .map_or("run".into(), |n| n.to_string_lossy().into_owned());
    (parent, name)
}

/// Files lbsim writes into a results directory besides its tables: the run
/// files, a report, and the plots `lbsim plot DIR` draws there.
const RESULT_FILES: &[&str] = &["scenario.toml", "summary.json", "run.json", "report.html"];
const RESULT_PLOTS: &[&str] = &["fct_cdf", "completion"];

/// The first entry of `dir` (by name) that lbsim would not have written
/// into a results directory, if any: replacing the directory would lose it.
pub fn foreign_entry(dir: &Path) -> Option<String> {
    let mut names: Vec<(String, bool)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path().is_file()))
        .collect();
    names.sort();
    let ours = |name: &str| {
        let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
        RESULT_FILES.contains(&name)
            || (matches!(ext, "csv" | "parquet") && table::TABLE_NAMES.contains(&stem))
            || (matches!(ext, "png" | "pdf") && RESULT_PLOTS.contains(&stem))
    };
    names
        .into_iter()
        .find(|(name, file)| !(*file && ours(name)))
        .map(|(n, _)| n)
}

/// Whether `dir` holds a complete run (its summary.json is written last).
pub fn is_run_dir(dir: &Path) -> bool {
    dir.join("summary.json").is_file() && dir.join("scenario.toml").is_file()
}

/// Check, before a run, that its results can be written to `dir`: it is a
/// directory that is empty or holds an earlier run (which the new one will
/// replace), or it can be created, in a place where we may write.
pub fn check_output_dir(dir: &Path) -> Result<(), String> {
    let show = dir.display();
    if dir.exists() {
        if !dir.is_dir() {
            return Err(format!("cannot write results to {show}: it is a file, not a directory"));
        }
        let empty = std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false);
        if !empty && !is_run_dir(dir) {
            return Err(format!(
                "cannot write results to {show}: it holds files that are not an lbsim run (choose a new or empty directory)"
            ));
        }
        // An earlier run is replaced whole: only if everything in it is lbsim's own.
        if let Some(name) = foreign_entry(dir).filter(|_| !empty) {
            return Err(format!(
                "cannot write results to {show}: it holds an earlier run and {name}, which lbsim did not write \
                 and would delete with it (move it, or choose a new directory)"
            ));
        }
    }
    // The nearest existing ancestor must be a directory we can create entries in.
    let (parent, _) = split_dir(dir);
    let mut at = parent.as_path();
    while !at.exists() {
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
    }
    if !at.is_dir() {
        return Err(format!(
            "cannot write results to {show}: {} is a file, not a directory",
            at.display()
        ));
    }
    let probe = at.join(format!(".lbsim-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write results to {show}: {}: {e}", at.display())),
    }
}

/// Put the directory `new` in `dir`'s place, removing what `dir` held.
fn replace_dir(new: &Path, dir: &Path) -> std::io::Result<()> {
    if !dir.exists() {
        return std::fs::rename(new, dir);
    }
    let (parent, name) = split_dir(dir);
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&old);
    std::fs::rename(dir, &old)?;
    if let Err(e) = std::fs::rename(new, dir) {
        let _ = std::fs::rename(&old, dir);
        return Err(e);
    }
    std::fs::remove_dir_all(&old)
}
