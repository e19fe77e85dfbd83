//! The `ixbench` binary: parse the command line, dispatch, and turn errors into one line and an
//! exit status.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Parser;
use ixbench::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
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
