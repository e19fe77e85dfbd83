//! Running a schema change by another method than the engine's statement, under the load of
//! `ixbench ddl` ([`crate::step::online_ddl`]): a tool DBAs use (pt-online-schema-change,
//! pg_repack) or a user's command, started as a child process in its own process group, its
//! output kept in the results directory and read into phases on the load's timeline, stopped
//! (SIGTERM, then SIGKILL) when ixbench is interrupted or the DDL times out, and, whenever it
//! did not finish cleanly, the triggers and shadow tables it created dropped again (only those:
//! what existed before it started is never touched). For every method, also the engine's own
//! statements, the server's CPU and bytes written during the change are measured against the
//! baseline's rate, so methods compare on what they add to the server.
//!
//! The password never reaches a command line: pt-online-schema-change reads it from an option
//! file in memory only (a memfd it inherits: nothing on disk, even if ixbench is killed), pg_repack and
//! user commands from the environment; lines a tool prints are written with it masked.
//!
//! [`RowCounting`] wraps the workload so its committed transactions' inserted and deleted rows
//! are counted: after the change the tables must hold exactly the rows the workload says (a
//! trigger-based copy must lose no row written during the copy).

use std::io::{BufRead, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::dbms::ddl::tools::{self, Method, Tool, ToolObjects};
use crate::dbms::ddl::{DdlDialect, DdlRequest, Waits};
use crate::dbms::{Conn, Dbms};
use crate::deadline::{Deadline, Since};
use crate::measure::clock;
use crate::measure::sys::ServerCounters;
use crate::results::schema_tools::MethodOutcome;
use crate::step::create_index::CostSource;
use crate::workload::{TxnDone, Workload, WorkloadClient};

/// How long a tool has to exit after SIGTERM before it gets SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(5);
/// Longest wait for a lock of each clean-up statement, seconds.
const CLEANUP_LOCK_WAIT: u32 = 10;
/// Attempts of each clean-up statement (a lock timeout, or ixbench's own stop cancelling it).
const CLEANUP_TRIES: u32 = 6;
/// Rounds of looking for what a program left and dropping it.
const CLEANUP_ROUNDS: u32 = 3;
/// How long `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the output readers may go on after the program ended (a grandchild that keeps
/// the pipes open is not waited for).
const READER_WAIT: Duration = Duration::from_secs(2);

/// What [`crate::step::online_ddl`] asks of a method while the load runs. All calls come from
/// the DDL's thread except [`DdlHook::phase`] and [`DdlHook::waits`] (the sampler's) and
/// [`DdlHook::cancel`] (the reporter's).
pub trait DdlHook: Sync {
    /// The load's clock started (`origin`): the baseline's counters are read on `conn` (the
    /// DDL's session, idle until the change starts).
    fn load_started(&self, origin: Instant, conn: &mut dyn Conn);
    /// The change starts (before its first attempt).
    fn ddl_started(&self, conn: &mut dyn Conn);
    /// One attempt: `None` to run the plan's statements on `conn` as usual, or the outcome of
    /// running the method's program (cleaned up after a failure).
    fn run(&self, conn: &mut dyn Conn) -> Option<Result<()>>;
    /// The change ended (after its last attempt).
    fn ddl_ended(&self, conn: &mut dyn Conn);
    /// The change's phase for the timeline: the phases the program announced since the last
    /// call (`a -> b`), else the one it is in; `None` to use the engine's progress view.
    fn phase(&self, conn: &mut dyn Conn) -> Option<String>;
    /// Who waits because of the change, when the engine's view of the DDL session's waits
    /// does not apply (a program's sessions are not ixbench's); `None`: the dialect's.
    fn waits(&self, conn: &mut dyn Conn) -> Option<Waits>;
    /// Stop the change (Ctrl-C, SIGTERM, the DDL's timeout, a fatal foreground error).
    fn cancel(&self);
}

/// A program found in PATH and its version.
#[derive(Debug, Clone)]
pub struct FoundTool {
    /// Where it is.
    pub path: PathBuf,
    /// What `--version` said (first line).
    pub version: String,
    /// The version as numbers.
    pub numbers: (u32, u32, u32),
}

/// The first executable file `name` in PATH.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// Find `tool` in PATH and check its version (`--version`), before anything is loaded: a
/// missing or too old program is a one-line error naming what to install.
pub fn find_tool(tool: &Tool, method: Method) -> Result<FoundTool> {
    let Some(path) = find_in_path(tool.program) else {
        bail!(
            "{} is not in PATH: install {} (--method {} runs it)",
            tool.program,
            tool.package,
            method.name()
        );
    };
    let mut child = std::process::Command::new(&path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", path.display()))?;
    let t0 = Since::start();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if t0.so_far() > VERSION_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} --version did not answer in {} s",
                path.display(),
                VERSION_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    let Some(v) = tools::parse_version(&text).filter(|_| status.success()) else {
        bail!(
            "cannot tell the version of {} (--version said {first:?}{}): --method {} needs {} {}.{}.{} or later",
            path.display(),
            if status.success() { String::new() } else { format!(", {status}") },
            method.name(),
            tool.program,
            tool.min_version.0,
            tool.min_version.1,
            tool.min_version.2
        );
    };
    if v < tool.min_version {
        bail!(
            "{} {}.{}.{} ({}) is too old: --method {} needs {}.{}.{} or later (install a newer {})",
            tool.program,
            v.0,
            v.1,
            v.2,
            path.display(),
            method.name(),
            tool.min_version.0,
            tool.min_version.1,
            tool.min_version.2,
            tool.package
        );
    }
    Ok(FoundTool {
        path,
        version: first,
        numbers: v,
    })
}

/// Make sure the pg_repack extension is in the target's database, at the version of the
/// program: created on a server ixbench started (`ours`), a one-line error on another server.
/// Returns what was done, for the output.
pub fn prepare_pg_repack(
    conn: &mut dyn Conn,
    ours: bool,
    program: (u32, u32, u32),
) -> Result<String> {
    let (installed, available) = tools::pg_repack_extension(conn)?;
    let db = conn
        .query_rows("SELECT current_database()")?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten())
        .unwrap_or_default();
    let installed = match installed {
        Some(v) => v,
        None if ours && available => {
            conn.execute("CREATE EXTENSION pg_repack")
                .context("CREATE EXTENSION pg_repack")?;
            return Ok(format!(
                "created the pg_repack extension in database {db} (a server ixbench started)"
            ));
        }
        None if ours => bail!(
            "the pg_repack extension is not installed on this PostgreSQL server (its files are missing: install postgresql-NN-repack for this server's version)"
        ),
        None => bail!(
            "the pg_repack extension is not in database {db}: a superuser must run CREATE EXTENSION pg_repack there first (ixbench creates it only on a server it started)"
        ),
    };
    match tools::parse_version(&installed) {
        Some(v) if v == program => Ok(format!("pg_repack extension {installed} in database {db}")),
        _ => bail!(
            "pg_repack is {}.{}.{} but the extension in database {db} is {installed}: pg_repack refuses to run with another version (ALTER EXTENSION pg_repack UPDATE, or install the matching program)",
            program.0,
            program.1,
            program.2
        ),
    }
}

/// A program to run as the change.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The program.
    pub program: PathBuf,
    /// Its arguments (no password).
    pub args: Vec<String>,
    /// Environment added to ixbench's (may hold the password).
    pub env: Vec<(String, String)>,
    /// A file written 0600 before the program starts and removed when it ends (the MySQL
    /// option file with the password): path, contents.
    pub secret_file: Option<(PathBuf, String)>,
    /// Where its output goes.
    pub log_path: PathBuf,
    /// The command line for the record.
    pub display: String,
    /// Its version line, for the record.
    pub version: Option<String>,
}

/// Quote a word for a shell-like display.
fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=,./:%@+".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// What a point's method needs to start: the found program, `--method-opt` arguments, the
/// user's `--ddl-command`, the table's engine (for a MySQL rebuild), the results directory.
pub struct LaunchSpec<'a> {
    /// The method.
    pub method: Method,
    /// The target (its client parameters).
    pub target: &'a dyn Dbms,
    /// The change.
    pub req: &'a DdlRequest,
    /// The target's DDL dialect (the ALTER clause a user's command gets).
    pub dialect: &'a dyn DdlDialect,
    /// The engine's own statements for it (for `IXBENCH_SQL`).
    pub native: &'a [String],
    /// The program of a tool method.
    pub tool: Option<&'a FoundTool>,
    /// Extra arguments (`--method-opt`).
    pub extra: &'a [String],
    /// The user's command (`--method external`).
    pub command: Option<&'a str>,
    /// The table's storage engine on MySQL (`InnoDB`, `ROCKSDB`).
    pub engine: &'a str,
    /// PostgreSQL's major version (0 otherwise).
    pub pg_major: u32,
    /// The results directory.
    pub dir: &'a Path,
    /// A file-name tag for this point (`p3-pt-osc`).
    pub tag: String,
}

/// A memory-only file holding `text` (close-on-exec; see its use in `run`), for a program that
/// reads a password from a file it is given by name.
fn secret_fd(text: &str) -> Result<std::fs::File> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    let fd = memfd_create("ixbench-secret", MFdFlags::MFD_CLOEXEC)
        .context("cannot create a memory file for the tool's password")?;
    let mut f = std::fs::File::from(fd);
    f.write_all(text.as_bytes())?;
    Ok(f)
}

/// The program, arguments and environment of a process method.
pub fn launch_for(s: &LaunchSpec) -> Result<Launch> {
    let kind = s.target.kind();
    let Some(params) = s.target.client_params() else {
        bail!(
            "--method {} needs a server another program can connect to",
            s.method.name()
        );
    };
    // Absolute: the program gets them as arguments (the option file) whatever its directory.
    let dir = std::path::absolute(s.dir).unwrap_or_else(|_| s.dir.to_path_buf());
    let log_path = dir.join(format!("{}.log", s.tag));
    let display = |program: &str, args: &[String]| {
        std::iter::once(program.to_string())
            .chain(args.iter().map(|a| shell_word(a)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match s.method {
        Method::PtOsc => {
            let tool = s.tool.context("pt-online-schema-change was not found")?;
            let alter = tools::alter_clause(s.req, s.engine)?;
            let file = dir.join(format!(".{}.cnf", s.tag));
            let args = tools::pt_osc_args(
                &params,
                &s.req.table,
                &alter,
                &file.display().to_string(),
                s.extra,
            );
            Ok(Launch {
                display: display("pt-online-schema-change", &args),
                program: tool.path.clone(),
                args,
                env: Vec::new(),
                secret_file: Some((file, tools::mysql_defaults_file(&params))),
                log_path,
                version: Some(tool.version.clone()),
            })
        }
        Method::PgRepack | Method::PgRepackIndexes => {
            let tool = s.tool.context("pg_repack was not found")?;
            let args = tools::pg_repack_args(
                &params,
                &s.req.table,
                s.method == Method::PgRepackIndexes,
                s.extra,
            );
            let mut env = Vec::new();
            if let Some(p) = &params.password {
                env.push(("PGPASSWORD".to_string(), p.clone()));
            }
            if s.pg_major >= 14 {
                // A backend whose pg_repack was killed notices within a second, so its
                // transaction ends and the clean-up does not wait behind it.
                let mut opts = std::env::var("PGOPTIONS").unwrap_or_default();
                opts.push_str(" -c client_connection_check_interval=1000");
                env.push(("PGOPTIONS".into(), opts.trim().to_string()));
            }
            Ok(Launch {
                display: display("pg_repack", &args),
                program: tool.path.clone(),
                args,
                env,
                secret_file: None,
                log_path,
                version: Some(tool.version.clone()),
            })
        }
        Method::External => {
            let cmd = s
                .command
                .filter(|c| !c.trim().is_empty())
                .context("--method external needs --ddl-command '...'")?;
            let alter = s.dialect.external_alter_clause(s.req, s.engine);
            Ok(Launch {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".into(), cmd.into()],
                env: tools::external_env(kind, &params, s.req, alter.as_deref(), s.native),
                secret_file: None,
                log_path,
                display: cmd.to_string(),
                version: None,
            })
        }
        m => bail!("--method {} runs no program", m.name()),
    }
}

/// Counters at one instant.
struct Sample {
    at: Instant,
    cpu: Option<ServerCounters>,
    written: Option<i64>,
}

#[derive(Default)]
struct State {
    origin: Option<Instant>,
    /// (seconds from the origin, phase)
    phases: Vec<(f64, String)>,
    /// Phases already given to the sampler.
    reported: usize,
    /// The second of the load the sampler last asked in, and the first phase it was given in
    /// that second (a later sample in the same second repeats them: the timeline keeps the
    /// last sample of each second).
    asked_in: Option<u64>,
    second_from: usize,
    current: Option<String>,
    /// The last few lines on stderr (not progress), with when they came: an error a program
    /// prints as it exits is the lines of its last burst.
    last_err: Vec<(Instant, String)>,
    last_out: Option<String>,
    refusal: Option<String>,
    exit_status: Option<String>,
    tool_cpu_us: Option<u64>,
    base: Option<Sample>,
    start: Option<Sample>,
    end: Option<Sample>,
    cleaned: Vec<String>,
    left: Vec<String>,
}

/// One point's method: the program to run (none for SQL methods) and what it measured.
pub struct MethodRunner<'a> {
    /// The method.
    pub method: Method,
    target: &'a dyn Dbms,
    req: &'a DdlRequest,
    launch: Option<Launch>,
    command: String,
    /// The program's password, to mask in its output.
    secret: Option<String>,
    cost: CostSource,
    state: Arc<Mutex<State>>,
    cancel: AtomicBool,
}

/// From the swap phase to the next one, seconds.
fn swap_seconds(phases: &[(f64, String)]) -> Option<f64> {
    let i = phases
        .iter()
        .position(|(_, p)| p == "swapping tables" || p == "swapping")?;
    let (from, _) = phases[i];
    phases.get(i + 1).map(|(to, _)| (to - from).max(0.0))
}

/// Lines of a program's last burst on stderr kept for its last message.
const BURST_LINES: usize = 3;

/// The stderr lines that came within half a second of the last one, joined: the whole of a
/// message a program prints on several lines as it exits.
fn last_burst(lines: &[(Instant, String)]) -> Option<String> {
    let (last, _) = lines.last()?;
    let burst: Vec<&str> = lines
        .iter()
        .filter(|(t, _)| last.saturating_duration_since(*t) <= Duration::from_millis(500))
        .map(|(_, l)| l.as_str())
        .collect();
    Some(burst.join(" "))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The name of a signal.
fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        n => format!("signal {n}"),
    }
}

impl<'a> MethodRunner<'a> {
    /// A runner for `method` (with its program for a process method); `statements` is what
    /// the method runs as SQL, for the record.
    pub fn new(
        method: Method,
        target: &'a dyn Dbms,
        req: &'a DdlRequest,
        launch: Option<Launch>,
        statements: &[String],
    ) -> Self {
        let cost = match CostSource::for_target(target) {
            CostSource::Embedded => CostSource::None,
            other => other,
        };
        let command = launch
            .as_ref()
            .map(|l| l.display.clone())
            .unwrap_or_else(|| statements.join("; "));
        let secret = target
            .client_params()
            .and_then(|p| p.password)
            .filter(|p| p.len() >= 4);
        MethodRunner {
            method,
            target,
            req,
            launch,
            command,
            secret,
            cost,
            state: Arc::default(),
            cancel: AtomicBool::new(false),
        }
    }

    /// Bytes the server wrote so far as the DBMS counts them, with what that adds up.
    fn written(&self, conn: &mut dyn Conn) -> (Option<i64>, Option<String>) {
        match self.target.written_so_far(conn) {
            Some((b, what)) => (i64::try_from(b).ok(), Some(what)),
            None => (None, None),
        }
    }

    fn sample(&self, conn: &mut dyn Conn) -> Sample {
        let (written, _) = self.written(conn);
        Sample {
            at: clock::now(),
            cpu: self.cost.sample(),
            written,
        }
    }

    /// What this point's method did and cost, for the results; `rows` is (before, net,
    /// after) of the row-count check.
    pub fn outcome(
        &self,
        conn: &mut dyn Conn,
        rows: (Option<i64>, Option<i64>, Option<i64>),
    ) -> MethodOutcome {
        let (_, written_what) = self.written(conn);
        let st = lock(&self.state);
        let mut o = MethodOutcome {
            method: self.method.name().into(),
            command: self.command.clone(),
            tool_version: self.launch.as_ref().and_then(|l| l.version.clone()),
            exit_status: st.exit_status.clone(),
            last_message: self.last_message(&st),
            output_file: self.launch.as_ref().map(|l| {
                l.log_path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            }),
            phases: st.phases.clone(),
            swap_s: swap_seconds(&st.phases),
            tool_cpu_s: st.tool_cpu_us.map(|u| u as f64 / 1e6),
            written_what,
            rows_before: rows.0,
            rows_net: rows.1,
            rows_after: rows.2,
            cleaned_up: st.cleaned.clone(),
            left_behind: st.left.clone(),
            ..Default::default()
        };
        if let (Some(b), Some(s), Some(e)) = (&st.base, &st.start, &st.end) {
            let base_s = s.at.saturating_duration_since(b.at).as_secs_f64();
            let ddl_s = e.at.saturating_duration_since(s.at).as_secs_f64();
            if let (Some(cb), Some(cs), Some(ce)) = (&b.cpu, &s.cpu, &e.cpu) {
                let during = ce.since(cs).cpu_us as f64 / 1e6;
                o.server_cpu_s = Some(during);
                if base_s > 0.0 {
                    let rate = cs.since(cb).cpu_us as f64 / 1e6 / base_s;
                    o.extra_server_cpu_s = Some(during - rate * ddl_s);
                }
            }
            if let (Some(wb), Some(ws), Some(we)) = (b.written, s.written, e.written) {
                let during = we - ws;
                o.written_bytes = Some(during);
                if base_s > 0.0 {
                    let rate = (ws - wb) as f64 / base_s;
                    o.extra_written_bytes = Some(during - (rate * ddl_s).round() as i64);
                }
            }
        }
        o
    }

    fn last_message(&self, st: &State) -> Option<String> {
        let failed = st.exit_status.as_deref().is_some_and(|s| s != "exit 0");
        if failed {
            st.refusal
                .clone()
                .or_else(|| last_burst(&st.last_err))
                .or_else(|| st.last_out.clone())
        } else {
            st.refusal
                .clone()
                .or_else(|| st.last_out.clone())
                .or_else(|| last_burst(&st.last_err))
        }
    }

    fn set_phase(state: &Mutex<State>, phase: String, at: Instant) {
        let mut st = lock(state);
        if st.current.as_deref() == Some(phase.as_str()) {
            return;
        }
        let t = st
            .origin
            .map(|o| at.saturating_duration_since(o).as_secs_f64())
            .unwrap_or(0.0);
        st.current = Some(phase.clone());
        st.phases.push((t, phase));
    }

    /// Drop what the program created and left (`before`: the same objects before it started),
    /// with bounded lock waits and a few tries each; recorded in the state.
    fn clean_up(&self, conn: &mut dyn Conn, before: &ToolObjects) -> (Vec<String>, Vec<String>) {
        let kind = self.target.kind();
        let db = self
            .target
            .client_params()
            .map(|p| p.database)
            .unwrap_or_default();
        let mut cleaned: Vec<String> = Vec::new();
        let mut left: Vec<String> = Vec::new();
        let _ = conn.execute(&tools::cleanup_lock_timeout(kind, CLEANUP_LOCK_WAIT));
        // Looked for again after each round: a statement of the program's that was still
        // waiting for its lock when the program died (a RENAME TABLE) may run meanwhile and
        // leave other objects (`_t_old` instead of `_t_new`).
        for _round in 0..CLEANUP_ROUNDS {
            let now = match tools::tool_objects(self.method, conn, &db, &self.req.table) {
                Ok(n) => n,
                Err(e) => {
                    left.push(format!(
                        "cannot look for what the tool left: {}",
                        crate::out::one_line(&e)
                    ));
                    return (cleaned, left);
                }
            };
            let created = now.minus(before);
            if created.is_empty() {
                left.clear();
                break;
            }
            left.clear();
            for (what, sql) in tools::drop_statements(kind, &self.req.table, &created) {
                let mut last = None;
                for attempt in 0..CLEANUP_TRIES {
                    match conn.execute(&sql) {
                        Ok(()) => {
                            last = None;
                            break;
                        }
                        Err(e) => {
                            last = Some(crate::out::one_line(&e));
                            if attempt + 1 < CLEANUP_TRIES {
                                std::thread::sleep(Duration::from_millis(500));
                            }
                        }
                    }
                }
                match last {
                    None if !cleaned.contains(&what) => cleaned.push(what),
                    None => {}
                    Some(e) => left.push(format!("{what} ({sql}: {e})")),
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        (cleaned, left)
    }

    /// Run the program once: start it, read its output, stop it when asked, reap it, clean up
    /// after it. The error is one line: how it ended, its last message, what was dropped or
    /// left.
    fn run_program(&self, launch: &Launch, conn: &mut dyn Conn) -> Result<()> {
        let db = self
            .target
            .client_params()
            .map(|p| p.database)
            .unwrap_or_default();
        if matches!(self.method, Method::PgRepack | Method::PgRepackIndexes)
            && !tools::pg_has_repack_key(conn, &self.req.table)?
        {
            bail!(
                "pg_repack refuses {}: it has no primary key and no unique index on NOT NULL columns (pg_repack needs one to replay the writes made during the copy)",
                self.req.table
            );
        }
        let before = tools::tool_objects(self.method, conn, &db, &self.req.table)
            .context("looking for the tool's objects before it starts")?;
        // The option file with the password lives in memory only: a memfd the program
        // inherits and reads as /proc/self/fd/N, so no file holds the password, even when
        // ixbench is killed while the program runs (a file in the results directory stayed).
        let secret = match &launch.secret_file {
            Some((path, text)) => Some((path.display().to_string(), secret_fd(text)?)),
            None => None,
        };
        let args: Vec<String> = match &secret {
            Some((path, fd)) => {
                let inherited = format!("/proc/self/fd/{}", fd.as_raw_fd());
                launch
                    .args
                    .iter()
                    .map(|a| a.replace(path.as_str(), &inherited))
                    .collect()
            }
            None => launch.args.clone(),
        };
        let log = std::fs::File::create(&launch.log_path)
            .with_context(|| format!("cannot write {}", launch.log_path.display()))?;
        let log = Arc::new(Mutex::new(std::io::BufWriter::new(log)));
        let mut cmd = std::process::Command::new(&launch.program);
        cmd.args(&args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        {
            use std::os::unix::process::CommandExt;
            // Its own process group: a Ctrl-C at the terminal reaches ixbench only, which
            // stops the program and cleans up after it; and the group is stopped whole.
            cmd.process_group(0);
            let keep = secret.as_ref().map(|(_, fd)| fd.as_raw_fd());
            // SAFETY: prctl and fcntl are async-signal-safe; the closure touches no memory of
            // ours but a copied integer.
            unsafe {
                cmd.pre_exec(move || {
                    // If ixbench dies, the program is told to stop too.
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    // The secret's memfd (close-on-exec for every other child) stays open in
                    // this one.
                    if let Some(fd) = keep {
                        libc::fcntl(fd, libc::F_SETFD, 0);
                    }
                    Ok(())
                });
            }
        }
        let t0 = clock::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", launch.program.display()))?;
        let pid = child.id() as libc::pid_t;
        Self::set_phase(
            &self.state,
            match self.method {
                Method::External => "command started".into(),
                _ => "started".into(),
            },
            t0,
        );
        let mut readers = Vec::new();
        for (tag, stream) in [
            (
                "out",
                child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            ),
            (
                "err",
                child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            ),
        ] {
            let Some(stream) = stream else { continue };
            let state = Arc::clone(&self.state);
            let log = Arc::clone(&log);
            let method = self.method;
            let secret = self.secret.clone();
            let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
            std::thread::spawn(move || {
                let mut r = std::io::BufReader::new(stream);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match r.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    let raw = String::from_utf8_lossy(&buf);
                    for piece in raw.split('\r') {
                        let mut line = piece.trim_end_matches('\n').to_string();
                        if let Some(s) = &secret {
                            line = line.replace(s.as_str(), "***");
                        }
                        if line.trim().is_empty() {
                            continue;
                        }
                        let now = clock::now();
                        let _ = writeln!(
                            lock(&log),
                            "{:9.3} {tag} {line}",
                            now.saturating_duration_since(t0).as_secs_f64()
                        );
                        if let Some(p) = tools::phase_of(method, &line) {
                            MethodRunner::set_phase(&state, p, now);
                        }
                        let mut st = lock(&state);
                        if method == Method::External {
                            let short: String = line.trim().chars().take(80).collect();
                            st.current = Some(format!("command: {short}"));
                        }
                        if let Some(r) = tools::pg_repack_refusal(&line).filter(|_| {
                            matches!(method, Method::PgRepack | Method::PgRepackIndexes)
                        }) {
                            st.refusal.get_or_insert(r);
                        }
                        if !tools::is_progress_line(&line) {
                            let keep = tools::without_timestamp(&line).to_string();
                            if tag == "err" {
                                st.last_err.push((now, keep));
                                if st.last_err.len() > BURST_LINES {
                                    st.last_err.remove(0);
                                }
                            } else {
                                st.last_out = Some(keep);
                            }
                        }
                    }
                }
                let _ = done_tx.send(());
            });
            readers.push(done_rx);
        }
        // Wait for it, stopping it when asked.
        let mut termed: Option<Since> = None;
        let mut killed = false;
        let mut status: libc::c_int = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: wait4 on our own child's pid with valid pointers.
            let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == pid {
                break;
            }
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                bail!("waiting for {}: {e}", launch.program.display());
            }
            let stop = self.cancel.load(Ordering::SeqCst);
            if stop && termed.is_none() {
                termed = Some(Since::start());
                // SAFETY: signalling the process group we created.
                unsafe {
                    libc::kill(-pid, libc::SIGTERM);
                }
            }
            if let Some(t) = termed {
                if !killed && (t.so_far() >= TERM_GRACE || crate::stop::hurried()) {
                    killed = true;
                    // SAFETY: as above.
                    unsafe {
                        libc::kill(-pid, libc::SIGKILL);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Whatever the program left running in its group goes too.
        if termed.is_some() {
            // SAFETY: as above; the group may be empty (ESRCH is fine).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let deadline = Deadline::after(READER_WAIT);
        for rx in readers {
            let left = deadline.remaining();
            let _ = rx.recv_timeout(left);
        }
        let _ = lock(&log).flush();
        let cpu_us = (usage.ru_utime.tv_sec as u64 * 1_000_000 + usage.ru_utime.tv_usec as u64)
            + (usage.ru_stime.tv_sec as u64 * 1_000_000 + usage.ru_stime.tv_usec as u64);
        let (exit, how) = if libc::WIFEXITED(status) {
            let c = libc::WEXITSTATUS(status);
            (format!("exit {c}"), c == 0)
        } else if libc::WIFSIGNALED(status) {
            (
                format!("killed by {}", signal_name(libc::WTERMSIG(status))),
                false,
            )
        } else {
            (format!("wait status {status}"), false)
        };
        let ended = clock::now();
        let phase_then = {
            let mut st = lock(&self.state);
            st.exit_status = Some(exit.clone());
            st.tool_cpu_us = Some(st.tool_cpu_us.unwrap_or(0) + cpu_us);
            st.current.clone()
        };
        // A program stopped by ixbench or that failed: drop what it left. One that
        // succeeded: drop what it left anyway (e.g. --no-drop-old-table), and say so.
        let (cleaned, left) = self.clean_up(conn, &before);
        {
            let mut st = lock(&self.state);
            st.cleaned.extend(cleaned.iter().cloned());
            st.left.extend(left.iter().cloned());
        }
        Self::set_phase(
            &self.state,
            if how && termed.is_none() {
                "ended".into()
            } else {
                format!("ended ({exit})")
            },
            ended,
        );
        let refusal = lock(&self.state).refusal.clone();
        let tail = {
            let mut t = String::new();
            if !cleaned.is_empty() {
                t.push_str(&format!(
                    "; ixbench dropped what it left: {}",
                    cleaned.join(", ")
                ));
            }
            if !left.is_empty() {
                t.push_str(&format!(
                    "; LEFT ON THE SERVER (drop it yourself): {}",
                    left.join(", ")
                ));
            }
            t
        };
        let name = match self.method {
            Method::External => "the --ddl-command".to_string(),
            _ => self
                .method
                .tool()
                .map(|t| t.program.to_string())
                .unwrap_or_default(),
        };
        let during = phase_then
            .filter(|p| p != "started")
            .map(|p| format!(" while {p}"))
            .unwrap_or_default();
        let message = {
            let st = lock(&self.state);
            self.last_message(&st)
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        };
        if termed.is_some() {
            bail!("ixbench stopped {name}{during} ({exit}){tail}");
        }
        if !how {
            bail!("{name} failed ({exit}){during}{message}{tail}");
        }
        if let Some(r) = refusal {
            bail!("{name} declined the table (exit 0): {r}{tail}");
        }
        if !left.is_empty() {
            bail!("{name} succeeded but left objects ixbench could not drop{tail}");
        }
        Ok(())
    }
}

impl DdlHook for MethodRunner<'_> {
    fn load_started(&self, origin: Instant, conn: &mut dyn Conn) {
        lock(&self.state).origin = Some(origin);
        let s = self.sample(conn);
        lock(&self.state).base = Some(s);
    }

    fn ddl_started(&self, conn: &mut dyn Conn) {
        let s = self.sample(conn);
        lock(&self.state).start = Some(s);
    }

    fn run(&self, conn: &mut dyn Conn) -> Option<Result<()>> {
        let launch = self.launch.as_ref()?;
        Some(self.run_program(launch, conn))
    }

    fn ddl_ended(&self, conn: &mut dyn Conn) {
        let s = self.sample(conn);
        lock(&self.state).end = Some(s);
    }

    fn phase(&self, conn: &mut dyn Conn) -> Option<String> {
        self.launch.as_ref()?;
        let text = {
            let mut st = lock(&self.state);
            let second = st.origin.map(|o| clock::since(o).as_secs());
            if second != st.asked_in {
                st.asked_in = second;
                st.second_from = st.reported;
            }
            let new: Vec<String> = st.phases[st.second_from..]
                .iter()
                .map(|(_, p)| p.clone())
                .collect();
            st.reported = st.phases.len();
            if new.is_empty() {
                st.current.clone()
            } else {
                let mut v = new;
                // The line a user's command printed last, when it printed one.
                if self.method == Method::External {
                    if let Some(c) = st.current.clone().filter(|c| !v.contains(c)) {
                        v.push(c);
                    }
                }
                Some(v.join(" -> "))
            }
        };
        // The server's view of pg_repack's index builds, while it says it builds one.
        let building = lock(&self.state)
            .current
            .as_deref()
            .is_some_and(|c| c.starts_with("building index"));
        let db = match self.method {
            Method::PgRepack | Method::PgRepackIndexes if building => {
                tools::pg_repack_progress(conn).ok().flatten()
            }
            _ => None,
        };
        match (text, db) {
            (Some(t), Some(d)) => Some(format!("{t}; {d}")),
            (t, d) => t.or(d),
        }
    }

    fn waits(&self, conn: &mut dyn Conn) -> Option<Waits> {
        self.launch.as_ref()?;
        tools::table_waits(self.target.kind(), conn).ok()
    }

    fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

/// The methods of one `ixbench ddl` run (`--method`, `--method-opt`, `--ddl-command`), with
/// their programs found and checked before anything else is done.
pub struct Methods {
    /// In the order given.
    pub list: Vec<Method>,
    opts: Vec<(Method, Vec<String>)>,
    tools: Vec<(Method, FoundTool)>,
    command: Option<String>,
}

impl Methods {
    /// Parse the options and find each method's program (a missing or too old one is a
    /// one-line error before the run starts).
    pub fn from_args(
        method: &[String],
        method_opt: &[String],
        command: Option<&str>,
    ) -> Result<Methods> {
        let list = tools::parse_methods(method)?;
        let mut opts: Vec<(Method, Vec<String>)> = Vec::new();
        for o in method_opt {
            let (m, a) = tools::parse_method_opt(o)?;
            if !list.contains(&m) {
                bail!("--method-opt {}: that method is not in --method", m.name());
            }
            match opts.iter_mut().find(|(x, _)| *x == m) {
                Some((_, v)) => v.extend(a),
                None => opts.push((m, a)),
            }
        }
        let external = list.contains(&Method::External);
        match command.filter(|c| !c.trim().is_empty()) {
            None if external => {
                bail!("--method external runs --ddl-command '...': give the command")
            }
            Some(_) if !external => {
                bail!("--ddl-command is the change of --method external: add external to --method")
            }
            _ => {}
        }
        let mut found: Vec<(Method, FoundTool)> = Vec::new();
        for m in &list {
            if let Some(t) = m.tool() {
                found.push((*m, find_tool(&t, *m)?));
            }
        }
        Ok(Methods {
            list,
            opts,
            tools: found,
            command: command.map(String::from),
        })
    }

    /// Check every method against an embedded target (SQLite, null), whose DBMS is known
    /// before anything is opened, so `--method pt-osc` on SQLite is refused before a results
    /// directory is made; a server's dialect is known once connected ([`Methods::prepare`]).
    pub fn check_embedded(&self, target: &str, ddl: crate::dbms::ddl::DdlKind) -> Result<()> {
        // A cluster (`galera`, `spider`, `pg-shards`) or anything else that is not one plain
        // target is checked once connected, like a server.
        let Ok(spec) = crate::dbms::TargetSpec::parse(target) else {
            return Ok(());
        };
        if spec.url.is_some() || spec.needs_server() {
            return Ok(());
        }
        let dialect = crate::dbms::dialect::for_kind(&spec.kind).name();
        for m in &self.list {
            m.check(&spec.kind, dialect, ddl)?;
        }
        Ok(())
    }

    /// Only the engine's own statement (ixbench ddl as it always was).
    pub fn only_native(&self) -> bool {
        self.list == [Method::Native]
    }

    /// For the results' configuration.
    pub fn config(&self) -> serde_json::Value {
        serde_json::json!({
            "methods": self.list.iter().map(|m| m.name()).collect::<Vec<_>>(),
            "method_opts": self.opts.iter().map(|(m, a)| (m.name().to_string(), a.join(" "))).collect::<std::collections::BTreeMap<_, _>>(),
            "ddl_command": self.command.as_deref().map(crate::dbms::redact_text),
            "tools": self.tools.iter().map(|(m, t)| (m.name().to_string(), t.version.clone())).collect::<std::collections::BTreeMap<_, _>>(),
        })
    }

    /// Check every method can make `ddl` on this target, and get what it needs on the server
    /// (the pg_repack extension: created on a server ixbench started, `ours`). Returns lines
    /// for the output.
    pub fn prepare(
        &self,
        conn: &mut dyn Conn,
        kind: &str,
        dialect: &str,
        ddl: crate::dbms::ddl::DdlKind,
        ours: bool,
    ) -> Result<Vec<String>> {
        for m in &self.list {
            m.check(kind, dialect, ddl)?;
        }
        let mut notes = Vec::new();
        if let Some((_, t)) = self
            .tools
            .iter()
            .find(|(m, _)| matches!(m, Method::PgRepack | Method::PgRepackIndexes))
        {
            notes.push(prepare_pg_repack(conn, ours, t.numbers)?);
        }
        for (m, t) in &self.tools {
            notes.push(format!(
                "{}: {} ({})",
                m.name(),
                t.version,
                t.path.display()
            ));
        }
        Ok(notes)
    }

    fn tool(&self, m: Method) -> Option<&FoundTool> {
        self.tools.iter().find(|(x, _)| *x == m).map(|(_, t)| t)
    }

    fn extra(&self, m: Method) -> &[String] {
        self.opts
            .iter()
            .find(|(x, _)| *x == m)
            .map(|(_, a)| a.as_slice())
            .unwrap_or(&[])
    }

    /// The runner of method `m` for point `pi` (from 0): its program's command line and
    /// environment, and its plan (the dialect's `base` with the method's statements).
    #[allow(clippy::too_many_arguments)]
    pub fn runner<'a>(
        &self,
        m: Method,
        target: &'a dyn Dbms,
        req: &'a DdlRequest,
        dialect: &dyn DdlDialect,
        base: &crate::dbms::ddl::DdlPlan,
        engine: &str,
        pg_major: u32,
        dir: &Path,
        pi: usize,
    ) -> Result<(MethodRunner<'a>, crate::dbms::ddl::DdlPlan)> {
        let launch = if m.is_process() {
            Some(launch_for(&LaunchSpec {
                method: m,
                target,
                req,
                dialect,
                native: &base.statements,
                tool: self.tool(m),
                extra: self.extra(m),
                command: self.command.as_deref(),
                engine,
                pg_major,
                dir,
                tag: format!("p{}-{}", pi + 1, m.name()),
            })?)
        } else {
            None
        };
        let what = launch
            .as_ref()
            .map(|l| l.display.clone())
            .unwrap_or_default();
        let plan = tools::method_plan(m, base, req, &what);
        let runner = MethodRunner::new(m, target, req, launch, &plan.statements);
        Ok((runner, plan))
    }
}

/// The row-count check: the tables hold the rows they held when the load started plus what
/// the workload's committed transactions inserted less what they deleted.
pub fn row_check(
    tables: &[String],
    before: Option<i64>,
    net: i64,
    after: Option<i64>,
) -> crate::results::Check {
    let what = tables.join(", ");
    match (before, after) {
        (Some(b), Some(a)) => crate::results::Check {
            name: "row count".into(),
            ok: b + net == a,
            detail: format!(
                "{what}: {b} rows when the load started {} {} from the workload's committed transactions = {}; the tables hold {a}",
                if net < 0 { "-" } else { "+" },
                net.abs(),
                b + net
            ),
        },
        _ => crate::results::Check {
            name: "row count".into(),
            ok: false,
            detail: format!("{what}: the rows could not be counted"),
        },
    }
}

/// A workload whose clients count the rows their committed transactions inserted and
/// deleted (a transaction that returned Ok committed: see [`WorkloadClient::run`]).
pub struct RowCounting<'a> {
    inner: &'a dyn Workload,
    net: Arc<AtomicI64>,
}

impl<'a> RowCounting<'a> {
    /// Count the rows of `inner`'s clients.
    pub fn new(inner: &'a dyn Workload) -> Self {
        RowCounting {
            inner,
            net: Arc::default(),
        }
    }

    /// Inserted less deleted rows since the last [`RowCounting::reset`].
    pub fn net(&self) -> i64 {
        self.net.load(Ordering::SeqCst)
    }

    /// Start counting from zero.
    pub fn reset(&self) {
        self.net.store(0, Ordering::SeqCst);
    }
}

impl Workload for RowCounting<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }

    fn load(&self, dbms: &dyn Dbms, threads: usize) -> Result<()> {
        self.inner.load(dbms, threads)
    }

    fn client(&self, conn: &mut dyn Conn, id: usize, seed: u64) -> Result<Box<dyn WorkloadClient>> {
        Ok(Box::new(CountingClient {
            inner: self.inner.client(conn, id, seed)?,
            net: Arc::clone(&self.net),
        }))
    }
}

struct CountingClient {
    inner: Box<dyn WorkloadClient>,
    net: Arc<AtomicI64>,
}

impl WorkloadClient for CountingClient {
    fn run(&mut self, conn: &mut dyn Conn) -> Result<TxnDone> {
        let d = self.inner.run(conn)?;
        self.net
            .fetch_add(d.inserted as i64 - d.deleted as i64, Ordering::SeqCst);
        Ok(d)
    }
}

/// The rows of `tables` now, summed (`None` when a count failed).
pub fn count_rows(conn: &mut dyn Conn, tables: &[String]) -> Option<i64> {
    let mut n = 0;
    for t in tables {
        n += conn
            .query_i64(&format!("SELECT COUNT(*) FROM {t}"))
            .ok()??;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_time() {
        let p = |v: &[(f64, &str)]| -> Vec<(f64, String)> {
            v.iter().map(|(t, s)| (*t, s.to_string())).collect()
        };
        let v = p(&[
            (1.0, "copying rows"),
            (4.25, "swapping tables"),
            (4.5, "tables swapped"),
        ]);
        assert_eq!(swap_seconds(&v), Some(0.25));
        assert_eq!(swap_seconds(&p(&[(1.0, "swapping")])), None);
        assert_eq!(swap_seconds(&p(&[(1.0, "copying rows")])), None);
    }

    #[test]
    fn display_words() {
        assert_eq!(shell_word("--chunk-size"), "--chunk-size");
        assert_eq!(shell_word("ADD INDEX a (c)"), "'ADD INDEX a (c)'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
    }

    #[test]
    fn missing_program_is_one_line() {
        let t = Tool {
            program: "ixbench-no-such-tool-xyz",
            package: "nothing",
            min_version: (1, 0, 0),
        };
        let e = find_tool(&t, Method::PtOsc).unwrap_err().to_string();
        assert!(
            e.contains("not in PATH") && e.contains("install nothing"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
