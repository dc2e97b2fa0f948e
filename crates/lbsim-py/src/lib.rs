//! `lbsim._core`: the PyO3 bindings of lbsim-core. Bindings only: convert
//! arguments, call the core, release the GIL while it runs, convert results.
//! Everything a user touches lives in the Python package (`python/lbsim`).
//!
//! Scenarios cross the boundary as TOML text plus `(dotted key, value text)`
//! overrides, the same form the command line uses. Results come back as plain
//! Python objects: JSON text for the summary and counters, and the flow table
//! as one little-endian byte buffer per column (numpy reads them without a copy).

use lbsim_core::{FlowRecord, Progress, Scenario, ScenarioError, StopReason};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Turn a core error into `lbsim.ScenarioError(key, message)` (defined in Python
/// so it is typed, documented and picklable).
fn scenario_error(py: Python<'_>, e: ScenarioError) -> PyErr {
    let made = py
        .import("lbsim.errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((e.key.clone(), e.message.clone())));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

fn parse_py(py: Python<'_>, text: &str, overrides: &[(String, String)]) -> PyResult<Scenario> {
    Scenario::from_toml_with(text, overrides).map_err(|e| scenario_error(py, e))
}

/// Resolve a scenario: its preset with the file and the overrides merged on
/// top. Returns the resolved scenario as TOML text. Raises
/// `lbsim.ScenarioError` naming the key on any problem.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new()))]
fn resolve(py: Python<'_>, text: &str, overrides: Vec<(String, String)>) -> PyResult<String> {
    Ok(parse_py(py, text, &overrides)?.to_toml())
}

/// Resolve and build the simulation without running it (topology, link names,
/// workload files are all checked). Returns `(resolved TOML, facts)` where
/// facts is a dict of derived values: hosts, flows, link_rate_bps, base_rtt_us,
/// bdp_bytes, rto_us, queue_bytes.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), base_dir = None))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<PathBuf>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let s = parse_py(py, text, &overrides)?;
    let sim = lbsim_core::build::build(&s, base_dir.as_deref()).map_err(|e| scenario_error(py, e))?;
    let facts = PyDict::new(py);
    facts.set_item("hosts", s.topology.hosts)?;
    facts.set_item("tiers", s.topology.tiers)?;
    facts.set_item("flows", sim.flows.len())?;
    facts.set_item("link_rate_bps", s.topology.link_rate.value.bps())?;
    facts.set_item("base_rtt_us", sim.params.base_rtt.as_us_f64())?;
    facts.set_item("bdp_bytes", sim.params.bdp_bytes)?;
    facts.set_item("rto_us", sim.params.rto.as_us_f64())?;
    facts.set_item("queue_bytes", sim.params.queue_bytes)?;
    facts.set_item("stop_at_us", sim.params.stop_at.as_us_f64())?;
    Ok((s.to_toml(), facts))
}

/// The flow table as columns: (name, numpy dtype string, little-endian bytes).
///
/// The destructuring below names every field of `FlowRecord` (no `..`), so a
/// field added to the core fails to compile here until it gets a column.
fn flow_columns(flows: &[FlowRecord]) -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let n = flows.len();
    let mut cols: Vec<(&'static str, &'static str, Vec<u8>)> = [
        ("id", "<u4"),
        ("src", "<u4"),
        ("dst", "<u4"),
        ("size_bytes", "<u8"),
        ("start_us", "<f8"),
        ("receiver_finish_us", "<f8"),
        ("sender_finish_us", "<f8"),
        ("fct_us", "<f8"),
        ("finished", "|b1"),
        ("retransmissions", "<u8"),
        ("timeouts", "<u8"),
        ("nacks", "<u8"),
        ("drops", "<u8"),
        ("explored_evs", "<u8"),
        ("recycled_evs", "<u8"),
        ("freeze_entries", "<u8"),
        ("frozen_us", "<f8"),
    ]
    .into_iter()
    .map(|(name, dtype)| {
        let width = match dtype {
            "|b1" => 1,
            "<u4" => 4,
            _ => 8,
        };
        (name, dtype, Vec::with_capacity(n * width))
    })
    .collect();
    for r in flows {
        let FlowRecord {
            id,
            src,
            dst,
            size_bytes,
            start_us,
            receiver_finish_us,
            sender_finish_us,
            fct_us,
            finished,
            retransmissions,
            timeouts,
            nacks,
            drops,
            explored_evs,
            recycled_evs,
            freeze_entries,
            frozen_us,
        } = r;
        let mut c = cols.iter_mut().map(|(_, _, buf)| buf);
        let mut put = |bytes: &[u8]| c.next().expect("column").extend_from_slice(bytes);
        put(&id.to_le_bytes());
        put(&src.to_le_bytes());
        put(&dst.to_le_bytes());
        put(&size_bytes.to_le_bytes());
        put(&start_us.to_le_bytes());
        put(&receiver_finish_us.to_le_bytes());
        put(&sender_finish_us.to_le_bytes());
        put(&fct_us.to_le_bytes());
        put(&[*finished as u8]);
        put(&retransmissions.to_le_bytes());
        put(&timeouts.to_le_bytes());
        put(&nacks.to_le_bytes());
        put(&drops.to_le_bytes());
        put(&explored_evs.to_le_bytes());
        put(&recycled_evs.to_le_bytes());
        put(&freeze_entries.to_le_bytes());
        put(&frozen_us.to_le_bytes());
    }
    cols
}

fn stop_reason_name(r: StopReason) -> &'static str {
    match r {
        StopReason::Drained => "drained",
        StopReason::Horizon => "horizon",
        StopReason::Cancelled => "cancelled",
    }
}

/// Run a scenario with the GIL released.
///
/// Every `every` events the engine calls back; the binding then takes the GIL
/// for a moment to check for signals (Ctrl-C cancels the run and raises
/// KeyboardInterrupt once the engine has stopped) and, at most once per
/// `interval` seconds, calls `progress(now_us, stop_at_us, events,
/// flows_done, flows)`; if that returns False the run is cancelled too.
///
/// Returns a dict: scenario_toml, summary_json, counters_json,
/// packets_in_network, stop_reason ("drained", "horizon" or "cancelled") and
/// flows, a list of (column, numpy dtype, bytes).
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), base_dir = None, progress = None, every = 1 << 16, interval = 0.1))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<PathBuf>,
    progress: Option<PyObject>,
    every: u64,
    interval: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse_py(py, text, &overrides)?;
    let interval = Duration::from_secs_f64(interval.max(0.0));
    let mut pending_error: Option<PyErr> = None;
    let mut last_call: Option<Instant> = None;
    let base: Option<&Path> = base_dir.as_deref();

    let out = py.allow_threads(|| {
        let mut callback = |p: Progress| -> bool {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    pending_error = Some(e);
                    return false;
                }
                let Some(f) = progress.as_ref() else {
                    return true;
                };
                let now = Instant::now();
                if last_call.is_some_and(|t| now.duration_since(t) < interval) {
                    return true;
                }
                last_call = Some(now);
                let args = (
                    p.now.as_us_f64(),
                    p.stop_at.as_us_f64(),
                    p.events,
                    p.flows_done,
                    p.flows,
                );
                match f.call1(py, args) {
                    Ok(v) => !matches!(v.extract::<bool>(py), Ok(false)),
                    Err(e) => {
                        pending_error = Some(e);
                        false
                    }
                }
            })
        };
        lbsim_core::run_with_progress(&scenario, base, every.max(1), &mut callback)
    });
    if let Some(e) = pending_error {
        return Err(e);
    }
    let out = out.map_err(|e| scenario_error(py, e))?;

    let d = PyDict::new(py);
    d.set_item("scenario_toml", out.scenario.to_toml())?;
    d.set_item("summary_json", lbsim_core::metrics::summary_json(&out.summary))?;
    d.set_item(
        "counters_json",
        serde_json::to_string(&out.counters).expect("counters serialize"),
    )?;
    d.set_item("packets_in_network", out.packets_in_network)?;
    d.set_item("stop_reason", stop_reason_name(out.stop_reason))?;
    let cols = flow_columns(&out.flows)
        .into_iter()
        .map(|(name, dtype, bytes)| {
            PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    dtype.into_pyobject(py)?.into_any(),
                    PyBytes::new(py, &bytes).into_any(),
                ],
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("flows", cols)?;
    Ok(d)
}

/// Names of the built-in presets.
#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    lbsim_core::scenario::preset_names().to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    Ok(())
}
