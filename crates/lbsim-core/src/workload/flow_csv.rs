//! `workload.kind = "flows"`: an explicit flow list from a CSV file, with
//! optional dependencies between flows and collective step numbers.

use super::Traffic;
use crate::scenario::units::{MAX_BYTES, MAX_TIME};
use crate::time::SimTime;
use crate::transport::FlowSpec;

/// CSV with a header naming the columns src, dst, size_bytes, start_us (any
/// order), and optionally `after`: the rows (0-based, among the flows, earlier
/// only) whose data must arrive before this flow starts, separated by `;`,
/// and `step`: a collective step number to report times by.
pub fn parse_flow_csv(text: &str, hosts: u32) -> Result<Traffic, String> {
    // Spreadsheets save "CSV UTF-8" with a byte-order mark: it is not part of the first column's name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (_, header) = lines.next().ok_or("empty file")?;
    let cols = Columns::of_header(header)?;
    let mut out = Traffic::default();
    for (ln, line) in lines {
        let row = Row {
            fields: line.split(',').map(str::trim).collect(),
            line: ln + 1,
        };
        // A field beyond the header's is a row shifted by a stray comma: its columns would be misread.
        if row.fields.len() > cols.count {
            return Err(format!(
                "line {}: {} fields, but the header names {} columns",
                row.line,
                row.fields.len(),
                cols.count
            ));
        }
        let flow = row.flow(&cols, hosts)?;
        let after = row.after(cols.after, out.flows.len() as u32)?;
        let step = row.step(cols.step)?;
        out.flows.push(flow);
        out.after.push(after);
        out.step.push(step);
    }
    Ok(out)
}

/// Where each column sits in a row.
struct Columns {
    src: usize,
    dst: usize,
    size: usize,
    start: usize,
    after: Option<usize>,
    step: Option<usize>,
    /// Columns the header names.
    count: usize,
}

impl Columns {
    fn of_header(header: &str) -> Result<Columns, String> {
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |name: &str| {
            cols.iter().position(|c| *c == name).ok_or(format!(
                "header lacks column \"{name}\" (need src,dst,size_bytes,start_us; after and step are optional)"
            ))
        };
        Ok(Columns {
            src: find("src")?,
            dst: find("dst")?,
            size: find("size_bytes")?,
            start: find("start_us")?,
            after: find("after").ok(),
            step: find("step").ok(),
            count: cols.len(),
        })
    }
}

/// One data row, with its line number (1-based) for errors.
struct Row<'a> {
    fields: Vec<&'a str>,
    line: usize,
}

impl Row<'_> {
    fn get(&self, i: usize, what: &str) -> Result<&str, String> {
        self.fields
            .get(i)
            .copied()
            .ok_or(format!("line {}: missing {what}", self.line))
    }

    fn host(&self, i: usize, what: &str, hosts: u32) -> Result<u32, String> {
        let v: u32 = self
            .get(i, what)?
            .parse()
            .map_err(|_| format!("line {}: {what} is not a host number", self.line))?;
        if v >= hosts {
            return Err(format!("line {}: {what} {v} does not exist ({hosts} hosts)", self.line));
        }
        Ok(v)
    }

    /// The flow itself: src, dst, size_bytes and start_us.
    fn flow(&self, c: &Columns, hosts: u32) -> Result<FlowSpec, String> {
        let ln = self.line;
        let (src, dst) = (self.host(c.src, "src", hosts)?, self.host(c.dst, "dst", hosts)?);
        if src == dst {
            return Err(format!("line {ln}: src and dst are both {src}"));
        }
        let size: u64 = self
            .get(c.size, "size_bytes")?
            .parse()
            .map_err(|_| format!("line {ln}: size_bytes is not an integer"))?;
        if size == 0 {
            return Err(format!("line {ln}: size_bytes must be positive"));
        }
        if size > MAX_BYTES {
            return Err(format!(
                "line {ln}: size_bytes {size} is more than the largest amount lbsim simulates (1PiB)"
            ));
        }
        let us: f64 = self
            .get(c.start, "start_us")?
            .parse()
            .map_err(|_| format!("line {ln}: start_us is not a number"))?;
        // NaN is rejected too.
        if us.is_nan() || us < 0.0 {
            return Err(format!("line {ln}: start_us must be >= 0"));
        }
        if us * 1e6 > MAX_TIME.ps() as f64 {
            return Err(format!(
                "line {ln}: start_us {us} is later than the largest time lbsim simulates (1000000s)"
            ));
        }
        Ok(FlowSpec {
            src,
            dst,
            size,
            start: SimTime((us * 1e6).round() as u64),
        })
    }

    /// The `after` column of row number `row`: earlier rows, `;`-separated.
    fn after(&self, col: Option<usize>, row: u32) -> Result<Vec<u32>, String> {
        let mut after = Vec::new();
        for dep in col
            .map_or("", |i| self.fields.get(i).copied().unwrap_or(""))
            .split(';')
            .map(str::trim)
        {
            if dep.is_empty() {
                continue;
            }
            let d: u32 = dep
                .parse()
                .map_err(|_| format!("line {}: after entry \"{dep}\" is not a row number", self.line))?;
            if d >= row {
                return Err(format!(
                    "line {}: after names row {d}, but a flow may only wait for earlier rows (this is row {row})",
                    self.line
                ));
            }
            after.push(d);
        }
        Ok(after)
    }

    /// The `step` column (0 when absent or empty).
    fn step(&self, col: Option<usize>) -> Result<u32, String> {
        match col.and_then(|i| self.fields.get(i)).filter(|v| !v.is_empty()) {
            Some(v) => v
                .parse()
                .map_err(|_| format!("line {}: step is not an integer", self.line)),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_errors_name_the_line() {
        let ok = parse_flow_csv("src,dst,size_bytes,start_us\n0,1,4096,0\n2,0,10,1.5\n", 4).unwrap();
        assert_eq!(ok.flows[1].start, SimTime(1_500_000));
        let deps = parse_flow_csv(
            "src,dst,size_bytes,start_us,after,step\n0,1,9,0,,0\n1,2,9,0,,0\n2,3,9,0,0;1,1\n",
            4,
        )
        .unwrap();
        assert_eq!(deps.after, vec![vec![], vec![], vec![0, 1]]);
        assert_eq!(deps.step, vec![0, 0, 1]);
        let e = parse_flow_csv("src,dst,size_bytes,start_us,after\n0,1,9,0,1\n1,2,9,0,\n", 4).unwrap_err();
        assert!(e.contains("line 2") && e.contains("earlier rows"), "{e}");
        let e = parse_flow_csv("src,dst,size_bytes,start_us\n0,9,4096,0\n", 4).unwrap_err();
        assert!(e.contains("line 2") && e.contains("dst 9"), "{e}");
        assert!(parse_flow_csv("a,b\n", 4).unwrap_err().contains("src"));
    }
}
