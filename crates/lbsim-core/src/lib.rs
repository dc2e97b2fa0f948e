//! lbsim-core: a packet-level datacenter network simulator for studying
//! load balancing (ECMP, oblivious packet spraying, REPS, ...) on fat trees.
//!
//! ```no_run
//! let scenario = lbsim_core::Scenario::from_toml("[lb]\nkind = \"ops\"").unwrap();
//! let out = lbsim_core::run(&scenario, None).unwrap();
//! println!("max FCT {} us", out.summary.max_fct_us);
//! ```

pub mod build;
pub mod cc;
pub mod engine;
pub mod event;
pub mod failure;
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

pub use engine::{Progress, Simulation, StopReason};
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
    let mut sim = build::build(scenario, base_dir)?;
    let stop_reason = sim.run_with_progress(every, progress);
    let flows = sim.flow_records();
    let messages = sim.message_records();
    let mut summary = sim.summary(&messages);
    summary.warnings = scenario::warnings(scenario);
    let tables = sim.extra_tables(&messages);
    let final_progress = sim.progress();
    Ok(RunOutput {
        scenario: scenario.clone(),
        summary,
        flows,
        messages,
        tables,
        counters: sim.counters,
        packets_in_network: sim.packets_in_network(),
        stop_reason,
        progress: final_progress,
    })
}

impl RunOutput {
    /// Write `scenario.toml`, `summary.json`, `flows.csv` and one CSV per further table into `dir`.
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("scenario.toml"), self.scenario.to_toml())?;
        std::fs::write(dir.join("summary.json"), metrics::summary_json(&self.summary))?;
        metrics::flow_table(&self.flows).write_csv(&dir.join("flows.csv"))?;
        for t in &self.tables {
            t.write_csv(&dir.join(format!("{}.csv", t.name)))?;
        }
        Ok(())
    }

    /// Every table of the run, the flow table first.
    pub fn all_tables(&self) -> Vec<table::Table> {
        let mut v = vec![metrics::flow_table(&self.flows)];
        v.extend(self.tables.iter().cloned());
        v
    }
}
