//! The host of a workload's own steps ([`crate::workload::runner::StepHost`]): the one wait
//! for a quiet server ([`crate::step::quiet`]), the one index build
//! ([`crate::step::create_index`]) and, in a cluster's session, the watch of every node around
//! a step ([`crate::cluster_target::ClusterSession::watch_step`]). `run`'s step plan and the
//! index lab's load hand it to the steps; the step barrier of a several-process run is
//! [`crate::step::barrier::Barrier`], a [`StepBarrier`].

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use crate::cluster_target::ClusterSession;
use crate::dbms::{Conn, Dbms};
use crate::results::{BarrierStamps, IndexBuild, StepResult};
use crate::step::barrier::Barrier;
use crate::workload::runner::{Quiet, StepBarrier, StepHost};
use crate::workload::tables::CheckedTable;
use crate::workload::tables::IndexedTables;

/// The steps' host in a session: its cluster (when it is one) and its interrupt.
pub struct Steps<'a> {
    /// The cluster the session started or connected to.
    pub cluster: Option<&'a ClusterSession>,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
}

impl StepHost for Steps<'_> {
    fn wait_quiet(
        &self,
        target: &dyn Dbms,
        conn: &mut dyn Conn,
        tables: &[String],
        timeout: Duration,
        when: &str,
    ) -> Quiet {
        let q = crate::step::quiet::wait(target, conn, tables, timeout, when);
        q.say_unwatched();
        Quiet {
            warnings: q.warnings().collect(),
            wait: q.wait,
        }
    }

    fn build_indexes(
        &self,
        on: &dyn IndexedTables,
        conn: &mut dyn Conn,
        on_build: &mut dyn FnMut(IndexBuild),
    ) -> Result<()> {
        crate::step::create_index::run(on, conn, on_build)
    }

    fn describe_builds(&self, builds: &[IndexBuild]) -> String {
        crate::step::create_index::describe_builds(builds)
    }

    fn watch_step(
        &self,
        name: &str,
        tables: &[&dyn CheckedTable],
        step: &mut dyn FnMut() -> StepResult,
    ) -> StepResult {
        match self.cluster {
            Some(c) => c.watch_step(name, tables, self.interrupt, step),
            None => step(),
        }
    }
}

impl StepBarrier for Barrier {
    fn meet(
        &mut self,
        conn: &mut dyn Conn,
        label: &str,
        shown: &str,
        interrupt: &AtomicBool,
        quiet: &mut dyn FnMut(&mut dyn Conn, &[String]),
    ) -> Result<BarrierStamps> {
        Barrier::meet(self, conn, label, shown, interrupt, quiet)
    }

    fn leave(&mut self, conn: &mut dyn Conn) {
        Barrier::leave(self, conn)
    }
}
