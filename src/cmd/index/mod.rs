//! `ixbench index`: the index-build lab. On a table ixbench loaded, it builds the secondary
//! indexes (each alone and all together, blocking or online), measures every build (wall
//! time, rows/s, the DBMS's CPU and I/O, its own I/O counters, a progress timeline, the index
//! sizes), checks each index is valid and used, sweeps a grid of knobs with repeats, compares
//! load strategies and times table rebuilds. Seed 001's table, produced by the tool: the lab
//! table of the default workload (the insert benchmark's), or of `--workload NAME`, that its
//! registry entry hands out ([`crate::workload::lab::LabTable`]); a workload without one is
//! built on as own data ([`crate::cmd::index::own`]). On a sharded target (`--target spider|pg-shards`) every build runs on every shard's server
//! (see [`crate::cmd::index::sharded`]).

pub mod own;
pub mod sharded;

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use serde_json::json;

use crate::cmd::index::sharded::ShardedLab;
use crate::dbms::{Conn, Dbms, KnobScope};
use crate::export::{text, Table};
use crate::options::args::parse_data_length;
use crate::options::cli::OnError;
#[allow(unused_imports)]
use crate::options::cli::*;
use crate::progress::Planned;
use crate::results::{build_groups, median, BuildResult, Check, RunWarning, StrategyResult};
use crate::session::Session;
use crate::step::create_index::{drop_indexes, measured_build, BuildRequest, CostSource};
use crate::step::step_host::Steps;
use crate::step::sweep::{apply_server_knobs, knob_label, knob_scopes, same_value};
use crate::step::sweep::{grid, parse_knobs, KnobAxis};
use crate::workload::lab::{LabIndex, LabOn, LabSettings, LabTable};
use crate::workload::registry::Entry;
use crate::workload::tables;
use clap::Args;

/// Parse `--indexes`: names or numbers 1..N of the lab table's `indexes`.
pub fn parse_indexes(list: &[String], indexes: &[LabIndex]) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    let n = indexes.len();
    for s in list {
        let s = s.trim();
        let i = match s.parse::<usize>() {
            Ok(k) if (1..=n).contains(&k) => k - 1,
            _ => indexes.iter().position(|d| d.short == s).with_context(|| {
                let names: Vec<&str> = indexes.iter().map(|d| d.short.as_str()).collect();
                format!(
                    "unknown index {s:?}: expected {} or 1..{n}",
                    names.join(", ")
                )
            })?,
        };
        if !out.contains(&i) {
            out.push(i);
        }
    }
    if out.is_empty() {
        bail!("--indexes is empty");
    }
    Ok(out)
}

/// Run `ixbench index`.
pub fn run(args: &IndexArgs, argv: Vec<String>, interrupt: &AtomicBool) -> Result<u8> {
    let sharded_target = args.common.parsed_target()?.sharded();
    crate::cmd::index::sharded::check_args(args, sharded_target)?;
    if args.reuse {
        crate::dbms::require_existing_database(&args.common.target, "--reuse")?;
    }
    let entry = lab_entry(args.workload.as_deref());
    let hooks = entry
        .lab
        .with_context(|| format!("the {} workload has no lab table", entry.name))?;
    let lab_table = (hooks.table)(&args.common.table_prefix);
    let idxs = parse_indexes(&args.indexes, lab_table.indexes())?;
    // --rebuilds words that match no rebuild the DBMS has at any version are refused before
    // a results directory is made or a server started (checked again, against the server's
    // own list, once connected).
    {
        let sql = crate::dbms::registry::dialect(&args.common.parsed_target()?.spec.kind);
        if let Some(names) = sql.rebuild_names(args.common.engine.as_deref()) {
            crate::cmd::index::own::check_rebuilds(&names, &args.rebuilds)?;
        }
    }
    let axes = parse_knobs(&args.common, &args.knobs)?;
    let mut each = false;
    let mut all = false;
    for b in &args.builds {
        match b.trim() {
            "each" => each = true,
            "all" => all = true,
            other => bail!("unknown --builds value {other:?}: expected each, all"),
        }
    }
    let modes: Vec<bool> = match args.mode {
        BuildMode::Blocking => vec![false],
        BuildMode::Online => vec![true],
        BuildMode::Both => vec![false, true],
    };
    let own = crate::cmd::index::own::OwnPlan::from_args(args, (entry.name, lab_table.name()))?;
    let table = own
        .as_ref()
        .map(|o| o.table.clone())
        .unwrap_or_else(|| lab_table.name().to_string());
    crate::session::check_common(&args.common, std::slice::from_ref(&table))?;
    let settings = LabSettings {
        seed: args.common.seed,
        data_len: parse_data_length(&args.common.data_length)?,
        quiet_timeout: crate::options::args::parse_quiet_timeout(args.common.quiet_timeout)?,
    };
    let shorts: Vec<&str> = idxs
        .iter()
        .map(|&i| lab_table.indexes()[i].short.as_str())
        .collect();
    let config = index_config(args, &table, &shorts, &axes, own.as_ref(), sharded_target);
    let planned = planned_steps(args, &axes, own.is_none());
    crate::progress::start(planned);
    let mut s = Session::open(&args.common, argv, config)?;
    s.workload_notes(lab_notes(&s.result.target, own.is_none().then_some(&entry)));
    let lab = Lab {
        args,
        idxs,
        axes,
        each,
        all,
        modes,
        settings,
        lab_table,
        own_rows: Default::default(),
        table,
        interrupt,
        own,
        sharded: Default::default(),
        shard_bases: Default::default(),
    };
    let outcome = lab.go(&mut s);
    finish(&lab, s, outcome, interrupt)
}

/// The workload whose lab table `ixbench index` builds on: `--workload NAME` when its entry
/// hands out one, else the default workload (the registry's first).
fn lab_entry(workload: Option<&str>) -> Entry {
    workload
        .and_then(crate::workload::registry::find)
        .filter(|e| e.lab.is_some())
        .unwrap_or_else(crate::workload::registry::default_entry)
}

/// What `run.json`'s `config` records of an index lab run (`indexes`: the lab table's
/// chosen indexes, by their short names).
fn index_config(
    args: &IndexArgs,
    table: &str,
    indexes: &[&str],
    axes: &[KnobAxis],
    own: Option<&crate::cmd::index::own::OwnPlan>,
    sharded_target: bool,
) -> serde_json::Value {
    json!({
        "command": "index",
        "target": crate::dbms::redact_url(&args.common.target),
        "engine": args.common.engine,
        "table": table,
        "rows": args.rows,
        "reuse": args.reuse,
        "indexes": indexes,
        "builds": args.builds,
        "mode": format!("{:?}", args.mode).to_lowercase(),
        "knobs": axes.iter().map(|a| json!({"name": a.name, "values": a.values})).collect::<Vec<_>>(),
        "repeat": args.repeat,
        "on_error": format!("{:?}", args.on_error).to_lowercase(),
        "strategy": args.strategy,
        "rebuild": args.rebuild,
        "seed": args.common.seed,
        "own": own.as_ref().map(|o| o.config()),
        "shard_builds": sharded_target.then_some(match args.shard_builds {
            Some(ShardBuilds::Sequential) => "sequential",
            _ => "parallel",
        }),
    })
}

/// The steps the live view counts down: the load (unless the table is reused or the user's),
/// one per knob point, the rebuilds and the strategies when asked.
fn planned_steps(args: &IndexArgs, axes: &[KnobAxis], lab_table: bool) -> Vec<(String, Planned)> {
    let mut planned = Vec::new();
    if !args.reuse && args.from_table.is_none() {
        planned.push(("l.i0".to_string(), Planned::Rows(args.rows)));
    }
    let points = grid(axes).len();
    for p in 1..=points {
        planned.push((point_step(p, points), Planned::Unknown));
    }
    if args.rebuild && lab_table {
        planned.push(("rebuilds".to_string(), Planned::Unknown));
    }
    if args.strategy {
        planned.push(("strategies".to_string(), Planned::Unknown));
    }
    planned
}

/// After the builds: the table ixbench made dropped (unless `--keep`), the failed builds
/// counted into the outcome, the tables printed and the session closed; the exit status.
fn finish(
    lab: &Lab,
    mut s: Session,
    mut outcome: Result<()>,
    interrupt: &AtomicBool,
) -> Result<u8> {
    let args = lab.args;
    if let Some(o) = &lab.own {
        // The table ixbench made is dropped even after a failed build (unless --keep).
        if let Err(e) = o.finish(&mut s, args.keep) {
            if outcome.is_ok() {
                outcome = Err(e);
            }
        }
    }
    let failed = s.result.builds.iter().filter(|b| b.error.is_some()).count();
    if outcome.is_ok() && failed > 0 {
        outcome = Err(anyhow::anyhow!(
            "{failed} of {} builds failed (see FAILED above); the others are in the results",
            s.result.builds.len()
        ));
    }
    let checks_ok = s
        .result
        .builds
        .iter()
        .all(|b| b.checks.iter().all(|c| c.ok))
        && s.result.steps.iter().all(|st| st.checks_ok())
        && s.result
            .strategies
            .iter()
            .all(|st| st.checks.iter().all(|c| c.ok));
    let mut out = vec![("index", builds_table(&s.result.builds, &lab.axes))];
    if let Some(nodes) = crate::cluster_target::nodes_table(&s.result) {
        out.push(("nodes", nodes));
    }
    if let Some(t) = crate::cmd::index::sharded::shards_table(&s.result.builds, &lab.axes) {
        out.push(("shards", t));
    }
    if !s.result.strategies.is_empty() {
        out.push(("strategies", strategies_table(&s.result.strategies)));
    }
    s.result.warnings = warning_summary(&s.result.builds);
    if !s.result.warnings.is_empty() {
        out.push((
            "warnings",
            warnings_table(&s.result.warnings, s.result.builds.len()),
        ));
    }
    s.close(outcome, interrupt, checks_ok, &out)
}

/// The index lab's notes on a target: how its builds run where a reader could not guess it
/// (MyRocks), and the workload's notes when the lab runs on its lab table with its indexes
/// (`workload`; not with --index, --like, --from-table).
fn lab_notes(target: &crate::dbms::TargetInfo, workload: Option<&Entry>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = workload {
        out.extend((e.notes)(&target.kind));
    }
    let ddl =
        crate::dbms::registry::ddl_dialect(&target.kind, &target.version, target.engine.as_deref());
    if let Some(note) = ddl.ok().and_then(|d| d.index_build_note()) {
        out.push(note.into());
    }
    out
}

/// A shard's role and its server's settings.
type ShardSettings = (String, Vec<(String, String)>);

struct Lab<'a> {
    args: &'a IndexArgs,
    idxs: Vec<usize>,
    axes: Vec<KnobAxis>,
    each: bool,
    all: bool,
    modes: Vec<bool>,
    /// What the lab table's load runs with.
    settings: LabSettings,
    /// The lab workload's table (unless --like, --from-table or --workload of a workload
    /// without one give another).
    lab_table: Box<dyn LabTable>,
    /// The rows of the table --like, --from-table or --workload made.
    own_rows: std::cell::Cell<Option<u64>>,
    table: String,
    interrupt: &'a AtomicBool,
    /// --index, --like, --from-table (see [`crate::cmd::index::own`]).
    own: Option<crate::cmd::index::own::OwnPlan>,
    /// On a sharded target: its shards, where every build runs (see [`crate::cmd::index::sharded`]).
    sharded: std::cell::RefCell<Option<ShardedLab>>,
    /// On a sharded target: each shard's server settings at the start (role, settings).
    shard_bases: std::cell::RefCell<Vec<ShardSettings>>,
}

impl Lab<'_> {
    fn go(&self, s: &mut Session) -> Result<()> {
        // Knobs first: an unknown one stops the command before anything is loaded.
        let sharded_cluster = s.cluster.as_ref().is_some_and(|c| c.sharded().is_some());
        let scopes = knob_scopes(
            &self.axes,
            s.target.as_ref(),
            s.conn.as_mut(),
            s.server.is_some() || sharded_cluster,
        )?;
        // --rebuilds: every word chooses a rebuild this lab times.
        let rebuild_names: Vec<String> = self
            .rebuild_list(s.target.as_ref(), &self.table, &[])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        crate::cmd::index::own::check_rebuilds(&rebuild_names, &self.args.rebuilds)?;
        if let Some(o) = &self.own {
            o.check(s.target.as_ref(), s.conn.as_mut(), self.lab_table.as_ref())?;
        }
        let own_table = self
            .own
            .as_ref()
            .filter(|o| !matches!(o.source, crate::cmd::index::own::Source::Lab { .. }));
        if let Some(o) = own_table {
            let rows = o.prepare(s, self.args.rows, self.args.common.seed)?;
            self.own_rows.set(Some(rows));
        } else if self.args.reuse {
            self.lab_table
                .open(s.target.dialect(), self.settings.clone());
            // Counting waits for a session's lock that blocks reads: shown and bounded.
            let what = format!("counting the rows of {}", self.table);
            let kind = s.target.kind();
            let lab = self.lab_table.as_ref();
            let rows =
                crate::dbms::lock_watch::watched(s.target.as_ref(), s.conn.as_mut(), &what, |c| {
                    tables::require_owned(c, kind, &self.table)?;
                    lab.count_rows(c)
                })?;
            crate::outln!("reusing {} ({rows} rows)", self.table);
            self.lab_table.set_rows(rows);
        } else {
            self.lab_table
                .open(s.target.dialect(), self.settings.clone());
            self.load(s, true)?;
        }
        if let Some(cs) = s.cluster.as_ref().filter(|_| sharded_cluster) {
            let builds = self.args.shard_builds.unwrap_or(ShardBuilds::Parallel);
            let lab = ShardedLab::new(cs, &self.table, builds)?;
            crate::outln!(
                "\nindex builds on this target: {}\n   rows of {} per shard: {}",
                lab.how(),
                self.table,
                lab.rows()
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            *self.shard_bases.borrow_mut() = cs.shard_settings();
            *self.sharded.borrow_mut() = Some(lab);
        }
        let target = s.target.as_ref();
        let mut cost = CostSource::for_target(target);
        if matches!(cost, CostSource::None) {
            let choice = crate::measure::server_figures::current();
            crate::outln!(
                "{}",
                if !choice.reads_proc() {
                    format!(
                        "note: --server-figures {}: no server CPU and I/O figures from /proc{}",
                        choice.name(),
                        if choice.reads_dbms(false) {
                            "; each build's figures as the DBMS counts them instead"
                        } else {
                            ""
                        }
                    )
                } else if choice.reads_dbms(false) {
                    "note: the server is not on this machine: no server CPU and I/O figures from /proc; each build's figures as the DBMS counts them instead".to_string()
                } else {
                    "note: the server is not on this machine: no server CPU and I/O figures"
                        .to_string()
                }
            );
        }
        if own_table.is_none() {
            let every: Vec<_> = self
                .lab_table
                .indexes()
                .iter()
                .map(|x| x.spec.clone())
                .collect();
            drop_indexes(target, s.conn.as_mut(), &self.table, &every)?;
        }
        if let Some(o) = &self.own {
            o.drop_indexes(target, s.conn.as_mut())?;
        }
        self.sweep(s, &mut cost, &scopes)?;
        // With own data, rebuilds ran at every point of the knob grid.
        if self.args.rebuild && self.own.is_none() && !self.interrupted() {
            self.rebuilds(s, &cost)?;
        }
        if let (true, Some(o)) = (self.args.strategy, &self.own) {
            if !self.interrupted() {
                crate::progress::step_named("strategies");
                o.strategies(s)?;
            }
        } else if self.args.strategy && !self.interrupted() {
            crate::progress::step_named("strategies");
            self.strategies(s, &cost)?;
        }
        Ok(())
    }

    /// Rows of the table the builds run on.
    fn rows(&self) -> u64 {
        self.own_rows.get().unwrap_or_else(|| self.lab_table.rows())
    }

    /// The lab table's chosen indexes (`--indexes`).
    fn lab_specs(&self) -> Vec<crate::dbms::IndexSpec> {
        let all = self.lab_table.indexes();
        self.idxs.iter().map(|&i| all[i].spec.clone()).collect()
    }

    /// A measured build after waiting (at most `--quiet-timeout`) for the server to finish
    /// the background work left by the last build, load or drop; the wait is in the build's
    /// results.
    fn quiet_build(
        &self,
        target: &dyn Dbms,
        cost: &CostSource,
        conn: &mut dyn Conn,
        req: &BuildRequest,
    ) -> BuildResult {
        if let Some(sh) = self.sharded.borrow().as_ref() {
            // Every shard waits for its own server to be quiet, then builds.
            return sh.build(req, self.settings.quiet_timeout);
        }
        let tables = [req.table.to_string()];
        let quiet =
            crate::step::quiet::wait(target, conn, &tables, self.settings.quiet_timeout, "build");
        let mut r = measured_build(target, cost, conn, req);
        // printed with the build's line (`print_new_warnings`)
        r.warnings.extend(quiet.warnings());
        r.quiet = quiet.wait;
        r
    }

    /// On a sharded target: restart every shard with the server-wide knobs of `point` (see
    /// [`crate::cmd::index::sharded::apply_server_knobs`]) and reconnect; true when one was restarted.
    fn apply_shard_knobs(
        &self,
        s: &mut Session,
        point: &[(String, String)],
        scopes: &[KnobScope],
    ) -> Result<bool> {
        let Some(cs) = s.cluster.as_mut() else {
            bail!("server-wide knobs need a cluster ixbench started");
        };
        let bases = self.shard_bases.borrow().clone();
        if !crate::cmd::index::sharded::apply_server_knobs(cs, point, scopes, &bases)? {
            return Ok(false);
        }
        if let Some(sh) = self.sharded.borrow_mut().as_mut() {
            sh.refresh(cs);
        }
        // The head's connections to the restarted shards are gone: a new control connection.
        s.conn = s.target.connect_admin()?;
        Ok(true)
    }

    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }

    /// A build with every Galera node watched (`--target galera`): per-node figures in the
    /// build's results (printed by the caller after the build's line), a node that left in
    /// its warnings (or its error with `--on-node-loss stop`).
    fn watched(
        &self,
        cluster: Option<&crate::cluster_target::ClusterSession>,
        build: impl FnOnce() -> BuildResult,
    ) -> BuildResult {
        let Some(c) = cluster.filter(|c| c.is_galera()) else {
            return build();
        };
        match c.watch(self.interrupt, &|| 0u64, build) {
            Ok((mut r, w)) => {
                if let Some(e) = w.stop_error() {
                    r.error = Some(e);
                } else if let Some(l) = w.loss_warning() {
                    r.warnings.push(l);
                }
                r.nodes = w.nodes;
                r
            }
            Err(e) => BuildResult {
                build: "(not built)".into(),
                error: Some(format!("{e:#}")),
                ..Default::default()
            },
        }
    }

    /// Load `args.rows` rows into the lab table with its workload's load step (a new table
    /// when `create`), kept as a step of the run.
    fn load(&self, s: &mut Session, create: bool) -> Result<f64> {
        let steps = lab_steps(s.cluster.as_ref(), self.interrupt);
        let on = LabOn {
            target: s.target.as_ref(),
            conn: s.conn.as_mut(),
            store: &mut s.store,
            interrupt: self.interrupt,
        };
        let step = self.lab_table.load(on, self.args.rows, create, &steps);
        crate::out!("{}", text::step_summary(&step));
        let secs = step.seconds;
        let err = step.error.clone();
        s.result.steps.push(step);
        s.store.write_run(&s.result)?;
        if let Some(e) = err {
            bail!("loading {} failed: {e}", self.table);
        }
        Ok(secs)
    }

    fn sweep(&self, s: &mut Session, cost: &mut CostSource, scopes: &[KnobScope]) -> Result<()> {
        let base = s
            .server
            .as_ref()
            .map(|v| v.settings.clone())
            .unwrap_or_default();
        let points = grid(&self.axes);
        let total = points.len();
        for (pi, point) in points.iter().enumerate() {
            if self.interrupted() {
                return Ok(());
            }
            let shown = knob_label(point);
            crate::progress::step_named(&point_step(pi + 1, total));
            crate::outln!(
                "\n== build{}{}",
                if total > 1 {
                    format!(" point {}/{total}", pi + 1)
                } else {
                    String::new()
                },
                if shown.is_empty() {
                    String::new()
                } else {
                    format!(": {shown}")
                }
            );
            let knobs = match self.apply_point(s, point, scopes, &base, cost) {
                Ok(k) => k,
                Err(e) => {
                    let r = BuildResult {
                        knobs: point.clone(),
                        build: "(not built)".into(),
                        error: Some(e.clone()),
                        ..Default::default()
                    };
                    crate::outln!("   FAILED: {e}");
                    s.result.builds.push(r);
                    s.store.write_run(&s.result)?;
                    match self.args.on_error {
                        OnError::Stop => bail!("{e}"),
                        OnError::Continue => continue,
                    }
                }
            };
            for rep in 1..=self.args.repeat {
                for &online in &self.modes {
                    for (label, indexes, plan_check) in self.jobs(s.target.as_ref())? {
                        if self.interrupted() {
                            return Ok(());
                        }
                        let target = s.target.as_ref();
                        match &self.own {
                            Some(o) => o.drop_indexes(target, s.conn.as_mut())?,
                            None => drop_indexes(
                                target,
                                s.conn.as_mut(),
                                &self.table,
                                &self.lab_specs(),
                            )?,
                        }
                        let req = BuildRequest {
                            table: &self.table,
                            rows: self.rows(),
                            indexes,
                            plan_check: plan_check.then_some(self.lab_table.as_ref()),
                            online,
                            session_knobs: &knobs.session,
                            knobs: knobs.effective.clone(),
                            label,
                            repeat: rep,
                            plan: None,
                        };
                        let conn = s.conn.as_mut();
                        let mut r = self.watched(s.cluster.as_ref(), || {
                            self.quiet_build(target, cost, conn, &req)
                        });
                        r.warnings.extend(knobs.warnings.iter().cloned());
                        print_build(&r);
                        print_new_warnings(&r, &s.result.builds);
                        let failed = r.error.clone();
                        s.result.builds.push(r);
                        s.store.write_run(&s.result)?;
                        if let Some(e) = failed {
                            match self.args.on_error {
                                OnError::Stop => bail!("build failed: {e}"),
                                OnError::Continue => {}
                            }
                        }
                    }
                }
                if self.own.is_some() && self.args.rebuild {
                    let pt = OwnPoint {
                        session_knobs: &knobs.session,
                        effective: &knobs.effective,
                        warnings: &knobs.warnings,
                        rep,
                    };
                    self.own_rebuilds(
                        s.target.as_ref(),
                        s.conn.as_mut(),
                        &mut s.result,
                        &mut s.store,
                        cost,
                        &pt,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Put one knob point in force: server-wide knobs by restarting the server with them (its
    /// processes are new: the CPU and I/O figures' source is found again), session knobs
    /// applied on a connection of their own first, so an unknown knob or a refused value is
    /// reported here, naming the knob (the control connection keeps the defaults for its checks
    /// and counters); on a sharded target, on every shard. The knobs as the DBMS reports them,
    /// or why the point cannot be built.
    fn apply_point(
        &self,
        s: &mut Session,
        point: &[(String, String)],
        scopes: &[KnobScope],
        base: &[(String, String)],
        cost: &mut CostSource,
    ) -> std::result::Result<PointKnobs, String> {
        let applied = if self.sharded.borrow().is_some() {
            self.apply_shard_knobs(s, point, scopes)
        } else {
            apply_server_knobs(s, point, scopes, base)
        };
        match applied {
            Ok(true) => *cost = CostSource::for_target(s.target.as_ref()),
            Ok(false) => {}
            Err(e) => return Err(format!("knob {}: {e:#}", knob_label(point))),
        }
        let target = s.target.as_ref();
        let mut effective = Vec::new();
        let mut session = Vec::new();
        let mut probe: Option<Box<dyn Conn>> = None;
        let mut warnings = Vec::new();
        let shards = self.sharded.borrow();
        for ((k, v), scope) in point.iter().zip(scopes) {
            let r = if let Some(sh) = shards.as_ref() {
                // Set (session knobs) or read on every shard, where the builds run.
                if *scope == KnobScope::Session {
                    session.push((k.clone(), v.clone()));
                }
                crate::cmd::index::sharded::knob_on_shards(sh, k, v, *scope).map(|(now, w)| {
                    warnings.extend(w);
                    now
                })
            } else if *scope == KnobScope::Session {
                session.push((k.clone(), v.clone()));
                let c = match probe.take() {
                    Some(c) => Ok(c),
                    None => target.connect(),
                };
                c.and_then(|mut c| {
                    let now = target.set_session_knob(c.as_mut(), k, v);
                    probe = Some(c);
                    now
                })
            } else {
                target.knob_value(s.conn.as_mut(), k)
            };
            match r {
                Ok(now) => effective.push((k.clone(), now)),
                Err(e) => return Err(format!("knob {k}={v}: {e:#}")),
            }
        }
        for ((k, v), (_, now)) in point.iter().zip(&effective) {
            if !same_value(v, now) {
                warnings.push(format!("{k}: asked {v}, the DBMS reports {now}"));
            }
        }
        Ok(PointKnobs {
            effective,
            session,
            warnings,
        })
    }

    /// The builds of one repeat and mode: each index alone (`--builds each`) and all of them
    /// together (`all`), of the lab table (with their plan check) or of the user's `--index`
    /// list (one index is built once, under its name).
    fn jobs(&self, target: &dyn Dbms) -> Result<Vec<Job>> {
        let mut jobs: Vec<Job> = Vec::new();
        let (specs, plan_check, one_alone) = match &self.own {
            Some(o) => {
                let specs = o.specs(target.kind())?;
                let one = specs.len() == 1;
                (specs, false, one)
            }
            None => (self.lab_specs(), true, false),
        };
        if self.each || one_alone {
            for x in &specs {
                jobs.push((x.name.clone(), vec![x.clone()], plan_check));
            }
        }
        if self.all && (plan_check || specs.len() > 1) {
            jobs.push(("all".into(), specs, plan_check));
        }
        Ok(jobs)
    }

    /// Table rebuilds at one knob point on the lab's own-data table, measured like the
    /// builds (the --index indexes are dropped first: the table keeps its own ones).
    #[allow(clippy::too_many_arguments)]
    fn own_rebuilds(
        &self,
        target: &dyn Dbms,
        conn: &mut dyn Conn,
        result: &mut crate::results::RunResult,
        store: &mut crate::results::store::Store,
        cost: &CostSource,
        pt: &OwnPoint,
    ) -> Result<()> {
        if let Some(o) = &self.own {
            o.drop_indexes(target, conn)?;
        }
        let stmts = self.rebuild_list(target, &self.table, &self.args.rebuilds);
        if stmts.is_empty() {
            bail!(
                "{} has no table rebuild to time (see --rebuilds)",
                target.kind()
            );
        }
        for (name, sql) in stmts {
            if self.interrupted() {
                return Ok(());
            }
            let req = BuildRequest {
                table: &self.table,
                rows: self.rows(),
                indexes: vec![],
                plan_check: None,
                online: false,
                session_knobs: pt.session_knobs,
                knobs: pt.effective.to_vec(),
                label: name,
                repeat: pt.rep,
                plan: Some(vec![vec![sql]]),
            };
            let mut r = self.quiet_build(target, cost, conn, &req);
            r.mode = "rebuild".into();
            r.warnings.extend(pt.warnings.iter().cloned());
            print_build(&r);
            print_new_warnings(&r, &result.builds);
            let failed = r.error.clone();
            result.builds.push(r);
            store.write_run(result)?;
            if let (Some(e), OnError::Stop) = (failed, self.args.on_error) {
                bail!("rebuild failed: {e}");
            }
        }
        Ok(())
    }

    /// The table rebuilds this lab times on `table`, those `only` chooses: on own data the
    /// DBMS's with their variants (see [`crate::cmd::index::own::rebuild_statements`]), on the
    /// insert benchmark's table the DBMS's.
    fn rebuild_list(
        &self,
        target: &dyn Dbms,
        table: &str,
        only: &[String],
    ) -> Vec<(String, String)> {
        if self.own.is_some() {
            crate::cmd::index::own::rebuild_statements(target, table, only)
        } else {
            let mut v = target.rebuild_statements(table);
            v.retain(|(n, _)| crate::cmd::index::own::chosen_rebuild(n, only));
            v
        }
    }

    fn rebuilds(&self, s: &mut Session, cost: &CostSource) -> Result<()> {
        let target = s.target.as_ref();
        let stmts = self.rebuild_list(target, &self.table, &self.args.rebuilds);
        if stmts.is_empty() {
            crate::outln!("\n{} has no table rebuild to time", target.kind());
            return Ok(());
        }
        crate::outln!("\n== table rebuilds (with the indexes in place)");
        crate::progress::step_named("rebuilds");
        // Rebuilds are timed with all the chosen indexes present.
        let specs = self.lab_specs();
        drop_indexes(target, s.conn.as_mut(), &self.table, &specs)?;
        for spec in &specs {
            // Shown and bounded while another session's lock holds it up.
            let what = format!("building {}", spec.name);
            crate::dbms::lock_watch::watched(target, s.conn.as_mut(), &what, |c| {
                c.execute(&spec.create_sql())
            })?;
        }
        for (name, sql) in stmts {
            let req = BuildRequest {
                table: &self.table,
                rows: self.rows(),
                indexes: specs.clone(),
                plan_check: Some(self.lab_table.as_ref()),
                online: false,
                session_knobs: &[],
                knobs: Vec::new(),
                label: name,
                repeat: 1,
                plan: Some(vec![vec![sql]]),
            };
            let mut r = self.quiet_build(target, cost, s.conn.as_mut(), &req);
            r.mode = "rebuild".into();
            print_build(&r);
            print_new_warnings(&r, &s.result.builds);
            let failed = r.error.clone();
            s.result.builds.push(r);
            s.store.write_run(&s.result)?;
            if let (Some(e), OnError::Stop) = (failed, self.args.on_error) {
                bail!("rebuild failed: {e}");
            }
        }
        Ok(())
    }

    /// Indexes first then load, versus load then create the indexes, on the same rows.
    fn strategies(&self, s: &mut Session, cost: &CostSource) -> Result<()> {
        crate::outln!(
            "\n== load strategies: {} rows, indexes {}",
            self.args.rows,
            self.idx_names()
        );
        // indexes first: new table, indexes, then the load maintains them row by row
        {
            let steps = lab_steps(s.cluster.as_ref(), self.interrupt);
            let on = LabOn {
                target: s.target.as_ref(),
                conn: s.conn.as_mut(),
                store: &mut s.store,
                interrupt: self.interrupt,
            };
            self.lab_table.create(on, &steps)?;
            for spec in self.lab_specs() {
                s.conn.execute(&spec.create_sql())?;
            }
        }
        let load = self.load(s, false)?;
        let first = self.strategy_result(s, "indexes-first", load, 0.0)?;
        crate::outln!("   {}", strategy_line(&first));
        s.result.strategies.push(first);
        s.store.write_run(&s.result)?;
        if self.interrupted() {
            return Ok(());
        }
        // load first, then one build of all the indexes
        let load = self.load(s, true)?;
        if let Some(sh) = self.sharded.borrow_mut().as_mut() {
            sh.recount()?;
        }
        let req = BuildRequest {
            table: &self.table,
            rows: self.rows(),
            indexes: self.lab_specs(),
            plan_check: Some(self.lab_table.as_ref()),
            online: false,
            session_knobs: &[],
            knobs: Vec::new(),
            label: "all".into(),
            repeat: 1,
            plan: None,
        };
        let mut b = self.quiet_build(s.target.as_ref(), cost, s.conn.as_mut(), &req);
        // Its own group: a build right after a fresh load is not one of the sweep's repeats.
        b.build = "all (load-first)".into();
        print_build(&b);
        print_new_warnings(&b, &s.result.builds);
        let build_secs = b.seconds;
        let err = b.error.clone();
        s.result.builds.push(b);
        if let Some(e) = err {
            bail!("index build of the load-first strategy failed: {e}");
        }
        let second = self.strategy_result(s, "load-first", load, build_secs)?;
        crate::outln!("   {}", strategy_line(&second));
        s.result.strategies.push(second);
        s.store.write_run(&s.result)?;
        Ok(())
    }

    fn strategy_result(
        &self,
        s: &mut Session,
        name: &str,
        load: f64,
        index: f64,
    ) -> Result<StrategyResult> {
        let target = s.target.as_ref();
        let conn = s.conn.as_mut();
        let mut checks = Vec::new();
        let rows = self.lab_table.count_rows(conn)?;
        let table = self.table.as_str();
        checks.push(Check {
            name: "rows".into(),
            ok: rows == self.args.rows,
            detail: format!("{table}: {rows} rows, {} loaded", self.args.rows),
        });
        let names: Vec<String> = self.lab_specs().into_iter().map(|x| x.name).collect();
        for n in &names {
            // An error is reported as one (a failed check saying why), never taken for INVALID.
            checks.push(match target.index_valid(conn, table, n) {
                Ok(ok) => Check {
                    name: "valid".into(),
                    ok,
                    detail: if ok {
                        n.clone()
                    } else {
                        format!("{n} is INVALID")
                    },
                },
                Err(e) => Check {
                    name: "valid".into(),
                    ok: false,
                    detail: format!(
                        "cannot tell whether {n} is valid: the validity query failed: {}",
                        crate::format::error_line(&e)
                    ),
                },
            });
        }
        // A side figure: a failed size query leaves the sizes unknown, with a warning.
        let mut warnings = Vec::new();
        let index_bytes = match target.sizes(conn, &[table.to_string()], true) {
            Ok(sizes) => sizes
                .objects
                .into_iter()
                .filter(|(n, _)| names.contains(n))
                .collect(),
            Err(e) => {
                warnings.push(format!(
                    "index sizes unknown: the size query failed: {}",
                    crate::format::error_line(&e)
                ));
                Vec::new()
            }
        };
        Ok(StrategyResult {
            strategy: name.into(),
            rows,
            load_secs: load,
            index_secs: index,
            total_secs: load + index,
            index_bytes,
            checks,
            warnings,
        })
    }

    fn idx_names(&self) -> String {
        let all = self.lab_table.indexes();
        self.idxs
            .iter()
            .map(|&i| all[i].short.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The host of the lab table's load steps in this session (`step::step_host`): on a cluster,
/// every node watched around a step (per-node figures and row checks).
fn lab_steps<'a>(
    cluster: Option<&'a crate::cluster_target::ClusterSession>,
    interrupt: &'a AtomicBool,
) -> Steps<'a> {
    Steps { cluster, interrupt }
}

/// One build of a sweep: its label, its indexes, and whether they get the lab table's plan
/// check (not the user's `--index`).
type Job = (String, Vec<crate::dbms::IndexSpec>, bool);

/// A knob point in force: the knobs as the DBMS reports them, the session knobs each build's
/// connection sets, and the warnings (a value the DBMS changed, a shard's note).
struct PointKnobs {
    effective: Vec<(String, String)>,
    session: Vec<(String, String)>,
    warnings: Vec<String>,
}

/// One point of the knob grid, for the rebuilds run at it.
struct OwnPoint<'a> {
    session_knobs: &'a [(String, String)],
    effective: &'a [(String, String)],
    warnings: &'a [String],
    rep: u32,
}

use crate::format::mb1 as mb;

/// A build's line, and on a sharded target each shard's part of it under it.
fn print_build(r: &BuildResult) {
    crate::outln!("   {}", build_line(r));
    if let Some(rep) = &r.server_reported {
        crate::out!(
            "{}",
            crate::export::text::reported_figures(rep, "over the build", None)
        );
    }
    crate::out!("{}", crate::cluster_target::node_lines(&r.nodes));
    crate::out!("{}", crate::cmd::index::sharded::shard_lines(r));
}

/// One line per build, printed as it finishes.
fn build_line(r: &BuildResult) -> String {
    if let Some(e) = &r.error {
        let mut line = format!(
            "{} {} #{}: FAILED after {:.2} s: {e}",
            r.build, r.mode, r.repeat, r.seconds
        );
        // e.g. an INVALID index a failed online build left (and that was dropped)
        for c in r.checks.iter().filter(|c| !c.ok) {
            line.push_str(&format!("\n   CHECK FAILED: {}", c.detail));
        }
        return line;
    }
    let size: u64 = r.index_bytes.iter().map(|(_, b)| b).sum();
    let checks = if r.checks.is_empty() && r.indexes.is_empty() {
        "no index to check".to_string()
    } else if r.checks.iter().all(|c| c.ok) {
        // user indexes (--index) have no query of ixbench's to check their use with
        if r.checks.iter().any(|c| c.name == "plan") {
            "valid, used".to_string()
        } else {
            "valid".to_string()
        }
    } else {
        let f: Vec<_> = r
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.detail.clone())
            .collect();
        format!("CHECK FAILED: {}", f.join("; "))
    };
    let counters: Vec<String> = r
        .counters
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut line = format!(
        "{} {} #{}: {:.2} s, {:.0} rows/s, cpu {} s, read {} MB, written {} MB, size {:.1} MB; {checks}",
        r.build,
        r.mode,
        r.repeat,
        r.seconds,
        r.rows_per_sec,
        r.server_cpu_secs.map(|c| format!("{c:.2}")).unwrap_or_else(|| "-".into()),
        mb(r.server_read_bytes),
        mb(r.server_write_bytes),
        size as f64 / 1e6,
    );
    if !counters.is_empty() {
        line.push_str(&format!(" [{}]", counters.join(" ")));
    }
    line
}

/// Print the warnings of build `r` that no earlier build had: each distinct warning is printed
/// once, the first time; the warnings table at the end lists every build it applies to.
fn print_new_warnings(r: &BuildResult, earlier: &[BuildResult]) {
    for w in &r.warnings {
        if !earlier.iter().any(|b| b.warnings.contains(w)) {
            crate::outln!(
                "   WARNING: {w} (printed once; the warnings table at the end lists every build it applies to)"
            );
        }
    }
}

/// What a build is, in a warning's list of builds: knobs, build, mode, repeat.
fn build_label(b: &BuildResult) -> String {
    let knobs = knob_label(&b.knobs);
    format!(
        "{}{} {} #{}",
        if knobs.is_empty() {
            String::new()
        } else {
            format!("{knobs} ")
        },
        b.build,
        b.mode,
        b.repeat
    )
}

/// Each distinct warning of the builds once, in order of first appearance, with the builds it
/// applies to.
pub fn warning_summary(builds: &[BuildResult]) -> Vec<RunWarning> {
    let mut out: Vec<RunWarning> = Vec::new();
    for b in builds {
        for w in &b.warnings {
            let label = build_label(b);
            match out.iter_mut().find(|x| &x.warning == w) {
                Some(x) => {
                    x.count += 1;
                    x.applies_to.push(label);
                }
                None => out.push(RunWarning {
                    warning: w.clone(),
                    count: 1,
                    applies_to: vec![label],
                }),
            }
        }
    }
    out
}

/// The warnings table: each distinct warning once, how many builds it applies to, and which
/// (`all` when it applies to every one of the `total` builds; run.json lists them).
pub fn warnings_table(warnings: &[RunWarning], total: usize) -> Table {
    let mut t = Table::new(["warning", "builds", "applies_to"]);
    for w in warnings {
        t.push(vec![
            w.warning.clone(),
            w.count.to_string(),
            if w.count == total && total > 1 {
                format!("all {total} builds")
            } else {
                w.applies_to.join("; ")
            },
        ]);
    }
    t
}

fn strategy_line(r: &StrategyResult) -> String {
    let mut line = format!(
        "{}: load {:.2} s + indexes {:.2} s = {:.2} s; index size {} MB",
        r.strategy,
        r.load_secs,
        r.index_secs,
        r.total_secs,
        strategy_mb(r)
    );
    for w in &r.warnings {
        line.push_str(&format!("\n   WARNING: {w}"));
    }
    line
}

/// The strategy's index size in MB, `-` when it is unknown.
fn strategy_mb(r: &StrategyResult) -> String {
    if r.index_bytes.is_empty() {
        return "-".into();
    }
    mb(Some(r.index_bytes.iter().map(|(_, b)| b).sum()))
}

/// The sweep's table: one row per knob point, build and mode, with the median of the repeats
/// and the spread of the wall time.
pub fn builds_table(builds: &[BuildResult], axes: &[KnobAxis]) -> Table {
    let mut headers: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
    headers.extend(
        [
            "build", "mode", "n", "secs", "min", "max", "rows/s", "cpu_s", "read_mb", "write_mb",
            "index_mb", "ok",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    // One column per DBMS counter any build reported (bytes shown as MB).
    let mut counters: Vec<String> = Vec::new();
    for b in builds {
        for (k, _) in &b.counters {
            if !counters.contains(k) {
                counters.push(k.clone());
            }
        }
    }
    let ok_col = headers.pop().expect("headers end with ok");
    headers.extend(counters.iter().map(|c| match c.strip_suffix("_bytes") {
        Some(stem) => format!("{stem}_mb"),
        None => c.clone(),
    }));
    headers.push(ok_col);
    let mut t = Table::new(headers);
    for ((knobs, build, mode), group) in build_groups(builds) {
        let good: Vec<&&BuildResult> = group.iter().filter(|b| b.error.is_none()).collect();
        let col = |f: &dyn Fn(&BuildResult) -> Option<f64>| -> Vec<f64> {
            good.iter().filter_map(|b| f(b)).collect()
        };
        let secs = col(&|b| Some(b.seconds));
        let (min, max) = secs
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let med = median(secs).unwrap_or(0.0);
        let rows = good.first().map(|b| b.rows).unwrap_or(0);
        let fmt_opt = |v: Vec<f64>, scale: f64, prec: usize| match median(v) {
            None => "-".to_string(),
            Some(m) => format!("{:.*}", prec, m / scale),
        };
        let mut row: Vec<String> = axes
            .iter()
            .map(|a| {
                knobs
                    .iter()
                    .find(|(k, _)| k == &a.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        let ok = group.iter().filter(|b| b.ok).count();
        row.extend([
            build,
            mode,
            group.len().to_string(),
            if good.is_empty() {
                "-".into()
            } else {
                format!("{med:.3}")
            },
            if good.is_empty() {
                "-".into()
            } else {
                format!("{min:.3}")
            },
            if good.is_empty() {
                "-".into()
            } else {
                format!("{max:.3}")
            },
            if med > 0.0 {
                format!("{:.0}", rows as f64 / med)
            } else {
                "-".into()
            },
            fmt_opt(col(&|b| b.server_cpu_secs), 1.0, 2),
            fmt_opt(col(&|b| b.server_read_bytes.map(|v| v as f64)), 1e6, 1),
            fmt_opt(col(&|b| b.server_write_bytes.map(|v| v as f64)), 1e6, 1),
            fmt_opt(
                // none for a rebuild of a table whose indexes are not listed (not -0.0)
                col(&|b| {
                    (!b.index_bytes.is_empty())
                        .then(|| b.index_bytes.iter().map(|(_, v)| *v as f64).sum())
                }),
                1e6,
                1,
            ),
        ]);
        for c in &counters {
            let v = col(&|b| {
                b.counters
                    .iter()
                    .find(|(k, _)| k == c)
                    .map(|(_, v)| *v as f64)
            });
            row.push(if c.ends_with("_bytes") {
                fmt_opt(v, 1e6, 1)
            } else {
                fmt_opt(v, 1.0, 0)
            });
        }
        row.push(format!("{ok}/{}", group.len()));
        t.push(row);
    }
    t
}

/// The strategies' table.
pub fn strategies_table(s: &[StrategyResult]) -> Table {
    let mut t = Table::new([
        "strategy",
        "rows",
        "load_s",
        "index_s",
        "total_s",
        "index_mb",
        "vs_load_first",
    ]);
    let base = s.iter().find(|x| x.strategy == "load-first");
    for x in s {
        let rel = base
            .filter(|b| b.total_secs > 0.0)
            .map(|b| format!("{:.2}x time", x.total_secs / b.total_secs))
            .unwrap_or_default();
        t.push(vec![
            x.strategy.clone(),
            x.rows.to_string(),
            format!("{:.2}", x.load_secs),
            format!("{:.2}", x.index_secs),
            format!("{:.2}", x.total_secs),
            strategy_mb(x),
            rel,
        ]);
    }
    t
}

/// The status line's name of knob-grid point `p` of `n`.
fn point_step(p: usize, n: usize) -> String {
    if n > 1 {
        format!("builds, point {p}/{n}")
    } else {
        "builds".to_string()
    }
}

/// Blocking or online builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildMode {
    /// Plain CREATE INDEX (writes blocked).
    Blocking,
    /// CREATE INDEX CONCURRENTLY / ALGORITHM=INPLACE, LOCK=NONE (LOCK=SHARED on MyRocks).
    Online,
    /// Both.
    Both,
}

/// How a build runs on the shards of `--target spider|pg-shards`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShardBuilds {
    /// Every shard builds at the same time, on its own connection to its server.
    Parallel,
    /// One shard after the other.
    Sequential,
}

/// Options of `ixbench index`.
#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    /// Database and results directory.
    #[command(flatten)]
    pub common: CommonArgs,

    /// Rows to load (l.i0) before building, unless --reuse.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=MAX_ROWS))]
    pub rows: u64,

    /// Build on the ixbench table already in the database (from an earlier run) instead of
    /// loading a new one.
    #[arg(long)]
    pub reuse: bool,

    /// Indexes to build: names (marketsegment, registersegment, pdc) or numbers 1..3.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "marketsegment,registersegment,pdc"
    )]
    pub indexes: Vec<String>,

    /// What to build: `each` (every index alone), `all` (all together, one statement or
    /// parallel sessions where the DBMS can), or both.
    #[arg(long, value_delimiter = ',', default_value = "each,all")]
    pub builds: Vec<String>,

    /// Blocking or online builds, or both.
    #[arg(long, value_enum, default_value_t = BuildMode::Blocking)]
    pub mode: BuildMode,

    /// A knob and the values to sweep, NAME=V1,V2,... (repeatable: the full grid is run).
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knobs: Vec<String>,

    /// Builds per point; the summary shows the median and the spread.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// On a failed build or a refused knob: stop, or go on with the next point.
    #[arg(long, value_enum, default_value_t = OnError::Stop)]
    pub on_error: OnError,

    /// Also compare load strategies on the same rows: indexes first then load, versus load
    /// then create the indexes.
    #[arg(long)]
    pub strategy: bool,

    /// Also time whole-table rebuilds (VACUUM/REINDEX, ALTER TABLE ... ENGINE, OPTIMIZE).
    /// With --like, --from-table or --index they run at every point of the knob grid.
    #[arg(long)]
    pub rebuild: bool,

    /// A secondary index to build instead of the insert benchmark's:
    /// '[UNIQUE] NAME: col1, col2 [DESC], col3(10)' (repeatable; prefix lengths on
    /// MySQL/MariaDB). On ixbench's own table, the copy (--from-table) or --like's table.
    #[arg(long = "index", value_name = "SPEC")]
    pub user_indexes: Vec<String>,

    /// Build on a registered workload's table instead of the insert benchmark's (iibench, the
    /// default; oltp_read_write or another OLTP mix: sbtest1 and its index k_1; timeseries:
    /// ts_metrics and its indexes): the workload loads its table with about --rows rows, then
    /// the lab times builds of the workload's secondary indexes (or of --index).
    #[arg(long, value_parser = crate::workload::registry::parse_arg, conflicts_with_all = ["like", "from_table", "reuse"])]
    pub workload: Option<String>,

    /// Build on a synthetic table shaped like another benchmark's instead of the insert
    /// benchmark's: `sbtest` (sysbench's id, k, c, pad with c a TEXT of --text-bytes bytes
    /// and --rows rows; index k_1 (k)).
    #[arg(long, value_name = "SHAPE", conflicts_with_all = ["from_table", "reuse"])]
    pub like: Option<String>,

    /// Bytes of each `c` value of --like sbtest (seed 004: sysbench's 119 repeated 500 times).
    #[arg(long, default_value_t = 119, value_parser = clap::value_parser!(u64).range(1..=16_000_000), requires = "like")]
    pub text_bytes: u64,

    /// Build on a copy of the user's table [SCHEMA.]TABLE on the same server (same columns,
    /// keys, engine and row format; the user's table is only read), dropped at the end unless
    /// --keep. The copy's time is reported apart.
    #[arg(long, value_name = "[SCHEMA.]TABLE", conflicts_with = "reuse")]
    pub from_table: Option<String>,

    /// Copy about N rows of --from-table, chosen uniformly at random.
    #[arg(long, requires = "from_table", conflicts_with = "sample_pct", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,

    /// Copy about P percent of the rows of --from-table (each row kept with probability P/100).
    #[arg(long, requires = "from_table")]
    pub sample_pct: Option<f64>,

    /// Only the rebuilds whose name contains one of these words (case-insensitive), e.g.
    /// `copy,inplace` or `vacuum`.
    #[arg(long, value_delimiter = ',', requires = "rebuild")]
    pub rebuilds: Vec<String>,

    /// Keep the copy (--from-table) or --like's table at the end.
    #[arg(long)]
    pub keep: bool,

    /// On --target spider|pg-shards: build on every shard at once, each on its own connection
    /// to its server (parallel, the default), or one shard after the other (sequential).
    #[arg(long, value_enum, value_name = "HOW")]
    pub shard_builds: Option<ShardBuilds>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names() {
        let hooks = crate::workload::registry::default_entry().lab.unwrap();
        let t = (hooks.table)("pi");
        let ix = t.indexes();
        assert_eq!(
            parse_indexes(&["pdc".into(), "1".into()], ix).unwrap(),
            vec![2, 0]
        );
        assert!(parse_indexes(&["4".into()], ix).is_err());
        let e = parse_indexes(&["foo".into()], ix).unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown index \"foo\": expected marketsegment, registersegment, pdc or 1..3"
        );
    }

    #[test]
    fn each_warning_once_with_its_builds() {
        let mk = |build: &str, rep: u32, warnings: &[&str]| BuildResult {
            knobs: vec![("m".into(), "64MB".into())],
            build: build.into(),
            mode: "blocking".into(),
            repeat: rep,
            warnings: warnings.iter().map(|w| w.to_string()).collect(),
            ..Default::default()
        };
        let builds = [
            mk("all", 1, &["long warning"]),
            mk("pi1_pdc", 1, &["long warning", "other"]),
            mk("all", 2, &["long warning"]),
            mk("pi1_pdc", 2, &[]),
        ];
        let w = warning_summary(&builds);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].warning, "long warning");
        assert_eq!(w[0].count, 3);
        assert_eq!(
            w[0].applies_to,
            [
                "m=64MB all blocking #1",
                "m=64MB pi1_pdc blocking #1",
                "m=64MB all blocking #2"
            ]
        );
        assert_eq!((w[1].warning.as_str(), w[1].count), ("other", 1));
        let t = warnings_table(&w, 4);
        assert_eq!(t.rows[0][1], "3");
        assert!(t.rows[0][2].contains("pi1_pdc blocking #1"));
        assert_eq!(warnings_table(&w, 3).rows[0][2], "all 3 builds");
    }

    #[test]
    fn table_medians_and_spread() {
        let mk = |secs: f64, rep: u32| BuildResult {
            knobs: vec![("threads".into(), "2".into())],
            build: "all".into(),
            mode: "blocking".into(),
            repeat: rep,
            ok: true,
            seconds: secs,
            rows: 1000,
            index_bytes: vec![("i".into(), 2_000_000)],
            counters: vec![
                ("wal_bytes".into(), (secs * 1e6) as u64),
                ("temp_files".into(), rep as u64),
            ],
            ..Default::default()
        };
        let t = builds_table(
            &[mk(2.0, 1), mk(1.0, 2), mk(4.0, 3)],
            &[KnobAxis {
                name: "threads".into(),
                values: vec!["2".into()],
            }],
        );
        assert_eq!(t.rows.len(), 1);
        let r = &t.rows[0];
        assert_eq!(
            &r[..7],
            &["2", "all", "blocking", "3", "2.000", "1.000", "4.000"]
        );
        assert_eq!(r[7], "500"); // 1000 rows / median 2 s
        assert_eq!(r[11], "2.0");
        assert_eq!(&t.headers[12..], &["wal_mb", "temp_files", "ok"]);
        assert_eq!(r[12], "2.0"); // median of 2, 1 and 4 MB of WAL
        assert_eq!(r[13], "2");
        assert_eq!(r[14], "3/3");
    }
}
