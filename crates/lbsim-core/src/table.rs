//! Column tables: how a run hands its results (flows, time series, samples)
//! to a writer or to the Python bindings without either knowing each table.

use std::io::Write;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Bool(Vec<bool>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    /// NaN is an unknown value (null in Parquet, empty in CSV).
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn cell(&self, i: usize) -> String {
        match self {
            Column::Bool(v) => v[i].to_string(),
            Column::U32(v) => v[i].to_string(),
            Column::U64(v) => v[i].to_string(),
            Column::F64(v) if v[i].is_nan() => String::new(),
            Column::F64(v) => v[i].to_string(),
            Column::Str(v) => v[i].clone(),
        }
    }
}

/// A named table of equal-length columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
}

/// Every table a run or a flow-level result can write (each as `NAME.csv`
/// from Rust, `NAME.parquet` from Python). The Python package loads and
/// saves exactly these (tests/python/test_hardening.py), and a results
/// directory holding only files of these names is one lbsim may replace.
pub const TABLE_NAMES: &[&str] = &[
    "flows",
    "drops",
    "messages",
    "steps",
    "ports",
    "drops_series",
    "rtt",
    "failures",
    "switch_lb_series",
    "switch_lb_records",
    "faca_paths",
    "port_totals",
    "pfc",
    "buffers",
];

impl Table {
    /// A table named `name`, one of `TABLE_NAMES` (a name missing there
    /// would be dropped when a result is loaded, so it is refused here).
    pub fn new(name: &'static str) -> Self {
        assert!(
            TABLE_NAMES.contains(&name),
            "table {name:?} is not listed in table::TABLE_NAMES"
        );
        Table {
            name,
            columns: Vec::new(),
        }
    }

    pub fn with(mut self, name: &'static str, col: Column) -> Self {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()));
        self.columns.push((name, col));
        self
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }

    /// The table as CSV text, exactly as `write_csv` writes it.
    pub fn csv(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| *n).collect();
        let mut out = names.join(",") + "\n";
        for i in 0..self.rows() {
            let row: Vec<String> = self.columns.iter().map(|(_, c)| c.cell(i)).collect();
            out += &row.join(",");
            out.push('\n');
        }
        out
    }

    /// A 64-bit FNV-1a digest of the CSV text, as 16 hex digits: equal
    /// digests, equal tables (the golden suite and the fuzzer's determinism check).
    pub fn digest(&self) -> String {
        let h = self.csv().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{h:016x}")
    }

    /// Write as CSV (names never need quoting: link and switch names are plain).
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| *n).collect();
        writeln!(w, "{}", names.join(","))?;
        for i in 0..self.rows() {
            let row: Vec<String> = self.columns.iter().map(|(_, c)| c.cell(i)).collect();
            writeln!(w, "{}", row.join(","))?;
        }
        w.flush()
    }
}
