//! `lbsim._core`: the PyO3 bindings of lbsim-core. Bindings only: convert
//! arguments, call the core, release the GIL while it runs, convert results.
//! Everything a user touches lives in the Python package (`python/lbsim`).
//!
//! Scenarios cross the boundary as TOML text plus `(dotted key, value text)`
//! overrides, the same form the command line uses. Results come back as plain
//! Python objects: JSON text for the summary and counters, and the flow table
//! as one little-endian byte buffer per column (numpy reads them without a copy).

use lbsim_core::scenario::units::{self, AmountValue};
use lbsim_core::table::{Column, Table};
use lbsim_core::{Progress, Scenario, ScenarioError, StopReason};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
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
///
/// `max_memory` (bytes): a scenario estimated to need more is refused (a
/// `ScenarioError` naming the keys that make it large) before its workload is
/// generated. facts also has `memory_bytes`, the estimate.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), base_dir = None, max_memory = None))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<PathBuf>,
    max_memory: Option<u64>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let s = parse_py(py, text, &overrides)?;
    let limits = limits(max_memory);
    let (sim, est) =
        lbsim_core::build::build_with(&s, base_dir.as_deref(), &limits).map_err(|e| scenario_error(py, e))?;
    let facts = PyDict::new(py);
    facts.set_item("hosts", s.topology.hosts)?;
    facts.set_item("tiers", s.topology.tiers)?;
    facts.set_item("flows", sim.flows.len())?;
    facts.set_item("link_rate_bps", s.topology.link_rate.value.bps())?;
    facts.set_item("base_rtt_us", sim.params.base_rtt.as_us_f64())?;
    facts.set_item("bdp_bytes", sim.params.bdp_bytes)?;
    facts.set_item("rto_us", sim.params.transport.rto.as_us_f64())?;
    facts.set_item("queue_bytes", sim.params.queue_bytes)?;
    facts.set_item("stop_at_us", sim.params.stop_at.as_us_f64())?;
    facts.set_item("memory_bytes", est.bytes)?;
    Ok((s.to_toml(), facts))
}

fn limits(max_memory: Option<u64>) -> lbsim_core::build::Limits {
    let mut l = lbsim_core::build::Limits::default();
    if let Some(m) = max_memory {
        l.max_memory = m;
    }
    l
}

/// A table as a list of `(column, numpy dtype, data)`: little-endian bytes
/// for numbers (numpy reads them without a copy), a list of str for text
/// (dtype "str").
fn table_columns<'py>(py: Python<'py>, t: &Table) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    fn le<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }
    t.columns
        .iter()
        .map(|(name, col)| {
            let (dtype, data): (&str, Bound<'py, PyAny>) = match col {
                Column::Bool(v) => ("|b1", PyBytes::new(py, &le(v, |b| [b as u8])).into_any()),
                Column::U32(v) => ("<u4", PyBytes::new(py, &le(v, u32::to_le_bytes)).into_any()),
                Column::U64(v) => ("<u8", PyBytes::new(py, &le(v, u64::to_le_bytes)).into_any()),
                Column::F64(v) => ("<f8", PyBytes::new(py, &le(v, f64::to_le_bytes)).into_any()),
                Column::Str(v) => ("str", PyList::new(py, v)?.into_any()),
            };
            PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    dtype.into_pyobject(py)?.into_any(),
                    data,
                ],
            )
        })
        .collect()
}

fn stop_reason_name(r: StopReason) -> &'static str {
    r.name()
}

/// The progress callback's arguments: now_us, stop_at_us, events, flows_done,
/// flows, delivered_bytes, total_bytes.
fn progress_args(p: &Progress) -> (f64, f64, u64, usize, usize, u64, u64) {
    (
        p.now.as_us_f64(),
        p.stop_at.as_us_f64(),
        p.events,
        p.flows_done,
        p.flows,
        p.delivered_bytes,
        p.total_bytes,
    )
}

/// Run a scenario with the GIL released.
///
/// Every `every` events the engine calls back; the binding then takes the GIL
/// for a moment to check for signals (Ctrl-C cancels the run and raises
/// KeyboardInterrupt once the engine has stopped) and, at most once per
/// `interval` seconds, calls `progress(now_us, stop_at_us, events,
/// flows_done, flows, delivered_bytes, total_bytes)` (payload bytes that
/// reached their receivers, each packet once, and the sum of the workload's
/// message sizes); if that returns False the run is cancelled too. When the
/// run has ended (drained, at its horizon or cancelled by the callback) it is
/// called once more with the final state, whatever the interval; its answer
/// is then ignored.
///
/// Returns a dict: scenario_toml, summary_json, counters_json,
/// packets_in_network, stop_reason ("drained", "horizon", "cancelled",
/// "no_progress" or "pfc_deadlock"), stop_note (why it stopped early, or None) and
/// tables: {name: [(column, numpy dtype, data)]}, "flows" always, time series
/// and "failures" when the scenario has them.
/// `max_memory` (bytes, default 8 GiB): a scenario estimated to need more
/// is refused before it is built. At the end of the run the engine checks its
/// invariants; a violation (an engine bug) raises `PanicException` with the counters.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), base_dir = None, progress = None, every = 1 << 16, interval = 0.1, max_memory = None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<PathBuf>,
    progress: Option<PyObject>,
    every: u64,
    interval: f64,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse_py(py, text, &overrides)?;
    let limits = limits(max_memory);
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
                match f.call1(py, progress_args(&p)) {
                    Ok(v) => !matches!(v.extract::<bool>(py), Ok(false)),
                    Err(e) => {
                        pending_error = Some(e);
                        false
                    }
                }
            })
        };
        lbsim_core::run_with(&scenario, base, &limits, every.max(1), &mut callback)
    });
    if let Some(e) = pending_error {
        return Err(e);
    }
    let out = out.map_err(|e| scenario_error(py, e))?;
    if let Some(f) = progress.as_ref() {
        f.call1(py, progress_args(&out.progress))?;
    }

    let d = PyDict::new(py);
    d.set_item("scenario_toml", out.scenario.to_toml())?;
    d.set_item("summary_json", lbsim_core::metrics::summary_json(&out.summary))?;
    d.set_item(
        "counters_json",
        serde_json::to_string(&out.counters).expect("counters serialize"),
    )?;
    d.set_item("packets_in_network", out.packets_in_network)?;
    d.set_item("stop_reason", stop_reason_name(out.stop_reason))?;
    d.set_item("stop_note", out.stop_note.clone())?;
    let tables = PyDict::new(py);
    for t in out.all_tables() {
        tables.set_item(t.name, table_columns(py, &t)?)?;
    }
    d.set_item("tables", tables)?;
    Ok(d)
}

/// The flow-level mode (`lbsim_core::flowlevel`) with the GIL released:
/// every flow persistent, on its ECMP/WCMP path, at its max-min fair rate.
/// Returns a dict: scenario_toml, summary_json and tables: {"flows": ...,
/// "ports": ...} as `run` gives them. Raises `lbsim.ScenarioError` naming
/// the key (a balancer without a flow-level model names `lb.kind`), or the
/// workload's key when it is estimated to need more than `max_memory` bytes.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), base_dir = None, max_memory = None))]
fn flow_level<'py>(
    py: Python<'py>,
    text: &str,
    overrides: Vec<(String, String)>,
    base_dir: Option<PathBuf>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse_py(py, text, &overrides)?;
    let limits = limits(max_memory);
    let out = py
        .allow_threads(|| lbsim_core::flowlevel::run_with(&scenario, base_dir.as_deref(), &limits))
        .map_err(|e| scenario_error(py, e))?;
    let d = PyDict::new(py);
    d.set_item("scenario_toml", out.scenario.to_toml())?;
    d.set_item("summary_json", out.summary_json())?;
    let tables = PyDict::new(py);
    for t in out.tables() {
        tables.set_item(t.name, table_columns(py, &t)?)?;
    }
    d.set_item("tables", tables)?;
    Ok(d)
}

/// Turn a unit parser's message into `lbsim.UnitError(message)`.
fn unit_error(py: Python<'_>, message: String) -> PyErr {
    let made = py
        .import("lbsim.errors")
        .and_then(|m| m.getattr("UnitError"))
        .and_then(|cls| cls.call1((message,)));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// A time as scenario files write it ("500ns", "1.5ms") in integer
/// picoseconds, the engine's clock. Raises `lbsim.UnitError`.
#[pyfunction]
fn parse_time(py: Python<'_>, text: &str) -> PyResult<u64> {
    units::parse_time(text).map(|t| t.0).map_err(|m| unit_error(py, m))
}

/// A rate as scenario files write it ("400Gbps") in integer bits per second.
/// Raises `lbsim.UnitError`.
#[pyfunction]
fn parse_rate(py: Python<'_>, text: &str) -> PyResult<u64> {
    units::parse_rate(text).map(|r| r.0).map_err(|m| unit_error(py, m))
}

/// An amount of data as scenario files write it: `("bytes", int)` for
/// "8MiB", "4096B" or "4096"; `("pkt", float)` for "101pkt" (full packets);
/// `("bdp", float)` for "1.5bdp"; `("percent", float)` for "20%". Raises
/// `lbsim.UnitError`.
#[pyfunction]
fn parse_amount<'py>(py: Python<'py>, text: &str) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match units::parse_amount(text).map_err(|m| unit_error(py, m))? {
        AmountValue::Bytes(b) => ("bytes", b.into_pyobject(py)?.into_any()),
        AmountValue::Packets(x) => ("pkt", x.into_pyobject(py)?.into_any()),
        AmountValue::Bdp(x) => ("bdp", x.into_pyobject(py)?.into_any()),
        AmountValue::Percent(x) => ("percent", x.into_pyobject(py)?.into_any()),
    })
}

/// Percentiles of `values` by the engine's rule (`lbsim_core::metrics::percentile`,
/// nearest rank: the smallest value with at least p % of the values at or
/// below it), one per p in `ps` (each in [0, 100]). `values`: anything with
/// the buffer protocol holding float64 (a numpy array) or a sequence of
/// floats, in any order; NaN values are left out. NaN where no value is left.
#[pyfunction]
fn percentile(py: Python<'_>, values: &Bound<'_, PyAny>, ps: Vec<f64>) -> PyResult<Vec<f64>> {
    if let Some(p) = ps.iter().find(|p| !(0.0..=100.0).contains(*p)) {
        return Err(PyValueError::new_err(format!("p: must be in [0, 100], got {p}")));
    }
    let mut v: Vec<f64> = match PyBuffer::<f64>::get(values) {
        Ok(buf) => buf.to_vec(py)?,
        Err(_) => values.extract()?,
    };
    Ok(py.allow_threads(move || {
        v.retain(|x| !x.is_nan());
        v.sort_unstable_by(f64::total_cmp);
        ps.iter().map(|&p| lbsim_core::metrics::percentile(&v, p)).collect()
    }))
}

/// Names of the built-in flow-size distributions (`workload.cdf` values that are not files).
#[pyfunction]
fn builtin_cdfs() -> Vec<&'static str> {
    lbsim_core::workload::cdf::BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Every table a run or a flow-level result can write (`lbsim_core::table::TABLE_NAMES`).
#[pyfunction]
fn table_names() -> Vec<&'static str> {
    lbsim_core::table::TABLE_NAMES.to_vec()
}

/// The first entry of a results directory that lbsim would not have written
/// there (None when every entry is lbsim's): replacing the directory would lose it.
#[pyfunction]
fn foreign_entry(path: PathBuf) -> Option<String> {
    lbsim_core::foreign_entry(&path)
}

/// Names of the built-in presets.
#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    lbsim_core::scenario::preset_names().to_vec()
}

/// The registered load balancers, in the order plots list them: a list of
/// dicts with name (`lb.kind`), label and color (for plots) and side
/// ("host" or "switch": where it chooses paths).
#[pyfunction]
fn load_balancers(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    lbsim_core::lb::REGISTRY
        .iter()
        .map(|e| {
            let d = PyDict::new(py);
            d.set_item("name", e.name)?;
            d.set_item("label", e.label)?;
            d.set_item("color", e.color)?;
            d.set_item("side", if e.switch_side { "switch" } else { "host" })?;
            Ok(d)
        })
        .collect()
}

/// The balls-into-bins models of REPS §5 and App. B–D (`lbsim.theory`):
/// argument checks name the parameter (ValueError "param: message"), the
/// models run with the GIL released, per-step series come back as
/// little-endian byte buffers.
mod theory_bindings {
    use lbsim_core::theory::{self, evs, ops, recycled, TheoryError};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::types::{PyBytes, PyDict};

    fn value_error(e: TheoryError) -> PyErr {
        PyValueError::new_err(e.to_string())
    }

    fn non_negative(param: &'static str, v: i64) -> PyResult<u64> {
        u64::try_from(v).map_err(|_| PyValueError::new_err(format!("{param}: must be at least 0, got {v}")))
    }

    fn count<T: TryFrom<i64>>(param: &'static str, v: i64) -> PyResult<T> {
        T::try_from(v)
            .map_err(|_| PyValueError::new_err(format!("{param}: must be a non-negative integer in range, got {v}")))
    }

    fn le_bytes<'py, T: Copy, const W: usize>(py: Python<'py>, v: &[T], f: fn(T) -> [u8; W]) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(v.len() * W);
        for &x in v {
            out.extend_from_slice(&f(x));
        }
        PyBytes::new(py, &out)
    }

    fn series_dict<'py>(py: Python<'py>, s: &theory::Series) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("max_load", le_bytes(py, &s.max_load, u32::to_le_bytes))?;
        d.set_item("balls", le_bytes(py, &s.balls, u64::to_le_bytes))?;
        d.set_item("loads", s.loads.as_ref().map(|l| le_bytes(py, l, u32::to_le_bytes)))?;
        Ok(d)
    }

    /// Theorem 5.1's τ = ⌈4 ln n⌉ and b = ⌈2.4 ln n⌉ (each at least 1).
    #[pyfunction]
    fn theory_defaults(n: i64) -> PyResult<(u32, u32)> {
        let n: usize = count("n", n)?;
        Ok((theory::theorem_tau(n), theory::theorem_b(n)))
    }

    /// App. C's worst phase-2 start: one ball per bin plus ⌊2n ln n⌋ in bin 0.
    #[pyfunction]
    fn theory_phase_two_start(n: i64) -> PyResult<Vec<u32>> {
        let n: usize = count("n", n)?;
        theory::check_bins("n", n).map_err(value_error)?;
        Ok(recycled::phase_two_start(n))
    }

    /// Batched balls-into-bins (OPS). Returns max_load (<u4), balls (<u8)
    /// and loads (<u4, steps × n, or None).
    #[pyfunction]
    #[pyo3(signature = (n, lam, steps, seed, record_loads = false))]
    fn theory_ops<'py>(
        py: Python<'py>,
        n: i64,
        lam: f64,
        steps: i64,
        seed: i64,
        record_loads: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = ops::OpsParams {
            n: count("n", n)?,
            lam,
            steps: count("steps", steps)?,
            record_loads,
        };
        let seed = non_negative("seed", seed)?;
        let s = py.allow_threads(|| ops::run(&p, seed)).map_err(value_error)?;
        series_dict(py, &s)
    }

    #[allow(clippy::too_many_arguments)]
    fn recycled_params(
        n: i64,
        tau: i64,
        b: i64,
        steps: i64,
        ack_every: i64,
        schedule: &str,
        initial_loads: Option<Vec<i64>>,
        record_loads: bool,
    ) -> PyResult<recycled::RecycledParams> {
        let initial_loads = match initial_loads {
            None => None,
            Some(v) => Some(
                v.into_iter()
                    .map(|l| count::<u32>("initial_loads", l))
                    .collect::<PyResult<Vec<u32>>>()?,
            ),
        };
        Ok(recycled::RecycledParams {
            n: count("n", n)?,
            tau: count("tau", tau)?,
            b: count("b", b)?,
            ack_every: count("ack_every", ack_every)?,
            schedule: recycled::Schedule::parse(schedule).map_err(value_error)?,
            steps: count("steps", steps)?,
            record_loads,
            initial_loads,
        })
    }

    fn summary_items(d: &Bound<'_, PyDict>, s: &recycled::RecycledSummary) -> PyResult<()> {
        d.set_item("converged_step", s.converged_step)?;
        d.set_item("last_over_tau", s.last_over_tau)?;
        d.set_item("peak_load", s.peak_load)?;
        d.set_item("final_balls", s.final_balls)?;
        d.set_item("collisions", s.collisions)?;
        Ok(())
    }

    /// Recycled balls-into-bins (REPS), optionally with ACK coalescing. Returns
    /// the series of `theory_ops` plus fresh (<u4) and the run's summary.
    #[pyfunction]
    #[pyo3(signature = (n, tau, b, steps, seed, ack_every = 1, schedule = "immediate", initial_loads = None, record_loads = false))]
    #[allow(clippy::too_many_arguments)]
    fn theory_recycled<'py>(
        py: Python<'py>,
        n: i64,
        tau: i64,
        b: i64,
        steps: i64,
        seed: i64,
        ack_every: i64,
        schedule: &str,
        initial_loads: Option<Vec<i64>>,
        record_loads: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = recycled_params(n, tau, b, steps, ack_every, schedule, initial_loads, record_loads)?;
        let seed = non_negative("seed", seed)?;
        let r = py.allow_threads(|| recycled::run(&p, seed)).map_err(value_error)?;
        let d = series_dict(py, &r.series)?;
        d.set_item("fresh", le_bytes(py, &r.fresh, u32::to_le_bytes))?;
        summary_items(&d, &r.summary)?;
        Ok(d)
    }

    /// The summaries of one recycled run per seed (stopping at convergence):
    /// a list of dicts with seed, converged_step, last_over_tau, peak_load,
    /// final_balls, collisions.
    #[pyfunction]
    #[pyo3(signature = (n, tau, b, steps, seeds, ack_every = 1, schedule = "immediate", initial_loads = None))]
    #[allow(clippy::too_many_arguments)]
    fn theory_recycled_summaries<'py>(
        py: Python<'py>,
        n: i64,
        tau: i64,
        b: i64,
        steps: i64,
        seeds: Vec<i64>,
        ack_every: i64,
        schedule: &str,
        initial_loads: Option<Vec<i64>>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let p = recycled_params(n, tau, b, steps, ack_every, schedule, initial_loads, false)?;
        let seeds = seeds
            .into_iter()
            .map(|s| non_negative("seeds", s))
            .collect::<PyResult<Vec<u64>>>()?;
        let sums = py
            .allow_threads(|| {
                seeds
                    .iter()
                    .map(|&s| recycled::run_summary(&p, s))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(value_error)?;
        seeds
            .iter()
            .zip(&sums)
            .map(|(&seed, s)| {
                let d = PyDict::new(py);
                d.set_item("seed", seed)?;
                summary_items(&d, s)?;
                Ok(d)
            })
            .collect()
    }

    /// Entropy-space imbalance (App. B): one (seed, max_load, mean_load,
    /// imbalance) per seed, every (flow, entropy) pair hashed by the switch ECMP hash.
    #[pyfunction]
    fn theory_evs(
        py: Python<'_>,
        uplinks: i64,
        flows: i64,
        evs: i64,
        seeds: Vec<i64>,
    ) -> PyResult<Vec<(u64, u64, f64, f64)>> {
        let uplinks: usize = count("uplinks", uplinks)?;
        let flows: u32 = count("flows", flows)?;
        let evs_n: u32 = count("evs", evs)?;
        evs::validate(uplinks, flows, evs_n).map_err(value_error)?;
        let seeds = seeds
            .into_iter()
            .map(|s| non_negative("seeds", s))
            .collect::<PyResult<Vec<u64>>>()?;
        py.allow_threads(|| {
            seeds
                .iter()
                .map(|&s| evs::trial(uplinks, flows, evs_n, s).map(|t| (s, t.max_load, t.mean_load, t.imbalance)))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(value_error)
    }

    pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(theory_defaults, m)?)?;
        m.add_function(wrap_pyfunction!(theory_phase_two_start, m)?)?;
        m.add_function(wrap_pyfunction!(theory_ops, m)?)?;
        m.add_function(wrap_pyfunction!(theory_recycled, m)?)?;
        m.add_function(wrap_pyfunction!(theory_recycled_summaries, m)?)?;
        m.add_function(wrap_pyfunction!(theory_evs, m)?)?;
        Ok(())
    }
}

// The engine's memory comes from mimalloc on huge pages, as in lbsim-cli (lbsim_core::alloc).
#[global_allocator]
static ALLOCATOR: lbsim_core::alloc::Allocator = lbsim_core::alloc::Allocator;

/// Sets mimalloc up (huge pages, freed memory kept) when Python loads the
/// extension, before its first allocation: by the time the module's init
/// runs, PyO3 has allocated and mimalloc has mapped its first arena.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static CONFIGURE_ALLOCATOR: extern "C" fn() = {
    extern "C" fn configure() {
        lbsim_core::alloc::configure();
    }
    configure
};

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The commit this was built from ("<sha>" or "<sha>-dirty"; "" if unknown): see build.rs.
    m.add("git_commit", env!("LBSIM_GIT_COMMIT"))?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(flow_level, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_cdfs, m)?)?;
    m.add_function(wrap_pyfunction!(table_names, m)?)?;
    m.add_function(wrap_pyfunction!(foreign_entry, m)?)?;
    m.add_function(wrap_pyfunction!(load_balancers, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate, m)?)?;
    m.add_function(wrap_pyfunction!(parse_amount, m)?)?;
    m.add_function(wrap_pyfunction!(percentile, m)?)?;
    theory_bindings::register(m)?;
    Ok(())
}
