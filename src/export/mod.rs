//! Output formats, one file each: [`text`] (what the terminal shows), [`markdown`] and [`csv`]
//! (tables for reports and spreadsheets), [`html`] (a self-contained report). JSON is the
//! result model itself ([`crate::results`], serde).

pub mod csv;
pub mod html;
pub mod markdown;
pub mod text;

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

/// One row per step with the metrics that compare runs: the end-of-run table, `steps.csv` and
/// `steps.md`.
pub fn steps_table(run: &crate::results::RunResult) -> Table {
    let mut t = Table::new([
        "step", "secs", "ips", "qps", "dps", "cpupq", "maxop", "p01", "dbgb", "status",
    ]);
    for st in &run.steps {
        let status = format!(
            "{}{}",
            serde_json::to_value(st.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            if st.rate_ok { "" } else { " (rate NOT met)" }
        );
        t.push(vec![
            st.name.clone(),
            format!("{:.1}", st.seconds),
            format!("{:.0}", st.summary.ips),
            format!("{:.0}", st.summary.qps),
            format!("{:.0}", st.summary.dps),
            format!("{:.2}", st.summary.cpupq),
            format!("{:.3}", st.summary.maxop),
            format!("{:.0}", st.summary.p01),
            st.summary
                .dbgb
                .map(|g| format!("{g:.3}"))
                .unwrap_or_else(|| "-".into()),
            status,
        ]);
    }
    t
}
