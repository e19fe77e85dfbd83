//! Output formats, one file each: [`text`] (what the terminal shows), [`markdown`] and [`csv`]
//! (tables for reports and spreadsheets), [`html`] (a self-contained report); every number a
//! person reads in them is formatted by [`crate::format`]; every report opens with [`summary`]
//! (what the command found). JSON is the result model itself ([`crate::results`], serde). The
//! tables every command's run has are here: [`steps_table`] and [`checks_table`]; runs side by side under the noise rule are
//! [`compare`] (for `ixbench compare`, `ab` and `report`).

pub mod chart;
pub mod compare;
pub mod csv;
pub mod ddl;
pub mod html;
pub mod html_table;
pub mod markdown;
pub mod rt_lines;
pub mod schema_tools;
pub mod summary;
pub mod text;
pub mod timelines;

/// A rectangular table of already formatted cells, rendered by each format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names and no rows.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row (padded or cut to the header's length).
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }
}

/// One row per step with the metrics that compare runs: the end-of-run table, `steps.csv`,
/// `steps.md` and the HTML report. Every header names its unit; `cl_` columns are the client
/// (ixbench), `srv_` the server's processes, `dev_` the device under the data directory;
/// resource columns cover the step's measured window, per op = per inserted row (load), per
/// query (query steps), per indexed row (l.x). `-` = unknown (not measurable here).
pub fn steps_table(run: &crate::results::RunResult) -> Table {
    let mut t = Table::new([
        "step",
        "secs",
        "ips (rows/s)",
        "qps (q/s)",
        "dps (rows/s)",
        "maxop (s)",
        "p01 (ops/s)",
        "cl_cpu (us/op)",
        "srv_cpu (us/op)",
        "srv_read (KB/op)",
        "srv_write (KB/op)",
        "srv_wcall (KB/op)",
        "dev_write (KB/op)",
        "srv_rss (MB)",
        "datadir (GB)",
        "db (GB)",
        "status",
    ]);
    let whole = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.0}"));
    for st in &run.steps {
        let status = format!(
            "{}{}",
            serde_json::to_value(st.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            if st.rate_ok { "" } else { " (rate NOT met)" }
        );
        let m = &st.summary;
        t.push(vec![
            st.name.clone(),
            crate::format::secs(st.seconds),
            format!("{:.0}", m.ips),
            format!("{:.0}", m.qps),
            format!("{:.0}", m.dps),
            crate::format::secs(m.maxop),
            st.interval_rate_text(m.p01),
            crate::format::num(m.cpupq),
            crate::format::opt(m.srv_cpupq),
            crate::format::opt(m.srv_read_kb_per_op),
            crate::format::opt(m.srv_write_kb_per_op),
            crate::format::opt(m.srv_write_call_kb_per_op),
            crate::format::opt(m.dev_write_kb_per_op),
            whole(m.srv_rss_mb),
            crate::format::opt(m.srv_datadir_gb),
            crate::format::opt(m.dbgb),
            status,
        ]);
    }
    t
}

/// One row per self-check of the run, whatever command made it
/// ([`crate::results::RunResult::all_checks`]): where it ran, its name, `ok` or `FAILED`, and
/// what it found. `checks.csv`, `checks.md`, the report's list of checks and the text's
/// ([`text::checks`]) are this table.
pub fn checks_table(run: &crate::results::RunResult) -> Table {
    let mut t = Table::new(["where", "check", "result", "detail"]);
    for c in run.all_checks() {
        t.push(vec![
            c.at,
            c.check.name,
            if c.check.ok { "ok" } else { "FAILED" }.into(),
            c.check.detail,
        ]);
    }
    t
}
