//! The `ixbench` binary: parse the command line, dispatch, and turn errors into one line and an
//! exit status.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Parser;
use ixbench::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupt.clone();
        // A second Ctrl-C exits at once; the first lets the run save what it finished.
        let _ = ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let result = match cli.command {
        Command::Run(args) => ixbench::run::run(&args, std::env::args().collect(), &interrupt),
        Command::Index(args) => ixbench::lab::run(&args, std::env::args().collect(), &interrupt),
        Command::Compare(args) => ixbench::compare::run(&args),
        Command::Server(args) => ixbench::server::run_command(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ixbench: error: {}", one_line(&e));
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
            eprintln!(
                "ixbench: error: {} (see 'ixbench --help')",
                usage_line(&e.to_string())
            );
            ExitCode::from(2)
        }
    }
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

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    let parts: Vec<String> = e
        .chain()
        .map(|c| c.to_string().replace('\n', " "))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for p in parts {
        // Drivers often repeat the cause inside the context; keep each text once.
        if !out.iter().any(|o| o.contains(p.as_str())) {
            out.push(p);
        }
    }
    out.join(": ")
}
