//! The `ixbench` binary: parse the command line, dispatch, and turn errors into one line and an
//! exit status.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ixbench::cmd::{Cli, Command};

fn main() -> ExitCode {
    let cli = match ixbench::options::size::parse_cli::<Cli>() {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    // Ctrl-C, SIGTERM and SIGHUP stop the command and let it save what it finished and stop
    // its server (a second one cancels at once, a third exits at once: see ixbench::stop).
    if let Err(e) = ixbench::stop::install(interrupt.clone()) {
        note(&format!("ixbench: warning: cannot handle signals: {e}"));
    }
    let result = match cli.command {
        Command::Run(args) => ixbench::cmd::run::run(&args, std::env::args().collect(), &interrupt),
        Command::Index(args) => {
            ixbench::cmd::index::run(&args, std::env::args().collect(), &interrupt)
        }
        Command::Ddl(args) => ixbench::cmd::ddl::run(&args, std::env::args().collect(), &interrupt),
        Command::Compare(args) => ixbench::cmd::compare::run(&args),
        Command::Server(args) => ixbench::cmd::server::run(&args),
        Command::Oltp(args) => {
            ixbench::cmd::oltp::run(&args, std::env::args().collect(), &interrupt)
        }
        Command::Report(args) => ixbench::cmd::report::run(&args),
        Command::Pattern(args) => ixbench::cmd::pattern::run_with(&args, &interrupt),
        Command::Ab(args) => {
            ixbench::cmd::ab::run(&args, &interrupt, ixbench::cmd::check_command_line)
        }
        Command::Timeseries(args) => {
            ixbench::cmd::timeseries::run(&args, std::env::args().collect(), &interrupt)
        }
        Command::Merge(args) => ixbench::cmd::merge::run(&args, std::env::args().collect()),
    };
    ixbench::progress::finish();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            note(&format!(
                "ixbench: error: {}",
                ixbench::format::error_line(&e)
            ));
            ExitCode::from(1)
        }
    }
}

/// Help and version print as clap prints them; a usage error becomes one line.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            // A URL given to the wrong option is echoed by clap: never its password.
            let mut line = usage_line(&e.to_string());
            if let Some(hint) = child_command_hint(&e) {
                line.push_str("; ");
                line.push_str(&hint);
            }
            let line = ixbench::dbms::redact_text(&line);
            note(&format!("ixbench: error: {line} (see 'ixbench --help')"));
            ExitCode::from(2)
        }
    }
}

/// For an unexpected argument that is the command `ab` runs, given without `--`: the right form.
fn child_command_hint(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let args: Vec<String> = std::env::args().collect();
    ixbench::cmd::ab::child_without_dashes_hint(&args, arg)
}

/// clap's message on one line: the error, then its hints (`[possible values: ...]`, `tip: a
/// similar argument exists: ...`) joined with "; ", without the usage block that follows.
fn usage_line(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    if parts.is_empty() {
        return "invalid command line".into();
    }
    let mut line = parts[0].trim_start_matches("error: ").to_string();
    for p in &parts[1..] {
        // hints follow after "; ", the items of a list ("not provided:") after ", "
        line.push_str(if p.starts_with("tip:") || p.starts_with('[') {
            "; "
        } else if line.ends_with(':') {
            " "
        } else {
            ", "
        });
        line.push_str(p);
    }
    line
}

/// Print a line to stderr, ignoring errors (after SIGHUP the terminal may be gone, and
/// `eprintln!` would panic).
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
