//! `ixbench server start|stop`: a server that outlives the command, for manual runs.

use std::time::Instant;

use anyhow::Result;

use crate::cli::{ServerArgs, ServerCommand};

use super::{
    datadir, parse_setting, remove_datadir, server_running, start, stop_datadir, ServerOptions,
};

/// Run `ixbench server ...`; returns the exit status.
pub fn run(args: &ServerArgs) -> Result<u8> {
    match &args.command {
        ServerCommand::Start(a) => {
            let settings = a
                .set
                .iter()
                .map(|s| parse_setting(s))
                .collect::<Result<Vec<_>>>()?;
            let opts = ServerOptions {
                datadir: a
                    .datadir
                    .clone()
                    .unwrap_or_else(|| datadir::default_path(a.kind.name())),
                port: a.port,
                settings,
            };
            let t0 = Instant::now();
            let server = start(a.kind, &opts)?;
            let secs = t0.elapsed().as_secs_f64();
            crate::outln!("url: {}", server.url());
            crate::outln!("datadir: {}", server.datadir.display());
            crate::outln!(
                "password: in {} (mode 0600; ixbench finds it by itself for this URL)",
                server.datadir.join(super::PASSWORD_FILE).display()
            );
            crate::outln!("log: {}", server.log.display());
            if let Some(s) = &server.socket {
                crate::outln!("socket: {}", s.display());
            }
            if let Some(pid) = server.pids().first() {
                crate::outln!("pid: {pid}");
            }
            crate::outln!("started in: {secs:.2} s");
            crate::outln!(
                "stop with: ixbench server stop {}",
                server.datadir.display()
            );
            server.detach();
            Ok(0)
        }
        ServerCommand::Stop(a) => {
            if a.remove && !server_running(&a.datadir)? {
                // Already stopped: nothing to stop, only the directory to remove.
                crate::outln!("no server running on {}", a.datadir.display());
            } else {
                let t0 = Instant::now();
                stop_datadir(&a.datadir)?;
                crate::outln!(
                    "stopped server on {} in {:.2} s",
                    a.datadir.display(),
                    t0.elapsed().as_secs_f64()
                );
            }
            if a.remove {
                remove_datadir(&a.datadir)?;
                crate::outln!("removed {}", a.datadir.display());
            }
            Ok(0)
        }
    }
}
