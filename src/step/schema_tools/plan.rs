//! What to run: the methods of one `ixbench ddl` run with their programs found in PATH and
//! checked, and for each point the program's command line and environment ([`launch_for`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::MethodRunner;
use crate::dbms::ddl::tools::{self, Method, Tool, ToolCall};
use crate::dbms::ddl::{DdlDialect, DdlRequest};
use crate::dbms::{registry, Dbms};
use crate::deadline::Since;

/// How long `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

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
    /// The server's major version (0 when unknown; pg_repack's options on PostgreSQL 14+).
    pub pg_major: u32,
    /// The results directory.
    pub dir: &'a Path,
    /// A file-name tag for this point (`p3-pt-osc`).
    pub tag: String,
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
    let Some(tools) = registry::tools(kind) else {
        bail!(
            "--method {} needs a server another program can connect to",
            s.method.name()
        );
    };
    match s.method {
        Method::External => {
            let cmd = s
                .command
                .filter(|c| !c.trim().is_empty())
                .context("--method external needs --ddl-command '...'")?;
            let alter = s.dialect.external_alter_clause(s.req, s.engine);
            Ok(Launch {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".into(), cmd.into()],
                env: tools::external_env(kind, tools, &params, s.req, alter.as_deref(), s.native),
                secret_file: None,
                log_path,
                display: cmd.to_string(),
                version: None,
            })
        }
        m => {
            let Some(t) = tools.tool(m) else {
                bail!("--method {} runs no program", m.name());
            };
            let found = s
                .tool
                .with_context(|| format!("{} was not found", t.program))?;
            let file = dir.join(format!(".{}.cnf", s.tag));
            let a = tools.launch(
                m,
                &ToolCall {
                    params: &params,
                    req: s.req,
                    engine: s.engine,
                    secret_path: &file.display().to_string(),
                    extra: s.extra,
                    major: s.pg_major,
                },
            )?;
            Ok(Launch {
                display: display(t.program, &a.args),
                program: found.path.clone(),
                args: a.args,
                env: a.env,
                secret_file: a.secret.map(|text| (file, text)),
                log_path,
                version: Some(found.version.clone()),
            })
        }
    }
}

/// The methods of one `ixbench ddl` run (`--method`, `--method-opt`, `--ddl-command`), with
/// their programs found and checked before anything else is done.
pub struct Methods {
    /// In the order given.
    pub list: Vec<Method>,
    opts: Vec<(Method, Vec<String>)>,
    pub(super) tools: Vec<(Method, FoundTool)>,
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
            let (m, a) = tools::parse_method_opt(o, registry::tool_of)?;
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
            if let Some(t) = registry::tool_of(*m) {
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
        let dialect = registry::dialect(&spec.kind).name();
        for m in &self.list {
            m.check(registry::tools(&spec.kind), dialect, ddl)?;
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
        let plan = tools::method_plan(m, registry::tools(target.kind()), base, req, &what);
        let lock_timeout = dialect.lock_timeout_sql(super::undo::CLEANUP_LOCK_WAIT);
        let runner = MethodRunner::new(m, target, lock_timeout, req, launch, &plan.statements);
        Ok((runner, plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_words() {
        assert_eq!(shell_word("--chunk-size"), "--chunk-size");
        assert_eq!(shell_word("ADD INDEX a (c)"), "'ADD INDEX a (c)'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn missing_program_is_one_line() {
        let t = Tool {
            program: "ixbench-no-such-tool-xyz",
            package: "nothing",
            min_version: (1, 0, 0),
            refused: &[],
        };
        let e = find_tool(&t, Method::PtOsc).unwrap_err().to_string();
        assert!(
            e.contains("not in PATH") && e.contains("install nothing"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
