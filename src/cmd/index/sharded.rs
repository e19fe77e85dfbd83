//! `ixbench index --target spider|pg-shards`: the index lab on a sharded cluster ixbench
//! started. The table is loaded through the head (sharded by hash of its primary key, see
//! [`crate::dbms::sharded`]); each index build (or table rebuild) runs on every shard's own
//! server, over connections ixbench opens to the shard directly: each shard runs the build
//! plan it would run alone (its statements and parallel sessions, with the session knobs of
//! the point), measured as a build on one server is (wall time, its server's CPU and I/O, its
//! DBMS's I/O counters, progress, index sizes, the checks that each index exists, is valid and
//! is used). The shards build at the same time (`--shard-builds parallel`, the default) or one
//! after the other (`sequential`). The whole build's time runs from the first shard's start to
//! the last one's end; every node's server CPU and I/O (the head's too) is read from /proc
//! over the whole build.
//!
//! The head builds nothing: PostgreSQL's coordinator has foreign-table partitions, which have
//! no indexes; the Spider head's table holds no rows but must declare the shards' indexes
//! (the range queries name them in `FORCE INDEX`), so once every shard has built them it is
//! created again with them (timed apart, `head_declare_secs`).
//!
//! Server-wide knobs (global or restart-only) restart every shard with the value; session
//! knobs are set on each shard's build sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{IndexArgs, ShardBuilds};
use crate::cluster_target::ClusterSession;
use crate::dbms::sharded::{ShardedHandle, Sharding};
use crate::dbms::{Dbms, KnobScope, QuietWait};
use crate::measure::clock::Stopwatch;
use crate::measure::sys::ServerCounters;
use crate::results::cluster::{NodeStep, ShardPart, ShardedBuild};
use crate::results::{BuildResult, Check};
use crate::step::create_index::{measured_build_timed, BuildRequest, CostSource};

/// Refuse, in one line, what `ixbench index` cannot do on a sharded target; `sharded` says
/// whether `--target` is one. `--shard-builds` is refused on any other target.
pub fn check_args(args: &IndexArgs, sharded: bool) -> Result<()> {
    let target = &args.common.target;
    if !sharded {
        if args.shard_builds.is_some() {
            bail!("--shard-builds is for --target spider and pg-shards");
        }
        return Ok(());
    }
    if args.reuse {
        bail!(
            "--reuse on --target {target}: the cluster is started new for this command, so \
             there is no table of an earlier run to reuse"
        );
    }
    if args.from_table.is_some() {
        bail!(
            "--from-table on --target {target}: the copy is made on the server that holds the \
             table, and the cluster ixbench starts holds no table of yours (run ixbench index \
             on that server, or shard the table yourself)"
        );
    }
    if args.like.is_some() {
        bail!(
            "--like on --target {target}: on a sharded target ixbench index builds on the \
             insert benchmark's table, loaded sharded by its primary key"
        );
    }
    for spec in &args.user_indexes {
        let parsed = crate::index_spec::parse_all(std::slice::from_ref(spec))?;
        if let Some(u) = parsed.iter().find(|u| u.unique) {
            bail!(
                "--index {}: a UNIQUE index built on each shard is unique on that shard only, \
                 not over the table (sharded by transactionid): not built on --target {target}",
                u.name
            );
        }
    }
    Ok(())
}

/// A shard of the cluster.
struct Shard {
    role: String,
    driver: Arc<dyn Dbms>,
    /// Rows of the lab's table on it.
    rows: u64,
}

/// The lab's view of a sharded cluster (see the module doc).
pub struct ShardedLab {
    handle: ShardedHandle,
    table: String,
    shards: Vec<Shard>,
    /// Every node: role, whether it is the head, its server's PIDs.
    nodes: Vec<(String, bool, Vec<u32>)>,
    parallel: bool,
}

impl ShardedLab {
    /// The cluster of `cs` for builds on `table` (its rows counted on every shard).
    pub fn new(cs: &ClusterSession, table: &str, builds: ShardBuilds) -> Result<ShardedLab> {
        let handle = cs
            .sharded()
            .context("the cluster is not sharded, or its target is not open")?
            .clone();
        let nodes = cs.node_pids();
        let roles: Vec<String> = nodes
            .iter()
            .filter(|(r, _, _)| r.starts_with("shard"))
            .map(|(r, _, _)| r.clone())
            .collect();
        if roles.len() != handle.shards().len() {
            bail!(
                "the cluster has {} shard nodes and {} shard drivers",
                roles.len(),
                handle.shards().len()
            );
        }
        let shards = roles
            .into_iter()
            .zip(handle.shards())
            .map(|(role, d)| Shard {
                role,
                driver: d.clone(),
                rows: 0,
            })
            .collect();
        let mut lab = ShardedLab {
            handle,
            table: table.to_string(),
            shards,
            nodes,
            parallel: builds == ShardBuilds::Parallel,
        };
        lab.recount()?;
        Ok(lab)
    }

    /// Count the table's rows on every shard again (after a load).
    pub fn recount(&mut self) -> Result<()> {
        for sh in &mut self.shards {
            let mut c = sh
                .driver
                .connect_admin()
                .with_context(|| format!("connecting to {}", sh.role))?;
            sh.rows = crate::workload::tables::count_rows(c.as_mut(), &self.table)
                .with_context(|| format!("counting the rows of {} on {}", self.table, sh.role))?;
        }
        Ok(())
    }

    /// The servers' PIDs again (after shards were restarted).
    pub fn refresh(&mut self, cs: &ClusterSession) {
        self.nodes = cs.node_pids();
    }

    /// The rows on each shard: (role, rows).
    pub fn rows(&self) -> Vec<(String, u64)> {
        self.shards
            .iter()
            .map(|s| (s.role.clone(), s.rows))
            .collect()
    }

    /// How the builds run on this target, in words (printed once and kept with every build).
    pub fn how(&self) -> String {
        let n = self.shards.len();
        let when = if self.parallel {
            "in parallel (--shard-builds parallel: the shards are separate servers)"
        } else {
            "one after the other (--shard-builds sequential)"
        };
        let head = match self.handle.sharding() {
            Sharding::Spider => {
                "the Spider head only maps the table: once every shard has built an index, \
                 its table (no rows) is created again declaring it, timed apart"
            }
            Sharding::PgFdw => {
                "the coordinator builds nothing: its partitions are postgres_fdw foreign \
                 tables, which have no indexes"
            }
        };
        format!(
            "built on each of {n} shards {when}, on a connection to each shard's server \
             directly, as that server builds it alone (its own statements and sessions, the \
             session knobs on each); {head}"
        )
    }

    /// Measure one build (`req`) on every shard; the result's figures are the whole build's,
    /// with each shard's part in `sharded`.
    pub fn build(&self, req: &BuildRequest, quiet_timeout: Duration) -> BuildResult {
        let specs = req.indexes.clone();
        let names: Vec<String> = specs.iter().map(|x| x.name.clone()).collect();
        let mut whole = BuildResult {
            knobs: req.knobs.clone(),
            build: req.label.clone(),
            indexes: names.clone(),
            mode: if req.online { "online" } else { "blocking" }.into(),
            repeat: req.repeat,
            rows: self.shards.iter().map(|s| s.rows).sum(),
            ..Default::default()
        };
        let mut info = ShardedBuild {
            how: self.how(),
            parallel: self.parallel,
            ..Default::default()
        };
        let (plan, mut ready) = match self.plan_and_prepare(req, &specs, quiet_timeout) {
            Ok(x) => x,
            Err(e) => {
                whole.error = Some(e);
                whole.sharded = Some(info);
                return whole;
            }
        };
        let before: Vec<Option<ServerCounters>> = self
            .nodes
            .iter()
            .map(|(_, _, p)| ServerCounters::now(p))
            .collect();
        let job = OnShards {
            req,
            plan: &plan,
            names: &names,
            turns: Turns::new(self.shards.len(), self.parallel),
        };
        let run = |k: usize, rows: u64, conn: &mut Box<dyn crate::dbms::Conn>| {
            self.build_on(k, rows, conn, &job)
        };
        let parts = on_every_shard(&mut ready, &run);
        info.nodes.extend(self.node_steps(&before));
        let quiets: Vec<Option<QuietWait>> = ready.into_iter().map(|(_, _, q)| q).collect();
        compose(&mut whole, &mut info, &self.shards, parts, quiets, &plan);
        if whole.error.is_none() {
            let statements: Vec<String> = plan.concat();
            let declare = Stopwatch::start();
            match self.handle.declare_on_head(&self.table, &statements) {
                Ok(declared) => info.head_declare_secs = declared.then(|| declare.elapsed_secs()),
                Err(e) => whole.error = Some(format!("{e:#}")),
            }
        }
        whole.ok = whole.error.is_none() && whole.checks.iter().all(|c| c.ok);
        whole.sharded = Some(info);
        whole
    }

    /// The build's plan (shard1's: the shards run the same server, so it is every shard's)
    /// and every shard prepared ([`ShardedLab::prepare`]), in shard order; the first failure
    /// stops it (a shard's named by its role).
    fn plan_and_prepare(
        &self,
        req: &BuildRequest,
        specs: &[crate::dbms::IndexSpec],
        quiet_timeout: Duration,
    ) -> std::result::Result<(Vec<Vec<String>>, Vec<Prepared>), String> {
        let first = self.shards[0].driver.as_ref();
        let plan = match req.plan.clone() {
            Some(p) => p,
            None => first
                .index_build_plan(specs, req.online)
                .map_err(|e| format!("{e:#}"))?,
        };
        let mut ready = Vec::new();
        for sh in &self.shards {
            match self.prepare(sh, req, specs, quiet_timeout) {
                Ok(x) => ready.push(x),
                Err(e) => return Err(format!("{}: {e:#}", sh.role)),
            }
        }
        Ok((plan, ready))
    }

    /// Shard `k`'s part of `job` on its table (`rows` rows) over `conn`, started at its turn,
    /// with the checks that each index exists on its server.
    fn build_on(
        &self,
        k: usize,
        rows: u64,
        conn: &mut Box<dyn crate::dbms::Conn>,
        job: &OnShards,
    ) -> BuildPart {
        let req = job.req;
        let before = || job.turns.wait(k);
        let after = || job.turns.done();
        let gate = crate::step::create_index::Gate {
            before: &before,
            after: &after,
        };
        let sh = &self.shards[k];
        let r = BuildRequest {
            table: &self.table,
            rows,
            indexes: req.indexes.clone(),
            plan_check: req.plan_check,
            online: req.online,
            session_knobs: req.session_knobs,
            knobs: req.knobs.clone(),
            label: req.label.clone(),
            repeat: req.repeat,
            plan: Some(job.plan.to_vec()),
        };
        let cost = match self.pids(&sh.role) {
            Some(p) if !p.is_empty() => CostSource::Server(p),
            _ => CostSource::None,
        };
        let (mut b, window) =
            measured_build_timed(sh.driver.as_ref(), &cost, conn.as_mut(), &r, Some(&gate));
        if b.error.is_none() {
            b.checks.extend(exists_checks(sh, &self.table, job.names));
        }
        (b, window)
    }

    fn pids(&self, role: &str) -> Option<Vec<u32>> {
        self.nodes
            .iter()
            .find(|(r, _, _)| r == role)
            .map(|(_, _, p)| p.clone())
    }

    /// Each node's step over a build: its server processes' CPU and I/O since `before` (one
    /// reading per node, taken before the build), unknown where they are gone or unreadable.
    fn node_steps(&self, before: &[Option<ServerCounters>]) -> Vec<NodeStep> {
        let mut out = Vec::with_capacity(self.nodes.len());
        for (i, (role, head, pids)) in self.nodes.iter().enumerate() {
            let mut ns = NodeStep {
                role: role.clone(),
                writes: *head,
                ..NodeStep::default()
            };
            ns.server = match (&before[i], ServerCounters::now(pids)) {
                (Some(a), Some(b)) => Some(b.since(a)),
                _ => {
                    ns.notes
                        .push("server processes gone or unreadable: CPU and I/O unknown".into());
                    None
                }
            };
            out.push(ns);
        }
        out
    }

    /// A shard's rows of the table, a connection to it and its quiet wait, after dropping the
    /// indexes of `specs` a failed earlier build left on it alone (not for a rebuild, which
    /// runs with the indexes in place).
    fn prepare(
        &self,
        sh: &Shard,
        req: &BuildRequest,
        specs: &[crate::dbms::IndexSpec],
        quiet_timeout: Duration,
    ) -> Result<Prepared> {
        let mut conn = sh.driver.connect_admin().context("connecting")?;
        if req.plan.is_none() {
            let mut dropped = Vec::new();
            for spec in specs {
                if conn.index_exists(&self.table, &spec.name)? {
                    let sql = sh.driver.drop_index_sql(spec);
                    conn.execute(&sql).with_context(|| {
                        format!("dropping {} left by an earlier build", spec.name)
                    })?;
                    dropped.push(sql);
                }
            }
            if !dropped.is_empty() {
                self.handle.declare_on_head(&self.table, &dropped)?;
            }
        }
        let quiet = crate::step::quiet::quiet_wait(
            sh.driver.as_ref(),
            conn.as_mut(),
            std::slice::from_ref(&self.table),
            quiet_timeout,
            &format!("build on {}", sh.role),
        )
        .unwrap_or(None);
        Ok((sh.rows, conn, quiet))
    }
}

/// A shard ready to build: its rows of the table, a connection to it, its quiet wait.
type Prepared = (u64, Box<dyn crate::dbms::Conn>, Option<QuietWait>);

/// What every shard builds: the request, its plan, the indexes' names (for the checks), and
/// when each shard starts.
struct OnShards<'a> {
    req: &'a BuildRequest<'a>,
    plan: &'a [Vec<String>],
    names: &'a [String],
    turns: Turns,
}

/// When each shard's statements start. Every shard opens its sessions at once. In parallel,
/// their statements start together once all have their sessions open (a slow connection to
/// one shard does not stagger the starts); in sequence, each shard's start when the previous
/// one's ended (its checks run meanwhile), so the whole is the builds back to back.
struct Turns {
    parallel: bool,
    all: std::sync::Barrier,
    /// The shard whose turn it is (sequential builds).
    turn: (std::sync::Mutex<usize>, std::sync::Condvar),
}

impl Turns {
    fn new(shards: usize, parallel: bool) -> Turns {
        Turns {
            parallel,
            all: std::sync::Barrier::new(shards),
            turn: (std::sync::Mutex::new(0usize), std::sync::Condvar::new()),
        }
    }

    /// Right before shard `k`'s clock starts: wait for its start.
    fn wait(&self, k: usize) {
        if self.parallel {
            self.all.wait();
        } else {
            let mut t = self.turn.0.lock().unwrap_or_else(|e| e.into_inner());
            while *t != k {
                t = self.turn.1.wait(t).unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    /// Right after a shard's statements ended: the next shard's turn.
    fn done(&self) {
        if !self.parallel {
            *self.turn.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            self.turn.1.notify_all();
        }
    }
}

/// Whether each of `names` exists on `sh`'s server, asked again on a new connection to it: one
/// check per index (one failed check when it cannot be asked).
fn exists_checks(sh: &Shard, table: &str, names: &[String]) -> Vec<Check> {
    let exists = sh.driver.connect_admin().and_then(|mut c| {
        names
            .iter()
            .map(|n| Ok((n, c.index_exists(table, n)?)))
            .collect::<Result<Vec<_>>>()
    });
    match exists {
        Ok(v) => v
            .into_iter()
            .map(|(n, ok)| Check {
                name: "exists".into(),
                ok,
                detail: format!(
                    "{n} {} on {}'s server (asked on a new connection to it)",
                    if ok { "exists" } else { "does NOT exist" },
                    sh.role
                ),
            })
            .collect(),
        Err(e) => vec![Check {
            name: "exists".into(),
            ok: false,
            detail: format!(
                "cannot tell whether the indexes exist on {}: {}",
                sh.role,
                crate::format::error_line(&e)
            ),
        }],
    }
}

/// `run(k, table, connection)` on a thread of its own for each prepared shard `k`, joined in
/// shard order; a thread that panicked is a failed build.
fn on_every_shard<Q>(
    ready: &mut [(u64, Box<dyn crate::dbms::Conn>, Q)],
    run: &ShardRun<'_>,
) -> Vec<BuildPart>
where
    Q: Send,
{
    std::thread::scope(|sc| {
        let handles: Vec<_> = ready
            .iter_mut()
            .enumerate()
            .map(|(k, (rows, conn, _))| sc.spawn(move || run(k, *rows, conn)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let r = BuildResult {
                        error: Some("the shard's build thread panicked".into()),
                        ..Default::default()
                    };
                    (r, None)
                })
            })
            .collect()
    })
}

/// One shard's build and the window its figures were measured over.
type BuildPart = (BuildResult, Option<(Instant, Instant)>);

/// What builds on shard `k` (its rows of the table, its connection).
type ShardRun<'a> = dyn Fn(usize, u64, &mut Box<dyn crate::dbms::Conn>) -> BuildPart + Sync + 'a;

/// The whole build from the shards' parts (see [`crate::results::BuildResult::sharded`]): its
/// time from the first shard's start to the last one's end, each shard's part in `info`, the
/// sums over the shards (a sum with an unknown part is unknown) and every node's CPU and reads.
fn compose(
    whole: &mut BuildResult,
    info: &mut ShardedBuild,
    shards: &[Shard],
    parts: Vec<BuildPart>,
    quiets: Vec<Option<QuietWait>>,
    plan: &[Vec<String>],
) {
    let first = parts.iter().filter_map(|(_, w)| w.map(|w| w.0)).min();
    let last = parts.iter().filter_map(|(_, w)| w.map(|w| w.1)).max();
    if let (Some(a), Some(b)) = (first, last) {
        whole.seconds = b.duration_since(a).as_secs_f64();
    }
    whole.rows_per_sec = if whole.seconds > 0.0 {
        whole.rows as f64 / whole.seconds
    } else {
        0.0
    };
    let n = parts.len();
    let mut sums = PartSums {
        errors: Vec::new(),
        written: Some(0),
        warnings: Vec::new(),
    };
    for ((sh, (r, window)), quiet) in shards.iter().zip(parts).zip(quiets) {
        let started_after = match (first, window) {
            (Some(a), Some((s, _))) => s.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        take_part(whole, &mut sums, sh, &r, quiet.as_ref(), started_after);
        info.shards.push(ShardPart {
            role: sh.role.clone(),
            rows: sh.rows,
            started_after,
            seconds: r.seconds,
            rows_per_sec: r.rows_per_sec,
            server_cpu_secs: r.server_cpu_secs,
            server_read_bytes: r.server_read_bytes,
            server_write_bytes: r.server_write_bytes,
            counters: r.counters,
            index_bytes: r.index_bytes,
            statements: plan.to_vec(),
            checks: r.checks,
            quiet,
            error: r.error,
            warnings: r.warnings,
        });
    }
    whole.progress.sort_by(|a, b| a.0.total_cmp(&b.0));
    whole.server_write_bytes = sums.written;
    (whole.server_cpu_secs, whole.server_read_bytes) = nodes_cpu_and_reads(&info.nodes);
    whole.warnings = sums
        .warnings
        .into_iter()
        .map(|(w, roles)| {
            if roles.len() == n && n > 1 {
                format!("on every shard: {w}")
            } else {
                format!("{}: {w}", roles.join(", "))
            }
        })
        .collect();
    if !sums.errors.is_empty() {
        whole.error = Some(sums.errors.join("; "));
    }
}

/// What the shards' parts add up to as they are taken in, in shard order.
struct PartSums {
    /// Each failed shard's error, named by its role.
    errors: Vec<String>,
    /// Bytes the shards' servers wrote; `None` once one shard's are unknown.
    written: Option<u64>,
    /// Each warning once, with the roles of the shards that gave it.
    warnings: Vec<(String, Vec<String>)>,
}

/// Take shard `sh`'s part `r` (started `started_after` the first shard's start, after its
/// wait for quiet `quiet`) into the whole build and the sums.
fn take_part(
    whole: &mut BuildResult,
    sums: &mut PartSums,
    sh: &Shard,
    r: &BuildResult,
    quiet: Option<&QuietWait>,
    started_after: f64,
) {
    for (t, sample) in &r.progress {
        whole
            .progress
            .push((t + started_after, format!("[{}] {sample}", sh.role)));
    }
    for c in &r.checks {
        whole.checks.push(Check {
            name: c.name.clone(),
            ok: c.ok,
            detail: format!("{}: {}", sh.role, c.detail),
        });
    }
    if let Some(e) = &r.error {
        sums.errors.push(format!("{}: {e}", sh.role));
    }
    add_by_name(&mut whole.counters, &r.counters);
    add_by_name(&mut whole.index_bytes, &r.index_bytes);
    sums.written = match (sums.written, r.server_write_bytes) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    if let Some(w) = quiet.filter(|w| w.timed_out) {
        sums.warnings
            .push((crate::step::quiet::quiet_warning(w), vec![sh.role.clone()]));
    }
    for w in &r.warnings {
        match sums.warnings.iter_mut().find(|(x, _)| x == w) {
            Some((_, roles)) => roles.push(sh.role.clone()),
            None => sums.warnings.push((w.clone(), vec![sh.role.clone()])),
        }
    }
    if quiet.is_some_and(|q| !whole.quiet.as_ref().is_some_and(|w| q.seconds <= w.seconds)) {
        whole.quiet = quiet.cloned().map(|mut q| {
            q.watched = format!("{} (the longest wait of the shards)", q.watched);
            q
        });
    }
}

/// Add each named figure of `from` to the one of the same name in `into` (appended when new).
fn add_by_name(into: &mut Vec<(String, u64)>, from: &[(String, u64)]) {
    for (k, v) in from {
        match into.iter_mut().find(|(x, _)| x == k) {
            Some((_, s)) => *s += v,
            None => into.push((k.clone(), *v)),
        }
    }
}

/// Every node's server processes over the whole build (the head's too): CPU seconds and
/// bytes read, each unknown when one node's is.
fn nodes_cpu_and_reads(nodes: &[NodeStep]) -> (Option<f64>, Option<u64>) {
    let mut cpu = Some(0.0);
    let mut read = Some(0u64);
    for node in nodes {
        cpu = match (cpu, node.server.as_ref()) {
            (Some(c), Some(s)) => Some(c + s.cpu_us as f64 / 1e6),
            _ => None,
        };
        read = match (read, node.server.as_ref().and_then(|s| s.read_bytes)) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
    (cpu, read)
}

/// The lines printed under a build's line: each shard's part, every node's CPU.
pub fn shard_lines(r: &BuildResult) -> String {
    let Some(info) = &r.sharded else {
        return String::new();
    };
    use crate::format::mb1 as mb;
    let mut out = String::new();
    for p in &info.shards {
        let size =
            mb((!p.index_bytes.is_empty()).then(|| p.index_bytes.iter().map(|(_, b)| b).sum()));
        let checks = if p.checks.iter().all(|c| c.ok) {
            if p.checks.is_empty() {
                "no check".to_string()
            } else {
                "checks ok".to_string()
            }
        } else {
            "CHECK FAILED".to_string()
        };
        out.push_str(&format!(
            "      {}: {} rows, {:.2} s (from +{:.2} s), cpu {} s, read {} MB, written {} MB, \
             size {} MB; {}{}\n",
            p.role,
            p.rows,
            p.seconds,
            p.started_after,
            p.server_cpu_secs
                .map_or_else(|| "-".into(), |c| format!("{c:.2}")),
            mb(p.server_read_bytes),
            mb(p.server_write_bytes),
            size,
            checks,
            p.error
                .as_ref()
                .map(|e| format!("; FAILED: {e}"))
                .unwrap_or_default()
        ));
    }
    let nodes: Vec<String> = info
        .nodes
        .iter()
        .map(|n| {
            format!(
                "{} {}",
                node_label(n),
                n.server
                    .as_ref()
                    .map_or_else(|| "?".into(), |s| format!("{:.2}", s.cpu_us as f64 / 1e6))
            )
        })
        .collect();
    out.push_str(&format!(
        "      server CPU s over the whole build: {}",
        nodes.join(", ")
    ));
    if let Some(h) = info.head_declare_secs {
        out.push_str(&format!(
            "; indexes declared on the Spider head in {h:.3} s"
        ));
    }
    out.push('\n');
    out
}

/// A node's name in the output: its role, and `(head)` on the head when its role does not say.
fn node_label(n: &NodeStep) -> String {
    if n.writes && n.role != "head" {
        format!("{} (head)", n.role)
    } else {
        n.role.clone()
    }
}

/// One row per build and node: each shard's part of the build and every node's CPU over it
/// (`shards.csv`, `shards.md`, and the table printed at the end); `None` without sharded
/// builds.
pub fn shards_table(
    builds: &[BuildResult],
    axes: &[crate::step::sweep::KnobAxis],
) -> Option<crate::export::Table> {
    if builds.iter().all(|b| b.sharded.is_none()) {
        return None;
    }
    let mut headers: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
    headers.extend(
        [
            "build",
            "mode",
            "rep",
            "node",
            "rows",
            "start_s",
            "secs",
            "rows/s",
            "cpu_s",
            "read_mb",
            "write_mb",
            "index_mb",
            "node_cpu_s",
            "ok",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let mut t = crate::export::Table::new(headers);
    let f = |v: Option<f64>, p: usize| v.map_or_else(|| "-".into(), |v| format!("{v:.p$}"));
    let mb = |v: Option<u64>| f(v.map(|b| b as f64 / 1e6), 1);
    for b in builds {
        let Some(info) = &b.sharded else { continue };
        let knobs: Vec<String> = axes
            .iter()
            .map(|a| {
                b.knobs
                    .iter()
                    .find(|(k, _)| k == &a.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            })
            .collect();
        for n in &info.nodes {
            let node_cpu = f(n.server.as_ref().map(|s| s.cpu_us as f64 / 1e6), 2);
            let mut row = knobs.clone();
            row.extend([b.build.clone(), b.mode.clone(), b.repeat.to_string()]);
            match info.shards.iter().find(|p| p.role == n.role) {
                Some(p) => {
                    let size: u64 = p.index_bytes.iter().map(|(_, v)| v).sum();
                    row.extend([
                        p.role.clone(),
                        p.rows.to_string(),
                        format!("{:.3}", p.started_after),
                        format!("{:.3}", p.seconds),
                        format!("{:.0}", p.rows_per_sec),
                        f(p.server_cpu_secs, 2),
                        mb(p.server_read_bytes),
                        mb(p.server_write_bytes),
                        mb((!p.index_bytes.is_empty()).then_some(size)),
                        node_cpu,
                        (p.error.is_none() && p.checks.iter().all(|c| c.ok)).to_string(),
                    ]);
                }
                None => {
                    // The head builds nothing: only its CPU over the whole build.
                    row.push(node_label(n));
                    row.extend(std::iter::repeat("-".to_string()).take(8));
                    row.extend([node_cpu, "-".into()]);
                }
            }
            t.push(row);
        }
    }
    Some(t)
}

/// Read (or set, for a session knob) a knob on every shard: the value shard1 reports, and a
/// warning when the shards report different values.
pub fn knob_on_shards(
    lab: &ShardedLab,
    name: &str,
    value: &str,
    scope: KnobScope,
) -> Result<(String, Option<String>)> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for sh in &lab.shards {
        let mut c = sh
            .driver
            .connect_admin()
            .with_context(|| format!("connecting to {}", sh.role))?;
        let now = if scope == KnobScope::Session {
            sh.driver.set_session_knob(c.as_mut(), name, value)
        } else {
            sh.driver.knob_value(c.as_mut(), name)
        }
        .with_context(|| format!("on {}", sh.role))?;
        seen.push((sh.role.clone(), now));
    }
    let first = seen[0].1.clone();
    let differ = seen.iter().any(|(_, v)| *v != first);
    let warning = differ.then(|| {
        format!(
            "{name}: the shards report different values ({})",
            seen.iter()
                .map(|(r, v)| format!("{r} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    Ok((first, warning))
}

/// Restart every shard whose settings differ from its `bases` (its settings at the start)
/// with the server-wide knobs of `point`; true when one was restarted. The caller reconnects.
pub fn apply_server_knobs(
    cs: &mut ClusterSession,
    point: &[(String, String)],
    scopes: &[KnobScope],
    bases: &[(String, Vec<(String, String)>)],
) -> Result<bool> {
    let wanted = crate::step::sweep::server_wide(point, scopes);
    if wanted.is_empty() {
        return Ok(false);
    }
    let norm = |v: &[(String, String)]| {
        let mut v: Vec<(String, String)> = v
            .iter()
            .map(|(k, x)| (k.to_ascii_lowercase().replace('-', "_"), x.clone()))
            .collect();
        v.sort();
        v
    };
    let now = cs.shard_settings();
    let t0 = Stopwatch::start();
    let mut restarted = Vec::new();
    for (role, base) in bases {
        let mut settings: Vec<(String, String)> = base
            .iter()
            .filter(|(k, _)| !wanted.iter().any(|(w, _)| w.eq_ignore_ascii_case(k)))
            .cloned()
            .collect();
        settings.extend(wanted.iter().cloned());
        let current = now
            .iter()
            .find(|(r, _)| r == role)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        if norm(&current) == norm(&settings) {
            continue;
        }
        cs.restart_shard(role, &settings)?;
        restarted.push(role.clone());
    }
    if restarted.is_empty() {
        return Ok(false);
    }
    crate::outln!(
        "   restarted {} with {} in {:.1} s",
        restarted.join(", "),
        crate::step::sweep::knob_label(&wanted),
        t0.elapsed_secs()
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::sys::ServerSample;

    fn part(secs: f64, size: u64, write: Option<u64>) -> BuildResult {
        BuildResult {
            seconds: secs,
            rows: 10,
            index_bytes: vec![("pi1_pdc".into(), size)],
            server_write_bytes: write,
            counters: vec![("wal_bytes".into(), 100)],
            checks: vec![Check {
                name: "valid".into(),
                ok: true,
                detail: "pi1_pdc".into(),
            }],
            warnings: vec!["same".into()],
            ..Default::default()
        }
    }

    #[test]
    fn the_whole_build_from_the_shards_parts() {
        let shards: Vec<Shard> = ["shard1", "shard2"]
            .iter()
            .map(|r| Shard {
                role: r.to_string(),
                driver: Arc::new(crate::dbms::null::Null::default()),
                rows: 10,
            })
            .collect();
        let t0 = crate::measure::clock::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let parts = vec![
            (part(1.0, 1000, Some(5)), Some((at(0.0), at(1.0)))),
            (part(1.5, 3000, None), Some((at(0.25), at(1.75)))),
        ];
        let mut whole = BuildResult {
            rows: 20,
            ..Default::default()
        };
        let mut info = ShardedBuild {
            nodes: vec![
                NodeStep {
                    role: "shard1".into(),
                    server: Some(ServerSample {
                        cpu_us: 1_000_000,
                        read_bytes: Some(7),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                NodeStep {
                    role: "head".into(),
                    writes: true,
                    server: Some(ServerSample {
                        cpu_us: 500_000,
                        read_bytes: Some(1),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        compose(
            &mut whole,
            &mut info,
            &shards,
            parts,
            vec![None, None],
            &[vec!["CREATE INDEX".into()]],
        );
        // Start of the first to the end of the last.
        assert!((whole.seconds - 1.75).abs() < 1e-9, "{}", whole.seconds);
        assert!((info.shards[1].started_after - 0.25).abs() < 1e-9);
        assert_eq!(whole.index_bytes, vec![("pi1_pdc".to_string(), 4000)]);
        assert_eq!(whole.counters, vec![("wal_bytes".to_string(), 200)]);
        // One shard's written bytes unknown: the sum is unknown, never a partial sum.
        assert_eq!(whole.server_write_bytes, None);
        assert_eq!(whole.server_cpu_secs, Some(1.5));
        assert_eq!(whole.server_read_bytes, Some(8));
        assert_eq!(whole.checks.len(), 2);
        assert_eq!(whole.checks[1].detail, "shard2: pi1_pdc");
        assert_eq!(whole.warnings, vec!["on every shard: same".to_string()]);
        assert!(whole.error.is_none());
        // A node whose processes could not be read makes the whole CPU unknown.
        info.nodes[1].server = None;
        let mut again = BuildResult::default();
        let mut info2 = ShardedBuild {
            nodes: info.nodes.clone(),
            ..Default::default()
        };
        compose(
            &mut again,
            &mut info2,
            &shards,
            vec![(part(1.0, 1, Some(1)), None), (part(1.0, 1, Some(1)), None)],
            vec![None, None],
            &[],
        );
        assert_eq!(again.server_cpu_secs, None);
        assert_eq!(again.server_write_bytes, Some(2));
    }
}
