//! `ixbench index` on data like the user's own (issue 12): user-defined indexes (`--index`)
//! on ixbench's table, on a sysbench-shaped table with large TEXT values (`--like sbtest`) or
//! on a copy of the user's table (`--from-table`), with table rebuilds run at every point of
//! the knob grid. The lab's driver ([`crate::cmd::index`]) calls these.

use anyhow::{bail, Result};
use serde_json::json;

use crate::cmd::index::IndexArgs;
use crate::dbms::{Conn, Dbms, IndexSpec};
use crate::index_spec::{check_columns, parse_all, table_columns, UserIndex};
use crate::measure::clock::Stopwatch;
use crate::session::Session;
use crate::step::own_table::{self, Sample};
use crate::workload::lab::LabTable;

/// Where the lab's table comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The lab table of the lab's workload (the default: the insert benchmark's), loaded (or
    /// reused) as usual.
    Lab {
        /// The workload's registered name.
        workload: String,
    },
    /// `--like sbtest`.
    LikeSbtest {
        /// Bytes of each `c`.
        text_bytes: u64,
    },
    /// `--workload NAME` of a workload without a lab table of its own: its table, loaded by it.
    Workload {
        /// The workload's registered name.
        name: String,
    },
    /// `--from-table`.
    Copy {
        /// The user's `[SCHEMA.]TABLE`.
        from: String,
        /// How much of it.
        sample: Sample,
    },
}

/// What the own-data options of `ixbench index` ask for.
#[derive(Debug, Clone)]
pub struct OwnPlan {
    /// The table's source.
    pub source: Source,
    /// The table the lab builds on.
    pub table: String,
    /// `--index` values.
    pub indexes: Vec<UserIndex>,
}

impl OwnPlan {
    /// The plan from the command line, or `None` when none of --index, --like, --from-table
    /// is given (the lab workload's indexes on its lab table: `lab`, the workload's name and
    /// its table's). Checks what can be checked without a connection.
    pub fn from_args(args: &IndexArgs, lab: (&str, &str)) -> Result<Option<OwnPlan>> {
        let mut indexes = parse_all(&args.user_indexes)?;
        let prefix = &args.common.table_prefix;
        let workload = args
            .workload
            .as_deref()
            .and_then(crate::workload::registry::find)
            .filter(|e| e.lab.is_none());
        if let Some(e) = workload {
            // The workload's secondary indexes, unless --index names others.
            if indexes.is_empty() {
                let specs: Vec<String> = (e.indexes)()
                    .into_iter()
                    .map(|(n, cols)| format!("{n}: {}", cols.join(", ")))
                    .collect();
                indexes = parse_all(&specs)?;
            }
            let table = e.ddl_target.table.to_string();
            crate::workload::tables::validate_name(&table)?;
            return Ok(Some(OwnPlan {
                source: Source::Workload {
                    name: e.name.to_string(),
                },
                table,
                indexes,
            }));
        }
        let (source, table) = match (&args.like, &args.from_table) {
            (Some(l), _) if l.eq_ignore_ascii_case("sbtest") => (
                Source::LikeSbtest {
                    text_bytes: args.text_bytes,
                },
                format!("{prefix}sbtest"),
            ),
            (Some(l), _) => bail!("unknown --like {l:?}: expected sbtest"),
            (None, Some(f)) => {
                own_table::check_source_name(f)?;
                crate::dbms::require_existing_database(
                    &args.common.target,
                    &format!("--from-table {f}"),
                )?;
                let sample = match (args.sample, args.sample_pct) {
                    (Some(n), _) => Sample::Rows(n),
                    (None, Some(p)) if p > 0.0 && p <= 100.0 => Sample::Pct(p),
                    (None, Some(p)) => bail!("--sample-pct {p}: expected a percentage in (0, 100]"),
                    (None, None) => Sample::All,
                };
                (
                    Source::Copy {
                        from: f.clone(),
                        sample,
                    },
                    own_table::copy_name(prefix, f),
                )
            }
            (None, None) if indexes.is_empty() => return Ok(None),
            (None, None) => (
                Source::Lab {
                    workload: lab.0.to_string(),
                },
                lab.1.to_string(),
            ),
        };
        if !matches!(source, Source::Lab { .. }) && indexes.is_empty() && !args.rebuild {
            bail!("nothing to build on {table}: give --index 'NAME: col, ...' and/or --rebuild");
        }
        crate::workload::tables::validate_name(&table)?;
        Ok(Some(OwnPlan {
            source,
            table,
            indexes,
        }))
    }

    /// The config entry of the results.
    pub fn config(&self) -> serde_json::Value {
        json!({
            "table": self.table,
            "source": match &self.source {
                Source::Lab { workload } => json!(workload),
                Source::LikeSbtest { text_bytes } => json!({"like": "sbtest", "text_bytes": text_bytes}),
                Source::Workload { name } => json!({"workload": name}),
                Source::Copy { from, sample } => json!({"from_table": from, "sample": format!("{sample:?}")}),
            },
            "indexes": self.indexes.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        })
    }

    /// Checks that need the server, before anything is created: the source table exists and
    /// can be read, the copy fits and its name is free (or ixbench's), the --index specs are
    /// valid for this DBMS and name columns the table has (`lab`: the lab workload's table).
    pub fn check(&self, target: &dyn Dbms, conn: &mut dyn Conn, lab: &dyn LabTable) -> Result<()> {
        let kind = target.kind();
        for i in &self.indexes {
            i.spec(&self.table, kind)?;
        }
        if let Some(i) = self.indexes.iter().find(|i| i.cols.iter().any(|c| c.expr)) {
            let d = target.dialect();
            if !d.index_expressions() {
                let version = target.info(conn)?.version;
                bail!(
                    "--index {}: {} ({version}) has no expressions in indexes (MySQL 8.0.13+, PostgreSQL and SQLite do)",
                    i.name,
                    d.name()
                );
            }
        }
        let cols: Vec<String> = match &self.source {
            Source::Lab { .. } => lab.columns(target.dialect()),
            Source::LikeSbtest { .. } => ["id", "k", "c", "pad"].map(String::from).to_vec(),
            // The workload's table does not exist yet: its indexes are checked when built.
            Source::Workload { .. } => return Ok(()),
            Source::Copy { from, sample } => {
                own_table::check_copy(target, conn, from, &self.table, *sample)?;
                table_columns(conn, kind, from)?
            }
        };
        check_columns(&self.indexes, &self.table, &cols)?;
        if let Source::Copy { from, .. } = &self.source {
            let existing = own_table::secondary_indexes(conn, kind, from)?;
            for i in &self.indexes {
                if existing.iter().any(|e| e.eq_ignore_ascii_case(&i.name)) {
                    bail!(
                        "--index {}: {from} already has an index of that name (the copy has it too)",
                        i.name
                    );
                }
            }
        }
        Ok(())
    }

    /// The --index specs on the lab's table.
    pub fn specs(&self, kind: &str) -> Result<Vec<IndexSpec>> {
        self.indexes
            .iter()
            .map(|i| i.spec(&self.table, kind))
            .collect()
    }

    /// Make the table (sbtest-like, the workload's or the copy) and return its rows; the
    /// copy's time and figures go into the results' config, apart from the builds.
    pub fn prepare(&self, s: &mut Session, rows: u64, seed: u64) -> Result<u64> {
        let target = s.target.as_ref();
        match &self.source {
            Source::Lab { .. } => unreachable!("the lab table is loaded by the lab"),
            Source::LikeSbtest { text_bytes } => {
                crate::outln!(
                    "\n== {}: like sysbench's sbtest, {rows} rows, c TEXT of {text_bytes} bytes",
                    self.table
                );
                let secs = own_table::create_like_sbtest(
                    target,
                    s.conn.as_mut(),
                    &self.table,
                    rows,
                    *text_bytes,
                    seed,
                )?;
                crate::outln!("   created and filled in {secs:.2} s");
                s.result.config["like_table"] = json!({
                    "table": self.table, "rows": rows, "text_bytes": text_bytes, "seconds": secs,
                });
                Ok(rows)
            }
            Source::Workload { name } => {
                let entry = crate::workload::registry::find(name)
                    .ok_or_else(|| anyhow::anyhow!("unknown workload {name:?}"))?;
                let load = crate::workload::registry::DdlLoad {
                    tables: 1,
                    table_size: u32::try_from(rows).unwrap_or(u32::MAX),
                    threads: 1,
                    rand_type: crate::workload::registry::RandType::Uniform,
                    seed,
                };
                let w = entry.ddl_workload(&load, target)?;
                crate::outln!(
                    "\n== {}: the {name} workload's table, about {rows} rows",
                    self.table
                );
                let t0 = Stopwatch::start();
                let wait = crate::progress::waiting("the load");
                w.load(target, 1)?;
                drop(wait);
                let secs = t0.elapsed_secs();
                let n = crate::workload::tables::count_rows(s.conn.as_mut(), &self.table)?;
                crate::outln!("   loaded {n} rows in {secs:.2} s");
                s.result.config["workload_table"] = json!({
                    "workload": name, "table": self.table, "rows": n, "seconds": secs,
                });
                Ok(n)
            }
            Source::Copy { from, sample } => {
                crate::outln!("\n== copy of {from} into {} ({sample:?})", self.table);
                let c = own_table::copy_table(
                    target,
                    s.conn.as_mut(),
                    from,
                    &self.table,
                    *sample,
                    false,
                )?;
                crate::outln!(
                    "   copied {} of {} rows in {:.2} s (indexes: {})",
                    c.rows,
                    c.source_rows,
                    c.seconds,
                    if c.indexes.is_empty() {
                        "none".to_string()
                    } else {
                        c.indexes.join(", ")
                    }
                );
                s.result.config["copy"] = json!({
                    "from": from, "table": self.table, "sample": format!("{sample:?}"),
                    "source_rows": c.source_rows, "rows": c.rows, "seconds": c.seconds,
                    "indexes": c.indexes, "source_bytes": c.source_bytes,
                });
                Ok(c.rows)
            }
        }
    }

    /// Seed 002 on the copy: copy again with the secondary indexes in place during the load
    /// (indexes first) and with them built after it (load first); both timed, with the
    /// index sizes. Only for --from-table.
    pub fn strategies(&self, s: &mut Session) -> Result<()> {
        let Source::Copy { from, sample } = &self.source else {
            crate::outln!("\n--strategy: only with --from-table when --like or --index is given");
            return Ok(());
        };
        crate::outln!("\n== load strategies on copies of {from}");
        for defer in [false, true] {
            let target = s.target.as_ref();
            let c =
                own_table::copy_table(target, s.conn.as_mut(), from, &self.table, *sample, defer)?;
            let (load, idx) = c.deferred.unwrap_or((c.seconds, 0.0));
            let mut r = crate::results::StrategyResult {
                strategy: if defer { "load-first" } else { "indexes-first" }.into(),
                rows: c.rows,
                load_secs: load,
                index_secs: idx,
                total_secs: c.seconds,
                ..Default::default()
            };
            match target.sizes(s.conn.as_mut(), std::slice::from_ref(&self.table), true) {
                Ok(sz) => {
                    r.index_bytes = sz
                        .objects
                        .into_iter()
                        .filter(|(n, _)| c.indexes.contains(n))
                        .collect()
                }
                Err(e) => r.warnings.push(format!("index sizes unknown: {e:#}")),
            }
            r.checks.push(crate::results::Check {
                name: "indexes".into(),
                ok: !c.indexes.is_empty(),
                detail: format!("the copy has {}", c.indexes.join(", ")),
            });
            crate::outln!(
                "   {}: {} rows, load {load:.2} s + indexes {idx:.2} s = {:.2} s",
                r.strategy,
                c.rows,
                c.seconds
            );
            s.result.strategies.push(r);
            s.store.write_run(&s.result)?;
        }
        Ok(())
    }

    /// Drop the --index indexes that exist on the table (before each build).
    pub fn drop_indexes(&self, target: &dyn Dbms, conn: &mut dyn Conn) -> Result<()> {
        for spec in self.specs(target.kind())? {
            if conn.index_exists(&self.table, &spec.name)? {
                conn.execute(&target.drop_index_sql(&spec))?;
            }
        }
        Ok(())
    }

    /// At the end: drop the table ixbench made (not the lab table), unless --keep (a
    /// workload's other tables, if it made any, are left like the lab table).
    pub fn finish(&self, s: &mut Session, keep: bool) -> Result<()> {
        if matches!(self.source, Source::Lab { .. }) {
            return Ok(());
        }
        let kind = s.target.kind();
        // Only the table ixbench made (a check that failed made none).
        if !crate::workload::tables::is_owned(s.conn.as_mut(), kind, &self.table)? {
            return Ok(());
        }
        if keep {
            crate::outln!("\nkept {}", self.table);
            return Ok(());
        }
        // Shown and bounded while another session's lock holds it up.
        let what = format!("dropping {}", self.table);
        crate::dbms::lock_watch::watched(s.target.as_ref(), s.conn.as_mut(), &what, |c| {
            own_table::drop_owned(c, kind, &self.table)
        })?;
        crate::outln!("\ndropped {}", self.table);
        Ok(())
    }
}

/// Whether the rebuild `name` is one the `--rebuilds` words choose (every one when none).
pub fn chosen_rebuild(name: &str, only: &[String]) -> bool {
    only.is_empty()
        || only.iter().any(|w| {
            name.to_ascii_lowercase()
                .contains(&w.trim().to_ascii_lowercase())
        })
}

/// A `--rebuilds` word that matches none of `names` (the rebuilds this lab can time) is an
/// error naming the word and the rebuilds there are.
pub fn check_rebuilds(names: &[String], only: &[String]) -> Result<()> {
    for w in only {
        if !names
            .iter()
            .any(|n| chosen_rebuild(n, std::slice::from_ref(w)))
        {
            bail!(
                "--rebuilds {:?} matches no table rebuild here: there are {}",
                w.trim(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    Ok(())
}

/// The rebuilds to time at every knob point on the lab's table: the DBMS's, with MySQL's
/// `ALTER TABLE ... ENGINE=X` as both `ALGORITHM=COPY` and `ALGORITHM=INPLACE` (seed 004),
/// filtered by `--rebuilds` words.
pub fn rebuild_statements(
    target: &dyn Dbms,
    table: &str,
    only: &[String],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, sql) in target.rebuild_statements(table) {
        out.extend(target.dialect().rebuild_variants(name, sql));
    }
    out.retain(|(n, _)| chosen_rebuild(n, only));
    out
}
