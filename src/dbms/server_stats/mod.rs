//! What a DBMS itself reports about the work it did: the server figures ixbench can take when
//! the server's processes are not on this machine (a managed service, another host, a
//! container), read through ixbench's own connection as plain SQL. One file per DBMS, in
//! its folder (`postgres/stats.rs`: the statistics views; `mysql/stats.rs`: global status,
//! `INNODB_METRICS`, performance_schema, MyRocks's counters), says which views and columns its
//! server version has, and its row in [`super::registry`] names its probe; [`probe`] asks the server once what it has, [`StatsPlan::read`] reads the counters,
//! and [`StatsSnapshot::delta`] turns two readings into figures, each named for what it is
//! and where it comes from. What the server does not report is listed with the reason, never
//! a 0.

use serde::{Deserialize, Serialize};

use super::Conn;

/// One figure the DBMS reported over a window: a counter's increase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReportedFigure {
    /// What it is, with the view it comes from: `WAL bytes (pg_stat_wal)`, `server blocks
    /// read (pg_stat_database)`, `InnoDB bytes written to data files (global status
    /// Innodb_data_written)`.
    pub name: String,
    /// The counter, exactly: `pg_stat_wal.wal_bytes`, `status.Innodb_data_written`,
    /// `pg_stat_io.writes[client backend/relation/normal]`.
    pub source: String,
    /// `bytes`, `blocks` (of `block_size`), `rows`, `ms`, `s`, `count`.
    pub unit: String,
    /// The counter's increase over the window.
    pub value: f64,
}

/// A figure the DBMS could not give, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnknownFigure {
    /// What it would be (`server CPU per statement (pg_stat_kcache)`).
    pub name: String,
    /// Why it is unknown (`pg_stat_kcache is not installed in this database`).
    pub why: String,
}

/// One query of a [`StatsPlan`]: it returns rows of (counter, value as text); each counter
/// becomes `VIEW.COUNTER`.
#[derive(Debug, Clone)]
pub(crate) struct StatsQuery {
    /// The view (or group of counters) it reads, as figures name it.
    pub view: &'static str,
    /// The SQL: two columns, the counter's name and its value.
    pub sql: String,
    /// What a counter of this view is: its name in words with where it comes from (`WAL
    /// bytes (pg_stat_wal)`) and its unit; `None`: not kept.
    pub describe: fn(&str) -> Option<(String, &'static str)>,
    /// Keep only counters that moved (views with many rows: pg_stat_io, INNODB_METRICS,
    /// performance_schema's file summary); the others are kept at 0 too.
    pub moved_only: bool,
    /// Why a failure of this query makes its figures unknown (its view in words).
    pub what: &'static str,
}

/// What one server reports and how to read it, found by [`probe`].
#[derive(Debug, Clone, Default)]
pub struct StatsPlan {
    /// The server and the views read, in words (`PostgreSQL 15.8: pg_stat_wal,
    /// pg_stat_database, pg_stat_bgwriter`).
    pub source: String,
    pub(crate) queries: Vec<StatsQuery>,
    /// What this server cannot report, and why (an older version, an extension not installed,
    /// performance_schema off).
    pub unknown: Vec<UnknownFigure>,
}

/// The counters of a [`StatsPlan`] at one moment.
#[derive(Debug, Clone, Default)]
pub struct StatsSnapshot {
    /// (source, value).
    values: Vec<(String, f64)>,
    /// Queries that failed: (what, error in one line).
    failed: Vec<(&'static str, String)>,
    /// Statements sent.
    pub queries: u32,
}

impl StatsPlan {
    /// Read every counter now. A query that fails leaves its figures unknown (with its error)
    /// rather than failing the measurement.
    pub fn read(&self, conn: &mut dyn Conn) -> StatsSnapshot {
        let mut s = StatsSnapshot::default();
        for q in &self.queries {
            s.queries += 1;
            match conn.query_rows(&q.sql) {
                Ok(rows) => {
                    for r in rows {
                        let (Some(Some(k)), Some(Some(v))) = (r.first(), r.get(1)) else {
                            continue;
                        };
                        if let Ok(v) = v.trim().parse::<f64>() {
                            s.values.push((format!("{}.{k}", q.view), v));
                        }
                    }
                }
                Err(e) => s.failed.push((q.what, crate::format::error_line(&e))),
            }
        }
        s
    }
}

impl StatsSnapshot {
    /// What moved from `self` to `later`: each counter of `plan` read both times, named; and
    /// what this window could not read besides the plan's own unknowns (a query that failed,
    /// a counter that went down: a reset, an evicted pg_stat_statements entry).
    pub fn delta(
        &self,
        later: &StatsSnapshot,
        plan: &StatsPlan,
    ) -> (Vec<ReportedFigure>, Vec<UnknownFigure>) {
        let mut figures = Vec::new();
        let mut unknown: Vec<UnknownFigure> = Vec::new();
        for (what, err) in self.failed.iter().chain(&later.failed) {
            if !unknown.iter().any(|u| u.name == *what) {
                unknown.push(UnknownFigure {
                    name: what.to_string(),
                    why: format!("the query failed: {err}"),
                });
            }
        }
        for (source, after) in &later.values {
            let Some(q) = plan
                .queries
                .iter()
                .find(|q| source.starts_with(q.view) && source[q.view.len()..].starts_with('.'))
            else {
                continue;
            };
            let counter = &source[q.view.len() + 1..];
            let Some((what, unit)) = (q.describe)(counter) else {
                continue;
            };
            let name = what;
            let Some(before) = self.values.iter().find(|(s, _)| s == source).map(|x| x.1) else {
                // new since the window opened (a pg_stat_io row, a statement): from 0
                if *after != 0.0 {
                    figures.push(ReportedFigure {
                        name,
                        source: source.clone(),
                        unit: unit.into(),
                        value: *after,
                    });
                }
                continue;
            };
            let d = after - before;
            if d < 0.0 {
                unknown.push(UnknownFigure {
                    name,
                    why: format!(
                        "{source} went down during the window ({before} -> {after}): reset or \
                         evicted"
                    ),
                });
            } else if d > 0.0 || !q.moved_only {
                figures.push(ReportedFigure {
                    name,
                    source: source.clone(),
                    unit: unit.into(),
                    value: d,
                });
            }
        }
        (figures, unknown)
    }
}

/// `'a', 'b'` for SQL: names ixbench wrote (letters, digits, `_`), spliced as they are.
pub(crate) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(k: &str) -> Option<(String, &'static str)> {
        Some((format!("thing {k} (v)"), "bytes"))
    }

    fn plan(moved_only: bool) -> StatsPlan {
        StatsPlan {
            source: "test".into(),
            queries: vec![StatsQuery {
                view: "v",
                sql: String::new(),
                describe,
                moved_only,
                what: "v in words",
            }],
            unknown: vec![UnknownFigure {
                name: "x".into(),
                why: "not here".into(),
            }],
        }
    }

    fn snap(v: &[(&str, f64)]) -> StatsSnapshot {
        StatsSnapshot {
            values: v.iter().map(|(k, x)| (k.to_string(), *x)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn deltas_are_named_and_unknowns_say_why() {
        let a = snap(&[("v.a", 10.0), ("v.b", 5.0), ("v.c", 7.0)]);
        let b = snap(&[("v.a", 25.0), ("v.b", 5.0), ("v.c", 3.0), ("v.d", 4.0)]);
        let (f, u) = a.delta(&b, &plan(false));
        let got: Vec<(&str, f64)> = f.iter().map(|f| (f.source.as_str(), f.value)).collect();
        assert_eq!(got, vec![("v.a", 15.0), ("v.b", 0.0), ("v.d", 4.0)]);
        assert_eq!(f[0].name, "thing a (v)");
        // a counter that went down: unknown, not 0 or negative
        assert_eq!(u.len(), 1, "{u:?}");
        assert!(u[0].why.contains("went down"), "{u:?}");
        // moved_only leaves out what stayed
        let (f, _) = a.delta(&b, &plan(true));
        assert!(f.iter().all(|f| f.value > 0.0));
        // a failed query: its view unknown with the error
        let mut c = snap(&[]);
        c.failed.push(("v in words", "permission denied".into()));
        let (f, u) = a.delta(&c, &plan(false));
        assert!(f.is_empty());
        assert!(u.iter().any(|u| u.why.contains("permission denied")));
    }
}
