//! The session every database command runs in: the checks of the shared options against the
//! target they name ([`check_common`], [`check_knob_names`]), the results directory, the
//! target (and a throwaway server when asked), the control connection, and the result kept on
//! disk.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Result};

use crate::dbms::{self, Dbms, TargetOptions, TargetSpec};
use crate::export::text;
use crate::measure::clock::Stopwatch;
use crate::measure::sys::HostInfo;
use crate::options::args::{parse_pragmas, parse_settings};
use crate::options::cli::CommonArgs;
use crate::results::store::Store;
use crate::results::{RunResult, Status};

/// Check the options every database command shares against the target they name, before
/// anything is created: options that would be silently ignored on this target are errors, and
/// the tables' names (and the index names derived from them) must fit the DBMS's identifier
/// limit.
pub fn check_common(common: &CommonArgs, tables: &[String]) -> Result<()> {
    let spec = &common.parsed_target()?.spec;
    common.cluster_shape()?;
    let dialect = crate::dbms::registry::dialect(&spec.kind);
    if let Some(engine) = &common.engine {
        if !dialect.storage_engines() {
            bail!(
                "--engine {engine} is for MySQL/MariaDB targets; {} has no storage engine to choose",
                dialect.name()
            );
        }
    }
    if common.keep_data && !spec.needs_server() {
        bail!("--keep-data keeps the data directory of the server ixbench starts for --target postgres or mariadb; this target has none");
    }
    if let Some(dir) = &common.server_bin {
        if !spec.needs_server() {
            bail!("--server-bin starts the throwaway server of --target postgres or mariadb from another install; this target has none");
        }
        let kind = crate::server::ServerKind::for_target(&spec.kind);
        crate::server::check_server_bin(kind, Some(dir))?;
    }
    if common.rm && !spec.needs_server() {
        bail!("--rm removes the data directory of the server ixbench starts for --target postgres or mariadb; this target has none");
    }
    if !common.sqlite_pragma.is_empty() && !dialect.pragmas() {
        bail!(
            "--sqlite-pragma is for SQLite targets; this target is {}",
            spec.kind
        );
    }
    // Index names are made from a table's name: the default workload's are the longest.
    use crate::workload::{registry, tables as owned};
    let suffixes = registry::find(registry::DEFAULT)
        .map(|e| owned::index_suffixes(&(e.indexes)(), e.ddl_target.table))
        .unwrap_or_default();
    owned::validate_names(&spec.kind, tables, &suffixes)
}

/// The knobs of a sweep (`--knob NAME=...`) checked against the settings the throwaway server's
/// program knows, before anything is started or created (a typo is found at once, with a "did
/// you mean"). A server ixbench does not start is checked when connected.
pub fn check_knob_names(common: &CommonArgs, names: &[String]) -> Result<()> {
    let spec = &common.parsed_target()?.spec;
    if names.is_empty() || !spec.needs_server() {
        return Ok(());
    }
    let kind = crate::server::ServerKind::for_target(&spec.kind);
    crate::server::check_setting_names(kind, common.server_bin.as_deref(), names)
        .map_err(|e| anyhow::anyhow!("--knob: {e}"))
}

/// Exit status when a self-check failed.
pub const EXIT_CHECKS_FAILED: u8 = 2;

/// Exit status after Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

/// What every command that works on a database holds: the results directory, the target, a
/// control connection, and the result that is kept on disk as the command goes.
pub struct Session {
    /// The results directory.
    pub store: Store,
    /// The database.
    pub target: Box<dyn Dbms>,
    /// A connection for DDL, checks and counters (workers have their own).
    pub conn: Box<dyn crate::dbms::Conn>,
    /// What is written to run.json.
    pub result: RunResult,
    /// The throwaway server ixbench started for this command, if any.
    pub server: Option<crate::server::RunningServer>,
    /// Keep the throwaway server's data directory at the end (`--keep-data`).
    keep_data: bool,
    /// The throwaway cluster ixbench started for this command (`--target galera`), if any.
    pub cluster: Option<crate::cluster_target::ClusterSession>,
    /// The live view (`--metrics-listen`), served until the session ends.
    live: Option<crate::measure::live::Endpoint>,
}

/// The labels of the live view's series: the run (the results directory's name; the run key
/// every part derives alike for the processes of a `--client-count` run), the command, the
/// workload, the target's kind and the client (`--client-id`, else 0).
fn live_labels(
    result: &RunResult,
    store: &Store,
    part_key: Option<String>,
) -> crate::measure::live::Labels {
    let c = &result.config;
    let text = |k: &str| c.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let command = text("command").unwrap_or_default();
    let part = c.get("client_part");
    let run = match part_key {
        Some(k) => k,
        None => store
            .dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    crate::measure::live::Labels {
        run,
        workload: text("workload")
            .or_else(crate::measure::live::workload)
            .unwrap_or_else(|| command.clone()),
        command,
        target_kind: result.target.kind.clone(),
        client: part
            .and_then(|p| p.get("id"))
            .and_then(|v| v.as_u64())
            .unwrap_or(0),
    }
}

/// Start the throwaway server a bare `--target postgres|mariadb` asks for, with its data
/// directory in the results directory when the server's OS user can reach it.
fn start_server(
    spec: &TargetSpec,
    store: &Store,
    settings: Vec<(String, String)>,
    bin_dir: Option<&std::path::Path>,
    tls: Option<crate::server::ServerTls>,
) -> Result<crate::server::RunningServer> {
    use crate::server::{reachable_datadir, start_from, ServerKind, ServerOptions};
    let kind = ServerKind::for_target(&spec.kind);
    let preferred = std::path::absolute(store.dir().join(format!("{}-data", kind.name())))?;
    let (datadir, why) = reachable_datadir(kind, &preferred);
    if let Some(why) = why {
        crate::outln!(
            "note: server data directory in {} ({why})",
            datadir.display()
        );
    }
    let t0 = Stopwatch::start();
    let server = start_from(
        kind,
        &ServerOptions {
            datadir,
            port: None,
            settings,
            tls,
        },
        bin_dir,
    )?;
    let from = server
        .bin_dir
        .as_ref()
        .map(|d| format!(" from {}", d.display()))
        .unwrap_or_default();
    crate::outln!(
        "started {}{from} on port {} in {:.1} s, data directory {} (ixbench stops it at the end; if ixbench is killed: ixbench server stop {})",
        kind.product(),
        server.port,
        t0.elapsed_secs(),
        server.datadir.display(),
        server.datadir.display()
    );
    Ok(server)
}

impl Session {
    /// Create the results directory, open the target and print the header. When the target
    /// cannot be opened, the new results directory is removed again and the error returned.
    pub fn open(
        common: &CommonArgs,
        argv: Vec<String>,
        config: serde_json::Value,
    ) -> Result<Session> {
        let pragmas = parse_pragmas(&common.sqlite_pragma)?;
        // The live view listens before anything is created or started: a port in use is an
        // error with nothing to undo.
        let live = common
            .metrics_listen
            .map(crate::measure::live::listen)
            .transpose()?;
        if let Some(ep) = &live {
            crate::outln!("metrics: http://{}/metrics", ep.addr());
        }
        // The run key the parts of a `--client-count` run share (as `ixbench run` derives it).
        let part_key = config
            .get("client_part")
            .map(|_| crate::options::scale::run_key(&config));
        // The run length preset (`--size`), recorded with the flags it set.
        let mut config = config;
        if let (Some(size), Some(c)) = (common.size, config.as_object_mut()) {
            c.insert("size".into(), serde_json::json!(size.name()));
        }
        let settings = parse_settings(&common.set)?;
        let mut spec = common.parsed_target()?.spec.clone();
        let cluster_shape = common.cluster_shape()?;
        if !settings.is_empty() && !spec.needs_server() {
            bail!(
                "--set configures the server ixbench starts for --target postgres or mariadb; \
                 set {} yourself on this target",
                settings[0].0
            );
        }
        if common.server_tls.is_some() && !spec.needs_server() {
            bail!(
                "--server-tls starts the server ixbench starts (--target postgres, mariadb, \
                 galera, spider, pg-shards) with TLS; for a server of yours give the TLS \
                 settings in the URL (sslmode=..., ssl-mode=...)"
            );
        }
        let tls = common
            .server_tls
            .as_deref()
            .map(crate::server::ServerTls::from_dir)
            .transpose()?;
        let now = crate::measure::clock::utc_now();
        let store = Store::create(
            common.out.as_deref(),
            &now.format("%Y%m%d-%H%M%S").to_string(),
        )?;
        let mut server = None;
        let mut cluster = None;
        if let Some(shape) = cluster_shape {
            match crate::cluster_target::ClusterSession::start(shape, &store, settings, tls) {
                Ok(c) => {
                    spec.url = Some(c.entry_url());
                    cluster = Some(c);
                }
                Err(e) => {
                    store.discard();
                    return Err(e);
                }
            }
        } else if spec.needs_server() {
            let wait = crate::progress::waiting("server to start");
            let started = start_server(&spec, &store, settings, common.server_bin.as_deref(), tls);
            drop(wait);
            match started {
                Ok(s) => {
                    // With the generated password: never printed (the location has none).
                    spec.url = Some(s.url_with_password());
                    server = Some(s);
                }
                Err(e) => {
                    store.discard();
                    return Err(e);
                }
            }
        }
        let topts = TargetOptions {
            engine: common.engine.clone(),
            sqlite_pragmas: pragmas,
            default_sqlite_path: Some(store.dir().join("ixbench.sqlite")),
            connect_timeout: Some(Duration::from_secs_f64(common.connect_timeout)),
            // A throwaway server is ixbench's to change; any other only when asked.
            server_changes: server.is_some() || cluster.is_some() || common.allow_server_changes,
        };
        let opened = match cluster.as_mut() {
            Some(c) => c.open_target(&topts),
            None => dbms::open(&spec, &topts),
        }
        .and_then(|t| {
            let mut c = t.connect_admin()?;
            let info = t.info(c.as_mut())?;
            Ok((t, c, info))
        });
        let (target, conn, info) = match opened {
            Ok(v) => v,
            Err(e) => {
                // Nothing was measured: leave no empty results directory behind.
                if let Some(srv) = server {
                    let _ = srv.stop_and_remove();
                }
                if let Some(c) = cluster {
                    let _ = c.stop(true);
                }
                store.discard();
                return Err(e);
            }
        };
        crate::out!(
            "{}",
            text::run_header(&info, &store.dir().display().to_string())
        );
        crate::measure::server_figures::set(common.server_figures);
        let mut conn = conn;
        let figures = crate::measure::resources::figures_choice(
            target.as_ref(),
            conn.as_mut(),
            common.server_figures,
        );
        if figures.dbms {
            crate::out!("{}", text::figures_choice(&figures));
        }
        let result = RunResult {
            schema_version: crate::results::SCHEMA_VERSION,
            ixbench_version: env!("CARGO_PKG_VERSION").to_string(),
            // A password given in a URL must not reach the results.
            command_line: argv.iter().map(|a| dbms::redact_url(a)).collect(),
            started_at: now.to_rfc3339(),
            finished_at: None,
            status: Status::Running,
            error: None,
            config,
            target: info,
            host: HostInfo::gather(),
            steps: Vec::new(),
            builds: Vec::new(),
            strategies: Vec::new(),
            warnings: Vec::new(),
            workloads: Default::default(),
            ddl: None,
            build: Some(crate::results::build::BuildInfo::current()),
            server: server
                .as_ref()
                .map(crate::results::server::ServerRecord::of),
            server_figures: Some(figures),
            notes: Vec::new(),
        };
        if let Some(w) = result.build.as_ref().and_then(|b| b.warning()) {
            crate::outln!("{w}");
        }
        if live.is_some() {
            crate::measure::live::set_labels(live_labels(&result, &store, part_key));
        }
        store.write_run(&result)?;
        Ok(Session {
            store,
            target,
            conn,
            result,
            server,
            keep_data: common.keep_data,
            cluster,
            live,
        })
    }

    /// Record the notes of the workload the command runs ([`RunResult::notes`]) and print
    /// them under the header.
    pub fn workload_notes(&mut self, notes: Vec<String>) {
        for n in &notes {
            crate::outln!("note: {n}");
        }
        self.result.notes.extend(notes);
    }

    /// Record how the command ended, write run.json and the `tables` (name, table) as CSV and
    /// Markdown, print them, the run's self-checks (also `checks.csv` and `checks.md`, from
    /// the result whatever command made them) and where the results are. `checks_ok` false
    /// fails the run's checks besides any recorded check that failed. Returns the exit
    /// status, or the command's error for the caller to print.
    pub fn close(
        mut self,
        outcome: Result<()>,
        interrupt: &AtomicBool,
        checks_ok: bool,
        tables: &[(&str, crate::export::Table)],
    ) -> Result<u8> {
        let checks_ok = checks_ok && self.result.checks_ok();
        self.result.finished_at = Some(crate::measure::clock::utc_now().to_rfc3339());
        let code = match &outcome {
            // Stopped (Ctrl-C, SIGTERM, SIGHUP): an error the stop caused (a cancelled
            // statement) is part of the interruption, not a failure.
            _ if interrupt.load(Ordering::SeqCst) => {
                self.result.status = Status::Interrupted;
                crate::stop::exit_code()
            }
            Ok(()) if checks_ok => {
                self.result.status = Status::Ok;
                0
            }
            Ok(()) => {
                self.result.status = Status::ChecksFailed;
                EXIT_CHECKS_FAILED
            }
            Err(e) => {
                self.result.status = Status::Failed;
                self.result.error = Some(format!("{e:#}"));
                1
            }
        };
        // Stop the throwaway server before reporting, so its data directory is complete.
        drop(self.conn);
        drop(self.target);
        if let Some(srv) = self.server.take() {
            let dir = srv.datadir.clone();
            let created = srv.created_datadir;
            let stopped = if self.keep_data {
                srv.stop()
            } else {
                srv.stop_and_remove()
            };
            let kept = match stopped {
                Ok(()) if !self.keep_data && created => {
                    crate::outln!(
                        "stopped the server and removed its data directory {} (--keep-data keeps it)",
                        dir.display()
                    );
                    Some(false)
                }
                Ok(()) => {
                    crate::outln!(
                        "stopped the server; its data directory is {}",
                        dir.display()
                    );
                    Some(true)
                }
                Err(e) => {
                    note(&format!("ixbench: warning: stopping the server: {e:#}"));
                    None
                }
            };
            if let Some(rec) = self.result.server.as_mut() {
                rec.data_kept = kept;
            }
        }
        if let Some(c) = self.cluster.take() {
            let dir = c.cluster.dir.clone();
            // Removed by default, as a throwaway server's data directory is (`--keep-data`).
            let rm = !self.keep_data;
            match c.stop(rm) {
                Ok(()) if rm => {
                    crate::outln!("stopped the cluster and removed {}", dir.display())
                }
                Ok(()) => crate::outln!("stopped the cluster; its directory is {}", dir.display()),
                Err(e) => note(&format!("ixbench: warning: stopping the cluster: {e:#}")),
            }
        }
        // Errors name the target (without any password).
        let location = self.result.target.location.clone();
        let outcome = outcome.map_err(|e| e.context(format!("target {location}")));
        if let Err(e) = &outcome {
            self.result.error = Some(format!("{e:#}"));
        }
        let outcome = match outcome {
            Err(_) if self.result.status == Status::Interrupted => Ok(()),
            other => other,
        };
        self.store.write_run(&self.result)?;
        let (intervals, txn) = self.store.intervals_so_far()?;
        self.store.write_file(
            "report.html",
            &crate::export::html::report(&self.result, &intervals, &txn, tables),
        )?;
        for (name, t) in tables {
            self.store
                .write_file(&format!("{name}.csv"), &crate::export::csv::render(t))?;
            self.store
                .write_file(&format!("{name}.md"), &crate::export::markdown::render(t))?;
            crate::out!("\n{}", text::table(t));
        }
        let checks = crate::export::checks_table(&self.result);
        self.store
            .write_file("checks.csv", &crate::export::csv::render(&checks))?;
        self.store
            .write_file("checks.md", &crate::export::markdown::render(&checks))?;
        crate::out!("\n{}", text::checks(&self.result));
        // The report is written above: say where it is.
        crate::outln!(
            "results: {} (report: {})",
            self.store.dir().display(),
            self.store.dir().join("report.html").display()
        );
        match self.result.status {
            Status::ChecksFailed => note("ixbench: self-checks failed (see CHECK FAILED above)"),
            Status::Interrupted => note(&format!(
                "ixbench: interrupted; finished work is in {}",
                self.store.dir().display()
            )),
            _ => {}
        }
        // The command has ended: the live view stops serving, once a scraper watching it has
        // seen the final figures.
        if let Some(ep) = self.live.take() {
            ep.finish();
        }
        outcome.map(|_| code)
    }
}

/// Print a line to stderr, ignoring errors (after SIGHUP the terminal may be gone, and
/// `eprintln!` would panic before the results are saved).
fn note(line: &str) {
    use std::io::Write;
    // Above the status line on a terminal, not through it.
    crate::progress::suspend(|| {
        let _ = writeln!(std::io::stderr(), "{line}");
    });
}
